"""The offline demo model: rule-based, honest about being so, and fully ADK-native.

It exists so that `make demo`, `adk run` and `adk web` work on a fresh machine with no
API key, while exercising the real Runner path: it reads the `LlmRequest`, emits real
`FunctionCall` parts for tools the request declares, and answers from the function
responses it gets back. It never calls a tool itself. What it understands lives in
`_demo_intents`.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import AsyncGenerator
from typing import ClassVar

from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types
from typing_extensions import override

from ._demo_agents import delegate
from ._demo_intents import (
    DEFAULT_INTENTS,
    Intent,
    help_text,
    response_of,
    summarise_responses,
    text,
)
from ._demo_knowledge import knowledge_followup
from ._request import (
    RequestView,
    last_content,
    pending_function_responses,
    prompt_tokens_estimate,
)

__all__ = ["DEMO_MODEL_NAME", "DemoLlm"]

logger = logging.getLogger("adk_yuxi.models")

DEMO_MODEL_NAME = "yuxi-demo"

BANNER = (
    "[adk_yuxi] Offline demo model in use: answers come from simple rules, not an LLM."
    " Set YUXI_MODEL (e.g. 'gemini-2.5-flash' or 'openai/<model>') for a real model."
)

_announced = threading.Event()


def announce_demo_model() -> None:
    """Says once per process, on stderr and in the log, that no real model is in use."""
    if _announced.is_set():
        return
    _announced.set()
    # stderr, not only the log: `adk run` sends logging to a file nobody is watching.
    print(BANNER, file=sys.stderr, flush=True)
    logger.info(BANNER)


class DemoLlm(BaseLlm):
    """Plays a few intents against whichever tools the request declares.

    - `/call TOOL {json}` calls any declared tool with those arguments;
    - "remember …" calls `save_note`, "my notes" `list_notes`, "search my memory for …"
      `load_memory`, "write file NAME with …" `save_text_file`, and an arithmetic
      expression `calculate`, when those tools are declared; when one is not, the
      answer says which skill opens it;
    - "ask AGENT to …" calls a declared agent tool, "hand it to AGENT" transfers
      (`_demo_agents`);
    - any other question, where the knowledge tools are declared, goes to `list_kbs`
      and `query_kb`, and the best passage is quoted (`_demo_knowledge`);
    - "what did I tell you about …" quotes the user's earlier statement from the
      conversation or its summary (`_demo_recall`);
    - uploaded files are acknowledged, and function responses summarised as text.

    It reports a prompt size (about a token per four characters) so compaction works
    offline; its summaries are written by `DemoSummarizer`, not by this model.
    """

    model: str = DEMO_MODEL_NAME
    INTENTS: ClassVar[tuple[Intent, ...]] = DEFAULT_INTENTS

    @classmethod
    @override
    def supported_models(cls) -> list[str]:
        return [rf"{DEMO_MODEL_NAME}(-.*)?"]

    @override
    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        announce_demo_model()
        response = self._respond(llm_request)
        # A real model reports its prompt size; ADK's token-threshold compaction reads it.
        prompt = prompt_tokens_estimate(llm_request)
        response.usage_metadata = types.GenerateContentResponseUsageMetadata(
            prompt_token_count=prompt, candidates_token_count=0, total_token_count=prompt
        )
        yield response

    def _respond(self, request: LlmRequest) -> LlmResponse:
        view = RequestView.of(request)
        responses = pending_function_responses(request)
        if responses:
            followup = knowledge_followup(request, responses)
            if isinstance(followup, str):
                return response_of([types.Part(text=followup)])
            if followup:
                return response_of(followup)
            return text(summarise_responses(responses, view))
        content = last_content(request)
        if content is None or not content.parts:
            return text(help_text(view))
        message = " ".join(p.text for p in content.parts if p.text).strip()
        delegated = delegate(request, message)  # agent tools and transfers
        if delegated is not None:
            return delegated
        for intent in self.INTENTS:
            response = intent(message, view)
            if response is not None:
                return response
        return text(help_text(view))
