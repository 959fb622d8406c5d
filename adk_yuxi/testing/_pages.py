"""A loopback web server with pages for web_fetch tests and benchmarks: HTML, text,
redirects (to anywhere), oversize and slow bodies, other content types."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Route

from ._loopback import LoopbackServer

__all__ = ["PageServer"]


class PageServer(LoopbackServer):
    """Serves `pages` (path -> (content type, bytes)) and built-in routes on 127.0.0.1:

    `/redirect?to=URL` (302), `/loop` (redirects to itself), `/big?n=BYTES` (declared
    length), `/chunked?n=BYTES` (no length), `/slow` (a body that trickles for 30 s).
    `hits` counts requests per path, so tests can prove a refused fetch sent nothing.
    """

    name = "loopback page"

    def __init__(self, pages: dict[str, tuple[str, bytes]] | None = None) -> None:
        super().__init__()
        self.pages = dict(pages or {})
        self.page_headers: dict[str, dict[str, str]] = {}
        """Extra response headers per page path (e.g. a Content-Encoding)."""
        self.hits: dict[str, int] = {}
        self.hosts: list[str] = []

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/redirect", self._redirect),
            Route("/loop", self._loop),
            Route("/big", self._big),
            Route("/chunked", self._chunked),
            Route("/slow", self._slow),
            Route("/{path:path}", self._page),
        ]

    def _hit(self, request: Request) -> None:
        self.hits[request.url.path] = self.hits.get(request.url.path, 0) + 1
        self.hosts.append(request.headers.get("host", ""))

    async def _page(self, request: Request) -> Response:
        self._hit(request)
        found = self.pages.get(request.url.path)
        if found is None:
            return PlainTextResponse("not found", 404)
        content_type, body = found
        headers = {"Content-Type": content_type, **self.page_headers.get(request.url.path, {})}
        return Response(body, 200, headers)

    async def _redirect(self, request: Request) -> Response:
        self._hit(request)
        return Response(status_code=302, headers={"Location": request.query_params["to"]})

    async def _loop(self, request: Request) -> Response:
        self._hit(request)
        return Response(status_code=302, headers={"Location": "/loop"})

    async def _big(self, request: Request) -> Response:
        self._hit(request)
        return HTMLResponse("x" * int(request.query_params["n"]))

    async def _chunked(self, request: Request) -> Response:
        self._hit(request)
        n = int(request.query_params["n"])

        async def body() -> AsyncIterator[bytes]:
            sent = 0
            while sent < n:
                chunk = min(65536, n - sent)
                sent += chunk
                yield b"y" * chunk

        return StreamingResponse(body(), media_type="text/html")

    async def _slow(self, request: Request) -> Response:
        self._hit(request)

        async def body() -> AsyncIterator[bytes]:
            for _ in range(300):
                yield b"<p>."
                await asyncio.sleep(0.1)

        return StreamingResponse(body(), media_type="text/html")
