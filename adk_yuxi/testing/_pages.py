"""A loopback web server with pages for web_fetch tests and benchmarks: HTML, text,
redirects (to anywhere), oversize and slow bodies, other content types."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import AsyncIterator

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route

__all__ = ["PageServer"]


class PageServer:
    """Serves `pages` (path -> (content type, bytes)) and built-in routes on 127.0.0.1:

    `/redirect?to=URL` (302), `/loop` (redirects to itself), `/big?n=BYTES` (declared
    length), `/chunked?n=BYTES` (no length), `/slow` (a body that trickles for 30 s).
    `hits` counts requests per path, so tests can prove a refused fetch sent nothing.
    """

    def __init__(self, pages: dict[str, tuple[str, bytes]] | None = None) -> None:
        self.pages = dict(pages or {})
        self.page_headers: dict[str, dict[str, str]] = {}
        """Extra response headers per page path (e.g. a Content-Encoding)."""
        self.hits: dict[str, int] = {}
        self.hosts: list[str] = []
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def __enter__(self) -> PageServer:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        routes = [
            Route("/redirect", self._redirect),
            Route("/loop", self._loop),
            Route("/big", self._big),
            Route("/chunked", self._chunked),
            Route("/slow", self._slow),
            Route("/{path:path}", self._page),
        ]
        config = uvicorn.Config(Starlette(routes=routes), log_level="warning", lifespan="off")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the loopback page server did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.should_exit = True
            self._server.force_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)

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
