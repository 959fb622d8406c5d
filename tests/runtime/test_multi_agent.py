"""Agent trees through the real Runner: agent tools run as nested runs bound to the
caller's user, handoffs obey the whitelist, every agent is gated per user, and one
model-call budget covers the whole turn."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from google.adk.models.llm_request import LlmRequest
from google.adk.sessions import InMemorySessionService

from adk_yuxi.access import AccessDenied, NotFoundError, Principal, ResourceKind, Role
from adk_yuxi.models._request import declared_tool_names
from adk_yuxi.runtime import (
    AgentCatalog,
    AgentConfig,
    AgentConfigError,
    Limits,
    Refusal,
    Toolbox,
    UnknownAgentError,
    build_app,
)
from adk_yuxi.testing import ScriptedLlm, call

from ._kit import Kit
from ._tree_kit import Tools, final_text, principal, responses, run, tree_catalog


def _system(request: LlmRequest) -> str:
    return str(request.config.system_instruction)


async def test_agent_tool_runs_nested_with_its_own_tools() -> None:
    tools = Tools()
    refusals: list[Refusal] = []
    models = {
        "coordinator": ScriptedLlm([call("researcher", request="cats"), "Cats purr."]),
        "researcher": ScriptedLlm([call("lookup", topic="cats"), "cats purr"]),
    }
    app = build_app(
        "coordinator",
        principal("alice"),
        catalog=tree_catalog(),
        model=models,
        on_refusal=refusals.append,
        toolbox=Toolbox(registry=tools.registry),
    )
    events = await run(app, "alice")
    assert responses(events, "researcher") == [{"result": "cats purr"}]
    assert final_text(events) == "Cats purr."
    assert tools.ran == {"lookup": 1}
    coordinator, researcher = models["coordinator"], models["researcher"]
    shown = sorted(coordinator.tool_names(0))
    assert shown == ["plan", "read_tool_result", "researcher", "transfer_to_agent"]
    # Its own runtime, not the root's (and the offload's base tool, in every agent).
    assert researcher.tool_names(0) == ["read_tool_result", "lookup"]
    nested = researcher.requests[0].contents[0].parts
    assert nested is not None and nested[0].text == "cats"
    assert refusals == []


async def test_hidden_tool_called_inside_the_nested_agent_is_refused() -> None:
    tools = Tools()
    refusals: list[Refusal] = []
    models = {
        "coordinator": ScriptedLlm([call("researcher", request="x"), "done"]),
        "researcher": ScriptedLlm([call("plan", goal="take over"), "could not"]),
    }
    app = build_app(
        "coordinator",
        principal("alice"),
        catalog=tree_catalog(),
        model=models,
        on_refusal=refusals.append,
        toolbox=Toolbox(registry=tools.registry),
    )
    await run(app, "alice")
    assert tools.ran["plan"] == 0
    assert [(r.code, r.agent, r.tool) for r in refusals] == [
        ("tool_not_available", "researcher", "plan")
    ]
    refused = models["researcher"].requests[1].contents[-1].parts
    assert refused is not None and refused[0].function_response is not None
    error = (refused[0].function_response.response or {})["error"]
    assert error["code"] == "tool_not_available" and error["tool"] == "plan"
    # The researcher's own, only (and the offload's base tool).
    assert error.get("available", ["read_tool_result", "lookup"]) == ["read_tool_result", "lookup"]


async def test_transfer_refused_then_corrected() -> None:
    tools = Tools()
    models = {
        "coordinator": ScriptedLlm(
            [
                call("transfer_to_agent", agent_name="critic"),
                call("transfer_to_agent", agent_name="ghost"),
                call("transfer_to_agent", agent_name="writer"),
            ]
        ),
        "writer": ScriptedLlm(["Draft ready."]),
        "critic": ScriptedLlm([]),
    }
    app = build_app(
        "coordinator",
        principal("alice"),
        catalog=tree_catalog(),
        model=models,
        toolbox=Toolbox(registry=tools.registry),
    )
    events = await run(app, "alice")
    refused = responses(events, "transfer_to_agent")
    allowed = [{"name": "writer", "description": "Drafts the text."}]
    assert [r["error"]["code"] for r in refused[:2]] == ["handoff_not_allowed"] * 2
    assert all(r["error"]["allowed"] == allowed for r in refused[:2])
    assert final_text(events) == "Draft ready." and events[-1].author == "writer"
    assert models["critic"].requests == []
    # The model is told only of the whitelist: declaration enum and instructions.
    first = models["coordinator"].requests[0]
    assert "critic" not in _system(first) and "`writer`" in _system(first)
    declared = [
        d
        for t in first.config.tools or []
        for d in t.function_declarations or []
        if d.name == "transfer_to_agent"
    ]
    schema = declared[0].parameters_json_schema
    assert isinstance(schema, dict) and schema["properties"]["agent_name"]["enum"] == ["writer"]
    # The writer may not go back to its parent (not asked for in its config).
    assert "transfer_to_agent" not in models["writer"].tool_names(0)


async def test_parent_handoff_only_when_configured() -> None:
    models = {
        "coordinator": ScriptedLlm([call("transfer_to_agent", agent_name="writer"), "Back."]),
        "writer": ScriptedLlm([call("transfer_to_agent", agent_name="coordinator")]),
    }
    catalog = tree_catalog(writer={"handoff_to_parent": True})
    app = build_app(
        "coordinator",
        principal("alice"),
        catalog=catalog,
        model=models,
        toolbox=Toolbox(registry=Tools().registry),
    )
    events = await run(app, "alice")
    assert final_text(events) == "Back." and events[-1].author == "coordinator"
    assert "coordinator" in _system(models["writer"].requests[0])


async def test_unreadable_agents_are_left_out_for_that_user_only() -> None:
    """Two users, different trees, concurrently on one App and one set of models."""
    tools = Tools()

    def coordinator(request: LlmRequest) -> Any:
        last = request.contents[-1].parts or []
        if last and last[0].function_response is not None:
            return f"answer: {last[0].function_response.response}"
        names = declared_tool_names(request)
        return call("researcher", request="q") if "researcher" in names else "no researcher"

    models = {
        "coordinator": ScriptedLlm([coordinator] * 4),
        "researcher": ScriptedLlm([call("lookup", topic="t"), "facts"] * 2),
    }
    rights = {
        "alice": principal("alice"),
        "bob": principal("bob", ["coordinator", "writer"]),
    }

    async def source(user_id: str) -> Principal:
        await asyncio.sleep(0)
        return rights[user_id]

    app = build_app(
        "coordinator",
        source,
        catalog=tree_catalog(),
        model=models,
        toolbox=Toolbox(registry=tools.registry),
    )
    alice, bob = await asyncio.gather(run(app, "alice"), run(app, "bob"))
    assert final_text(alice).startswith("answer:") and "facts" in final_text(alice)
    assert final_text(bob) == "no researcher"
    assert tools.ran["lookup"] == 1
    bob_requests = [r for r in models["coordinator"].requests if "researcher" not in r.tools_dict]
    assert bob_requests and all("critic" not in _system(r) for r in bob_requests)


async def test_a_user_calling_an_omitted_agent_tool_is_refused() -> None:
    tools = Tools()
    refusals: list[Refusal] = []
    models = {"coordinator": ScriptedLlm([call("researcher", request="q"), "ok"])}
    app = build_app(
        "coordinator",
        principal("bob", ["coordinator", "writer"]),
        catalog=tree_catalog(),
        model=models,
        on_refusal=refusals.append,
        toolbox=Toolbox(registry=tools.registry),
    )
    events = await run(app, "bob")
    assert responses(events, "researcher")[0]["error"]["code"] == "tool_not_available"
    assert [r.code for r in refusals] == ["tool_not_available"]
    assert "researcher" not in models["coordinator"].tool_names(0)


async def test_unreadable_root_is_access_denied() -> None:
    llm = ScriptedLlm([])
    app = build_app(
        "coordinator",
        principal("carol", ["researcher", "writer"]),
        catalog=tree_catalog(),
        model={"coordinator": llm},
        toolbox=Toolbox(registry=Tools().registry),
    )
    events = await run(app, "carol")
    assert AccessDenied.from_event(events[-1]) is not None
    assert llm.requests == []


async def test_fixed_principal_refuses_another_user() -> None:
    llm = ScriptedLlm([])
    app = build_app(
        "coordinator",
        principal("alice"),
        catalog=tree_catalog(),
        model=llm,
        toolbox=Toolbox(registry=Tools().registry),
    )
    events = await run(app, "mallory")
    assert AccessDenied.from_event(events[-1]) is not None and llm.requests == []


async def test_one_model_call_budget_across_nesting_generate() -> None:
    """Limit 3, early_stopping="generate": coordinator (1), researcher (2); the researcher's
    next call would take the last one, so the nested run stops there, the caller gets a
    tool error, and the coordinator's call 3 is the final answer, made without tools."""
    tools = Tools()
    models = {
        "coordinator": ScriptedLlm([call("researcher", request="q"), "best answer"]),
        "researcher": ScriptedLlm([call("lookup", topic="a"), call("lookup", topic="b")]),
    }
    catalog = tree_catalog(coordinator={"limits": Limits(max_llm_calls=3)})
    app = build_app(
        "coordinator",
        principal("root", role=Role.ADMIN),
        catalog=catalog,
        model=models,
        toolbox=Toolbox(registry=tools.registry),
    )
    events = await run(app, "root")
    stopped = responses(events, "researcher")[0]["error"]
    assert stopped["code"] == "agent_stopped" and stopped["reason"] == "MAX_LLM_CALLS"
    assert final_text(events) == "best answer" and events[-1].error_code is None
    assert len(models["researcher"].requests) == 1 and tools.ran["lookup"] == 1
    assert len(models["coordinator"].requests) == 2
    assert models["coordinator"].tool_names(1) == []  # the final call has no tools


