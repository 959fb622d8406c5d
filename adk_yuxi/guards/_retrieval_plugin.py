"""Per-step tool retrieval: declare the always-on tools plus the top-k for the user's
latest message, out of what the gated toolset already declared.

It runs as a plugin just before the model call, on the finished request, and only
removes declarations: a tool the gates hide was never declared, so it cannot come back.
The executable table of the step (`LlmRequest.tools_dict`) is left whole, so a call to
a visible tool that was not retrieved this step still runs; it passes the same
authorization checks as any other call. A retriever that fails leaves the step's
declarations as they were (logged), since hiding everything would stop the agent.
"""

from __future__ import annotations

import logging
from collections.abc import Collection

from google.adk.agents.callback_context import CallbackContext
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin
from google.genai import types
from typing_extensions import override

from ._retrieval import ToolRetriever

__all__ = ["RETRIEVAL_PLUGIN_NAME", "ToolRetrievalPlugin", "latest_user_text"]

RETRIEVAL_PLUGIN_NAME = "yuxi_tool_retrieval"

logger = logging.getLogger("adk_yuxi.guards.retrieval")


def latest_user_text(request: LlmRequest) -> str:
    """The text of the most recent user message (function responses are not messages)."""
    for content in reversed(request.contents or []):
        if content.role != "user" or not content.parts:
            continue
        texts = [p.text for p in content.parts if p.text and not p.thought]
        if texts:
            return "\n".join(texts)
    return ""


def _declarations(request: LlmRequest) -> dict[str, str]:
    found: dict[str, str] = {}
    for tool in request.config.tools or [] if request.config else []:
        if isinstance(tool, types.Tool):
            for declaration in tool.function_declarations or []:
                if declaration.name:
                    found[declaration.name] = declaration.description or ""
    return found


def _keep_only(request: LlmRequest, keep: Collection[str]) -> None:
    tools: list[types.Tool] = []
    for tool in request.config.tools or []:
        if not isinstance(tool, types.Tool) or not tool.function_declarations:
            tools.append(tool)  # type: ignore[arg-type]
            continue
        kept = [d for d in tool.function_declarations if d.name in keep]
        if kept:
            tools.append(tool.model_copy(update={"function_declarations": kept}))
    request.config.tools = tools or None  # type: ignore[assignment]


class ToolRetrievalPlugin(BasePlugin):
    """Keeps `always` (base tools, the skill loader, pinned tools) and the retriever's
    top `top_k` of the rest, for every model call of every agent in the app."""

    def __init__(
        self,
        retriever: ToolRetriever,
        *,
        top_k: int,
        always: Collection[str] = (),
        name: str = RETRIEVAL_PLUGIN_NAME,
    ) -> None:
        super().__init__(name=name)
        if top_k < 1:
            raise ValueError("top_k must be at least 1")
        self.retriever = retriever
        self.top_k = top_k
        self.always = frozenset(always)

    def select(self, query: str, declared: dict[str, str]) -> set[str] | None:
        """The names to keep, or None to keep every declaration."""
        if len(declared) <= self.top_k or not query.strip():
            return None
        keep = {name for name in declared if name in self.always}
        rest = {name: d for name, d in declared.items() if name not in keep}
        try:
            chosen = self.retriever.retrieve(query, rest, self.top_k)
        except Exception:
            logger.exception("tool retriever failed; this step declares every visible tool")
            return None
        keep.update(name for name in chosen if name in rest)
        return keep

    @override
    async def before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        declared = _declarations(llm_request)
        keep = self.select(latest_user_text(llm_request), declared)
        if keep is not None:
            _keep_only(llm_request, keep)
        return None
