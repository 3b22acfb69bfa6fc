"""A store URL as it may be shown: in logs, /healthz, and messages that name the store."""

from __future__ import annotations

import re

from ..core.urls import password_unescaped

__all__ = ["shown_url"]


def shown_url(url: str) -> str:
    """``url`` with its password (if any) replaced, fit for logs and /healthz."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    # the host part ends at a path, a query or a fragment (``redis://h:6379?password=x``
    # has no path)
    end = min((i for i in map(rest.find, "/?#") if i >= 0), default=len(rest))
    netloc, tail = rest[:end], rest[end:]
    if password_unescaped(netloc, rest):
        # ``u:pa/ss@host``: the password holds a ``/`` (or ``?``, ``#``) not escaped
        user_password, _, after = rest.rpartition("@")
        end = min((i for i in map(after.find, "/?#") if i >= 0), default=len(after))
        netloc, tail = user_password + "@" + after[:end], after[end:]
    user, at, host = netloc.rpartition("@")
    if at and ":" in user:
        netloc = user.split(":", 1)[0] + ":***@" + host
    # a password given as an option (asyncpg and redis take ``?password=``), whatever
    # else the query holds
    tail = _SECRET_OPTION.sub(r"\1=***", tail)
    return f"{scheme}://{netloc}{tail}"


#: query options whose values are secrets: ``password``, ``sslpassword`` and the like
_SECRET_OPTION = re.compile(r"(?i)((?:^|[?&;])[^=&;#]*(?:password|passwd|secret|token)"
                            r"[^=&;#]*)=[^&;#]*")
