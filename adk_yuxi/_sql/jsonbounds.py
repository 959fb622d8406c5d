"""Bounds on JSON-like values that came from outside: a tool's result, a model's call.

Every JSON parser accepts a document 200 levels deep, but pydantic's reader (which
reads every stored event back) stops at 200 levels of the whole event and its writer
at about 255, and neither takes a cycle, an integer of more than 4,300 digits or a
lone surrogate. A value past these bounds is copied with the part past them replaced
by a marker string (``CUT_MARK`` …), so it can always be stored and read back:

- nesting deeper than ``MAX_DEPTH`` levels: the container at that depth;
- a container that contains itself: the repeated container;
- an integer of more than ``MAX_INT_DIGITS`` digits;
- NaN and the infinities become ``None`` (JSON has no such numbers);
- with ``text=True``, lone surrogates in strings and keys become U+FFFD.

`bound_json` walks Python values; `bound_json_text` rewrites JSON text that is
already stored, without parsing it into Python objects (so a row of any depth reads).
"""

from __future__ import annotations

import math
import re
from itertools import accumulate
from typing import Any

from pydantic import BaseModel

__all__ = [
    "CUT_MARK",
    "MAX_DEPTH",
    "MAX_INT_DIGITS",
    "Bounded",
    "bound_json",
    "bound_json_text",
    "json_depth_over",
]

MAX_DEPTH = 100
"""Levels of nesting a stored value keeps: an event adds about ten around it, and the
reader stops at 200."""
MAX_INT_DIGITS = 4_000
"""Digits an integer keeps (Python and pydantic refuse to read more than 4,300)."""
CUT_MARK = "[yuxi: cut]"
"""How every marker string starts, so a reader can find what was cut."""

_SURROGATE = re.compile("[\ud800-\udfff]")


class Bounded:
    """The outcome of one `bound_json`: the value to store and the reasons anything was cut."""

    __slots__ = ("reasons", "value")

    def __init__(self, value: Any, reasons: frozenset[str]) -> None:
        self.value = value
        self.reasons = reasons

    @property
    def changed(self) -> bool:
        return bool(self.reasons)


def _mark(reason: str) -> str:
    return f"{CUT_MARK} {reason}"


DEPTH_REASON = f"nested deeper than {MAX_DEPTH} levels"
CYCLE_REASON = "a circular reference"
INT_REASON = f"an integer of more than {MAX_INT_DIGITS} digits"
NUMBER_REASON = "NaN or an infinity (stored as null)"
TEXT_REASON = "lone surrogates (replaced by U+FFFD)"


class _Walk:
    def __init__(self, text: bool, max_depth: int) -> None:
        self.text = text
        self.max_depth = max_depth
        self.reasons: set[str] = set()
        self.path: set[int] = set()

    def string(self, value: str) -> str:
        if self.text and not value.isascii() and _SURROGATE.search(value):
            self.reasons.add(TEXT_REASON)
            return _SURROGATE.sub("\ufffd", value)
        return value

    def value(self, value: Any, depth: int) -> Any:
        kind = type(value)
        if kind is str:
            return self.string(value)
        if kind is int:
            if -(10**MAX_INT_DIGITS) < value < 10**MAX_INT_DIGITS:
                return value
            self.reasons.add(INT_REASON)
            return _mark(INT_REASON)
        if kind is float:
            if math.isfinite(value):
                return value
            self.reasons.add(NUMBER_REASON)
            return None
        if not isinstance(value, dict | list | tuple | set | frozenset):
            return value  # bool, None, bytes, a model or a Part: pydantic writes them
        if depth >= self.max_depth:
            self.reasons.add(DEPTH_REASON)
            return _mark(DEPTH_REASON)
        key = id(value)
        if key in self.path:
            self.reasons.add(CYCLE_REASON)
            return _mark(CYCLE_REASON)
        self.path.add(key)
        try:
            return self.container(value, depth + 1)
        finally:
            self.path.discard(key)

    def container(self, value: Any, depth: int) -> Any:
        before = len(self.reasons)
        if isinstance(value, dict):
            items = {
                (self.string(k) if isinstance(k, str) else k): self.value(v, depth)
                for k, v in value.items()
            }
            same = len(items) == len(value) and all(
                items.get(k, _MISSING) is v for k, v in value.items()
            )
            return value if same and len(self.reasons) == before else items
        entries = [self.value(v, depth) for v in value]
        if isinstance(value, list) and all(a is b for a, b in zip(entries, value, strict=True)):
            return value
        return entries


