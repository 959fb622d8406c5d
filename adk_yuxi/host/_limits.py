"""Request limits checked before any route runs: the header block's size, the body's
size, and the body's type."""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["BodyLimit", "HeaderLimit", "JsonBodies"]


def _answer(status: int, code: str, message: str) -> list[Message]:
    payload = json.dumps({"error": {"code": code, "message": message}}).encode()
    return [
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
                (b"connection", b"close"),
            ],
        },
        {"type": "http.response.body", "body": payload},
    ]


class HeaderLimit:
    """Refuses a request whose header block (names and values, the path and query
    included) exceeds `max_bytes` with 431: the server itself accepts far more."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            size = len(scope.get("raw_path") or b"") + len(scope.get("query_string") or b"")
            size += sum(len(k) + len(v) + 4 for k, v in scope.get("headers") or ())
            if size > self.max_bytes:
                message = f"the request headers exceed {self.max_bytes} bytes"
                for part in _answer(431, "headers_too_large", message):
                    await send(part)
                return
        await self.app(scope, receive, send)


class BodyLimit:
    """Refuses a body over `max_bytes` with 413, by its declared length or as it
    arrives. Before answering, the rest of a body up to `drain_bytes` is read and
    dropped: closing a connection with unread bytes makes the client's TCP stack reset
    it, and a client still sending would see a broken connection instead of the 413.
    A body declared or sent beyond that bound is cut off."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.drain_bytes = max(4 * max_bytes, 1 << 20)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or ()).get(b"content-length")
        if declared is not None:
            try:
                length = int(declared)
            except ValueError:
                length = self.drain_bytes + 1
            if length > self.max_bytes:
                await self._refuse(receive, send, drain=length <= self.drain_bytes)
                return
        chunks: list[bytes] = []
        size = 0
        more = True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                more = bool(message.get("more_body", False))
                await self._refuse(receive, send, drain=more, drained=size)
                return
            chunks.append(chunk)
            more = bool(message.get("more_body", False))
        body = b"".join(chunks)
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _refuse(self, receive: Receive, send: Send, *, drain: bool, drained: int = 0) -> None:
        while drain and drained <= self.drain_bytes:
            message = await receive()
            if message["type"] != "http.request":
                break
            drained += len(message.get("body", b""))
            drain = bool(message.get("more_body", False))
        for part in _answer(413, "too_large", f"the body exceeds {self.max_bytes} bytes"):
            await send(part)


_WITH_BODY = frozenset({"POST", "PUT", "PATCH"})


def _is_json(content_type: bytes) -> bool:
    media = content_type.split(b";", 1)[0].strip().lower()
    return media == b"application/json" or (
        media.startswith(b"application/") and media.endswith(b"+json")
    )


class JsonBodies:
    """Refuses a request body that is not declared JSON with 415: every body this API
    reads is a JSON object, and a form or text body would otherwise be a puzzling 422.
    Placed inside `BodyLimit`, which has read the body already, so nothing is left
    unread on the connection. A request without a body passes."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope.get("method") in _WITH_BODY:
            headers = dict(scope.get("headers") or ())
            length = headers.get(b"content-length")
            has_body = b"transfer-encoding" in headers or (length is not None and length != b"0")
            if has_body and not _is_json(headers.get(b"content-type", b"")):
                message = "the body must be JSON (Content-Type: application/json)"
                for part in _answer(415, "unsupported_media_type", message):
                    await send(part)
                return
        await self.app(scope, receive, send)
