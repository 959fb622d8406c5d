"""Observability: adk_yuxi's OpenTelemetry spans, children of ADK's.

Library code uses the OpenTelemetry API only; an operator installs an SDK and an
exporter to record (see the operations docs). `use_tracer_provider` records our spans
with a provider other than the global one; `TracedRequests` is the ASGI middleware
the knowledge server runs under (FastAPI makes the host API's request spans itself,
and `RunIdOnRequest` adds the run to them); `traced_mcp_http_client` is the MCP
client factory that carries `traceparent` across to a server.
"""

from __future__ import annotations

from ._asgi import RunIdOnRequest, TracedRequests
from ._outgoing import inject_trace_context, traced_mcp_http_client
from ._tracing import INSTRUMENTATION_NAME, use_tracer_provider

__all__ = [
    "INSTRUMENTATION_NAME",
    "RunIdOnRequest",
    "TracedRequests",
    "inject_trace_context",
    "traced_mcp_http_client",
    "use_tracer_provider",
]
