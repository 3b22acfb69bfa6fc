"""A v0.3 agent card (JSON) in the shape of the v0.3 proto's ``AgentCard``.

The JSON card and the proto's card differ where JSON Schema's unions meet
protobuf's oneofs: a security scheme is wrapped by its kind
(``apiKeySecurityScheme``, …), OAuth flows are a oneof (the first flow the card
names), and each security requirement's scope lists are ``{"list": [...]}``.
Everything else is the same object, as ProtoJSON.
"""

from __future__ import annotations

from typing import Any

__all__ = ["card_out"]

Doc = dict[str, Any]


def _flow_out(flow: Doc) -> Doc:
    return {k: flow[k] for k in ("authorizationUrl", "tokenUrl", "refreshUrl", "scopes")
            if k in flow}


def _scheme_out(s: Doc) -> Doc | None:
    kind = s.get("type")
    described = {"description": s["description"]} if s.get("description") else {}
    if kind == "apiKey":
        return {"apiKeySecurityScheme": {**described, "location": s.get("in", ""),
                                         "name": s.get("name", "")}}
    if kind == "http":
        inner = {**described, "scheme": s.get("scheme", "")}
        if s.get("bearerFormat"):
            inner["bearerFormat"] = s["bearerFormat"]
        return {"httpAuthSecurityScheme": inner}
    if kind == "oauth2":
        flows = s.get("flows") or {}
        # the proto's flows are a oneof: the first one the card names
        first = next(({name: _flow_out(f)} for name, f in flows.items() if isinstance(f, dict)),
                     {})
        inner = {**described, "flows": first}
        if s.get("oauth2MetadataUrl"):
            inner["oauth2MetadataUrl"] = s["oauth2MetadataUrl"]
        return {"oauth2SecurityScheme": inner}
    if kind == "openIdConnect":
        return {"openIdConnectSecurityScheme": {
            **described, "openIdConnectUrl": s.get("openIdConnectUrl", "")}}
    if kind == "mutualTLS":
        return {"mtlsSecurityScheme": described}
    return None


def _requirements(security: Any) -> list[Doc]:
    return [{"schemes": {k: {"list": v} for k, v in req.items()}} for req in security or ()]


def card_out(card: Doc) -> Doc:
    """A v0.3 JSON card -> the v0.3 proto's ``AgentCard`` (as ProtoJSON)."""
    out = dict(card)
    schemes = card.get("securitySchemes")
    if isinstance(schemes, dict):
        converted = {name: _scheme_out(s) for name, s in schemes.items() if isinstance(s, dict)}
        out["securitySchemes"] = {k: v for k, v in converted.items() if v is not None}
    if "security" in card:
        out["security"] = _requirements(card["security"])
    skills = []
    for skill in card.get("skills") or ():
        skill = dict(skill)
        if "security" in skill:
            skill["security"] = _requirements(skill["security"])
        skills.append(skill)
    out["skills"] = skills
    return out
