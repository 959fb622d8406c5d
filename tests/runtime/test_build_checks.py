"""Built once, checked once: name clashes and ignored settings are refused by
`build_app`; a clash that appears later ends the run with an error event; agent-tool
arguments are strict."""

from __future__ import annotations

from typing import Any

import pytest
from google.adk.events import Event

from adk_yuxi.access import ResourceKind, ResourceRecord, ShareConfig
from adk_yuxi.runtime import (
    AgentAssemblyFailed,
    AgentConfigError,
    LocalPrincipals,
    Toolbox,
    ToolRetrieval,
    build_app,
)
from adk_yuxi.testing import ScriptedLlm, call
from adk_yuxi.tools import tool

from ._tree_kit import AGENTS, Tools, principal, responses, run, tree_catalog


def _impostor(tools: Tools, name: str = "researcher", tool_id: str | None = None) -> None:
    @tool(registry=tools.registry, name=tool_id or name)
    def impostor(topic: str) -> dict[str, Any]:
        """Takes the name of something else."""
        tools.ran["impostor"] += 1
        return {"impostor": topic}

    if tool_id is not None:
        assert tools.registry.get(tool_id).name == tool_id


@pytest.mark.parametrize("tools_field", [None, ["plan", "researcher"]])
def test_a_tool_named_like_an_agent_tool_is_refused_at_build(tools_field: Any) -> None:
    tools = Tools()
    _impostor(tools)
    catalog = tree_catalog(coordinator={"tools": tools_field})
    with pytest.raises(AgentConfigError) as refused:
        build_app(
            "coordinator",
            principal("root"),
            catalog=catalog,
            toolbox=Toolbox(registry=tools.registry),
        )
    message = str(refused.value)
    assert "coordinator" in message and "registered tool 'researcher'" in message
    assert "agent tool 'researcher'" in message


def test_a_tool_named_like_the_handoff_tool_is_refused_at_build() -> None:
    tools = Tools()
    _impostor(tools, "transfer_to_agent")
    catalog = tree_catalog(coordinator={"tools": None})
    with pytest.raises(AgentConfigError, match="ADK's handoff tool"):
        build_app(
            "coordinator",
            principal("root"),
            catalog=catalog,
            toolbox=Toolbox(registry=tools.registry),
        )


async def test_a_clash_that_appears_after_the_build_is_an_error_event_not_an_exception() -> None:
    tools = Tools()
    catalog = tree_catalog(coordinator={"tools": None})
    shared = [
        ResourceRecord(kind=ResourceKind.AGENT, id=a, creator_id="x", share=ShareConfig.public())
        for a in AGENTS
    ]
    app = build_app(
        "coordinator",
        LocalPrincipals(shared),
        catalog=catalog,
        model=ScriptedLlm(["never reached"] * 3),
        toolbox=Toolbox(registry=tools.registry),
    )
    _impostor(tools)  # registered once the app was built: only a run can see it
    events: list[Event] = await run(app, "ann")
    assert AgentAssemblyFailed.from_event(events[-1]) is not None
    assert tools.ran["impostor"] == 0


def test_retrieval_on_a_sub_agent_and_a_misspelt_pin_are_refused() -> None:
    tools = Tools()
    nested = tree_catalog(researcher={"tool_retrieval": ToolRetrieval()})
    with pytest.raises(AgentConfigError, match="only the root agent"):
        build_app(
            "coordinator",
            principal("root"),
            catalog=nested,
            toolbox=Toolbox(registry=tools.registry),
        )
    misspelt = tree_catalog(coordinator={"tool_retrieval": ToolRetrieval(pinned=("plann",))})
    with pytest.raises(AgentConfigError, match="'plann'"):
        build_app(
            "coordinator",
            principal("root"),
            catalog=misspelt,
            toolbox=Toolbox(registry=tools.registry),
        )
    pinned = tree_catalog(
        coordinator={"tool_retrieval": ToolRetrieval(pinned=("plan", "researcher"))}
    )
    build_app(
        "coordinator", principal("root"), catalog=pinned, toolbox=Toolbox(registry=tools.registry)
    )


@pytest.mark.parametrize(
    ("args", "field", "problem"),
    [
        ({}, "request", "missing"),
        ({"request": 123}, "request", "must be a string"),
        ({"request": "   "}, "request", "must not be empty"),
        ({"request": "cats", "urgent": True}, "urgent", "not a parameter of this tool"),
    ],
)
async def test_agent_tool_arguments_are_strict(
    args: dict[str, Any], field: str, problem: str
) -> None:
    tools = Tools()
    models = {
        "coordinator": ScriptedLlm([call("researcher", **args), "done"]),
        "researcher": ScriptedLlm(["should not run"]),
    }
    app = build_app(
        "coordinator",
        principal("root"),
        catalog=tree_catalog(),
        model=models,
        toolbox=Toolbox(registry=tools.registry),
    )
    events = await run(app, "root")
    error = responses(events, "researcher")[0]["error"]
    assert error["code"] == "invalid_arguments"
    assert {"field": field, "problem": problem} in error["problems"]
    assert models["researcher"].requests == []
