"""An embeddings endpoint that answers the way a broken or hostile provider does: the
loopback `EmbeddingServer` with one of a few faults switched on by `fault`."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from adk_yuxi.testing import EmbeddingServer, hashed_embedding

PAD = 40 << 20  # bytes of blanks before a "huge" answer's JSON
_MARK = "12345.5"  # the value a "nan" or "inf" answer replaces


class HostileEmbeddingServer(EmbeddingServer):
    """`fault`: None (honest), "nan", "inf", "short" (one vector too few), "same_index"
    (every item index 0), "far_index" (indices from 5), "not_json", "huge" (valid JSON
    after `PAD` blanks), "trickle" (valid JSON after a blank every 0.2 s for 10 s),
    "echo_key" (a 401 that repeats the request's credentials)."""

    fault: str | None = None

    async def _embed(self, request: Request) -> Response:  # type: ignore[override]
        if self.fault == "echo_key":
            said = request.headers.get("authorization", "")
            return JSONResponse({"error": {"message": f"Incorrect API key: {said}"}}, 401)
        if self.fault is None:
            return await super()._embed(request)
        body = json.loads(await request.body())
        self.requests.append(body)
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        data: list[dict[str, Any]] = [
            {"object": "embedding", "index": i, "embedding": hashed_embedding(t, self.dims)}
            for i, t in enumerate(texts)
        ]
        if self.fault in ("nan", "inf"):
            data[-1]["embedding"][0] = float(_MARK)
        elif self.fault == "short":
            data = data[:-1]
        elif self.fault == "same_index":
            data = [dict(d, index=0) for d in data]
        elif self.fault == "far_index":
            data = [dict(d, index=d["index"] + 5) for d in data]
        elif self.fault == "not_json":
            return Response("<html>502 Bad Gateway</html>", 200, media_type="text/html")
        text = json.dumps({"object": "list", "data": data, "model": body["model"]})
        if self.fault in ("nan", "inf"):  # JSON has no NaN; Python's reader takes it
            text = text.replace(_MARK, "NaN" if self.fault == "nan" else "1e400")
        if self.fault == "huge":
            return StreamingResponse(_padded(text), media_type="application/json")
        if self.fault == "trickle":
            return StreamingResponse(_trickled(text), media_type="application/json")
        return Response(text, media_type="application/json")


def _padded(text: str) -> Iterator[bytes]:
    for _ in range(PAD >> 20):
        yield b" " * (1 << 20)
    yield text.encode()


async def _trickled(text: str) -> AsyncIterator[bytes]:
    for _ in range(50):
        yield b" "
        await asyncio.sleep(0.2)
    yield text.encode()
