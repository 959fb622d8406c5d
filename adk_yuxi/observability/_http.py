"""`http.server.request.duration` of an ASGI app, by route template and status.

Pure ASGI (no response buffering): a streamed response is timed to its last byte, so
a run's event stream counts as long as it stays open. The route is the template the
router matched (`/v1/agents/{agent_id}/sessions`), never the path with its ids; a
request no route matched has none.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from ._metrics import instruments

__all__ = ["HttpServerMetrics"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class HttpServerMetrics:
    """Times every HTTP request of `app` (the outermost middleware)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start, status = time.perf_counter(), 500

        async def sent(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, sent)
        finally:
            route = getattr(scope.get("route"), "path", None)
            seconds = time.perf_counter() - start
            instruments().http_request(scope["method"], route, status, seconds)
