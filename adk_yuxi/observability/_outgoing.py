"""The trace context on outgoing HTTP requests (W3C `traceparent`, `tracestate`).

`inject_trace_context` is an httpx request hook: an MCP client built by
`traced_mcp_http_client` sends the context current when each request is written (the
MCP SDK writes a request in its sender's context, inside its own `MCP send` span), so
the server's spans join the caller's trace. With no provider there is no valid span
and nothing is added. The headers are set per request, never on the client: ADK pools
MCP sessions by their configured headers, and a per-call header there would open a
session per call.
"""

from __future__ import annotations

from typing import Any

from opentelemetry import propagate

__all__ = ["inject_trace_context", "traced_mcp_http_client"]


async def inject_trace_context(request: Any) -> None:
    """Adds the current trace context to an httpx (or httpx2) request's headers."""
    propagate.inject(request.headers)


def traced_mcp_http_client(
    headers: dict[str, str] | None = None, timeout: Any = None, auth: Any = None
) -> Any:
    """ADK's MCP HTTP client (same signature: an `httpx_client_factory`) that sends
    the trace context with every request."""
    # Imported here: ADK's MCP client stack is heavy, and this package is imported by
    # every module that makes a span.
    from google.adk.tools.mcp_tool.mcp_session_manager import create_mcp_http_client

    client = create_mcp_http_client(headers=headers, timeout=timeout, auth=auth)
    client.event_hooks["request"].append(inject_trace_context)
    return client
