"""The demo model's multi-agent rules: calling an agent tool and transferring.

Kept apart from the single-agent rules so the demo shows an agent tree offline: "ask
researcher what is 6 * 7" calls the declared agent tool `researcher`; "hand it to the
writer" calls `transfer_to_agent`; an agent that has just been handed the conversation
says so and drafts from the user's request. Only names the request declares (agent
tools) or lists as transfer targets are used, so the rules never invent an agent.
"""

from __future__ import annotations

import re
from typing import Any

from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.tools.agent_tool import AgentTool
from google.genai import types

__all__ = ["delegate"]

TRANSFER = "transfer_to_agent"
_ASK = re.compile(
    r"^(?:please\s+)?ask\s+(?:the\s+)?(?P<agent>\w+)\s*(?:to|about|for|:|,)?\s+(?P<rest>.+)$",
    re.I | re.S,
)
_HAND = re.compile(
    r"\b(?:hand|pass|transfer|give)\b(?:\s+(?:it|this|over|the\s+conversation))*\s+to\s+"
    r"(?:the\s+)?(?P<agent>\w+)",
    re.I,
)
_HANDED = "`transfer_to_agent` tool returned result"
_OWN_NAME = re.compile(r'internal name is "(?P<name>\w+)"')


def _response(part: types.Part) -> LlmResponse:
    usage = types.GenerateContentResponseUsageMetadata(
        prompt_token_count=0, candidates_token_count=0, total_token_count=0
    )
    return LlmResponse(content=types.Content(role="model", parts=[part]), usage_metadata=usage)


def _call(name: str, args: dict[str, Any]) -> LlmResponse:
    return _response(types.Part(function_call=types.FunctionCall(name=name, args=args)))


def _user_request(request: LlmRequest) -> str:
    """The user's latest message that is neither quoted agent context nor a handover."""
    for content in reversed(request.contents):
        if content.role != "user":
            continue
        text = " ".join(p.text for p in content.parts or [] if p.text).strip()
        if text and not text.startswith("For context:") and not _HAND.search(text):
            return text
    return ""


def delegate(request: LlmRequest, text: str) -> LlmResponse | None:
    """A call to an agent tool or a transfer when `text` asks for one, or the answer of
    an agent that was just handed the conversation; None otherwise."""
    if _HANDED in text:
        own = _OWN_NAME.search(str(request.config.system_instruction or ""))
        who = own.group("name") if own else "this agent"
        asked = _user_request(request) or "your request"
        return _response(
            types.Part(
                text=f"(demo model) {who} here: the conversation was handed to me."
                f" Draft for {asked!r}: a first version, ready for review."
            )
        )
    ask = _ASK.match(text)
    if ask:
        agent = ask.group("agent")
        if isinstance(request.tools_dict.get(agent), AgentTool):
            return _call(agent, {"request": ask.group("rest").strip()})
    hand = _HAND.search(text)
    if hand and TRANSFER in request.tools_dict:
        target = hand.group("agent")
        # An agent the whitelist does not list is still asked for, so the refusal and
        # its list of allowed targets show in the event list.
        return _call(TRANSFER, {"agent_name": target})
    return None
