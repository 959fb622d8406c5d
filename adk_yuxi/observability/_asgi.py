"""HTTP server spans: `TracedRequests` makes them, `RunIdOnRequest` adds the run.

`TracedRequests` is an ASGI middleware for an app that has no spans of its own (the
knowledge server's Starlette app from the MCP SDK). It extracts the W3C `traceparent`
the caller sent, so a request from a traced client (the runtime's MCP client, a
gateway) joins the caller's trace, and makes the request's span current for
everything the request does. Attributes follow OpenTelemetry's HTTP server
conventions; the route is the template the router matched, never the query string, a
header or a body.

FastAPI (0.16x) makes that span itself, with the same conventions (the host API's);
`RunIdOnRequest` adds the run a request started or followed to it (`yuxi.run.id`).
"""

from __future__ import annotations

from collections.abc import Iterable, MutableMapping
from typing import Any

from opentelemetry import propagate, trace
from opentelemetry.propagators.textmap import Getter
from opentelemetry.trace import SpanKind, StatusCode

from ._tracing import span

__all__ = ["RUN_ID_HEADER", "RunIdOnRequest", "TracedRequests"]

RUN_ID_HEADER = b"x-run-id"
"""The response header naming the run a request started or followed (`yuxi.run.id`)."""

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]


class _Headers(Getter[list[tuple[bytes, bytes]]]):
    """Reads the ASGI scope's raw header list (names are lower case by the spec)."""

    def get(self, carrier: list[tuple[bytes, bytes]], key: str) -> list[str] | None:
        wanted = key.lower().encode("latin-1")
        found = [v.decode("latin-1") for k, v in carrier if k == wanted]
        return found or None

    def keys(self, carrier: list[tuple[bytes, bytes]]) -> list[str]:
        return [k.decode("latin-1") for k, _ in carrier]


_GETTER = _Headers()


def _route(scope: Scope) -> str | None:
    route = scope.get("route")
    path = getattr(route, "path", None)
    return path if isinstance(path, str) else None


def _run_id(scope: Scope, headers: Iterable[tuple[bytes, bytes]]) -> str | None:
    for name, value in headers:
        if name.lower() == RUN_ID_HEADER:
            return value.decode("latin-1")
    params = scope.get("path_params")
    run_id = params.get("run_id") if isinstance(params, dict) else None
    return run_id if isinstance(run_id, str) else None


class TracedRequests:
    """Wraps an ASGI app; requests of other types (lifespan, websocket) pass through."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        parent = propagate.extract(scope.get("headers") or [], getter=_GETTER)
        method = str(scope.get("method", "_OTHER"))
        attributes = {
            "http.request.method": method,
            "url.path": scope.get("path"),
            "url.scheme": scope.get("scheme"),
        }
        with span(method, attributes, kind=SpanKind.SERVER, context=parent) as current:
            if not current.is_recording():
                await self.app(scope, receive, send)
                return
            seen: dict[str, Any] = {}

            async def watched(message: Message) -> None:
                if message["type"] == "http.response.start":
                    seen["status"] = int(message["status"])
                    seen["run_id"] = _run_id(scope, message.get("headers") or [])
                await send(message)

            try:
                await self.app(scope, receive, watched)
            finally:
                route = _route(scope)
                if route is not None:
                    current.update_name(f"{method} {route}")
                    current.set_attribute("http.route", route)
                status = seen.get("status")
                if status is not None:
                    current.set_attribute("http.response.status_code", status)
                    if status >= 500:
                        current.set_attribute("error.type", str(status))
                        current.set_status(StatusCode.ERROR)
                run_id = seen.get("run_id") or _run_id(scope, ())
                if run_id:
                    current.set_attribute("yuxi.run.id", run_id)


class RunIdOnRequest:
    """Sets `yuxi.run.id` on the current (the framework's request) span from the
    response's `X-Run-Id` header or the route's `run_id`; nothing when it does not
    record."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        current = trace.get_current_span()
        if scope["type"] != "http" or not current.is_recording():
            await self.app(scope, receive, send)
            return

        async def watched(message: Message) -> None:
            if message["type"] == "http.response.start":
                run_id = _run_id(scope, message.get("headers") or [])
                if run_id:
                    current.set_attribute("yuxi.run.id", run_id)
            await send(message)

        await self.app(scope, receive, watched)
