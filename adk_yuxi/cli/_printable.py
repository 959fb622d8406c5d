"""Text a person's terminal can show as it is: every table cell and line the CLI prints.

Questions, mark reasons, run errors and ids come from models and users. A newline in
one would forge a row of a table; an escape sequence (``ESC ] 0 ; … BEL`` retitles the
window, others move the cursor or hide text) would reach the operator's terminal raw.
So every control character (C0 with newline and tab, DEL, C1), line and paragraph
separators and the invisible bidirectional and format characters are shown as
escapes (``\\n``, ``\\x1b``, ``\\u202e``); a line longer than `MAX_LINE` keeps its
head and says how long it was. JSON output stays exact: the same characters are
written as JSON escapes there, which decode to the same text.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["MAX_LINE", "json_safe_text", "one_line", "printable"]

MAX_LINE = 400
"""Characters of an error line kept whole; past it, its head and its length."""
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb"
    "\ud800-\udfff]"
)


def _escape(found: re.Match[str]) -> str:
    char = found.group(0)
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(value: object) -> str:
    """`value` as one line of visible text: control and invisible characters escaped."""
    text = str(value)
    if text.isprintable():
        return text
    text = _UNSAFE.sub(_escape, text)
    if not text.isascii():
        text = "".join(f"\\u{ord(c):04x}" if unicodedata.category(c) == "Cf" else c for c in text)
    return text


def one_line(text: str, limit: int = MAX_LINE) -> str:
    """An error line: `printable`, and bounded (a 20 KB argument is not echoed whole)."""
    shown = printable(text)
    if len(shown) <= limit:
        return shown
    return f"{shown[:limit]}… ({len(text)} characters in all)"


_JSON_UNSAFE = re.compile("[\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff]")


def json_safe_text(text: str) -> str:
    """JSON text with the characters a terminal acts on (DEL, C1, separators, bidi)
    written as ``\\uXXXX`` escapes: the same JSON value, nothing raw on the screen.
    (``json.dumps`` already escapes C0, newline included.)"""
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)
