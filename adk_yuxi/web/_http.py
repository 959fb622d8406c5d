"""JSON over HTTPS to a provider, and the one place transport and HTTP failures become
`ProviderError`s. Each adapter only says how its error bodies read."""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import ssl
import time
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

import httpx

from ._errors import ProviderError, WebConfigError
from ._spans import record_exchange, record_failure

__all__ = ["ProviderHttp", "error_text", "header_safe", "parse_retry_after"]

logger = logging.getLogger("adk_yuxi.web.providers")

_MAX_BODY = 8 * 1024 * 1024
_LOG_CHARS = 300
_STATUS_CODES: Mapping[int, str] = {
    400: "bad_request",
    401: "auth_failed",
    402: "quota_exhausted",
    403: "auth_failed",
    422: "bad_request",
    429: "rate_limited",
    432: "quota_exhausted",
    433: "quota_exhausted",
}


def header_safe(value: str) -> bool:
    """Printable ASCII without blanks: what an Authorization header can carry as is."""
    return bool(value) and value.isascii() and value.isprintable() and " " not in value


@cache
def _ssl_context() -> ssl.SSLContext:
    # Loading the CA bundle costs milliseconds; one verified context serves every call.
    return httpx.create_ssl_context()


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a `Retry-After` header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - time.time()
    if seconds != seconds:  # NaN
        return None
    return max(0.0, min(seconds, 24 * 3600.0))


ErrorReader = Callable[[Any], str | None]
"""Pulls a provider's error message out of a decoded error body (for logs only)."""


class ProviderHttp:
    """POSTs JSON with a Bearer key to one provider; returns the decoded 200 body."""

    def __init__(
        self,
        provider: str,
        base_url: str,
        key: str,
        *,
        timeout_s: float,
        read_error: ErrorReader,
        headers: Mapping[str, str] | None = None,
        not_found: str = "provider_error",
    ) -> None:
        if not header_safe(key):
            raise WebConfigError(
                f"the {provider} API key has characters an HTTP header cannot carry"
                " (only printable ASCII without blanks; a pasted invisible character?)"
            )
        self.provider = provider
        self.base_url = base_url
        self._key = key
        self._timeout = timeout_s
        self._read_error = read_error
        self._headers = dict(headers or {})
        self._not_found = not_found

    def __repr__(self) -> str:
        return f"ProviderHttp({self.provider!r}, {self.base_url!r}, key=***)"

    def _redact(self, text: str) -> str:
        """The key (also as JSON writes it) replaced in the whole text, then the cut: a
        cut first could keep part of a key that straddles it."""
        for form in {self._key, json.dumps(self._key)[1:-1], self._key.replace("/", "\\/")}:
            if form:
                text = text.replace(form, "***")
        return text[:_LOG_CHARS]

    def error(self, code: str, detail: str = "", **fields: Any) -> ProviderError:
        shown = fields.get("provider_code")
        if isinstance(shown, str) and self._key in shown:
            fields["provider_code"] = None  # a code field echoing the key is not shown
        error = ProviderError(code, provider=self.provider, detail=self._redact(detail), **fields)
        record_failure(code)
        logger.warning("web provider %s failed: %s", self.provider, error)
        return error

    async def post_json(self, path: str, body: Mapping[str, Any], *, not_found: str = "") -> Any:
        """The decoded 200 body. One deadline covers the whole call (connect, send, every
        read), and the body is read as a stream under a byte cap, so a provider trickling
        bytes or sending an endless body cannot hold the run. A 404 is `not_found`
        (default: this provider's)."""
        headers = {
            **self._headers,
            "Authorization": f"Bearer {self._key}",
            "Content-Type": "application/json",
            "Accept": "application/json",
        }
        try:
            async with asyncio.timeout(self._timeout):
                status, retry_after, raw = await self._exchange(
                    self.base_url + path, json.dumps(body), headers
                )
        except TimeoutError:
            raise self.error("timeout", f"no full answer within {self._timeout:g} s") from None
        except httpx.TimeoutException as exc:
            raise self.error("timeout", type(exc).__name__) from None
        except httpx.TransportError as exc:
            raise self.error("unreachable", type(exc).__name__) from None
        except httpx.DecodingError:
            raise self.error("malformed_response", "undecodable body") from None
        record_exchange(status, None if raw is None else len(raw), self.base_url)
        if raw is None:
            raise self.error("malformed_response", "body too large", status=status)
        try:
            decoded: Any = json.loads(raw)
        except ValueError:
            decoded = None
        if status == 200:
            if decoded is None:
                raise self.error("malformed_response", "not JSON", status=200)
            return decoded
        detail = self._read_error(decoded) if decoded is not None else None
        # The whole text goes to `error`, which redacts the key before it cuts.
        detail = detail or raw.decode("utf-8", "replace")
        if status == 404:
            code = not_found or self._not_found
        elif status >= 500:
            code = "provider_error"
        else:
            code = _STATUS_CODES.get(status, "provider_error")
        raise self.error(
            code,
            f"HTTP {status}: {detail}",
            status=status,
            retry_after_s=parse_retry_after(retry_after),
        )

    async def _exchange(
        self, url: str, content: str, headers: Mapping[str, str]
    ) -> tuple[int, str | None, bytes | None]:
        """Status, `Retry-After` and the body, or None for a body over the cap (the read
        stops there: the rest is never buffered)."""
        async with (
            httpx.AsyncClient(
                timeout=self._timeout, verify=_ssl_context(), follow_redirects=False
            ) as client,
            client.stream("POST", url, content=content, headers=headers) as response,
        ):
            declared = response.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > _MAX_BODY:
                return response.status_code, None, None
            chunks: list[bytes] = []
            size = 0
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                if size > _MAX_BODY:
                    return response.status_code, None, None
                chunks.append(chunk)
            return response.status_code, response.headers.get("retry-after"), b"".join(chunks)


def error_text(body: Any, *paths: tuple[str, ...]) -> str | None:
    """The first string found along `paths` in a decoded body."""
    for path in paths:
        node = body
        for key in path:
            node = node.get(key) if isinstance(node, dict) else None
        if isinstance(node, str) and node:
            return node
    return None
