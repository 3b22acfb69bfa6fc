"""Signing and verifying agent cards (A2A v1.0 §8.4).

What is signed is a card document's *canonical payload*: the document without
``signatures``, canonicalized by RFC 8785 (``jcs.py``). Each signature is a JWS
with a detached
payload, kept as its two outer parts:
``{"protected": BASE64URL(header), "signature": BASE64URL(sig), "header"?}``;
the protected header holds ``alg``, ``typ: "JOSE"``, ``kid`` and, when known,
``jku`` (the JWKS URL).

A card is served as a hybrid document (the v1.0 card merged with the v0.3 and
v0.1 renderings, ``encode_card_hybrid``) and, to a v1.0 reader that asks, as its
v1.0 rendering alone. A signed card carries one signature over each
(``card_payloads``):

- over the whole hybrid document, every member as served (``document_payload``):
  the members older readers act on (``url``, ``additionalInterfaces``, the
  ``type``-tagged schemes, ``security`` ...) are signed too;
- over the v1.0 rendering with empty values (``""``, ``[]``, ``{}``, ``null``)
  left out (``canonical_payload``): the default-value rule of §8.4.1 as the
  reference SDK applies it, which is what a v1.0 verifier that reads the card
  into its own model (the reference SDK's) checks.

A verifier checks the document it received as it stands (minus ``signatures``),
whole or with its empty values left out. A signature over the v1.0 rendering
rebuilt from it is taken only when the document holds nothing that rendering
lacks: one over a part of a document would let the rest be changed unseen. The
card a caller gets back from ``verify_card_document`` is the one that was
verified.

Pure: no I/O; fetching a JWKS is the caller's business.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeAlias

import msgspec
from joserfc import jws
from joserfc.errors import JoseError
from joserfc.jwk import ECKey, KeySet, OKPKey, RSAKey

from .jcs import CanonicalizationError, canonicalize
from .model import AgentCard, CardSignature

__all__ = [
    "ALGORITHMS",
    "CardSignatureError",
    "KeysLike",
    "PublicKey",
    "canonical_payload",
    "card_payload",
    "card_payloads",
    "document_payload",
    "load_keys",
    "sign_card",
    "sign_payload",
    "verified_card",
    "verify_card_document",
    "verify_signatures",
]

#: asymmetric algorithms accepted on cards (no "none", no HMAC: anyone could forge those)
ALGORITHMS = ("ES256", "ES384", "ES512", "RS256", "RS384", "RS512", "PS256", "PS384",
              "PS512", "EdDSA")

PublicKey: TypeAlias = ECKey | RSAKey | OKPKey
#: a JWKS document, a KeySet, one key, PEM text, or a list of keys / PEMs
KeysLike: TypeAlias = KeySet | Mapping[str, Any] | PublicKey | str | bytes | Sequence[Any]


class CardSignatureError(Exception):
    """A card that is not signed, or whose signatures do not verify; the message says which."""


def _clean(value: Any) -> Any:
    """``value`` without empty strings, lists, objects and nulls (recursively);
    None when nothing is left."""
    if isinstance(value, dict):
        out = {k: c for k, v in value.items() if (c := _clean(v)) is not None}
        return out or None
    if isinstance(value, list):
        items = [c for v in value if (c := _clean(v)) is not None]
        return items or None
    if value == "" and isinstance(value, str):
        return None
    return value


def canonical_payload(document: Mapping[str, Any]) -> bytes:
    """The signing payload of a card document as it stands: without
    ``signatures``, empty values dropped, RFC 8785 canonical."""
    doc = {k: v for k, v in document.items() if k != "signatures"}
    return canonicalize(_clean(doc) or {})


def document_payload(document: Mapping[str, Any]) -> bytes:
    """The signing payload of a card document, every member kept: without
    ``signatures``, RFC 8785 canonical. (Leaving empty values out would sign
    ``security: [{"key": []}]`` and ``[{"other": []}]`` alike.)"""
    return canonicalize({k: v for k, v in document.items() if k != "signatures"})


def card_payload(card: AgentCard) -> bytes:
    """The signing payload of ``card``'s v1.0 rendering."""
    from .dialects.v1_0 import encode_card_v1

    unsigned = msgspec.structs.replace(card, signatures=[])
    return canonical_payload(encode_card_v1(unsigned))


