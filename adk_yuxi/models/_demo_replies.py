"""The demo model's replies as ADK responses: a leaf every demo module builds its answers
with, so the intents and the recall module need not import each other."""

from __future__ import annotations

from typing import Any

from google.adk.models.llm_response import LlmResponse
from google.genai import types

__all__ = ["call", "response_of", "text"]


def response_of(parts: list[types.Part]) -> LlmResponse:
    # No tokens are used; saying so keeps ADK from warning about missing usage data.
    usage = types.GenerateContentResponseUsageMetadata(
        prompt_token_count=0, candidates_token_count=0, total_token_count=0
    )
    return LlmResponse(content=types.Content(role="model", parts=parts), usage_metadata=usage)


def text(message: str) -> LlmResponse:
    return response_of([types.Part(text=f"(demo model) {message}")])


def call(name: str, args: dict[str, Any]) -> LlmResponse:
    return response_of([types.Part(function_call=types.FunctionCall(name=name, args=args))])
