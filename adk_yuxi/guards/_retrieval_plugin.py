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

import asyncio
import logging
from collections.abc import Collection, Mapping
from typing import Any

from google.adk.agents.callback_context import CallbackContext
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.tools.base_tool import BaseTool
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


def _keep_only(request: LlmRequest, keep: Collection[str]) -> None:
    """Drops every function declaration whose name is not in `keep`.

    ADK appends a declaration and its `tools_dict` entry together, in the same order, so
    the kept declarations are looked up by their position in `tools_dict` (attribute reads
    on 1,000 declarations cost more than the retrieval itself); each is checked by name,
    and any mismatch (a shadowed duplicate name) falls back to reading every name.
    """
    tools = request.config.tools or []
    groups = [t for t in tools if isinstance(t, types.Tool) and t.function_declarations]
    flat = (
        groups[0].function_declarations or []
        if len(groups) == 1
        else [d for t in groups for d in t.function_declarations or []]
    )
    order = list(request.tools_dict)
    wanted = sorted(order.index(n) for n in keep if n in request.tools_dict)
    aligned = len(flat) == len(order) and all(flat[i].name in keep for i in wanted)
    rebuilt: list[Any] = []
    start = 0
    for tool in tools:
        if not (isinstance(tool, types.Tool) and tool.function_declarations):
            rebuilt.append(tool)
            continue
        declarations = tool.function_declarations
        end = start + len(declarations)
        if aligned:
            kept = [flat[i] for i in wanted if start <= i < end]
        else:
            kept = [d for d in declarations if d.name in keep]
        start = end
        if kept:
            rebuilt.append(tool.model_copy(update={"function_declarations": kept}))
    request.config.tools = rebuilt or None


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

    def select(self, query: str, declared: Mapping[str, BaseTool]) -> set[str] | None:
        """The names to keep, or None to keep every declaration."""
        if len(declared) <= self.top_k or not query.strip():
            return None
        keep = set(self.always.intersection(declared))
        try:
            # Asked for enough that the always-on names it may return leave top_k others.
            chosen = self.retriever.retrieve(query, declared, self.top_k + len(keep))
        except Exception:
            logger.exception("tool retriever failed; this step declares every visible tool")
            return None
        others = [name for name in chosen if name in declared and name not in keep]
        keep.update(others[: self.top_k])
        return keep

    @override
    async def before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        query, declared = latest_user_text(llm_request), llm_request.tools_dict
        if getattr(self.retriever, "blocking", False):  # embeds: off the event loop
            keep = await asyncio.to_thread(self.select, query, declared)
        else:  # BM25: microseconds, less than the hop to a thread
            keep = self.select(query, declared)
        if keep is not None and llm_request.config is not None:
            _keep_only(llm_request, keep)
        return None