def card_payloads(card: AgentCard) -> tuple[bytes, bytes]:
    """The signing payloads of the documents ``card`` is served as: the hybrid
    document (every member any reader acts on), then the v1.0 rendering."""
    from .dialects.v0_3 import encode_card_hybrid

    unsigned = msgspec.structs.replace(card, signatures=[])
    return document_payload(encode_card_hybrid(unsigned)), card_payload(unsigned)


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def sign_payload(payload: bytes, key: PublicKey, *, alg: str, kid: str, jku: str | None = None,
                 header: Mapping[str, Any] | None = None) -> CardSignature:
    """A detached JWS of ``payload`` as a card signature (``key`` is private)."""
    if alg not in ALGORITHMS:
        raise ValueError(f"card signing algorithm must be one of {', '.join(ALGORITHMS)}")
    protected: dict[str, Any] = {"alg": alg, "typ": "JOSE", "kid": kid}
    if jku:
        protected["jku"] = jku
    token = jws.serialize_compact(protected, payload, key, algorithms=[alg])
    head, _, rest = token.partition(".")
    _, _, sig = rest.partition(".")
    return CardSignature(protected=head, signature=sig, header=dict(header) if header else None)


def sign_card(card: AgentCard, key: PublicKey, *, alg: str, kid: str,
              jku: str | None = None) -> AgentCard:
    """``card`` with a signature over each document it is served as (``card_payloads``)
    added to the ones it has."""
    signatures = [sign_payload(payload, key, alg=alg, kid=kid, jku=jku)
                  for payload in card_payloads(card)]
    return msgspec.structs.replace(card, signatures=[*card.signatures, *signatures])


class _Keys(KeySet):
    """A KeySet that remembers which of its keys came with no kid of their own (a
    pinned PEM): KeySet names those by their thumbprint, as interlingua names its own
    keys, so the kid alone cannot tell them apart."""

    def __init__(self, keys: list[Any]) -> None:
        bare = [key for key in keys if key.kid is None]
        super().__init__(keys)
        self.kidless = frozenset(str(key.kid) for key in bare)


def load_keys(keys: KeysLike) -> KeySet:
    """Public keys in any of the usual forms, as one KeySet."""
    if isinstance(keys, KeySet):
        return keys
    if isinstance(keys, Mapping):
        if "keys" in keys:
            try:
                return _Keys.import_key_set(dict(keys))  # type: ignore[arg-type]
            except (JoseError, ValueError, TypeError, KeyError) as exc:
                raise ValueError(f"not a usable JWKS: {exc}") from None
        keys = [keys]
    elif isinstance(keys, (ECKey, RSAKey, OKPKey, str, bytes)):
        keys = [keys]
    elif not isinstance(keys, (list, tuple)):
        # (a JWKS document that is a number, a boolean or null, say)
        raise ValueError(f"keys are a JWKS, a key or a list of keys, not {type(keys).__name__}")
    out: list[PublicKey] = []
    for item in keys:
        out.extend(_one_key(jwk) for jwk in _json_keys(item))
    return _Keys(out)


