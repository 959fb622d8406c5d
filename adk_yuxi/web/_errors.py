"""Errors of the web tools, and the structured tool results they become.

The model sees a code, our own message and a retry hint; it never sees a key, a header
or a provider's raw body (those go to the operators' log, redacted, at most).
"""

from __future__ import annotations

from typing import Any

from adk_yuxi.errors import YuxiError

__all__ = ["FetchError", "ProviderError", "WebConfigError", "WebError", "WebToolError"]


class WebError(YuxiError):
    """Root of the web tools' errors."""


class WebConfigError(WebError, ValueError):
    """The web settings are missing or invalid; the message names settings, not values."""


_ADVICE = {
    "auth_failed": "The provider refused the server's credentials; an administrator must"
    " fix the configuration. Retrying will not help.",
    "rate_limited": "The provider is rate limiting requests. Wait before retrying.",
    "quota_exhausted": "The provider's usage limit or balance is exhausted. Do not retry in"
    " this conversation; answer without it.",
    "bad_request": "The provider refused the request as invalid. Change the arguments"
    " (e.g. a shorter or simpler query) before retrying.",
    "provider_error": "The provider failed to answer. Retrying later may help.",
    "timeout": "The request timed out. Retrying later may help.",
    "unreachable": "The provider could not be reached. Retrying later may help.",
    "malformed_response": "The provider's answer could not be read. Retrying later may help.",
    "fetch_failed": "The page could not be fetched.",
    "url_not_allowed": "This URL may not be fetched (only public http/https addresses"
    " without credentials are allowed). Do not retry it.",
    "too_large": "The document is larger than the fetch limit.",
    "unsupported_content": "This kind of content cannot be converted to text.",
    "invalid_query": "The request does not fit this provider's limits.",
}


class WebToolError(WebError):
    """One failed web call, as a code with a retry hint; `detail` is for logs only."""

    code: str = "provider_error"

    def __init__(
        self,
        code: str,
        *,
        provider: str,
        detail: str = "",
        retryable: bool | None = None,
        retry_after_s: float | None = None,
        status: int | None = None,
        provider_code: str | None = None,
        hint: str | None = None,
    ) -> None:
        self.code = code
        self.hint = hint
        self.provider = provider
        self.detail = detail
        self.retry_after_s = retry_after_s
        self.status = status
        self.provider_code = provider_code
        self.retryable = (
            retryable
            if retryable is not None
            else code in ("rate_limited", "provider_error", "timeout", "unreachable")
        )
        super().__init__(f"{provider}: {code}" + (f" ({detail})" if detail else ""))

    @property
    def message(self) -> str:
        """Our own words, plus a hint we wrote (never text taken from a provider)."""
        advice = _ADVICE.get(self.code, _ADVICE["provider_error"])
        return f"{advice} {self.hint}" if self.hint else advice

    def to_response(self, tool: str) -> dict[str, Any]:
        error: dict[str, Any] = {
            "code": self.code,
            "tool": tool,
            "provider": self.provider,
            "message": self.message,
            "retryable": self.retryable,
        }
        if self.retry_after_s is not None:
            error["retry_after_s"] = self.retry_after_s
        if self.status is not None:
            error["http_status"] = self.status
        if self.provider_code is not None:
            error["provider_code"] = self.provider_code
        return {"error": error}


class ProviderError(WebToolError):
    """A search or extraction provider refused or failed a request."""


class FetchError(WebToolError):
    """The direct fetcher refused a URL or could not turn its answer into text."""
