"""Fixtures of the observability tests.

`metrics_url`: a Prometheus exposition for one test, with its own meter provider (the
global one is set once per process, so it is injected), served on a loopback port.

`spans`: one SDK tracer provider for the whole test session, recording only inside a
test that asks for it. OpenTelemetry lets a process set its global tracer provider
once, and ADK's spans go to the global one, so the provider is set the first time a
test needs it and stays; its sampler drops every span unless a `spans` test is running.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import Decision, Sampler, SamplingResult

from adk_yuxi.observability import enable_prometheus, use_meter_provider
from tests.sql_backends import db_url, pg_schema, services

__all__ = ["db_url", "metrics_url", "pg_schema", "services"]


@pytest.fixture
def metrics_url() -> Iterator[str]:
    """The URL a Prometheus server would scrape for this test's metrics."""
    exposed = enable_prometheus("yuxi-test", set_global=False)
    port = exposed.serve("127.0.0.1", 0)
    try:
        yield f"http://127.0.0.1:{port}/metrics"
    finally:
        exposed.shutdown()
        use_meter_provider(None)


class _Switch(Sampler):
    on = False

    def should_sample(self, parent_context, trace_id, name, kind=None, attributes=None, links=None):  # type: ignore[no-untyped-def]
        decision = Decision.RECORD_AND_SAMPLE if self.on else Decision.DROP
        return SamplingResult(decision, attributes if self.on else None)

    def get_description(self) -> str:
        return "on while a spans test runs"


_SWITCH = _Switch()
_EXPORTER = InMemorySpanExporter()


def _install() -> None:
    current = trace.get_tracer_provider()
    if isinstance(current, TracerProvider):
        if getattr(current, "_yuxi_test", False):
            return
        raise RuntimeError("another test set a tracer provider; the span tests need theirs")
    provider = TracerProvider(sampler=_SWITCH)
    provider.add_span_processor(SimpleSpanProcessor(_EXPORTER))
    provider._yuxi_test = True  # type: ignore[attr-defined]
    trace.set_tracer_provider(provider)


class Spans:
    """The spans finished during the test, with lookups by name and attribute."""

    def all(self) -> Sequence[ReadableSpan]:
        return _EXPORTER.get_finished_spans()

    def named(self, prefix: str) -> list[ReadableSpan]:
        return [s for s in self.all() if s.name.startswith(prefix)]

    def one(self, prefix: str, **attributes: object) -> ReadableSpan:
        found = [
            s
            for s in self.named(prefix)
            if all(
                (s.attributes or {}).get(k.replace("__", ".")) == v for k, v in attributes.items()
            )
        ]
        assert len(found) == 1, (prefix, attributes, [(s.name, s.attributes) for s in self.all()])
        return found[0]

    def parent(self, span: ReadableSpan) -> ReadableSpan | None:
        if span.parent is None:
            return None
        for other in self.all():
            if other.context.span_id == span.parent.span_id:
                return other
        return None

    def ancestors(self, span: ReadableSpan) -> list[str]:
        names = []
        current = self.parent(span)
        while current is not None:
            names.append(current.name)
            current = self.parent(current)
        return names


@pytest.fixture
def spans() -> Iterator[Spans]:
    _install()
    _EXPORTER.clear()
    _SWITCH.on = True
    try:
        yield Spans()
    finally:
        _SWITCH.on = False
        _EXPORTER.clear()