def _json_keys(item: Any) -> list[Any]:
    """``item``, or the keys it holds when it is the text of a JWK or a JWKS (a key
    file saved from an agent's ``/.well-known/jwks.json``): a PEM is no JSON."""
    if not isinstance(item, (str, bytes)):
        return [item]
    text = item.decode("utf-8", "replace") if isinstance(item, bytes) else item
    if not text.lstrip("\ufeff \t\r\n").startswith("{"):
        return [item]
    try:
        doc = msgspec.json.decode(text.lstrip("\ufeff"))
    except msgspec.DecodeError as exc:
        raise ValueError(f"a key that is neither a PEM nor a JWK in JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise ValueError("a key in JSON is a JWK object or a JWKS {\"keys\": [...]}")
    if "keys" not in doc:
        return [doc]
    found = doc["keys"]
    if not isinstance(found, list) or not found or not all(isinstance(k, dict) for k in found):
        raise ValueError("a JWKS holds no keys: its \"keys\" is not a list of JWK objects")
    return found


def _one_key(item: Any) -> PublicKey:
    if isinstance(item, (ECKey, RSAKey, OKPKey)):
        return item
    for cls in (ECKey, RSAKey, OKPKey):
        try:
            key = cls.import_key(item)
        except Exception:  # joserfc raises a variety of errors for a key of another type
            continue
        return key
    raise ValueError("a key is neither a JWK nor a PEM of an EC, RSA or OKP key")


def _protected_header(sig: CardSignature) -> dict[str, Any] | None:
    try:
        header = msgspec.json.decode(_b64url_decode(sig.protected))
    except (binascii.Error, ValueError, msgspec.DecodeError):
        return None
    return header if isinstance(header, dict) else None


def verify_signatures(signatures: Sequence[CardSignature], payloads: Iterable[bytes],
                      keys: KeysLike, *, algorithms: Sequence[str] = ALGORITHMS) -> str:
    """The ``kid`` of the first signature that verifies one of ``payloads``
    with one of ``keys``; ``CardSignatureError`` when none does."""
    if not signatures:
        raise CardSignatureError("the card is not signed")
    key_set = load_keys(keys)
    candidates = list(dict.fromkeys(payloads))
    reasons: list[str] = []
    #: the kids of signatures no key of their kid was given for; ``tried``: some of them
    #: were tried with keys of no kid of their own (pinned PEMs), which cannot tell a
    #: signature by another key from a card changed since it was signed
    others: list[object] = []
    tried = False
    for sig in signatures:
        header = _protected_header(sig)
        if header is None:
            reasons.append("a protected header that is not base64url JSON")
            continue
        alg = header.get("alg")
        if not isinstance(alg, str) or alg not in algorithms:
            reasons.append(f"algorithm {alg!r} is not accepted")
            continue
        kid = header.get("kid")
        chosen = _keys_for(key_set, kid if isinstance(kid, str) else None)
        if _verifies(sig, alg, candidates, chosen):
            return str(kid) if kid is not None else ""
        if kid is None or not any(k.kid == kid for k in chosen):
            others.append(kid)
            tried = tried or bool(chosen)
            reasons.append(f"no known key has kid {kid!r}" if not chosen
                           else f"no given key verifies the signature by key {kid!r}")
            continue
        reasons.append(f"the signature by key {kid!r} does not match the card")
    if others and len(others) == len(reasons):
        # signed, by keys other than those given (as far as can be told): not a card
        # that fails its own signature, which would read as one changed
        named = [repr(kid) for kid in dict.fromkeys(others) if kid is not None]
        by = f" (it is signed by key {', '.join(named)})" if named else ""
        changed = ", or was changed after it was signed" if tried else ""
        raise CardSignatureError(f"the card is not signed by any of the given keys{by}{changed}")
    # a card signed by one key carries two signatures (docs/security.md): a reason they
    # share is said once
    raise CardSignatureError("no signature of the card verifies: "
                             + "; ".join(dict.fromkeys(reasons)))


def _verifies(sig: CardSignature, alg: str, payloads: Sequence[bytes],
              keys: Sequence[Any]) -> bool:
    """Whether one of ``keys`` verifies ``sig`` over one of ``payloads``."""
    for payload in payloads:
        token = f"{sig.protected}.{_b64url(payload)}.{sig.signature}"
        for key in keys:
            try:
                jws.deserialize_compact(token, key, algorithms=[alg])
            except Exception:
                # (JoseError and ValueError, and TypeError or KeyError for some
                # headers a signer writes, such as a "crit" that is no list of names)
                continue
            return True
    return False


def _keys_for(key_set: KeySet, kid: str | None) -> list[Any]:
    """The keys that may have made a signature by ``kid``: those of that kid, and
    those without one of their own (a pinned PEM), which are tried against every
    signature."""
    if kid is None:
        return list(key_set.keys)
    if isinstance(key_set, _Keys):
        return [k for k in key_set.keys if k.kid == kid or k.kid in key_set.kidless]
    # a KeySet made elsewhere names a key that had no kid by its thumbprint: such a
    # key may be one without a kid
    return [k for k in key_set.keys if k.kid in (kid, k.thumbprint())]


def verify_card_document(document: bytes | Mapping[str, Any], keys: KeysLike, *,
                         algorithms: Sequence[str] = ALGORITHMS) -> AgentCard:
    """Verify a served card; return it as read. Raises ``CardSignatureError``
    when it is unsigned, unreadable or no signature verifies with ``keys``."""
    return verified_card(document, keys, algorithms=algorithms)[0]


def verified_card(document: bytes | Mapping[str, Any], keys: KeysLike, *,
                  algorithms: Sequence[str] = ALGORITHMS) -> tuple[AgentCard, str]:
    """``verify_card_document``, with the kid of the signature that verified the card."""
    from .dialects.v1_0 import decode_card_v1
    from .errors import A2AError

    if isinstance(document, (bytes, bytearray)):
        try:
            doc = msgspec.json.decode(document)
        except msgspec.DecodeError as exc:
            raise CardSignatureError(f"the card is not JSON: {exc}") from None
    else:
        doc = dict(document)
    if not isinstance(doc, dict):
        raise CardSignatureError("the card is not a JSON object")
    try:
        card = decode_card_v1(doc)
    except A2AError as exc:
        card = None
        if "supportedInterfaces" in doc:
            raise CardSignatureError(f"the card cannot be read: {exc.message}") from None
    try:
        payloads = _payloads(doc, card)
    except CanonicalizationError as exc:
        raise CardSignatureError(f"the card has no canonical form: {exc}") from None
    raw_sigs = doc.get("signatures")
    if not isinstance(raw_sigs, list) or not raw_sigs:
        raise CardSignatureError("the card is not signed")
    try:
        signatures = msgspec.convert(raw_sigs, list[CardSignature])
    except msgspec.ValidationError as exc:
        raise CardSignatureError(f"the card's signatures are malformed: {exc}") from None
    kid = verify_signatures(signatures, payloads, keys, algorithms=algorithms)
    return card if card is not None else _v03_card(doc), kid


def _payloads(doc: dict[str, Any], card: AgentCard | None) -> list[bytes]:
    """What a signature of ``doc`` may be over: the document as it stands (whole, or
    with empty values left out as the reference SDK signs), and its v1.0 rendering
    when that holds every member of the document (a signer that signed its own
    model of the card, served with members at defaults left out)."""
    from .dialects.v1_0 import encode_card_v1

    payloads = [document_payload(doc), canonical_payload(doc)]
    if card is not None:
        unsigned = msgspec.structs.replace(card, signatures=[])
        rendering = _clean(encode_card_v1(unsigned))
        if _holds(rendering, _clean({k: v for k, v in doc.items() if k != "signatures"})):
            payloads.append(canonical_payload(rendering or {}))
    return payloads


def _holds(rendering: Any, given: Any) -> bool:
    """Whether ``rendering`` holds every member of ``given`` with the same value."""
    if isinstance(given, dict):
        return isinstance(rendering, dict) and all(
            k in rendering and _holds(rendering[k], v) for k, v in given.items())
    if isinstance(given, list):
        return (isinstance(rendering, list) and len(rendering) == len(given)
                and all(_holds(r, g) for r, g in zip(rendering, given, strict=True)))
    if isinstance(given, bool) or isinstance(rendering, bool):
        return rendering is given  # (True == 1 in Python: a boolean only holds itself)
    return not isinstance(rendering, (dict, list)) and bool(rendering == given)


def _v03_card(doc: dict[str, Any]) -> AgentCard:
    """A verified document that is no v1.0 card, read as a v0.3 one: its JSON, or
    the ProtoJSON of v0.3's proto card (as gRPC serves it)."""
    from .dialects.v0_3 import decode_card_v03
    from .dialects.v0_3_protojson import card_from_proto
    from .errors import A2AError

    try:
        return decode_card_v03(doc)
    except A2AError as exc:
        first = exc.message
    try:
        return decode_card_v03(card_from_proto(doc))
    except A2AError:
        raise CardSignatureError(f"the card cannot be read: {first}") from None
