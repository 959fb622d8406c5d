"""The loopback OpenAI server awaits a coroutine turn and serves others meanwhile."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx

from adk_yuxi.testing import OpenAIScriptServer


async def test_a_coroutine_turn_is_awaited_without_holding_up_other_requests() -> None:
    async def slow(body: dict[str, Any]) -> str:
        await asyncio.sleep(0.5)
        return f"slow for {body['messages'][0]['content']}"

    with OpenAIScriptServer([slow, slow]) as server:
        headers = {"Authorization": "Bearer test-key"}
        async with httpx.AsyncClient(base_url=server.base_url, headers=headers) as client:
            started = time.monotonic()
            replies = await asyncio.gather(
                *(
                    client.post(
                        "/chat/completions",
                        json={"model": "m", "messages": [{"role": "user", "content": name}]},
                    )
                    for name in ("a", "b")
                )
            )
            elapsed = time.monotonic() - started
    texts = sorted(r.json()["choices"][0]["message"]["content"] for r in replies)
    assert texts == ["slow for a", "slow for b"]
    assert elapsed < 0.95  # both waited at once, not one after the other
