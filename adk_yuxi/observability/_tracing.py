"""adk_yuxi's spans: one module-level tracer and three one-line helpers.

Every span of ours goes through `span` (a block), `traced` (a whole coroutine) or
`annotate` (more attributes on the span already current). They use the OpenTelemetry
API only: with no SDK installed (or none configured) the API's no-op tracer answers,
no attribute is computed and nothing is recorded, so call sites need no "is tracing
on" branch. Spans start from the current context, so they nest under ADK's spans of
the same call (`invoke_agent`, `call_llm`, `execute_tool`) and under each other.

Exceptions mark a span failed with `error.type` (the exception's class) and no
message: messages may quote arguments, and a span never carries content.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, ParamSpec, TypeVar

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, StatusCode, Tracer, TracerProvider
from opentelemetry.util.types import AttributeValue

__all__ = [
    "INSTRUMENTATION_NAME",
    "Attributes",
    "annotate",
    "db_system",
    "mark_failed",
    "span",
    "traced",
    "use_tracer_provider",
]

INSTRUMENTATION_NAME = "adk_yuxi"
"""The instrumentation scope of every adk_yuxi span (filter on it in a collector)."""

Attributes = Mapping[str, AttributeValue | None]
"""Span attributes; a None value is left out."""

P = ParamSpec("P")
R = TypeVar("R")

_tracer: Tracer = trace.get_tracer(INSTRUMENTATION_NAME)


def use_tracer_provider(provider: TracerProvider | None) -> None:
    """Records adk_yuxi's spans with `provider` instead of the global one; None goes
    back to the global provider (the default, and what ADK's own spans use, so only
    the global provider puts ours under ADK's in one trace)."""
    global _tracer
    source = trace if provider is None else provider
    _tracer = source.get_tracer(INSTRUMENTATION_NAME)


def _set(target: Span, attributes: Attributes | None) -> None:
    if attributes:
        target.set_attributes({k: v for k, v in attributes.items() if v is not None})


def mark_failed(target: Span, error: BaseException | str) -> None:
    """`error.type` and an error status, without the message."""
    if target.is_recording():
        kind = error if isinstance(error, str) else type(error).__qualname__
        target.set_attribute("error.type", kind)
        target.set_status(StatusCode.ERROR)


@contextmanager
def span(
    name: str,
    attributes: Attributes | None = None,
    *,
    kind: SpanKind = SpanKind.INTERNAL,
    context: otel_context.Context | None = None,
) -> Iterator[Span]:
    """A span around the block, current inside it (child of the current span, or of
    `context`'s). An exception leaving the block marks it failed and propagates."""
    with _tracer.start_as_current_span(
        name, context=context, kind=kind, record_exception=False, set_status_on_exception=False
    ) as current:
        if current.is_recording():
            _set(current, attributes)
        try:
            yield current
        except (Exception, asyncio.CancelledError) as exc:
            mark_failed(current, exc)
            raise


def annotate(attributes: Attributes) -> None:
    """Adds attributes to the current span (ours or ADK's), if it records."""
    current = trace.get_current_span()
    if current.is_recording():
        _set(current, attributes)


def db_system(owner: Any) -> str | None:
    """`db.system.name` of the `SqlStore` behind `owner` (its `store`): `sqlite` or
    `postgresql`."""
    backend = getattr(getattr(owner, "store", None), "backend", None)
    return backend if isinstance(backend, str) else None


def traced(
    name: str,
    attributes: Callable[..., Attributes] | None = None,
    *,
    result: Callable[[Any], Attributes] | None = None,
) -> Callable[[Callable[P, Awaitable[R]]], Callable[P, Awaitable[R]]]:
    """Decorates a coroutine function with a span named `name`. `attributes` gets the
    call's own arguments (self included) and `result` its return value; both are
    called only when the span records."""

    def decorate(fn: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
        @functools.wraps(fn)
        async def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            with span(name) as current:
                recording = current.is_recording()
                if recording and attributes is not None:
                    _set(current, attributes(*args, **kwargs))
                value = await fn(*args, **kwargs)
                if recording and result is not None:
                    _set(current, result(value))
                return value

        return wrapper

    return decorate
