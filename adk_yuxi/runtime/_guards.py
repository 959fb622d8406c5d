"""The model-facing guards an agent config asks for, as plugins placed after the
authorization plugin (so every refusal is decided before a guard sees the call)."""

from __future__ import annotations

from google.adk.plugins.base_plugin import BasePlugin
from google.adk.tools.set_model_response_tool import SetModelResponseTool

from ..guards import (
    BM25ToolRetriever,
    CallRepairPlugin,
    RepairBudget,
    StructuredOutputPlugin,
    ToolRetrievalPlugin,
    ToolRetriever,
)
from ..tools import ToolRegistry
from ._config import AgentConfig
from ._context import BASE_TOOL_IDS
from ._visibility import SKILL_LOADER_TOOLS

__all__ = ["guard_plugins"]


def guard_plugins(
    config: AgentConfig,
    *,
    registry: ToolRegistry | None,
    retriever: ToolRetriever | None = None,
    structured: bool = False,
) -> list[BasePlugin]:
    """Retrieval (when configured), then call repair (always), then structured output
    (when the agent has an output schema)."""
    plugins: list[BasePlugin] = []
    retrieval = config.tool_retrieval
    if retrieval is not None:
        # Framework tools stay declared: the final answer and the handoff between agents.
        always = {*BASE_TOOL_IDS, *SKILL_LOADER_TOOLS, SetModelResponseTool.NAME}
        always.add("transfer_to_agent")
        always.update(retrieval.pinned)
        plugins.append(
            ToolRetrievalPlugin(
                retriever or BM25ToolRetriever(registry),
                top_k=retrieval.top_k,
                always=always,
            )
        )
    plugins.append(CallRepairPlugin(RepairBudget(config.limits.max_tool_failures)))
    if structured:
        plugins.append(StructuredOutputPlugin())
    return plugins
