"""The one loopback HTTP server under every fake in ``adk_yuxi.testing``.

Each fake (the OpenAI script server, the embeddings server, the web providers, the page
server) is a set of Starlette routes; this base binds 127.0.0.1 on a free port, runs
uvicorn in a daemon thread, waits until it listens and stops it, so the fakes differ only
in what they answer. The OpenAI-shaped pieces (the error body, the Bearer check, the JSON
body) are here too: the chat and embeddings servers answer them alike.
"""

from __future__ import annotations

import socket
import threading
import time
from typing import Any, Self

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute

__all__ = ["LoopbackServer", "openai_error", "openai_request"]


class LoopbackServer:
    """A Starlette app from :meth:`routes` on 127.0.0.1, in a thread; a context manager.

    ``port`` is known once started; ``stop`` ends open streams too (``force_exit``), so a
    test that left a slow body streaming does not wait for it.
    """

    name = "loopback"
    """Says which server failed to start."""

    def __init__(self) -> None:
        self.port = 0
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    def routes(self) -> list[BaseRoute]:
        raise NotImplementedError

    def url(self, path: str = "", host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(
            Starlette(routes=self.routes()), log_level="warning", lifespan="off"
        )
        server = self._server = uvicorn.Server(config)
        thread = self._thread = threading.Thread(
            target=server.run, kwargs={"sockets": [sock]}, daemon=True
        )
        thread.start()
        deadline = time.monotonic() + 10
        while not server.started:
            if time.monotonic() > deadline or not thread.is_alive():
                raise RuntimeError(f"the {self.name} server did not start")
            time.sleep(0.005)

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
            self._server.force_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)


def openai_error(
    status: int, message: str, kind: str, code: str | int | None = None, **fields: Any
) -> JSONResponse:
    """An error as OpenAI's API (and servers compatible with it) sends one."""
    return JSONResponse(
        {"error": {"message": message, "type": kind, "code": code, **fields}}, status
    )


async def openai_request(request: Request, api_key: str) -> dict[str, Any] | JSONResponse:
    """The request's JSON body, or the error OpenAI answers a wrong key or a bad body with."""
    if request.headers.get("authorization") != f"Bearer {api_key}":
        return openai_error(401, "Incorrect API key provided.", "invalid_request_error")
    try:
        body = await request.json()
    except ValueError:
        return openai_error(400, "The body is not valid JSON.", "invalid_request_error")
    if not isinstance(body, dict):
        return openai_error(400, "The body must be a JSON object.", "invalid_request_error")
    return body