_MISSING = object()


def bound_json(value: Any, *, text: bool = False, max_depth: int = MAX_DEPTH) -> Bounded:
    """``value`` within the bounds: the same object when nothing is past them, else a
    copy with markers (the original is never changed; it may be shared)."""
    walk = _Walk(text, max_depth)
    bounded = walk.value(value, 0)
    return Bounded(value if not walk.reasons else bounded, frozenset(walk.reasons))


def bound_model(model: BaseModel) -> tuple[BaseModel, frozenset[str]]:
    """A copy of ``model`` whose free-form values (a call's args, a response, a state
    delta) are within the bounds; ``model`` itself when they already are."""
    reasons: set[str] = set()

    def walk(node: Any) -> Any:
        if isinstance(node, BaseModel):
            updates = {}
            for name in type(node).model_fields:
                child = getattr(node, name, None)
                new = walk(child)
                if new is not child:
                    updates[name] = new
            return node.model_copy(update=updates) if updates else node
        if isinstance(node, list) and any(isinstance(v, BaseModel) for v in node):
            entries = [walk(v) for v in node]
            return entries if any(a is not b for a, b in zip(entries, node, strict=True)) else node
        if isinstance(node, dict | list):
            bounded = bound_json(node)
            reasons.update(bounded.reasons)
            return bounded.value
        return node

    return walk(model), frozenset(reasons)


# A string literal, a bracket, or a number.
_STRING = r'"[^"\\]*(?:\\.[^"\\]*)*"'
_STRINGS = re.compile(_STRING)
_SCAN = re.compile(_STRING + r"|[\[\]{}]|-?\d[\d.eE+-]*")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}
_NOT_BRACKETS = re.compile(r"[^\[\]{}]+")


def json_depth_over(text: str, limit: int) -> bool:
    """Whether JSON ``text`` nests deeper than ``limit`` (no scan when it has few brackets)."""
    if text.count("[") + text.count("{") <= limit:
        return False
    brackets = _NOT_BRACKETS.sub("", _STRINGS.sub("", text))
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0) > limit


def _too_long_int(token: str) -> bool:
    return len(token) > MAX_INT_DIGITS and not any(c in token for c in ".eE")


def bound_json_text(text: str, *, max_depth: int = MAX_DEPTH) -> str:
    """JSON ``text`` rewritten within the bounds: a container deeper than ``max_depth``
    and an integer of more than `MAX_INT_DIGITS` digits become marker strings. Never
    parses into Python objects, so text of any depth (a row stored before these
    bounds) is read in one pass."""
    out: list[str] = []
    depth = 0
    skip_from = -1  # the depth at which the container being skipped opened
    last = 0
    for found in _SCAN.finditer(text):
        token = found.group(0)
        start, end = found.span()
        if skip_from >= 0:
            if token in "[{":
                depth += 1
            elif token in "]}":
                depth -= 1
                if depth == skip_from:
                    skip_from = -1
                    last = end
            continue
        if token in "[{":
            if depth >= max_depth:
                out.append(text[last:start])
                out.append(f'"{_mark(DEPTH_REASON)}"')
                skip_from = depth
                depth += 1
                continue
            depth += 1
        elif token in "]}":
            depth -= 1
        elif token[0] != '"' and _too_long_int(token):
            out.append(text[last:start])
            out.append(f'"{_mark(INT_REASON)}"')
            last = end
    out.append(text[last:])
    return "".join(out)
