"""A prompt size for every model call, so that compaction's check stays O(1).

Before each model call ADK's token-threshold check reads the prompt size the latest
model event reported (`usage_metadata.prompt_token_count`). A model that reports none
(several OpenAI-compatible servers, some streaming modes, hand-written test models)
makes ADK estimate it by building the model contents of the whole session history
again, on every call: O(history) per call, most of a turn in a long session.

`PromptEstimatePlugin` keeps the request the model is actually sent and, when the
final response reports no prompt size, counts that request (instruction and contents,
at ADK's four characters a token, one pass) and writes the count into the response.
The model event then carries a count and ADK takes its reported path. A reported count
(0 included) is never changed and costs nothing to keep; an estimated one is marked in
the event's `custom_metadata` (`yuxi_prompt_tokens_estimated: true`). Partial
(streamed) responses are not stored as events and are left alone.
"""

from __future__ import annotations

import contextvars
import json
from typing import Any

from google.adk.agents.callback_context import CallbackContext
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin
from google.genai import types
from typing_extensions import override

__all__ = [
    "CHARS_PER_TOKEN",
    "ESTIMATED_KEY",
    "PromptEstimatePlugin",
    "content_chars",
    "estimate_prompt_tokens",
]

ESTIMATED_KEY = "yuxi_prompt_tokens_estimated"
"""The `custom_metadata` key marking a prompt size this plugin estimated."""

CHARS_PER_TOKEN = 4
"""ADK's own rule of thumb for its estimate."""

_sent: contextvars.ContextVar[LlmRequest | None] = contextvars.ContextVar(
    "yuxi_prompt_estimate_request", default=None
)


def _value_chars(value: Any) -> int:
    try:
        return len(json.dumps(value, ensure_ascii=False, default=str))
    except (TypeError, ValueError):
        return len(str(value))


def content_chars(content: types.Content) -> int:
    """The characters of `content` a model is sent (text, call and result values)."""
    total = 0
    for part in content.parts or ():
        if part.text:
            total += len(part.text)
        if part.function_call:
            total += len(part.function_call.name or "")
            if part.function_call.args:
                total += _value_chars(part.function_call.args)
        if part.function_response:
            total += len(part.function_response.name or "")
            if part.function_response.response:
                total += _value_chars(part.function_response.response)
    return total


def estimate_prompt_tokens(request: LlmRequest) -> int:
    """The request's instruction and contents in tokens, at four characters a token."""
    chars = sum(content_chars(content) for content in request.contents)
    instruction = request.config.system_instruction if request.config else None
    if isinstance(instruction, str):
        chars += len(instruction)
    elif isinstance(instruction, types.Content):
        chars += content_chars(instruction)
    return chars // CHARS_PER_TOKEN


class PromptEstimatePlugin(BasePlugin):
    """Fills in the prompt size a model did not report, from the request it was sent."""

    def __init__(self) -> None:
        super().__init__(name="yuxi_prompt_estimate")

    @override
    async def before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        _sent.set(llm_request)
        return None

    @override
    async def after_model_callback(
        self, *, callback_context: CallbackContext, llm_response: LlmResponse
    ) -> LlmResponse | None:
        usage = llm_response.usage_metadata
        if llm_response.partial or (usage is not None and usage.prompt_token_count is not None):
            return None
        request = _sent.get()
        if request is None:
            return None
        estimate = estimate_prompt_tokens(request)
        if usage is None:
            llm_response.usage_metadata = types.GenerateContentResponseUsageMetadata(
                prompt_token_count=estimate
            )
        else:
            usage.prompt_token_count = estimate
        llm_response.custom_metadata = {**(llm_response.custom_metadata or {}), ESTIMATED_KEY: True}
        return None
