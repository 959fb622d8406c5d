"""`Toolbox`: everything an app's agents may draw their tools from, as one value."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ...guards import ToolRetriever
from ...mcp import McpServerRegistry
from ...skills import SkillCatalog
from ...tools import ToolRegistry, ToolSettings, default_registry
from ..rights._resources import FileOwner

__all__ = ["Toolbox"]


@dataclass(frozen=True)
class Toolbox:
    """The tools of an app: what the configs name must exist here, and each user gets
    only what their rights allow of it.

    `registry`: the local tools (the default registry, with the built-in tools);
    `skills` and `mcp_servers`: the skill catalog and MCP servers configs may name;
    `settings`: server-side settings of the tools that need them (web search providers;
    a tool they leave unusable is in no run); `retriever`: per-step tool retrieval for a
    root config with `tool_retrieval` (BM25 over `registry` by default); `workspace`:
    the folder file tools and paths are confined to; `file_owner`: maps a file id to
    its knowledge base for resource checks.
    """

    registry: ToolRegistry | None = None
    skills: SkillCatalog | None = None
    mcp_servers: McpServerRegistry | None = None
    settings: ToolSettings | None = None
    retriever: ToolRetriever | None = None
    workspace: str | Path | None = None
    file_owner: FileOwner | None = None

    @property
    def tools(self) -> ToolRegistry:
        return default_registry if self.registry is None else self.registry
