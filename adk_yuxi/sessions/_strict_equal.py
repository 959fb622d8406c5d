"""Equality that also demands identical types, all the way down.

Pydantic's ``==`` compares field values with ``==``, which cannot see the
differences a rebuild from JSON could introduce: ``"STOP" == FinishReason.STOP``
(genai enums are ``str`` enums), ``1 == 1.0 == True``, and a tuple dumped as a
JSON list. ``strict_equal`` requires the exact same type for every nested value
and knows only plain JSON-like containers and pydantic models; any other type
counts as different, so an unknown value can only make the caller take the slow,
validating path.
"""

from __future__ import annotations

import enum
from typing import Any

from pydantic import BaseModel

_SCALARS = frozenset({type(None), str, int, bool, bytes})


def strict_equal(a: Any, b: Any) -> bool:
    """Whether ``a`` and ``b`` are equal with identical types at every level."""
    kind = type(a)
    if kind is not type(b):
        return False
    if kind in _SCALARS:
        return bool(a == b)
    if kind is float:
        # Different NaNs or -0.0 vs 0.0 are not worth a proof; call them different.
        return bool(a == b) and (a != 0.0 or str(a) == str(b))
    if kind is dict:
        return a.keys() == b.keys() and all(type(key) is str for key in a) and _same_values(a, b)
    if kind is list or kind is tuple:
        return len(a) == len(b) and all(
            x is y or strict_equal(x, y) for x, y in zip(a, b, strict=True)
        )
    if kind is set or kind is frozenset:
        # {1} == {True}; mapping each element to its type tells them apart.
        return bool(a == b) and {x: type(x) for x in a} == {y: type(y) for y in b}
    if isinstance(a, BaseModel):
        return (
            _same_fields(a.__dict__, b.__dict__)
            and strict_equal(a.__pydantic_extra__, b.__pydantic_extra__)
            and strict_equal(a.__pydantic_private__, b.__pydantic_private__)
        )
    if isinstance(a, enum.Enum):
        return a is b
    return False


def _same_fields(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """The hot loop of a model compare: field values pairwise, in field order.

    Both ``__dict__``s normally list the fields in declaration order; if one was
    built in another order the comparison fails, which only costs the fast path.
    """
    if list(a) != list(b):
        return False
    for x, y in zip(a.values(), b.values(), strict=True):
        if x is y:
            continue
        kind = type(x)
        if kind is not type(y):
            return False
        if kind is str:
            if x != y:
                return False
        elif not strict_equal(x, y):
            return False
    return True


def _same_values(a: dict[str, Any], b: dict[str, Any]) -> bool:
    for key, x in a.items():
        y = b[key]
        if x is not y and not strict_equal(x, y):
            return False
    return True
