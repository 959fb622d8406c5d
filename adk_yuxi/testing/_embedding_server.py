"""A loopback OpenAI-compatible embeddings server (``POST /v1/embeddings``).

Tests point `OpenAIEmbedder` (real HTTP, real JSON) at it instead of a paid API. Its
vectors hash each word of the input into a few of `dims` dimensions, so texts sharing
words are similar: enough to check ranking end to end, with no model at all.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import re
import socket
import threading
import time
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

__all__ = ["EmbeddingServer", "hashed_embedding"]

_WORD = re.compile(r"\w+")


def hashed_embedding(text: str, dims: int) -> list[float]:
    """A unit vector: each word (lower case) adds 1 to the dimension its hash picks."""
    vector = [0.0] * dims
    for word in _WORD.findall(text.lower()):
        digest = hashlib.blake2b(word.encode(), digest_size=4).digest()
        vector[int.from_bytes(digest, "little") % dims] += 1.0
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return [v / norm for v in vector]


def _error(status: int, message: str, kind: str) -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": kind, "code": None}}, status)


class EmbeddingServer:
    """Serves `/v1/embeddings` on 127.0.0.1 for the models in ``models``; `requests`
    holds every JSON body received, and `fail_with` (status, message) makes the next
    requests fail as a provider would; `delay_seconds` makes each answer slow."""

    def __init__(
        self, *, api_key: str = "test-key", models: tuple[str, ...] = ("test-embed",),
        dims: int = 64, delay_seconds: float = 0.0,
    ) -> None:  # fmt: skip
        self.api_key = api_key
        self.models = models
        self.dims = dims
        self.delay_seconds = delay_seconds
        self.requests: list[dict[str, Any]] = []
        self.fail_with: tuple[int, str] | None = None
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._port}/v1"

    def __enter__(self) -> EmbeddingServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self._port = sock.getsockname()[1]
        app = Starlette(routes=[Route("/v1/embeddings", self._embed, methods=["POST"])])
        self._server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the loopback embeddings server did not start")
            time.sleep(0.01)

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)

    async def _embed(self, request: Request) -> JSONResponse:
        if request.headers.get("authorization") != f"Bearer {self.api_key}":
            return _error(401, "Incorrect API key provided.", "invalid_request_error")
        try:
            body = await request.json()
        except ValueError:
            return _error(400, "The body is not JSON.", "invalid_request_error")
        self.requests.append(body)
        if self.delay_seconds:
            await asyncio.sleep(self.delay_seconds)
        if self.fail_with is not None:
            return _error(self.fail_with[0], self.fail_with[1], "server_error")
        model, texts = body.get("model"), body.get("input")
        if model not in self.models:
            return _error(404, f"The model `{model}` does not exist.", "invalid_request_error")
        if isinstance(texts, str):
            texts = [texts]
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            return _error(
                400, "input must be a string or a list of strings.", "invalid_request_error"
            )
        data = [
            {"object": "embedding", "index": i, "embedding": hashed_embedding(t, self.dims)}
            for i, t in enumerate(texts)
        ]
        data.reverse()  # order by `index`, as clients must: the protocol does not promise it
        tokens = sum(len(_WORD.findall(t)) for t in texts)
        return JSONResponse(
            {"object": "list", "data": data, "model": model,
             "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}
        )  # fmt: skip
