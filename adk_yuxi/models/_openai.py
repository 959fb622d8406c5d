"""ADK's OpenAI adapter, with failures that name the model, the host and what to check.

`OpenAILlm` lets `openai`'s exceptions escape the run: `adk run` prints
"Error: Connection error." and `adk web` answers HTTP 500. Here the same failures end
the turn with an error event that says which model at which base URL failed and which
variable to look at. A request the host refuses as too long for the model's context
gets its own code (`MODEL_CONTEXT_EXCEEDED`, naming the context size), and an empty
reply is said to be one (`MODEL_EMPTY_REPLY`) instead of ending the turn silently.

The model also knows its context window (`context_window`): `YUXI_MODEL_CONTEXT`, else
what the server reports (probed once, at the first call), else the size a refusal
named. Whoever sizes requests for it (the compaction budget) is told when it learns one.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import AsyncGenerator, Callable

import openai
from google.adk.integrations.openai import OpenAILlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types
from pydantic import Field, PrivateAttr
from typing_extensions import override

from ._context_window import (
    MODEL_CONTEXT_ENV,
    context_from_error,
    is_context_overflow,
    probe_context_window,
)
from ._errors import (
    MODEL_CONTEXT_EXCEEDED,
    MODEL_EMPTY_REPLY,
    MODEL_REJECTED,
    MODEL_UNREACHABLE,
    error_response,
)
from ._request import prompt_tokens_estimate

__all__ = ["DEFAULT_OPENAI_BASE_URL", "OpenAICompatibleLlm"]

logger = logging.getLogger("adk_yuxi.models")

DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1"

_STATUS_HINTS = {
    401: "the host refused the key: check OPENAI_API_KEY",
    403: "the key may not use this model: check OPENAI_API_KEY and the model's access",
    404: (
        "the host knows no such model or path: check the model name after 'openai/' and"
        " that OPENAI_BASE_URL ends where the host serves /chat/completions (often '/v1')"
    ),
    429: "the host is rate-limiting or out of quota; wait or check the account",
}


ContextListener = Callable[[int], None]


def visible(response: LlmResponse) -> bool:
    """Whether a response carries something for the user or the flow: text that is not
    a thought, or a function call."""
    parts = response.content.parts if response.content and response.content.parts else []
    return any((p.text and p.text.strip() and not p.thought) or p.function_call for p in parts)


class OpenAICompatibleLlm(OpenAILlm):
    """`OpenAILlm` whose connection and HTTP failures become one clear error event."""

    context_window: int | None = Field(default=None, ge=256)
    """Tokens the model takes (prompt and reply); None until configured or learned."""
    probe_context: bool = True
    """Ask the server for its context at the first call when none is configured."""
    _probed: bool = PrivateAttr(default=False)
    _listeners: list[ContextListener] = PrivateAttr(default_factory=list)

    def on_context_window(self, listener: ContextListener) -> None:
        """Calls `listener(tokens)` now if the window is known, and whenever it is learned."""
        self._listeners.append(listener)
        if self.context_window is not None:
            listener(self.context_window)

    def learn_context_window(self, tokens: int) -> None:
        if tokens == self.context_window:
            return
        self.context_window = tokens
        logger.info("model %r: context window %d tokens", self.model, tokens)
        for listener in self._listeners:
            listener(tokens)

    async def _probe(self) -> None:
        self._probed = True
        if self.context_window is not None or not self.probe_context:
            return
        key = self.api_key if isinstance(self.api_key, str) else None
        try:
            found = await probe_context_window(self.effective_base_url, self.model, key)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the probe is advice: it never fails a turn
            logger.debug("context probe of %r failed: %r", self.model, exc)
            return
        if found is not None:
            self.learn_context_window(found)

    @property
    def effective_base_url(self) -> str:
        """Where requests go: the configured URL, else what the `openai` client uses."""
        return self.base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_OPENAI_BASE_URL

    @override
    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        if not self._probed:
            await self._probe()
        try:
            async for response in super().generate_content_async(llm_request, stream):
                if response.partial or visible(response):
                    yield response
                else:
                    yield self._empty(response)
        except openai.APIConnectionError as exc:
            yield self._failure(
                MODEL_UNREACHABLE,
                f"{str(exc).rstrip('.')}. Is the server at OPENAI_BASE_URL running and"
                " reachable from here?",
            )
        except openai.APIStatusError as exc:
            if is_context_overflow(exc.status_code, exc.message):
                yield self._overflow(exc, llm_request)
                return
            hint = _STATUS_HINTS.get(exc.status_code)
            detail = f"HTTP {exc.status_code}: {exc.message}" + (f"; {hint}" if hint else "")
            yield self._failure(MODEL_REJECTED, detail)

    def _overflow(self, exc: openai.APIStatusError, request: LlmRequest) -> LlmResponse:
        named = context_from_error(exc.message, exc.body)
        if named is not None:
            self.learn_context_window(named)
        window = self.context_window
        size = f"{window:,} tokens" if window else f"a size unknown here (set {MODEL_CONTEXT_ENV})"
        response = self._failure(
            MODEL_CONTEXT_EXCEEDED,
            f"HTTP {exc.status_code}: {exc.message}; the conversation no longer fits the"
            f" model's context window of {size}",
        )
        # Reported as the prompt size, so the compaction after this turn sees it.
        tokens = max(prompt_tokens_estimate(request), window or 0)
        response.usage_metadata = types.GenerateContentResponseUsageMetadata(
            prompt_token_count=tokens, candidates_token_count=0, total_token_count=tokens
        )
        return response

    def _empty(self, response: LlmResponse) -> LlmResponse:
        reason = response.finish_reason.name.lower() if response.finish_reason else "none given"
        empty = self._failure(
            MODEL_EMPTY_REPLY,
            f"it sent an empty reply (finish reason: {reason}); ask again or rephrase",
        )
        empty.usage_metadata = response.usage_metadata or empty.usage_metadata
        return empty

    def _failure(self, code: str, detail: str) -> LlmResponse:
        message = f"The model {self.model!r} at {self.effective_base_url} failed: {detail}"
        logger.info("%s", message)
        return error_response(code, message)
