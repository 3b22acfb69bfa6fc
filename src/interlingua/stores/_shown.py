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
    # the user and password end at the last "@" before a query or a fragment: a
    # password may hold "/", "@" or digits alone unescaped (``u:12/x@h``, ``u:p@ss/w@h``),
    # which a parser reads as a host, a port and a path. (A file's path has no user.)
    query = min((i for i in map(rest.find, "?#") if i >= 0), default=len(rest))
    cut = -1 if rest.startswith("/") else rest.rfind("@", 0, query)
    host_end = min((i for i in map(rest.find, "/?#") if i >= 0), default=len(rest))
    if cut < 0 and password_unescaped(rest[:host_end], rest):
        cut = rest.rfind("@")  # ``u:pa?ss@h``: the "?" is the password's
    after = rest[cut + 1:]
    end = min((i for i in map(after.find, "/?#") if i >= 0), default=len(after))
    netloc, tail = rest[:cut + 1] + after[:end], after[end:]
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
