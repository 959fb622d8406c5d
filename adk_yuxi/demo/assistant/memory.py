"""The assistant's memory: ADK's memory tools as registry tools, and a plugin that adds
every finished turn to the memory service."""

from __future__ import annotations

import logging

from google.adk.agents.base_agent import BaseAgent
from google.adk.agents.callback_context import CallbackContext
from google.adk.models.llm_request import LlmRequest
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.tools.load_memory_tool import load_memory
from google.adk.tools.tool_context import ToolContext
from google.genai import types
from typing_extensions import override

from adk_yuxi.tools import StrictFunctionTool

__all__ = ["LoadMemory", "RememberConversation"]

logger = logging.getLogger(__name__)

_NOTE = """
You have memory. You can use it to answer questions. If any questions need
you to look up the memory, you should call load_memory function with a query.
"""


class LoadMemory(StrictFunctionTool):
    """ADK's `load_memory` on checked arguments, and the note telling the model it has
    memory (what ADK's own tool adds to the request)."""

    def __init__(self) -> None:
        super().__init__(load_memory)

    @override
    async def process_llm_request(
        self, *, tool_context: ToolContext, llm_request: LlmRequest
    ) -> None:
        await super().process_llm_request(tool_context=tool_context, llm_request=llm_request)
        llm_request.append_instructions([_NOTE])


class RememberConversation(BasePlugin):
    """Adds the session to memory after every turn, so later conversations find it."""

    def __init__(self) -> None:
        super().__init__(name="remember_conversation")

    @override
    async def after_agent_callback(
        self, *, agent: BaseAgent, callback_context: CallbackContext
    ) -> types.Content | None:
        try:
            await callback_context.add_session_to_memory()
        except ValueError as exc:  # no memory service configured for this Runner
            logger.debug("session not added to memory: %s", exc)
        return None
