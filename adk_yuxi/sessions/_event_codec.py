"""Event rows: JSON written once, read back fast where that was proven exact.

Appending stores ADK's JSON of the event and nothing else: ``fast_codec`` starts
NULL, so an append costs what ADK's own JSON dump and one INSERT cost. Reading
a row without the current mark validates it in full (``Event.model_validate_json``, as
ADK's services do) *and* with the fast validator (``_fast_events``); when the two
results are ``strict_equal`` (equal values, identical types at every level) the
row index is returned as proven and the service marks the row with
``FAST_CODEC`` in the background. Marked rows are read with the fast validator
only, runs of them in one call; a marked row it rejects (edited by hand) is read
the slow way. Each call parses fresh JSON, so no two callers share an object (a
run's read reuses what the session's previous run parsed: ``_event_cache``).

``YUXI_FAST_EVENTS=0`` switches the fast path off: every row is validated in full
and nothing is marked. Why and what it costs: ``docs/design/fast-events.md``.
"""

from __future__ import annotations

import gc
import logging
import os
from collections.abc import Sequence
from typing import Any

from google.adk.events.event import Event
from pydantic import ValidationError
from pydantic_core import PydanticSerializationError, SchemaValidator

from .._sql.errors import InvalidValueError
from .._sql.jsonbounds import (
    bound_json_text,
    bound_model,
)
from ._fast_events import FAST_CODEC, fast_event_list_validator, fast_event_validator
from ._strict_equal import strict_equal

__all__ = ["FAST_CODEC", "FAST_EVENTS_ENV", "decode_events", "encode_event"]

FAST_EVENTS_ENV = "YUXI_FAST_EVENTS"
_log = logging.getLogger(__name__)
_PAST_BOUNDS = ("depth exceeded", "Circular reference")
_validators: list[tuple[SchemaValidator, SchemaValidator] | None] = []


def _fast() -> tuple[SchemaValidator, SchemaValidator] | None:
    """The fast validators, or None if switched off or this ADK's schema cannot be
    rewritten."""
    if os.environ.get(FAST_EVENTS_ENV, "1").strip().lower() in ("0", "false", "off", "no"):
        return None
    if not _validators:
        try:
            _validators.append((fast_event_validator(), fast_event_list_validator()))
        except Exception:  # a future schema the rewrite does not understand
            _log.warning("Fast event loading is off: cannot compile the schema", exc_info=True)
            _validators.append(None)
    return _validators[0]


def encode_event(event: Event) -> str:
    """The event as ADK's JSON (``exclude_none``), as ADK's own services store it.

    An event from any source (a tool's result, a model's call) that pydantic cannot
    write (values nested past its depth, a container holding itself) is stored with its
    free-form values bounded and marked (`jsonbounds.bound_model`) instead of failing the
    turn. One it can write but not read back (nested past 200 levels, an integer of
    more than 4,300 digits) is read bounded (`_full`): either way the session stays
    readable, at no cost to the usual append. Lone surrogates are refused
    (`InvalidValueError`)."""
    try:
        return event.model_dump_json(exclude_none=True)
    except PydanticSerializationError as exc:
        if not any(reason in str(exc) for reason in _PAST_BOUNDS):
            raise InvalidValueError(f"Invalid event {event.id!r}: {exc}") from None
    bounded, reasons = bound_model(event)
    _log.warning("Event %r stored bounded: %s", event.id, ", ".join(sorted(reasons)))
    try:
        return bounded.model_dump_json(exclude_none=True)
    except PydanticSerializationError as exc:
        raise InvalidValueError(f"Invalid event {event.id!r}: {exc}") from None


def decode_events(rows: Sequence[Any]) -> tuple[list[Event], list[int]]:
    """Events from ``(data, fast_codec)`` rows in row order, and the indexes of the
    rows without the current mark that this call proved fast-readable.

    The cyclic collector is paused meanwhile: every object made here survives,
    and its passes over them cost more than the decoding (measured: 45 instead
    of 16 µs per event for 5,000 events). It is restored only if it was on.
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _decode(rows)
    finally:
        if collecting:
            gc.enable()


def _decode(rows: Sequence[Any]) -> tuple[list[Event], list[int]]:
    events: list[Event] = []
    proven: list[int] = []
    run: list[str] = []
    fast = _fast()
    for index, (data, codec) in enumerate(rows):
        if fast is not None and codec == FAST_CODEC:
            run.append(data)
            continue
        _flush(run, fast, events)
        event = _full(data)
        if fast is not None and _reads_the_same(fast[0], data, event):
            proven.append(index)
        events.append(event)
    _flush(run, fast, events)
    return events, proven


def _full(data: str) -> Event:
    """ADK's own validation of one row; a row past the reader's bounds (stored before
    they were enforced on write) reads with its deepest values and longest integers
    replaced by markers, so it can still be read and deleted."""
    try:
        return Event.model_validate_json(data)
    except ValidationError as exc:
        if all(error["type"] != "json_invalid" for error in exc.errors()):
            raise
        bounded = bound_json_text(data)
        if bounded == data:
            raise
    _log.warning("An event row past the reader's bounds is read bounded")
    return Event.model_validate_json(bounded)


def _reads_the_same(fast: SchemaValidator, data: str, full: Event) -> bool:
    try:
        return strict_equal(fast.validate_json(data), full)
    except ValidationError:
        return False


def _flush(
    run: list[str], fast: tuple[SchemaValidator, SchemaValidator] | None, out: list[Event]
) -> None:
    if not run:
        return
    assert fast is not None
    try:
        out.extend(fast[1].validate_json("[" + ",".join(run) + "]"))
    except ValidationError:
        out.extend(_full(data) for data in run)
    run.clear()
