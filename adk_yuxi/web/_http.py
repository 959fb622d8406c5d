"""JSON over HTTPS to a provider, and the one place transport and HTTP failures become
`ProviderError`s. Each adapter only says how its error bodies read."""

from __future__ import annotations

import email.utils
import json
import logging
import ssl
import time
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

import httpx

from ._errors import ProviderError

__all__ = ["ProviderHttp", "error_text", "parse_retry_after"]

logger = logging.getLogger("adk_yuxi.web.providers")

_MAX_BODY = 8 * 1024 * 1024
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
        return text.replace(self._key, "***")[:300]

    def error(self, code: str, detail: str = "", **fields: Any) -> ProviderError:
        error = ProviderError(code, provider=self.provider, detail=self._redact(detail), **fields)
        logger.warning("web provider %s failed: %s", self.provider, error)
        return error

    async def post_json(self, path: str, body: Mapping[str, Any]) -> Any:
        headers = {
            **self._headers,
            "Authorization": f"Bearer {self._key}",
            "Content-Type": "application/json",
            "Accept": "application/json",
        }
        try:
            async with httpx.AsyncClient(
                timeout=self._timeout, verify=_ssl_context(), follow_redirects=False
            ) as client:
                response = await client.post(
                    self.base_url + path, content=json.dumps(body), headers=headers
                )
        except httpx.TimeoutException as exc:
            raise self.error("timeout", type(exc).__name__) from None
        except httpx.TransportError as exc:
            raise self.error("unreachable", type(exc).__name__) from None
        if len(response.content) > _MAX_BODY:
            raise self.error("malformed_response", "body too large", status=response.status_code)
        try:
            decoded: Any = response.json()
        except ValueError:
            decoded = None
        if response.status_code == 200:
            if decoded is None:
                raise self.error("malformed_response", "not JSON", status=200)
            return decoded
        detail = self._read_error(decoded) if decoded is not None else None
        detail = detail or response.text[:200]
        status = response.status_code
        if status == 404:
            code = self._not_found
        elif status >= 500:
            code = "provider_error"
        else:
            code = _STATUS_CODES.get(status, "provider_error")
        retry_after = parse_retry_after(response.headers.get("retry-after"))
        raise self.error(
            code,
            f"HTTP {status}: {detail}",
            status=status,
            retry_after_s=retry_after,
        )


def error_text(body: Any, *paths: tuple[str, ...]) -> str | None:
    """The first string found along `paths` in a decoded body."""
    for path in paths:
        node = body
        for key in path:
            node = node.get(key) if isinstance(node, dict) else None
        if isinstance(node, str) and node:
            return node
    return None
