"""A loopback server speaking every provider's protocol, shared by the web tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from adk_yuxi.testing import DEEPSEEK, DOUBAO, TAVILY, ProviderFakeServer
from adk_yuxi.web import WebSettings

KEY = "test-key"


@pytest.fixture(scope="module")
def fake() -> Iterator[ProviderFakeServer]:
    with ProviderFakeServer(api_key=KEY) as server:
        yield server


def settings_for(fake: ProviderFakeServer, provider: str, **extra: object) -> WebSettings:
    """Settings naming `provider`, with every provider's base URL on the fake."""
    values: dict[str, object] = {
        "search_provider": provider,
        "tavily_base_url": fake.base_url(TAVILY),
        "deepseek_base_url": fake.base_url(DEEPSEEK),
        "doubao_base_url": fake.base_url(DOUBAO),
        f"{provider}_api_key": KEY,
    }
    values.update(extra)
    return WebSettings(**values)  # type: ignore[arg-type]
