"""ADK's OpenAI adapter, with failures that name the model, the host and what to check.

`OpenAILlm` lets `openai`'s exceptions escape the run: `adk run` prints
"Error: Connection error." and `adk web` answers HTTP 500. Here the same failures end
the turn with an error event that says which model at which base URL failed and which
variable to look at.
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncGenerator

import openai
from google.adk.integrations.openai import OpenAILlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from typing_extensions import override

from ._errors import MODEL_REJECTED, MODEL_UNREACHABLE, error_response

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


class OpenAICompatibleLlm(OpenAILlm):
    """`OpenAILlm` whose connection and HTTP failures become one clear error event."""

    @property
    def effective_base_url(self) -> str:
        """Where requests go: the configured URL, else what the `openai` client uses."""
        return self.base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_OPENAI_BASE_URL

    @override
    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        try:
            async for response in super().generate_content_async(llm_request, stream):
                yield response
        except openai.APIConnectionError as exc:
            yield self._failure(
                MODEL_UNREACHABLE,
                f"{str(exc).rstrip('.')}. Is the server at OPENAI_BASE_URL running and"
                " reachable from here?",
            )
        except openai.APIStatusError as exc:
            hint = _STATUS_HINTS.get(exc.status_code, "see the host's message above")
            yield self._failure(MODEL_REJECTED, f"HTTP {exc.status_code}: {exc.message}; {hint}")

    def _failure(self, code: str, detail: str) -> LlmResponse:
        message = f"The model {self.model!r} at {self.effective_base_url} failed: {detail}"
        logger.info("%s", message)
        return error_response(code, message)
