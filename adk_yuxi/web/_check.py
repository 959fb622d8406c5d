""" "Test configuration": an administrator checks draft web settings without saving them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from ..tools import ToolSettings
from ._errors import WebConfigError, WebToolError
from ._results import SearchQuery
from ._select import fetch_provider, search_provider
from ._settings import WebSettings, resolve_web_settings

__all__ = ["ConfigCheck", "check_web_settings"]


@dataclass(frozen=True)
class ConfigCheck:
    ok: bool
    tool: str
    provider: str | None
    code: str | None = None
    message: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "tool": self.tool,
            "provider": self.provider,
            "code": self.code,
            "message": self.message,
        }


async def check_web_settings(
    draft: WebSettings,
    tool: Literal["web_search", "web_fetch"] = "web_search",
    *,
    probe_url: str = "https://example.com/",
    environ: dict[str, str] | None = None,
) -> ConfigCheck:
    """Resolves `draft` over the environment as a run would, then makes one real call
    (a one-result search, or a fetch of `probe_url`). Nothing is stored; the answer never
    contains the key."""
    try:
        web = resolve_web_settings(ToolSettings(draft, environ=environ))
        provider = search_provider(web) if tool == "web_search" else fetch_provider(web)
    except WebConfigError as exc:
        return ConfigCheck(False, tool, None, "not_configured", str(exc))
    try:
        if tool == "web_search":
            await provider.search(SearchQuery(query="adk yuxi configuration check", max_results=1))  # type: ignore[union-attr]
        else:
            await provider.fetch(probe_url)  # type: ignore[union-attr]
    except WebToolError as error:
        return ConfigCheck(False, tool, provider.name, error.code, error.message)
    return ConfigCheck(True, tool, provider.name, None, "the provider answered")
