"""JSON values as the services store them, the same on SQLite and PostgreSQL.

PostgreSQL's JSONB and text columns cannot hold a NUL character, and no UTF-8
column can hold a lone surrogate; SQLite would take the first and fail on the
second with a driver error. So both are refused before any SQL runs, on both
backends alike, with an error naming the field.
"""

from __future__ import annotations

import decimal
import json
import re
from collections.abc import Mapping
from json.encoder import c_encode_basestring, c_make_encoder  # type: ignore[attr-defined]
from typing import Any

from pydantic_core import to_jsonable_python

from .errors import InvalidValueError
from .jsonbounds import MAX_INT_DIGITS, bound_json, bound_json_text

EMPTY = "{}"


_PLAIN = frozenset({str, bool, type(None)})
_INT_BOUND = 10**MAX_INT_DIGITS


def _plain(value: Any) -> bool:
    kind = type(value)
    if kind is int:
        return -_INT_BOUND < value < _INT_BOUND
    return kind in _PLAIN or (kind is float and value - value == 0.0)  # not NaN or inf


def json_safe(value: Mapping[str, Any]) -> dict[str, Any]:
    """Converts values to JSON data, as ADK's SQL services do.

    Values with no JSON form (a callable, say) are stored as their ``repr`` rather
    than failing the whole write; NaN and infinities become null because neither
    SQLite's nor PostgreSQL's JSON accepts them; nesting past `jsonbounds.MAX_DEPTH`,
    a container holding itself and an integer too long to read back are stored bounded,
    with a marker (`jsonbounds`). A mapping of plain scalars (the usual state delta) is
    already JSON data and is copied as it is.
    """
    for item in value.values():
        if not _plain(item):
            break
    else:
        return dict(value)
    value = bound_json(dict(value)).value
    try:
        converted = to_jsonable_python(value, inf_nan_mode="null")
    except Exception:
        converted = {}
        for key, item in value.items():
            try:
                converted[key] = to_jsonable_python(item, inf_nan_mode="null")
            except Exception:
                converted[key] = repr(item)
    return dict(converted)


# A JSON string literal, or a number written with an exponent (only floats are).
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?[eE][+-]?\d+')
_EXPONENT = re.compile(r"\d[eE][+-]?\d")


def _plain_float(found: re.Match[str]) -> str:
    token = found.group(0)
    if token.startswith('"'):
        return token
    text = format(decimal.Decimal(token), "f")
    return text if "." in text else text + ".0"


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
# The C encoder behind it, made once: ``json.dumps`` with options builds a new encoder
# (and the C one under it) at every call, which costs more than encoding a small state
# delta. Without a markers dict it does not look for cycles; a cycle ends in a
# RecursionError, turned back into json's own ValueError below.
_C_ENCODER = (
    None
    if c_make_encoder is None or c_encode_basestring is None
    else c_make_encoder(
        None, _ENCODER.default, c_encode_basestring, None, ":", ",", False, False, False
    )
)


def _encode(value: Any) -> str:
    if _C_ENCODER is None or isinstance(value, str):
        return _ENCODER.encode(value)
    try:
        return "".join(_C_ENCODER(value, 0))
    except RecursionError:
        raise ValueError("Circular reference detected") from None


def dumps(value: Any) -> str:
    """Compact JSON text; ``ensure_ascii=False`` keeps CJK readable and short.

    A float written with an exponent (``1.5e+300``) is written out in full with a
    decimal point instead: PostgreSQL's JSONB prints its numbers without exponents,
    so ``1.5e300`` would come back as a 301-digit integer. With the point it comes back
    as the same float, on every backend."""
    text = _encode(value)
    if _EXPONENT.search(text) is None:
        return text
    return _TOKENS.sub(_plain_float, text)


def _has_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_has_nul(k) or _has_nul(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_nul(item) for item in value)
    return False


def check_text(text: str, field: str) -> str:
    """The text if every backend can store it; else ``InvalidValueError`` naming ``field``."""
    if text.isascii() and "\x00" not in text:  # the usual id: nothing to encode
        return text
    if "\x00" in text:
        raise InvalidValueError(f"Invalid {field}: it contains a NUL character.")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidValueError(
            f"Invalid {field}: it contains a lone surrogate (U+{ord(text[exc.start]):04X}),"
            " which is not valid Unicode text."
        ) from None
    return text


def dumps_checked(value: Any, field: str) -> str:
    """``dumps`` of JSON data, refused up front if a backend could not store it."""
    text = dumps(value)
    # A NUL in the data is written as the escape \\u0000; confirm on the data,
    # since a string may hold a literal backslash followed by "u0000".
    if "\\u0000" in text and _has_nul(value):
        raise InvalidValueError(f"Invalid {field}: it contains a NUL character.")
    if not text.isascii():  # ASCII text holds neither NUL (escaped above) nor surrogates
        check_text(text, field)
    return text


def loads_bounded(text: str | bytes) -> Any:
    """``json.loads``, and for text past the bounds (stored before they held: nested
    deeper than Python's parser goes, an integer too long) the text bounded first.
    The PostgreSQL driver decodes JSONB columns with it too (`engine.create_engine`)."""
    try:
        return json.loads(text)
    except (RecursionError, ValueError):
        if isinstance(text, bytes):
            text = text.decode("utf-8")
        return json.loads(bound_json_text(text))


def loads(value: Any) -> dict[str, Any]:
    """Decodes a JSON object column (text on SQLite, JSONB on PostgreSQL)."""
    if value is None:
        return {}
    if isinstance(value, dict):
        return value
    decoded = loads_bounded(value)
    if not isinstance(decoded, dict):
        raise ValueError("Stored state is not a JSON object.")
    return decoded
