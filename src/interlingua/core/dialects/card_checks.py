"""Checking an agent card document against each protocol version it claims.

A served card may carry several generations at once (interlingua's own
cards are v1.0 merged with the v0.3 rendering), so each generation the
document shows signs of is checked on its own: the members that
generation's schema requires, with the JSON types it requires. The
required members come from the published schemas (v0.1.0, v0.2.6, v0.3.0)
and the v1.0 proto's ``REQUIRED`` field behaviours. (The inspector's card
report; it lives with the codecs because each generation's schema is theirs.)
"""

from __future__ import annotations

from typing import Any

__all__ = ["check_card", "generations"]

_STR, _BOOL, _OBJ, _LIST = "string", "boolean", "object", "array"

# version -> card member -> JSON type; all of these are required
_REQUIRED: dict[str, dict[str, str]] = {
    "0.1": {"name": _STR, "url": _STR, "version": _STR, "capabilities": _OBJ, "skills": _LIST},
    "0.2/0.3": {"name": _STR, "description": _STR, "url": _STR, "version": _STR,
                "protocolVersion": _STR, "capabilities": _OBJ, "defaultInputModes": _LIST,
                "defaultOutputModes": _LIST, "skills": _LIST},
    "1.0": {"name": _STR, "description": _STR, "supportedInterfaces": _LIST, "version": _STR,
            "capabilities": _OBJ, "defaultInputModes": _LIST, "defaultOutputModes": _LIST,
            "skills": _LIST},
}
_SKILL: dict[str, dict[str, str]] = {
    "0.1": {"id": _STR, "name": _STR},
    "0.2/0.3": {"id": _STR, "name": _STR, "description": _STR, "tags": _LIST},
    "1.0": {"id": _STR, "name": _STR, "description": _STR, "tags": _LIST},
}
_INTERFACE: dict[str, dict[str, str]] = {
    "0.2/0.3": {"url": _STR, "transport": _STR},
    "1.0": {"url": _STR, "protocolBinding": _STR, "protocolVersion": _STR},
}
_INTERFACE_LIST = {"0.2/0.3": "additionalInterfaces", "1.0": "supportedInterfaces"}
_OPTIONAL: dict[str, dict[str, str]] = {
    "0.1": {"description": _STR, "documentationUrl": _STR, "authentication": _OBJ,
            "defaultInputModes": _LIST, "defaultOutputModes": _LIST, "provider": _OBJ},
    "0.2/0.3": {"preferredTransport": _STR, "additionalInterfaces": _LIST,
                "securitySchemes": _OBJ, "security": _LIST, "signatures": _LIST,
                "supportsAuthenticatedExtendedCard": _BOOL, "provider": _OBJ,
                "iconUrl": _STR, "documentationUrl": _STR},
    "1.0": {"securitySchemes": _OBJ, "securityRequirements": _LIST, "signatures": _LIST,
            "provider": _OBJ, "iconUrl": _STR, "documentationUrl": _STR},
}


def _type(value: Any) -> str:
    if isinstance(value, bool):
        return _BOOL
    if isinstance(value, str):
        return _STR
    if isinstance(value, dict):
        return _OBJ
    if isinstance(value, list):
        return _LIST
    if value is None:
        return "null"
    return "number"


def generations(doc: dict[str, Any]) -> list[str]:
    """The protocol generations a card document shows signs of, newest first."""
    found = []
    if "supportedInterfaces" in doc:
        found.append("1.0")
    if "protocolVersion" in doc or "preferredTransport" in doc or (
            "url" in doc and "authentication" not in doc):
        found.append("0.2/0.3")
    if "authentication" in doc and "protocolVersion" not in doc:
        found.append("0.1")
    return found or ["0.2/0.3"]


def _members(where: str, obj: Any, wanted: dict[str, str], *, required: bool) -> list[str]:
    if not isinstance(obj, dict):
        return [f"{where} is {_type(obj)}, not an object"]
    problems = []
    for name, kind in wanted.items():
        if name not in obj:
            if required:
                problems.append(f"{where}: the required member {name!r} is missing")
            continue
        got = _type(obj[name])
        if got != kind:
            problems.append(f"{where}.{name} is {got}, not {kind}")
    return problems


def check_card(doc: Any) -> list[dict[str, Any]]:
    """One report per generation: ``{"version", "ok", "problems", "warnings"}``.
    A warning does not make the card invalid, but a reader may refuse what it
    names (an empty skill list: the spec describes an agent by at least one
    skill, and the official SDKs warn of a card without)."""
    if not isinstance(doc, dict):
        return [{"version": "?", "ok": False, "problems": ["the card is not a JSON object"],
                 "warnings": []}]
    reports = []
    for version in generations(doc):
        problems = _members("card", doc, _REQUIRED[version], required=True)
        problems += _members("card", doc, _OPTIONAL[version], required=False)
        warnings = []
        skills = doc.get("skills")
        if isinstance(skills, list):
            for i, skill in enumerate(skills):
                problems += _members(f"skills[{i}]", skill, _SKILL[version], required=True)
            if not skills:
                warnings.append("skills is empty: an agent card should list at least one "
                                "skill (what the agent can do); some clients warn of or "
                                "refuse a card without")
        key = _INTERFACE_LIST.get(version)
        interfaces = doc.get(key) if key else None
        if isinstance(interfaces, list):
            for i, iface in enumerate(interfaces):
                problems += _members(f"{key}[{i}]", iface, _INTERFACE[version], required=True)
            if version == "1.0" and not interfaces:
                problems.append("supportedInterfaces is empty: the agent names no endpoint")
        if version == "0.2/0.3":
            pv = doc.get("protocolVersion")
            if isinstance(pv, str) and not pv.lstrip("v").startswith(("0.2", "0.3")):
                problems.append(f"protocolVersion {pv!r} is not a v0.2/v0.3 version")
        reports.append({"version": version, "ok": not problems, "problems": problems,
                        "warnings": warnings})
    return reports
