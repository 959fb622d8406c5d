"""Settings: host values over environment over defaults; secrets never printed."""

from __future__ import annotations

import pytest

from adk_yuxi.tools import ToolSettings
from adk_yuxi.web import WebConfigError, WebSettings, resolve_web_settings, search_provider


def test_precedence_host_then_environment_then_default() -> None:
    env = {"TAVILY_API_KEY": "env-t", "DEEPSEEK_API_KEY": "env-d", "YUXI_WEB_TIMEOUT_S": "9"}
    resolved = resolve_web_settings(ToolSettings(WebSettings(tavily_api_key="host-t"), environ=env))
    assert resolved.key("tavily") == "host-t"
    assert resolved.key("deepseek") == "env-d"
    assert resolved.request_timeout_s == 9.0
    assert resolved.fetch_max_bytes == 10 * 1024 * 1024


def test_explicit_provider_must_be_configured_else_first_in_order() -> None:
    env = {"DOUBAO_SEARCH_API_KEY": "k1", "DEEPSEEK_API_KEY": "k2"}
    assert search_provider(resolve_web_settings(ToolSettings(environ=env))).name == "deepseek"
    chosen = {**env, "YUXI_WEB_SEARCH_PROVIDER": "Doubao"}
    assert search_provider(resolve_web_settings(ToolSettings(environ=chosen))).name == "doubao"
    with pytest.raises(WebConfigError, match="TAVILY_API_KEY"):
        search_provider(
            resolve_web_settings(
                ToolSettings(environ={**env, "YUXI_WEB_SEARCH_PROVIDER": "tavily"})
            )
        )
    with pytest.raises(WebConfigError, match="unknown provider"):
        search_provider(
            resolve_web_settings(ToolSettings(environ={**env, "YUXI_WEB_SEARCH_PROVIDER": "bing"}))
        )


def test_blank_keys_are_absent() -> None:
    with pytest.raises(WebConfigError, match="no search provider"):
        search_provider(resolve_web_settings(ToolSettings(environ={"TAVILY_API_KEY": "  "})))


@pytest.mark.parametrize(
    "url", ["http://api.tavily.com", "ftp://x", "https://user:pw@api.tavily.com", "https://h/?k=1"]
)
def test_key_bearing_base_urls_must_be_safe(url: str) -> None:
    with pytest.raises(WebConfigError, match="TAVILY_BASE_URL"):
        resolve_web_settings(ToolSettings(environ={"TAVILY_BASE_URL": url}))


def test_secrets_never_print() -> None:
    settings = WebSettings(tavily_api_key="tvly-secret")
    tool_settings = ToolSettings(settings, environ={"DEEPSEEK_API_KEY": "sk-secret"})
    for text in (repr(settings), str(settings), settings.model_dump_json(), repr(tool_settings)):
        assert "tvly-secret" not in text and "sk-secret" not in text
    with pytest.raises(ValueError, match="two settings sections"):
        ToolSettings(settings, settings)


def test_retry_after_in_seconds_or_as_a_date() -> None:
    import email.utils
    import time

    from adk_yuxi.web._http import parse_retry_after

    assert parse_retry_after("7") == 7.0
    assert parse_retry_after(None) is None and parse_retry_after("soon") is None
    assert parse_retry_after("-5") == 0.0 and parse_retry_after("1e9") == 24 * 3600.0
    when = email.utils.formatdate(time.time() + 60, usegmt=True)
    assert 55 <= (parse_retry_after(when) or 0) <= 61
