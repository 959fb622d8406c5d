"""Tools bound per settings: the registry's binder contract, whatever the tool."""

from __future__ import annotations

from typing import Any

import pytest
from google.adk.tools.base_tool import BaseTool

from adk_yuxi.tools import (
    StrictFunctionTool,
    ToolRegistry,
    ToolSettings,
    ToolUnavailable,
    register_tool,
)


def greet(name: str) -> dict[str, Any]:
    """Greets."""
    return {"hello": name}


def other(name: str) -> dict[str, Any]:
    """Another tool."""
    return {}


def test_plain_tools_bind_to_their_registered_instance() -> None:
    registry = ToolRegistry()
    tool = register_tool(StrictFunctionTool(greet), registry=registry)
    assert not registry.is_configurable("greet")
    assert registry.bind("greet", ToolSettings(environ={})) is tool


def test_a_binder_decides_per_settings() -> None:
    registry = ToolRegistry()

    def binder(settings: ToolSettings) -> BaseTool:
        if "GREETING" not in settings.environ:
            raise ToolUnavailable("greet", "GREETING is not set")
        return StrictFunctionTool(greet)

    declared = register_tool(StrictFunctionTool(greet), registry=registry, binder=binder)
    with pytest.raises(ToolUnavailable, match="GREETING is not set"):
        registry.bind("greet", ToolSettings(environ={}))
    bound = registry.bind("greet", ToolSettings(environ={"GREETING": "hi"}))
    assert bound is not declared and bound.name == "greet"


@pytest.mark.parametrize(
    "binder",
    [
        lambda settings: (_ for _ in ()).throw(ValueError("bad number")),
        lambda settings: StrictFunctionTool(other),
        lambda settings: "not a tool",
    ],
    ids=["raises", "renamed", "not-a-tool"],
)
def test_a_misbehaving_binder_makes_the_tool_unavailable(binder: Any) -> None:
    registry = ToolRegistry()
    register_tool(StrictFunctionTool(greet), registry=registry, binder=binder)
    with pytest.raises(ToolUnavailable):
        registry.bind("greet", ToolSettings(environ={}))


def test_unregister_forgets_the_binder() -> None:
    registry = ToolRegistry()
    register_tool(
        StrictFunctionTool(greet), registry=registry, binder=lambda s: StrictFunctionTool(greet)
    )
    registry.unregister("greet")
    register_tool(StrictFunctionTool(greet), registry=registry)
    assert not registry.is_configurable("greet")
