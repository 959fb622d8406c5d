"""Server-side configuration of the web tools: providers, keys, limits.

Credentials live here and nowhere else: never in agent config, session state, skills,
prompts or the workspace. A host passes a `WebSettings` inside `ToolSettings`; every
field it sets explicitly wins over the environment variable of the same setting, and
fields it leaves unset fall back to the environment, then to the default.
"""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator

from ..tools import ToolSettings
from ._errors import WebConfigError
from ._http import header_safe

__all__ = [
    "ENV_VARS",
    "SEARCH_PROVIDER_ORDER",
    "WebSettings",
    "resolve_web_settings",
]

logger = logging.getLogger("adk_yuxi.web.settings")

SEARCH_PROVIDER_ORDER: tuple[str, ...] = ("tavily", "deepseek", "doubao")
"""Without an explicit choice, the first of these with a key serves web_search."""

ENV_VARS: Mapping[str, str] = {
    "search_provider": "YUXI_WEB_SEARCH_PROVIDER",
    "fetch_provider": "YUXI_WEB_FETCH_PROVIDER",
    "tavily_api_key": "TAVILY_API_KEY",
    "tavily_base_url": "TAVILY_BASE_URL",
    "deepseek_api_key": "DEEPSEEK_API_KEY",
    "deepseek_base_url": "DEEPSEEK_BASE_URL",
    "doubao_api_key": "DOUBAO_SEARCH_API_KEY",
    "doubao_base_url": "DOUBAO_SEARCH_BASE_URL",
    "request_timeout_s": "YUXI_WEB_TIMEOUT_S",
    "fetch_max_bytes": "YUXI_WEB_FETCH_MAX_BYTES",
}
"""Setting name -> environment variable. Fields not listed (the test-only address
allow-list among them) can only be set by a host, in code."""


def _check_base_url(url: str) -> str:
    """Keys travel to this URL: https, or plain http only to a loopback address."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("is not an http(s) URL")
    if parts.username or parts.password or parts.query or parts.fragment:
        raise ValueError("a provider base URL carries no credentials, query or fragment")
    if parts.scheme == "http":
        try:
            loopback = ipaddress.ip_address(parts.hostname).is_loopback
        except ValueError:
            loopback = parts.hostname == "localhost"
        if not loopback:
            raise ValueError("plain http is allowed only to a loopback address")
    return url.rstrip("/")


class WebSettings(BaseModel):
    """Everything the web tools need from the server. Secrets are `SecretStr`, so they
    never print in a repr, a log line or a model dump."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    search_provider: str | None = None
    fetch_provider: str | None = None
    tavily_api_key: SecretStr | None = None
    tavily_base_url: str = "https://api.tavily.com"
    deepseek_api_key: SecretStr | None = None
    deepseek_base_url: str = "https://api.deepseek.com"
    doubao_api_key: SecretStr | None = None
    doubao_base_url: str = "https://open.feedcoopapi.com"
    request_timeout_s: float = Field(default=15.0, gt=0, le=120)
    fetch_timeout_s: float = Field(default=20.0, gt=0, le=120)
    fetch_max_bytes: int = Field(default=10 * 1024 * 1024, ge=1024, le=100 * 1024 * 1024)
    fetch_max_redirects: int = Field(default=5, ge=0, le=20)
    fetch_convert_timeout_s: float = Field(default=60.0, gt=0, le=600)
    fetch_max_chars: int = Field(default=20_000, ge=500, le=500_000)
    unsafe_fetch_allow_networks: tuple[str, ...] = ()
    """Test-only: address ranges the direct fetcher may reach although the SSRF policy
    refuses them (e.g. a loopback test server). Never read from the environment."""

    @field_validator("tavily_base_url", "deepseek_base_url", "doubao_base_url")
    @classmethod
    def _base_url(cls, value: str) -> str:
        return _check_base_url(value)

    @field_validator("search_provider", "fetch_provider")
    @classmethod
    def _provider_name(cls, value: str | None) -> str | None:
        if value is None:
            return None
        cleaned = value.strip().lower()
        return cleaned or None

    @field_validator("tavily_api_key", "deepseek_api_key", "doubao_api_key", mode="before")
    @classmethod
    def _blank_key(cls, value: Any) -> Any:
        if isinstance(value, SecretStr):
            value = value.get_secret_value()
        if not isinstance(value, str):
            return value
        value = value.strip()
        if not value:
            return None
        if not header_safe(value):
            # The message never quotes the key: it ends up in logs and tool records.
            raise ValueError(
                "has characters an HTTP header cannot carry (only printable ASCII without"
                " blanks; a pasted invisible character such as a zero-width space?)"
            )
        return value

    @field_validator("unsafe_fetch_allow_networks")
    @classmethod
    def _networks(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for network in value:
            ipaddress.ip_network(network, strict=False)
        return value

    @classmethod
    def draft(cls, **values: Any) -> WebSettings:
        """Settings from `values`, or `WebConfigError` naming each invalid one and why
        (never its value): for an administrator trying a draft."""
        try:
            return cls(**values)
        except ValidationError as exc:
            raise WebConfigError(f"invalid web settings: {describe_invalid(exc)}") from None

    def key(self, provider: str) -> str | None:
        """The plain key of `provider`, for its adapter's Authorization header only."""
        secret: SecretStr | None = getattr(self, f"{provider}_api_key", None)
        return secret.get_secret_value() if secret is not None else None

    def base_url(self, provider: str) -> str:
        url: str = getattr(self, f"{provider}_base_url")
        return url


def describe_invalid(error: ValidationError, source: Callable[[str], str] | None = None) -> str:
    """One line naming each invalid setting and why, never its value (the pydantic
    messages used carry no input, and our validators never quote one)."""
    problems: dict[str, str] = {}
    for item in error.errors(include_input=False, include_url=False):
        if not item["loc"]:
            continue
        name = str(item["loc"][0])
        why = str(item["msg"]).removeprefix("Value error, ")
        problems.setdefault((source or str)(name), why)
    return "; ".join(f"{name}: {why}" for name, why in sorted(problems.items()))


def resolve_web_settings(settings: ToolSettings) -> WebSettings:
    """The host's explicitly set fields over the environment over the defaults.

    Raises `WebConfigError` naming the setting (never its value) when a value is invalid.
    """
    values: dict[str, Any] = {}
    for name, variable in ENV_VARS.items():
        raw = settings.environ.get(variable)
        if raw is not None and raw.strip():
            values[name] = raw.strip()
    host = settings.section(WebSettings)
    if host is not None:
        for name in host.model_fields_set:
            values[name] = getattr(host, name)
    try:
        resolved = WebSettings(**values)
    except ValidationError as exc:

        def source(name: str) -> str:
            from_env = host is None or name not in host.model_fields_set
            return ENV_VARS[name] if name in ENV_VARS and from_env else f"WebSettings.{name}"

        raise WebConfigError(f"invalid web settings: {describe_invalid(exc, source)}") from None
    if resolved.unsafe_fetch_allow_networks:
        logger.warning(
            "web_fetch: the SSRF policy is widened for %s (test-only setting)",
            ", ".join(resolved.unsafe_fetch_allow_networks),
        )
    return resolved
