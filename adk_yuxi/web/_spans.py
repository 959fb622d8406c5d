"""The span of one web provider call: which provider, the HTTP status and the bytes of
its answer (`ProviderHttp` and the direct fetcher add them as they read it), how many
results, and the error code when it failed; its duration is the span's own.

The API key is never on it. The query (and a fetched URL and its host) is recorded
only when the operator sets `YUXI_TRACE_WEB_QUERIES=true`: a query is the user's words.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit

from opentelemetry.trace import Span, SpanKind

from ..observability._tracing import annotate, span

__all__ = ["QUERY_SWITCH", "provider_call", "record_exchange", "record_failure"]

QUERY_SWITCH = "YUXI_TRACE_WEB_QUERIES"


def _queries_recorded() -> bool:
    return os.environ.get(QUERY_SWITCH, "").strip().lower() in {"1", "true", "yes", "on"}


@contextmanager
def provider_call(operation: str, provider: str, text: str) -> Iterator[Span]:
    """A `yuxi.web.<operation>` client span around one call of `provider`."""
    attributes = {"yuxi.web.provider": provider, "yuxi.web.operation": operation}
    with span(f"yuxi.web.{operation}", attributes, kind=SpanKind.CLIENT) as current:
        if current.is_recording() and _queries_recorded():
            key = "yuxi.web.query" if operation == "search" else "url.full"
            current.set_attribute(key, text)
        yield current


def record_exchange(status: int, size: int | None, url: str, *, private: bool = False) -> None:
    """One HTTP exchange of the current call: status, body bytes and the host (the
    provider's; a fetched page's host only when queries are recorded)."""
    host = None if private and not _queries_recorded() else urlsplit(url).hostname
    annotate(
        {
            "http.response.status_code": status,
            "http.response.body.size": size,
            "server.address": host,
        }
    )


def record_failure(code: str) -> None:
    annotate({"yuxi.web.error": code})
