"""What the platform decided, for operators: OpenTelemetry spans and metrics.

Library code uses the OpenTelemetry API only: spans are children of ADK's and record
nothing until an operator installs an SDK and an exporter; metrics go through
`instruments()`, no-ops until a provider is installed. `use_tracer_provider` and
`use_meter_provider` inject providers other than the global ones. `TracedRequests` is
the ASGI middleware the knowledge server runs under (FastAPI makes the host API's
request spans itself, and `RunIdOnRequest` adds the run to them);
`traced_mcp_http_client` carries `traceparent` across to an MCP server.
`enable_prometheus` installs the metrics SDK with its Prometheus reader (the
`observability` extra), which `yuxi serve api` and `yuxi serve knowledge` do with
`--metrics-port` or `--metrics-path`; it bounds the tool names and HTTP methods of
every series, ADK's too (`BoundedLabels`, `know_tools`).
"""

from __future__ import annotations

from ._asgi import RunIdOnRequest, TracedRequests
from ._labels import OTHER_METHOD, UNKNOWN_TOOL, BoundedLabels, know_tools
from ._metrics import (
    METER_NAME,
    YuxiMetrics,
    instruments,
    use_meter_provider,
    watch_pending_waitpoints,
)
from ._outgoing import inject_trace_context, traced_mcp_http_client
from ._prometheus import PrometheusExposition, enable_prometheus
from ._tracing import INSTRUMENTATION_NAME, use_tracer_provider

__all__ = [
    "INSTRUMENTATION_NAME",
    "METER_NAME",
    "OTHER_METHOD",
    "UNKNOWN_TOOL",
    "BoundedLabels",
    "PrometheusExposition",
    "RunIdOnRequest",
    "TracedRequests",
    "YuxiMetrics",
    "enable_prometheus",
    "inject_trace_context",
    "instruments",
    "know_tools",
    "traced_mcp_http_client",
    "use_meter_provider",
    "use_tracer_provider",
    "watch_pending_waitpoints",
]