async def test_one_model_call_budget_across_nesting_force() -> None:
    """Limit 3, early_stopping="force": the researcher may spend calls 2 and 3; its 4th
    is refused, and the turn ends at the coordinator's next call with MAX_LLM_CALLS."""
    tools = Tools()
    models = {
        "coordinator": ScriptedLlm([call("researcher", request="q"), "never"]),
        "researcher": ScriptedLlm([call("lookup", topic="a"), call("lookup", topic="b"), "x"]),
    }
    limits = Limits(max_llm_calls=3, early_stopping="force")
    catalog = tree_catalog(coordinator={"limits": limits})
    app = build_app(
        "coordinator",
        principal("root", role=Role.ADMIN),
        catalog=catalog,
        model=models,
        toolbox=Toolbox(registry=tools.registry),
    )
    events = await run(app, "root")
    stopped = responses(events, "researcher")[0]["error"]
    assert stopped["code"] == "agent_stopped" and stopped["reason"] == "MAX_LLM_CALLS"
    assert events[-1].error_code == "MAX_LLM_CALLS"
    assert len(models["coordinator"].requests) == 1
    assert len(models["researcher"].requests) == 2 and tools.ran["lookup"] == 2


def test_tree_from_yaml_and_errors(tmp_path: Path) -> None:
    (tmp_path / "coordinator.yaml").write_text("agent_tools: [researcher]\n")
    (tmp_path / "researcher.yaml").write_text("description: Finds facts.\n")
    catalog = AgentCatalog.from_yaml(tmp_path)
    app = build_app("coordinator", principal("alice"), catalog=catalog, model="yuxi-demo")
    assert app.root_agent.name == "coordinator"
    with pytest.raises(UnknownAgentError, match="'nobody'"):
        build_app("nobody", principal("alice"), catalog=catalog)
    (tmp_path / "researcher.yaml").write_text("description: Finds facts.\ntools: lookup\n")
    with pytest.raises(AgentConfigError, match=r"researcher\.yaml: field 'tools'"):
        AgentCatalog.from_yaml(tmp_path)
    with pytest.raises(TypeError, match="catalog="):
        build_app("coordinator", principal("alice"))
    (tmp_path / "researcher.yaml").write_text("description: Finds facts.\ntools: [lookup]\n")
    misspelt = AgentCatalog.from_yaml(tmp_path)
    with pytest.raises(AgentConfigError, match="agent 'researcher': field 'tools': no tool named"):
        build_app("coordinator", principal("alice"), catalog=misspelt)  # nothing registers it
    clash = AgentConfig(name="coordinator", description="other")
    with pytest.raises(AgentConfigError, match="another config"):
        build_app(clash, principal("alice"), catalog=catalog)


