"""Text from an agent, made safe to print on a terminal.

An agent is not trusted: its names, ids, status texts and error messages could
carry escape sequences (clear the screen, set the window's title, recolour) or
line breaks and carriage returns that forge or overwrite lines of the command's
own output. Every control character but tab is shown as an escape instead
(``\\x1b``: ESC, the C1 controls and DEL included), and a line break either folds
to one space (``one_line``: ids, names, error lines) or splits the text into lines
(``lines``, ``with_newlines``: message and artifact text). ``--json`` output is
JSON, escaped already, and does not come here.
"""

from __future__ import annotations

import re

__all__ = ["escape_controls", "lines", "one_line", "with_newlines"]

#: what ``str.splitlines`` splits at: a terminal or a reader may take each for a new line
_LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_BREAK_RUN = re.compile(f"[ \\t]*[{re.escape(_LINE_BREAKS)}]+[ \\t]*")
_BREAK = re.compile(f"\r\n|[{re.escape(_LINE_BREAKS)}]")

#: C0 but tab, DEL and C1, each to its escape
_ESCAPES = {code: f"\\x{code:02x}"
            for code in (*range(0x20), 0x7F, *range(0x80, 0xA0)) if code != 0x09}


def escape_controls(text: str) -> str:
    """``text`` with every control character but tab shown as ``\\xNN``."""
    return text.translate(_ESCAPES)


def one_line(text: str) -> str:
    """``text`` as one line: each run of line breaks (and the blanks around it) one
    space, those at either end left out, other controls escaped."""
    return escape_controls(_BREAK_RUN.sub(" ", text.strip(_LINE_BREAKS)))


def lines(text: str) -> list[str]:
    """``text``'s lines, each without controls (none: one empty line)."""
    return [escape_controls(line) for line in text.splitlines()] or [""]


def with_newlines(text: str) -> str:
    """``text`` with its line breaks as ``\\n`` and other controls escaped: a piece
    of text printed as it comes, whose lines may run on from the piece before."""
    return "\n".join(escape_controls(part) for part in _BREAK.split(text))
