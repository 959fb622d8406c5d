"""One tiny request to the configured model: does the whole path answer?"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.genai import types

__all__ = ["PingResult", "ping_model"]

PING_PROMPT = "Reply with the single word: pong"


@dataclass(frozen=True)
class PingResult:
    ok: bool
    detail: str
    seconds: float


async def ping_model(llm: BaseLlm, *, limit_seconds: float = 30.0) -> PingResult:
    """Sends `PING_PROMPT` once (a few output tokens at most) and reports the outcome."""
    request = LlmRequest(
        model=llm.model,
        contents=[types.Content(role="user", parts=[types.Part(text=PING_PROMPT)])],
        config=types.GenerateContentConfig(max_output_tokens=8),
    )
    started = time.monotonic()

    async def first_answer() -> PingResult:
        async for response in llm.generate_content_async(request, stream=False):
            if response.partial:
                continue
            elapsed = time.monotonic() - started
            if response.error_code:
                return PingResult(False, response.error_message or response.error_code, elapsed)
            parts = response.content.parts if response.content and response.content.parts else []
            text = "".join(p.text or "" for p in parts).strip()
            return PingResult(True, text or "(an empty answer)", elapsed)
        return PingResult(False, "the model sent no answer", time.monotonic() - started)

    try:
        return await asyncio.wait_for(first_answer(), limit_seconds)
    except TimeoutError:
        return PingResult(
            False, f"no answer within {limit_seconds:.0f} s", time.monotonic() - started
        )
    except Exception as exc:  # a third-party model class may raise anything
        return PingResult(False, f"{type(exc).__name__}: {exc}", time.monotonic() - started)