async def test_source_not_knowing_the_user() -> None:
    async def nobody(user_id: str) -> Principal:
        raise NotFoundError("user", user_id)

    llm = ScriptedLlm([])
    app = build_app(
        "coordinator",
        nobody,
        catalog=tree_catalog(),
        model=llm,
        toolbox=Toolbox(registry=Tools().registry),
    )
    events = await run(app, "eve", sessions=InMemorySessionService())
    assert AccessDenied.from_event(events[-1]) is not None and llm.requests == []


async def test_skill_activation_inside_a_nested_run_lasts_for_that_call(tmp_path: Path) -> None:
    """Decided: ADK discards the nested session and filters `_adk` keys out of the state it
    copies in, so a skill the researcher loads is active for that one call; the next call
    starts without it (preload_skills applies on every call). The coordinator never sees
    the researcher's skill tools."""
    kit = Kit(tmp_path)
    kit.skill("reporting", tool_dependencies=["make_report"])
    kit.load_skills()
    base = kit.principal()
    records = principal("alice")
    rights = Principal(
        base.user, {**base.readable, **{ResourceKind.AGENT: records.readable[ResourceKind.AGENT]}}
    )
    models = {
        "coordinator": ScriptedLlm(
            [call("researcher", request="one"), call("researcher", request="two"), "done"]
        ),
        "researcher": ScriptedLlm(
            [
                call("load_skill", skill_name="reporting"),
                call("make_report", title="first"),
                "reported",
                call("make_report", title="second"),
                "could not",
            ]
        ),
    }
    catalog = tree_catalog(
        coordinator={"tools": ["echo"], "skills": []},
        researcher={"tools": [], "skills": ["reporting"]},
    )
    app = build_app(
        "coordinator",
        rights,
        catalog=catalog,
        model=models,
        toolbox=Toolbox(registry=kit.registry, skills=kit.catalog),
    )
    await run(app, "alice")
    assert kit.ran["make_report"] == 1
    researcher = models["researcher"]
    assert "make_report" in researcher.tool_names(1)
    assert "make_report" not in researcher.tool_names(3)
    assert all("make_report" not in models["coordinator"].tool_names(i) for i in range(3))


