"""Decision spans through the real Runner: each model and tool call's authorization is a
child of ADK's span of that call, with its outcome and rule and never the arguments."""

from __future__ import annotations

from pathlib import Path

import pytest
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types

from adk_yuxi.runtime import AgentConfig, Toolbox, build_app
from adk_yuxi.testing import ScriptedLlm, call
from tests.runtime._kit import USER, Kit, function_responses, run_turn

from .conftest import Spans


@pytest.fixture
def kit(tmp_path: Path) -> Kit:
    kit = Kit(tmp_path)
    kit.skill("reporting", body="Call make_report.", tool_dependencies=["make_report"])
    kit.load_skills()
    return kit


CONFIG = AgentConfig(name="analyst", tools=("echo", "read_kb"), skills=("reporting",))


async def test_a_refused_call_shows_its_rule_under_adks_tool_span(kit: Kit, spans: Spans) -> None:
    llm = ScriptedLlm(
        [
            call("read_kb", kb_id="kb_secret"),  # not the user's: the resource guard refuses
            call("make_report", title="Q3"),  # behind a skill not loaded: hidden
            call("echo", text="private words"),
            "done",
        ]
    )
    app = build_app(
        CONFIG,
        kit.principal(),
        model=llm,
        toolbox=Toolbox(registry=kit.registry, skills=kit.catalog),
    )
    events = await run_turn(app, InMemorySessionService(), "s1", "go")
    assert function_responses(events)["read_kb"][0]["error"]["code"] == "resource_not_available"

    kb = spans.one("yuxi.authorize", gen_ai__tool__name="read_kb")
    assert kb.attributes is not None
    assert kb.attributes["yuxi.authz.decision"] == "refused"
    assert kb.attributes["yuxi.authz.rule"] == "resource_not_available"
    assert kb.attributes["yuxi.resource.kind"] == "knowledge_base"
    assert kb.attributes["yuxi.authz.argument"] == "kb_id"
    assert kb.attributes["user.id"] == USER
    assert spans.parent(kb).name == "execute_tool read_kb"  # type: ignore[union-attr]

    hidden = spans.one("yuxi.authorize", gen_ai__tool__name="make_report")
    assert hidden.attributes is not None
    assert hidden.attributes["yuxi.authz.decision"] == "refused"
    assert hidden.attributes["yuxi.authz.rule"] == "tool_not_available"
    assert hidden.attributes["yuxi.resource.kind"] == "tool"

    echo = spans.one("yuxi.authorize", gen_ai__tool__name="echo")
    assert echo.attributes is not None
    assert echo.attributes["yuxi.authz.decision"] == "allowed"
    assert echo.attributes["yuxi.authz.rule"] == "visible"

    models = spans.named("yuxi.authorize model")
    assert len(models) == 4
    assert all(s.attributes and s.attributes["yuxi.authz.decision"] == "allowed" for s in models)
    # ADK's schema v2 has no `call_llm` span: the model call's own span is its agent's.
    parents = {spans.parent(s).name for s in models}  # type: ignore[union-attr]
    assert parents <= {"call_llm", "invoke_agent analyst"}, parents
    # One trace, under the run's invocation.
    assert len({s.context.trace_id for s in spans.all()}) == 1
    assert "invoke_agent analyst" in spans.ancestors(kb)
    # No value the model sent is on any of our spans.
    for span in spans.named("yuxi."):
        values = [str(v) for v in (span.attributes or {}).values()]
        assert not any("kb_secret" in v or "private words" in v or "Q3" in v for v in values)


async def test_a_refused_run_shows_the_rule_at_its_model_call(kit: Kit, spans: Spans) -> None:
    # The user may not use this agent: the run is refused before the model is asked.
    principal = kit.principal()
    config = AgentConfig(name="analyst", tools=("echo",))
    llm = ScriptedLlm(["never"])
    app = build_app(
        config, principal, model=llm, toolbox=Toolbox(registry=kit.registry, skills=kit.catalog)
    )
    sessions = InMemorySessionService()
    await sessions.create_session(app_name=app.name, user_id="mallory", session_id="s")
    runner = Runner(app=app, session_service=sessions)
    message = types.Content(role="user", parts=[types.Part(text="hi")])
    events = [
        e async for e in runner.run_async(user_id="mallory", session_id="s", new_message=message)
    ]
    await runner.close()
    assert events[-1].error_code == "ACCESS_DENIED"
    model = spans.one("yuxi.authorize model")
    assert model.attributes is not None
    assert model.attributes["yuxi.authz.decision"] == "refused"
    assert model.attributes["yuxi.authz.rule"] == "access_denied"
    assert model.attributes["user.id"] == "mallory"


async def test_skill_activation_is_a_span_naming_what_it_opens(kit: Kit, spans: Spans) -> None:
    llm = ScriptedLlm(
        [call("load_skill", skill_name="reporting"), call("make_report", title="x"), "ok"]
    )
    app = build_app(
        CONFIG,
        kit.principal(),
        model=llm,
        toolbox=Toolbox(registry=kit.registry, skills=kit.catalog),
    )
    await run_turn(app, InMemorySessionService(), "s1", "go")
    loader = spans.one("yuxi.authorize skill")
    assert loader.attributes is not None
    assert loader.attributes["gen_ai.skill.name"] == "reporting"
    assert loader.attributes["yuxi.authz.rule"] == "skill_visible"
    activated = spans.one("yuxi.skill.activate")
    assert activated.attributes is not None
    assert activated.attributes["gen_ai.skill.name"] == "reporting"
    assert list(activated.attributes["yuxi.skill.tools"]) == ["make_report"]  # type: ignore[arg-type]
    assert spans.parent(activated).name.startswith("execute_tool load_skill")  # type: ignore[union-attr]
    report = spans.one("yuxi.authorize tool", gen_ai__tool__name="make_report")
    assert report.attributes is not None and report.attributes["yuxi.authz.decision"] == "allowed"
