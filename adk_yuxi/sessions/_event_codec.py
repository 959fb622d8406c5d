"""Event rows: JSON written once, read back fast where that was proven exact.

Writing: the event is dumped as ADK's JSON (``exclude_none``), read back with
the fast validator (``_fast_events``), and the result compared with the
appended event by ``strict_equal`` (equal values *and* identical types at every
level). Only when they match does the row get ``fast_codec = FAST_CODEC``; any
other event (one with a value JSON cannot carry exactly, a model the fast
validator treats differently, a validation error) is stored with ``NULL``.

Reading: rows marked with the current ``FAST_CODEC`` are validated by the fast
validator, runs of them in one call; every other row (unmarked, or marked by
another version of the libraries) by ``Event.model_validate_json``. A marked row
the fast validator rejects (for example, edited by hand) is read the slow way
too. Each call parses fresh JSON, so every event, and everything mutable in
it, is a new object: two callers never share state.

The cyclic garbage collector is paused while a batch is decoded. Every object
made here survives (it is part of the result) and none forms garbage cycles, yet
each few hundred allocations would trigger a collection that rescans all of
them: measured, that made a 5,000-event session cost 45 µs per event instead of
16. Pausing replaces those passes with one afterwards. It is restored in
``finally`` and only if it was on, and decoding never awaits.
"""

from __future__ import annotations

import gc
import logging
from collections.abc import Sequence
from typing import Any

from google.adk.events.event import Event
from pydantic import ValidationError
from pydantic_core import PydanticSerializationError, SchemaValidator

from .._sql.errors import InvalidValueError
from ._fast_events import FAST_CODEC, fast_event_list_validator, fast_event_validator
from ._strict_equal import strict_equal

__all__ = ["FAST_CODEC", "decode_events", "encode_event"]

_log = logging.getLogger(__name__)
_validators: list[tuple[SchemaValidator, SchemaValidator] | None] = []


def _fast() -> tuple[SchemaValidator, SchemaValidator] | None:
    """The fast validators, or None if this ADK's schema cannot be rewritten."""
    if not _validators:
        try:
            _validators.append((fast_event_validator(), fast_event_list_validator()))
        except Exception:  # a future schema the rewrite does not understand
            _log.warning("Fast event loading is off: cannot compile the schema", exc_info=True)
            _validators.append(None)
    return _validators[0]


def encode_event(event: Event) -> tuple[str, str | None]:
    """The event's JSON and the codec tag its fast read-back was proven under."""
    try:
        data = event.model_dump_json(exclude_none=True)
    except PydanticSerializationError as exc:  # lone surrogates: not UTF-8 text
        raise InvalidValueError(f"Invalid event {event.id!r}: {exc}") from None
    fast = _fast()
    if fast is None:
        return data, None
    try:
        again = fast[0].validate_json(data)
    except ValidationError:
        return data, None
    return data, FAST_CODEC if strict_equal(again, event) else None


def decode_events(rows: Sequence[Any]) -> list[Event]:
    """Events from ``(data, fast_codec)`` rows, in row order."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _decode(rows)
    finally:
        if collecting:
            gc.enable()


def _decode(rows: Sequence[Any]) -> list[Event]:
    events: list[Event] = []
    run: list[str] = []
    fast = _fast()
    for data, codec in rows:
        if fast is not None and codec == FAST_CODEC:
            run.append(data)
            continue
        _flush(run, fast, events)
        events.append(Event.model_validate_json(data))
    _flush(run, fast, events)
    return events


def _flush(
    run: list[str], fast: tuple[SchemaValidator, SchemaValidator] | None, out: list[Event]
) -> None:
    if not run:
        return
    assert fast is not None
    try:
        out.extend(fast[1].validate_json("[" + ",".join(run) + "]"))
    except ValidationError:
        out.extend(Event.model_validate_json(data) for data in run)
    run.clear()