@pytest.mark.parametrize("target", ["wr\u0456ter", "writer\x00", " writer", "", 7, None])
async def test_odd_transfer_targets_are_refused(target: Any) -> None:
    models = {
        "coordinator": ScriptedLlm([call("transfer_to_agent", agent_name=target), "stayed"]),
        "writer": ScriptedLlm([]),
    }
    catalog = tree_catalog()
    app = build_app(
        "coordinator",
        principal("alice"),
        catalog=catalog,
        model=models,
        toolbox=Toolbox(registry=Tools().registry),
    )
    events = await run(app, "alice")
    refused = responses(events, "transfer_to_agent")[0]["error"]
    assert refused["code"] == "handoff_not_allowed"
    assert final_text(events) == "stayed" and models["writer"].requests == []


async def test_an_agent_the_app_did_not_build_is_checked_as_the_root() -> None:
    """A host composing the tree into a workflow: the foreign agent's calls count and its
    own tools never run, and its transfer is decided on the root's whitelist."""
    from google.adk.agents import LlmAgent, SequentialAgent
    from google.adk.apps import App

    tools = Tools()
    ran: list[str] = []

    def foreign_tool() -> str:
        """Not one of ours."""
        ran.append("x")
        return "x"

    models = {"coordinator": ScriptedLlm(["root answer"])}
    built = build_app(
        "coordinator",
        principal("alice"),
        catalog=tree_catalog(),
        model=models,
        toolbox=Toolbox(registry=tools.registry),
    )
    foreign_llm = ScriptedLlm([call("foreign_tool"), call("researcher", request="q"), "done"])
    foreign = LlmAgent(name="foreign", model=foreign_llm, tools=[foreign_tool])
    pipeline = SequentialAgent(name="pipeline", sub_agents=[built.root_agent, foreign])
    app = App(name=built.name, root_agent=pipeline, plugins=built.plugins)
    events = await run(app, "alice")
    assert ran == []
    assert responses(events, "foreign_tool")[0]["error"]["code"] == "tool_not_available"
    assert responses(events, "researcher")[0]["error"]["code"] == "tool_not_available"
    assert final_text(events) == "done"
