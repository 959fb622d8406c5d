"""The offline demo model: rule-based, honest about being so, and fully ADK-native.

It exists so that `make demo`, `adk run` and `adk web` work on a fresh machine with no
API key, while exercising the real Runner path: it reads the `LlmRequest`, emits real
`FunctionCall` parts for tools the request declares, and answers from the function
responses it gets back. It never calls a tool itself.
"""

from __future__ import annotations

import json
import logging
import re
import sys
import threading
from collections.abc import AsyncGenerator
from typing import Any, ClassVar

from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types
from typing_extensions import override

from ._demo_agents import delegate
from ._demo_knowledge import knowledge_followup, wants_knowledge
from ._request import declared_tool_names, last_content

__all__ = ["DEMO_MODEL_NAME", "DemoLlm"]

logger = logging.getLogger("adk_yuxi.models")

DEMO_MODEL_NAME = "yuxi-demo"

BANNER = (
    "[adk_yuxi] Offline demo model in use: answers come from simple rules, not an LLM."
    " Set YUXI_MODEL (e.g. 'gemini-2.5-flash' or 'openai/<model>') for a real model."
)

_announced = threading.Event()
_ARITHMETIC = re.compile(r"[-+*/().\d\s]*\d[-+*/().\d\s]*[-+*/][-+*/().\d\s]*\d[-+*/().\d\s]*")
_EXPLICIT_CALL = re.compile(r"^/call\s+(?P<name>[A-Za-z_]\w*)\s*(?P<args>\{.*\})?\s*$", re.S)
_REMEMBER = re.compile(
    r"^(?:please\s+)?(?:remember|note)(?:\s+that)?[:,]?\s+(?P<text>.+)$", re.I | re.S
)
_RECALL = re.compile(r"\b(?:my notes|what do you remember|list (?:my )?notes|recall)\b", re.I)


def announce_demo_model() -> None:
    """Says once per process, on stderr and in the log, that no real model is in use."""
    if _announced.is_set():
        return
    _announced.set()
    # stderr, not only the log: `adk run` sends logging to a file nobody is watching.
    print(BANNER, file=sys.stderr, flush=True)
    logger.info(BANNER)


def _response(part: types.Part) -> LlmResponse:
    # No tokens are used; saying so keeps ADK from warning about missing usage data.
    usage = types.GenerateContentResponseUsageMetadata(
        prompt_token_count=0, candidates_token_count=0, total_token_count=0
    )
    return LlmResponse(content=types.Content(role="model", parts=[part]), usage_metadata=usage)


def _text(text: str) -> LlmResponse:
    return _response(types.Part(text=text))


def _call(name: str, args: dict[str, Any]) -> LlmResponse:
    return _response(types.Part(function_call=types.FunctionCall(name=name, args=args)))


class DemoLlm(BaseLlm):
    """Plays a few intents against whichever tools the request declares.

    - `/call TOOL {json}` calls any declared tool with those arguments;
    - "remember …" calls `save_note`, "my notes" calls `list_notes`, and an arithmetic
      expression calls `calculate`, when those tools are declared;
    - any other question, where the knowledge tools are declared, goes to `list_kbs`
      and `query_kb`, and the best passage is quoted (`_demo_knowledge`);
    - function responses are summarised back as text.
    """

    model: str = DEMO_MODEL_NAME
    _help: ClassVar[str] = (
        "(demo model) I am the offline demo model, not an LLM. Try: 'remember the"
        " launch is on Friday', 'what are my notes?', 'what is 12 * (3 + 4)?', or"
        " '/call TOOL {\"arg\": 1}' for any tool I can see."
    )

    @classmethod
    @override
    def supported_models(cls) -> list[str]:
        return [rf"{DEMO_MODEL_NAME}(-.*)?"]

    @override
    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        announce_demo_model()
        yield self._respond(llm_request)

    def _respond(self, request: LlmRequest) -> LlmResponse:
        content = last_content(request)
        if content is None or not content.parts:
            return _text(self._help)
        responses = [p.function_response for p in content.parts if p.function_response]
        if responses:
            followup = knowledge_followup(request, responses)
            if isinstance(followup, str):
                return _text(followup)
            if followup:
                return LlmResponse(content=types.Content(role="model", parts=followup))
            lines = [
                f"{r.name} returned {json.dumps(r.response, ensure_ascii=False, default=str)}"
                for r in responses
            ]
            return _text("(demo model) " + "; ".join(lines))
        text = " ".join(p.text for p in content.parts if p.text).strip()
        delegated = delegate(request, text)  # agent tools and transfers
        if delegated is not None:
            return delegated
        return self._respond_to_text(text, set(declared_tool_names(request)))

    def _respond_to_text(self, text: str, tools: set[str]) -> LlmResponse:
        explicit = _EXPLICIT_CALL.match(text)
        if explicit:
            name = explicit.group("name")
            if name not in tools:
                return _text(f"(demo model) I cannot see a tool named {name!r} here.")
            try:
                args = json.loads(explicit.group("args") or "{}")
            except json.JSONDecodeError as exc:
                return _text(f"(demo model) Those arguments are not JSON: {exc}.")
            return _call(name, args)
        remember = _REMEMBER.match(text)
        if remember and "save_note" in tools:
            return _call("save_note", {"text": remember.group("text").strip()})
        if _RECALL.search(text) and "list_notes" in tools:
            return _call("list_notes", {})
        arithmetic = _ARITHMETIC.search(text)
        if arithmetic and "calculate" in tools:
            return _call("calculate", {"expression": arithmetic.group(0).strip()})
        if wants_knowledge(text, tools):
            return _call("list_kbs", {})
        return _text(self._help)
