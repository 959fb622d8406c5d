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
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route

from ._loopback import LoopbackServer, openai_error, openai_request

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


class EmbeddingServer(LoopbackServer):
    """Serves `/v1/embeddings` on 127.0.0.1 for the models in ``models``; `requests`
    holds every JSON body received, and `fail_with` (status, message) makes the next
    requests fail as a provider would; `delay_seconds` makes each answer slow."""

    name = "loopback embeddings"

    def __init__(
        self, *, api_key: str = "test-key", models: tuple[str, ...] = ("test-embed",),
        dims: int = 64, delay_seconds: float = 0.0,
    ) -> None:  # fmt: skip
        super().__init__()
        self.api_key = api_key
        self.models = models
        self.dims = dims
        self.delay_seconds = delay_seconds
        self.requests: list[dict[str, Any]] = []
        self.fail_with: tuple[int, str] | None = None

    @property
    def base_url(self) -> str:
        return self.url("/v1")

    def routes(self) -> list[BaseRoute]:
        return [Route("/v1/embeddings", self._embed, methods=["POST"])]

    async def _embed(self, request: Request) -> JSONResponse:
        body = await openai_request(request, self.api_key)
        if isinstance(body, JSONResponse):
            return body
        self.requests.append(body)
        if self.delay_seconds:
            await asyncio.sleep(self.delay_seconds)
        if self.fail_with is not None:
            return openai_error(self.fail_with[0], self.fail_with[1], "server_error")
        model, texts = body.get("model"), body.get("input")
        if model not in self.models:
            return openai_error(
                404, f"The model `{model}` does not exist.", "invalid_request_error"
            )
        if isinstance(texts, str):
            texts = [texts]
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            return openai_error(
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
