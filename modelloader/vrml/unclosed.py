"""Where a VRML file that ends early ended, and what it left open: the brackets still open at the
end (with the node or field each one belongs to and where it opened), read with VRML's lexical
rules for comments and strings, so that a truncated file's error says more than "ends early"."""

from __future__ import annotations

import re

_WORD_BEFORE = re.compile(r"(?:DEF\s+([^\s{}\[\]]+)\s+)?([A-Za-z_][\w\-]*)\s*$")


def end_of(text: str) -> tuple[int, int]:
    """(line, column) just past the last character, both from 1."""
    line = text.count("\n") + 1
    return line, len(text) - (text.rfind("\n") + 1) + 1


def still_open(text: str) -> list[str]:
    """The brackets open at the end of ``text``, outermost first, as "'{' of Transform at 12:3"."""
    opened: list[tuple[str, str, int, int]] = []
    line, line_start, i, n = 1, 0, 0, len(text)
    closed = ""  # the owner of the bracket closed last
    while i < n:
        ch = text[i]
        if ch == "\n":
            line, line_start = line + 1, i + 1
        elif ch == "#":  # a comment runs to the end of the line
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        elif ch == '"':
            i, line, line_start = _skip_string(text, i, line, line_start)
            continue
        elif ch in "{[":
            found = _WORD_BEFORE.search(text, max(0, i - 200), i)
            owner = "" if not found else found[2] if not found[1] else f"{found[2]} {found[1]}"
            if not owner and closed and _previous_char(text, i) == "]":  # PROTO Name [ ... ] { body }
                owner = f"the body of {closed}"
            opened.append((ch, owner, line, i - line_start + 1))
        elif ch in "}]" and opened:
            closed = opened.pop()[1]
        i += 1
    return [f"{ch!r} of {owner} at {ln}:{col}" if owner else f"{ch!r} at {ln}:{col}" for ch, owner, ln, col in opened]


def _previous_char(text: str, i: int) -> str:
    j = i - 1
    while j >= 0 and text[j].isspace():
        j -= 1
    return text[j] if j >= 0 else ""


def _skip_string(text: str, i: int, line: int, line_start: int) -> tuple[int, int, int]:
    """Past the string that opens at ``i`` (its closing quote, or the end of the text)."""
    i += 1
    while i < len(text) and text[i] != '"':
        if text[i] == "\\":
            i += 1
        elif text[i] == "\n":
            line, line_start = line + 1, i + 1
        i += 1
    return i + 1, line, line_start


def describe_end(text: str, path: str) -> str:
    """ "path:line:column: ... still open: ..." for a file that ends early."""
    line, column = end_of(text)
    unclosed = still_open(text)
    tail = f"; still open: {', '.join(unclosed[-3:])}" if unclosed else ""
    if len(unclosed) > 3:
        tail += f" (inside {len(unclosed) - 3} more)"
    return f"{path}:{line}:{column}: syntax error: the file ends early{tail}"
