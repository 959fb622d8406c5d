"""The end of a long Chinese memory is found on SQLite as on PostgreSQL."""

from __future__ import annotations

import pytest

from adk_yuxi.storage import YuxiServices

from .test_memory_edges import APP, event, long_chinese

MARK = "长文档标记"


@pytest.mark.parametrize(
    "body",
    [
        long_chinese(90_000, seed=7),
        "这是一段很长的中文文档，用来测试搜索。" * 4737,
        "文" * 90_000,
        "长文档" * 30_000,
    ],
    ids=["random", "sentences", "one-character", "near-miss"],
)
async def test_the_end_of_a_long_chinese_memory_is_found(services: YuxiServices, body: str) -> None:
    memory = services.memory_service
    text = body + MARK
    await memory.add_events_to_memory(app_name=APP, user_id="u", events=[event(text, "long")])
    found = await memory.search_memory(app_name=APP, user_id="u", query=MARK)
    texts = [m.content.parts[0].text for m in found.memories]
    assert any(t.endswith(MARK) for t in texts), [len(t) for t in texts]
