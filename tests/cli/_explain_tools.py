"""Tools for `yuxi access explain` tests: imported (and so registered) by the command
with `--import tests.cli._explain_tools`, and by the test for its real run."""

from __future__ import annotations

from adk_yuxi.tools import ToolRegistry, default_registry, tool

TOOL_IDS = ("count_docs", "wipe_docs")


def register(registry: ToolRegistry = default_registry) -> None:
    def count_docs(kb_id: str) -> dict[str, int]:
        """Counts the documents of a knowledge base."""
        return {"documents": 3}

    def wipe_docs() -> dict[str, bool]:
        """Not one of the agent's tools."""
        return {"wiped": True}

    tool(registry=registry)(count_docs)
    tool(registry=registry)(wipe_docs)


if __name__ != "__main__" and "count_docs" not in default_registry:
    register()
