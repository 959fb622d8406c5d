"""What the model sees, step by step, through the real Runner and `ScriptedLlm`."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from google.adk.sessions import InMemorySessionService

from adk_yuxi.models._request import system_instruction_text
from adk_yuxi.runtime import AgentConfig, Refusal, Toolbox, build_app
from adk_yuxi.sessions import SqlSessionService
from adk_yuxi.testing import ScriptedLlm, call

from ._kit import Kit, function_responses, run_turn


@pytest.fixture
def kit(tmp_path: Path) -> Kit:
    kit = Kit(tmp_path)
    kit.skill(
        "reporting", body="Call make_report with a short title.", tool_dependencies=["make_report"]
    )
    kit.skill("helper", body="Helper steps.")
    kit.load_skills()
    return kit


CONFIG = AgentConfig(name="analyst", tools=("echo",), skills=("reporting", "helper"))


async def test_gated_tool_opens_at_next_step_and_survives_restart(kit: Kit, tmp_path: Path) -> None:
    db = f"sqlite+aiosqlite:///{tmp_path / 'sessions.db'}"
    llm = ScriptedLlm(
        [
            call("load_skill", skill_name="reporting"),
            call("make_report", title="Q3"),
            "Here is your report.",
        ]
    )
    app = build_app(
        CONFIG,
        kit.principal(),
        model=llm,
        toolbox=Toolbox(registry=kit.registry, skills=kit.catalog),
    )
    async with SqlSessionService(db) as sessions:
        events = await run_turn(app, sessions, "s1", "write the report")

    first, second = llm.tool_names(0), llm.tool_names(1)
    assert "echo" in first and "load_skill" in first
    assert "make_report" not in first
    assert "make_report" in second
    assert kit.ran["make_report"] == 1
    assert function_responses(events)["make_report"] == [{"report": "# Q3"}]
    # Not-yet-loaded skills are announced by name and description, with how to load them.
    instruction = system_instruction_text(llm.requests[0])
    assert "The reporting skill." in instruction and "load_skill" in instruction
    assert "Call make_report with a short title." not in instruction

    # A new process: new App, new Runner, the same SQLite session.
    llm2 = ScriptedLlm(["Still here."])
    app2 = build_app(
        CONFIG,
        kit.principal(),
        model=llm2,
        toolbox=Toolbox(registry=kit.registry, skills=kit.catalog),
    )
    async with SqlSessionService(db) as sessions:
        await run_turn(app2, sessions, "s1", "again")
    assert "make_report" in llm2.tool_names(0)

    # Another session of the same user starts gated again.
    llm3 = ScriptedLlm(["Fresh."])
    app3 = build_app(
        CONFIG,
        kit.principal(),
        model=llm3,
        toolbox=Toolbox(registry=kit.registry, skills=kit.catalog),
    )
    async with SqlSessionService(db) as sessions:
        await run_turn(app3, sessions, "s2", "new chat")
    assert "make_report" not in llm3.tool_names(0)


async def test_preloaded_skill_is_visible_from_the_first_call(kit: Kit) -> None:
    llm = ScriptedLlm([call("make_report", title="now"), "done"])
    config = CONFIG.model_copy(update={"preload_skills": ("reporting",)})
    app = build_app(
        config,
        kit.principal(),
        model=llm,
        toolbox=Toolbox(registry=kit.registry, skills=kit.catalog),
    )
    await run_turn(app, InMemorySessionService(), "s", "go")
    assert "make_report" in llm.tool_names(0)
    assert "Call make_report with a short title." in system_instruction_text(llm.requests[0])
    assert kit.ran["make_report"] == 1


@pytest.mark.parametrize("name", ["make_report", "drop_tables", "no_such_tool", "read_kb"])
async def test_hidden_or_unknown_tool_is_refused_and_the_run_goes_on(
    kit: Kit, name: str, caplog: pytest.LogCaptureFixture
) -> None:
    refusals: list[Refusal] = []
    llm = ScriptedLlm([call(name, title="x"), call("echo", text="after"), "ok"])
    app = build_app(
        CONFIG,
        kit.principal(),
        model=llm,
        on_refusal=refusals.append,
        toolbox=Toolbox(registry=kit.registry, skills=kit.catalog),
    )
    with caplog.at_level(logging.WARNING, logger="adk_yuxi.runtime.authorization"):
        events = await run_turn(app, InMemorySessionService(), "s", "go")
    responses = function_responses(events)
    error = responses[name][0]["error"]
    assert error["code"] == "tool_not_available"
    assert sum(kit.ran.values()) == 1 and kit.ran["echo"] == 1  # only echo ever ran
    assert responses["echo"] == [{"echo": "after"}]
    assert len(llm.requests) == 3  # the run went on after the refusal
    assert refusals[0].code == "tool_not_available" and refusals[0].tool == name
    assert any(getattr(r, "yuxi_event", None) == "capability_limited" for r in caplog.records)
    # A hidden tool and a nonexistent one get the very same answer: no existence oracle.
    assert "reporting" not in str(error)


async def test_unknown_skill_activation_in_state_is_ignored(kit: Kit) -> None:
    sessions = InMemorySessionService()
    await sessions.create_session(
        app_name="analyst",
        user_id="alice",
        session_id="s",
        state={"_adk_activated_skill_analyst": ["reporting", "not-offered"]},
    )
    llm = ScriptedLlm(["hi"])
    config = CONFIG.model_copy(update={"skills": ("helper",)})
    app = build_app(
        config,
        kit.principal(),
        model=llm,
        toolbox=Toolbox(registry=kit.registry, skills=kit.catalog),
    )
    await run_turn(app, sessions, "s", "go")
    assert "make_report" not in llm.tool_names(0)
