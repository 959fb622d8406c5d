"""Loopback fakes of the web search and fetch providers, speaking their wire protocols.

One server answers Tavily (`/search`, `/extract`), DeepSeek (`/v1/tools/search`,
`/v1/tools/fetch`) and Doubao (`/search_api/web_search`) at distinct path prefixes, so
the real adapters run over real HTTP. Each checks the Bearer key and answers a wrong one
in its provider's documented error shape (Doubao inside an HTTP 200 envelope). Tests
queue `Reply`s for a path to produce each error shape, a malformed body or a slow answer.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections import defaultdict, deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Route

from ._loopback import LoopbackServer

__all__ = [
    "DEEPSEEK",
    "DOUBAO",
    "TAVILY",
    "ProviderFakeServer",
    "Reply",
    "deepseek_error",
    "doubao_error",
    "tavily_error",
]

TAVILY = "/tavily"
DEEPSEEK = "/deepseek"
DOUBAO = "/doubao"


@dataclass
class Reply:
    """One scripted answer: a JSON body (or raw bytes), a status, headers, a delay, and
    optionally the body streamed in `chunk_bytes` pieces (no Content-Length) every
    `trickle_s` seconds: a stalling peer, or an endless body."""

    body: Any = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    raw: bytes | None = None
    delay_s: float = 0.0
    trickle_s: float = 0.0
    chunk_bytes: int = 0


def tavily_error(status: int, message: str, headers: dict[str, str] | None = None) -> Reply:
    return Reply({"detail": {"error": message}}, status, headers or {})


def deepseek_error(
    status: int,
    message: str,
    kind: str = "invalid_request_error",
    headers: dict[str, str] | None = None,
) -> Reply:
    body = {"error": {"message": message, "type": kind, "param": None, "code": None}}
    return Reply(body, status, headers or {})


def doubao_error(code: str, code_n: int, message: str, status: int = 200) -> Reply:
    meta = {"RequestId": "fake", "Error": {"Code": code, "CodeN": code_n, "Message": message}}
    return Reply({"ResponseMetadata": meta, "Result": None}, status)


def _tavily_search(body: dict[str, Any]) -> dict[str, Any]:
    count = int(body.get("max_results", 5))
    results = [
        {
            "title": f"{body['query']} — result {i}",
            "url": f"https://example.com/{i}",
            "content": f"About {body['query']} ({i})",
            "score": round(0.9 - i * 0.1, 3),
            "raw_content": None,
        }
        for i in range(count)
    ]
    return {
        "query": body["query"],
        "answer": None,
        "images": [],
        "results": results,
        "response_time": "0.42",
        "request_id": "fake",
    }


def _tavily_extract(body: dict[str, Any]) -> dict[str, Any]:
    urls = body["urls"] if isinstance(body["urls"], list) else [body["urls"]]
    return {
        "results": [
            {"url": u, "raw_content": f"# Page\n\nContent of {u}", "images": []} for u in urls
        ],
        "failed_results": [],
        "response_time": 0.5,
        "request_id": "fake",
    }


def _deepseek_search(body: dict[str, Any]) -> dict[str, Any]:
    count = int(body.get("count", 10))
    results = [
        {
            "rerank_score": round(2.9 - i * 0.5, 2),
            "title": f"{body['query']} — {i}",
            "url": f"https://example.org/{i}",
            "snippet": f"Snippet {i}",
            "summary": f"Summary {i}",
            "content": "",
            "site_name": "Example",
            "site_icon": "https://example.org/favicon.ico",
            "date": "2026-06-01T00:00:00+00:00",
            "authority": 3,
        }
        for i in range(count)
    ]
    return {"results": results}


def _deepseek_fetch(body: dict[str, Any]) -> dict[str, Any]:
    return {"title": "Fetched", "content": f"# Fetched\n\n{body['url']}"}


def _doubao_search(body: dict[str, Any]) -> dict[str, Any]:
    count = int(body.get("Count", 10))
    rows = [
        {
            "SortId": i + 1,
            "Title": f"{body['Query']} 结果 {i}",
            "SiteName": "Python Org",
            "Url": f"https://www.python.org/{i}",
            "Snippet": f"摘要 {i}",
            "Summary": "Python 编程语言官方网站",
            "Content": "",
            "PublishTime": "2026-01-01T00:00:00+08:00",
            "RankScore": 0.98,
            "AuthInfoDes": "正常权威",
            "AuthInfoLevel": 2,
        }
        for i in range(count)
    ]
    return {
        "ResponseMetadata": {"RequestId": "r1"},
        "Result": {
            "ResultCount": len(rows),
            "TimeCost": 150,
            "LogId": "l1",
            "SearchContext": {"OriginQuery": body["Query"]},
            "WebResults": rows,
        },
    }


_DEFAULTS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    f"{TAVILY}/search": _tavily_search,
    f"{TAVILY}/extract": _tavily_extract,
    f"{DEEPSEEK}/v1/tools/search": _deepseek_search,
    f"{DEEPSEEK}/v1/tools/fetch": _deepseek_fetch,
    f"{DOUBAO}/search_api/web_search": _doubao_search,
}


def _unauthorized(path: str) -> Reply:
    if path.startswith(TAVILY):
        return tavily_error(401, "Unauthorized: missing or invalid API key.")
    if path.startswith(DEEPSEEK):
        return deepseek_error(401, "Invalid token.", "authentication_error")
    return doubao_error("10403", 10403, "permission denied: invalid api key")


async def _trickle(data: bytes, size: int, every_s: float) -> AsyncIterator[bytes]:
    for index in range(0, len(data), size):
        yield data[index : index + size]
        await asyncio.sleep(every_s)


class ProviderFakeServer(LoopbackServer):
    """Serves every provider fake on 127.0.0.1; `base_url(TAVILY)` etc. is what the
    settings' base URL should be. `requests` records (path, authorization, body)."""

    name = "loopback provider"

    def __init__(self, *, api_key: str = "test-key") -> None:
        super().__init__()
        self.api_key = api_key
        self.requests: list[tuple[str, str | None, Any]] = []
        self._replies: dict[str, deque[Reply]] = defaultdict(deque)
        self._lock = threading.Lock()

    def base_url(self, provider: str) -> str:
        return self.url(provider)

    def routes(self) -> list[BaseRoute]:
        return [Route(path, self._handle, methods=["POST"]) for path in _DEFAULTS]

    def queue(self, path: str, *replies: Reply) -> None:
        """Answers the next requests to `path` (e.g. `TAVILY + "/search"`) with `replies`."""
        with self._lock:
            self._replies[path].extend(replies)

    async def _handle(self, request: Request) -> Response:
        path = request.url.path
        authorization = request.headers.get("authorization")
        try:
            body: Any = await request.json()
        except ValueError:
            body = None
        with self._lock:
            self.requests.append((path, authorization, body))
            scripted = self._replies[path].popleft() if self._replies[path] else None
        if authorization != f"Bearer {self.api_key}":
            scripted = _unauthorized(path)
        elif scripted is None:
            if not isinstance(body, dict):
                return JSONResponse({"error": {"message": "bad body"}}, 400)
            scripted = Reply(_DEFAULTS[path](body))
        if scripted.delay_s:
            await asyncio.sleep(scripted.delay_s)
        if scripted.trickle_s or scripted.chunk_bytes:
            data = scripted.raw if scripted.raw is not None else json.dumps(scripted.body).encode()
            return StreamingResponse(
                _trickle(data, scripted.chunk_bytes or 1, scripted.trickle_s),
                scripted.status,
                scripted.headers,
                media_type="application/json",
            )
        if scripted.raw is not None:
            return Response(
                scripted.raw, scripted.status, scripted.headers, media_type="application/json"
            )
        return JSONResponse(scripted.body, scripted.status, scripted.headers)
