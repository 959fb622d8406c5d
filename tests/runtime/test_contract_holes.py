"""The holes found when the runtime was tried as an attacker would, each closed and
shown through the real Runner: default-config gating, an inactive fixed principal, a
path the guard cannot resolve, failing checks, failing tools, telling events."""

from __future__ import annotations

import json
import os
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from google.adk.apps import App
from google.adk.events import Event
from google.adk.sessions import InMemorySessionService

from adk_yuxi.access import (
    AccessDenied,
    AccessRepository,
    NotFoundError,
    Principal,
    ResourceKind,
    ResourceRecord,
    Role,
    ShareConfig,
    User,
)
from adk_yuxi.runtime import (
    AgentConfig,
    AuthorizationUnavailable,
    Refusal,
    Toolbox,
    ToolFailureLimitReached,
    build_app,
)
from adk_yuxi.testing import ScriptedLlm, call
from adk_yuxi.testing import run_turn as one_turn
from adk_yuxi.tools import tool

from ._kit import USER, Kit, function_responses, run_turn


def _dump(events: list[Event]) -> str:
    return "\n".join(e.model_dump_json() for e in events)


async def test_default_config_keeps_skill_tools_behind_their_skill(tmp_path: Path) -> None:
    kit = Kit(tmp_path)
    kit.skill("reporting", tool_dependencies=["make_report"])
    kit.load_skills()
    llm = ScriptedLlm(
        [
            call("make_report", title="early"),
            call("load_skill", skill_name="reporting"),
            call("make_report", title="Q3"),
            "done",
        ]
    )
    # tools=None, mcps=None: the defaults, as in the README's host example.
    app = build_app(
        AgentConfig(name="a"),
        kit.principal(),
        model=llm,
        toolbox=Toolbox(registry=kit.registry, skills=kit.catalog),
    )
    events = await run_turn(app, InMemorySessionService(), "s", "report")
    assert "make_report" not in llm.tool_names(0)
    assert "echo" in llm.tool_names(0) and "load_skill" in llm.tool_names(0)
    early, loaded = function_responses(events)["make_report"]
    assert early["error"]["code"] == "tool_not_available"
    assert loaded == {"report": "# Q3"}
    assert "make_report" in llm.tool_names(2)
    assert kit.ran["make_report"] == 1


async def test_naming_a_skill_tool_in_tools_declares_it_up_front(tmp_path: Path) -> None:
    kit = Kit(tmp_path)
    kit.skill("reporting", tool_dependencies=["make_report"])
    kit.load_skills()
    llm = ScriptedLlm(["hi"])
    config = AgentConfig(name="a", tools=("make_report",))
    app = build_app(
        config,
        kit.principal(),
        model=llm,
        toolbox=Toolbox(registry=kit.registry, skills=kit.catalog),
    )
    await run_turn(app, InMemorySessionService(), "s", "hi")
    assert "make_report" in llm.tool_names(0)


async def test_an_inactive_fixed_principal_never_reaches_the_model(tmp_path: Path) -> None:
    kit = Kit(tmp_path)
    principal = Principal(user=User(id=USER, active=False))
    llm = ScriptedLlm([])
    refusals: list[Refusal] = []
    app = build_app(
        AgentConfig(name="a"),
        principal,
        model=llm,
        on_refusal=refusals.append,
        toolbox=Toolbox(registry=kit.registry),
    )
    events = await run_turn(app, InMemorySessionService(), "s", "hi")
    assert AccessDenied.from_event(events[-1]) is not None
    assert llm.requests == [] and kit.ran == Counter()
    assert "disabled" in refusals[0].detail


async def test_a_path_the_guard_cannot_resolve_is_refused_and_the_run_goes_on(
    tmp_path: Path,
) -> None:
    kit = Kit(tmp_path)
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    os.symlink(workspace / "loop", workspace / "loop")  # resolving it raises

    @tool(registry=kit.registry)
    def read_text(path: str) -> dict[str, Any]:
        """Reads a file of the workspace."""
        kit.ran["read_text"] += 1
        return {"text": (workspace / path).read_text()}

    (workspace / "ok.txt").write_text("fine")
    llm = ScriptedLlm(
        [call("read_text", path="loop/x.txt"), call("read_text", path="ok.txt"), "done"]
    )
    app = build_app(
        AgentConfig(name="a", tools=("read_text",)),
        kit.principal(),
        model=llm,
        toolbox=Toolbox(registry=kit.registry, workspace=workspace),
    )
    events = await run_turn(app, InMemorySessionService(), "s", "read")
    refused, served = function_responses(events)["read_text"]
    assert refused["error"]["code"] == "resource_not_available"
    assert served == {"text": "fine"}
    assert events[-1].error_code is None
    assert str(workspace) not in _dump(events) and str(tmp_path) not in _dump(events)


async def test_a_source_that_raises_ends_the_run_without_escaping(tmp_path: Path) -> None:
    kit = Kit(tmp_path)

    async def broken(user_id: str) -> Principal:
        raise ConnectionError("directory at 10.0.0.7:389 is down")

    llm = ScriptedLlm([])
    app = build_app(
        AgentConfig(name="a"), broken, model=llm, toolbox=Toolbox(registry=kit.registry)
    )
    events = await run_turn(app, InMemorySessionService(), "s", "hi")
    stopped = AuthorizationUnavailable.from_event(events[-1])
    assert stopped is not None and stopped.reason == AuthorizationUnavailable.PUBLIC_TEXT
    assert "10.0.0.7" not in _dump(events)
    assert llm.requests == []


async def test_an_unreadable_access_database_mid_run_fails_closed(tmp_path: Path) -> None:
    kit = Kit(tmp_path)
    db = tmp_path / "access.db"
    repo = AccessRepository(f"sqlite+aiosqlite:///{db}")
    await repo.prepare()
    await repo.save_user(User(id=USER))
    await repo.save_resource(
        ResourceRecord(kind=ResourceKind.AGENT, id="a", creator_id=USER, share=ShareConfig.public())
    )

    @tool(registry=kit.registry)
    def break_database() -> dict[str, Any]:
        """Stands for the access tables becoming unreadable while the run is in flight."""
        with sqlite3.connect(db) as conn:
            conn.execute("ALTER TABLE yx_users RENAME TO yx_users_gone")
            conn.execute("ALTER TABLE yx_access_version RENAME TO yx_access_version_gone")
        return {"ok": True}

    llm = ScriptedLlm([call("break_database"), call("echo", text="never"), "never"])
    app = build_app(
        AgentConfig(name="a", tools=("echo", "break_database")),
        repo,
        model=llm,
        toolbox=Toolbox(registry=kit.registry),
    )
    try:
        events = await run_turn(app, InMemorySessionService(), "s", "go")
    finally:
        await repo.close()
    assert AuthorizationUnavailable.from_event(events[-1]) is not None
    assert "yx_users" not in _dump(events) and "yx_access" not in _dump(events)
    assert kit.ran["echo"] == 0 and len(llm.requests) == 1


async def test_a_tool_that_raises_is_reported_to_the_model_and_the_run_goes_on(
    tmp_path: Path,
) -> None:
    kit = Kit(tmp_path)

    @tool(registry=kit.registry)
    def flaky() -> dict[str, Any]:
        """Fails."""
        raise OSError(f"cannot open {tmp_path}/secret/config.yaml")

    llm = ScriptedLlm([call("flaky"), call("echo", text="after"), "done"])
    app = build_app(
        AgentConfig(name="a", tools=("flaky", "echo")),
        kit.principal(),
        model=llm,
        toolbox=Toolbox(registry=kit.registry),
    )
    events = await run_turn(app, InMemorySessionService(), "s", "go")
    [failed] = function_responses(events)["flaky"]
    assert failed["error"]["code"] == "tool_failed"
    assert "secret" not in _dump(events) and "Traceback" not in _dump(events)
    assert function_responses(events)["echo"] == [{"echo": "after"}]
    assert events[-1].error_code is None


@pytest.mark.parametrize("budget", [0, 3])
async def test_tool_failures_past_the_budget_end_the_run(tmp_path: Path, budget: int) -> None:
    kit = Kit(tmp_path)

    @tool(registry=kit.registry)
    def flaky() -> dict[str, Any]:
        """Fails."""
        raise RuntimeError("boom")

    llm = ScriptedLlm([call("flaky")] * (budget + 1) + ["never"])
    config = AgentConfig(name="a", tools=("flaky",), limits={"max_tool_failures": budget})
    app = build_app(
        config, kit.principal(role=Role.ADMIN), model=llm, toolbox=Toolbox(registry=kit.registry)
    )
    events = await run_turn(app, InMemorySessionService(), "s", "go")
    codes = [r["error"]["code"] for r in function_responses(events)["flaky"]]
    assert codes == ["tool_failed"] * budget + ["run_ending"]
    last = function_responses(events)["flaky"][-1]["error"]["message"]
    assert "ran and failed" in last and "did not run" not in last  # it did run
    assert ToolFailureLimitReached.from_event(events[-1]) is not None
    assert len(llm.requests) == budget + 1


async def test_unknown_and_disabled_users_get_identical_events(tmp_path: Path) -> None:
    kit = Kit(tmp_path)
    known = {"ghost": Principal(user=User(id="ghost", active=False))}

    async def source(user_id: str) -> Principal:
        if user_id not in known:
            raise NotFoundError("user", user_id)
        return known[user_id]

    app = build_app(
        AgentConfig(name="a"), source, model=ScriptedLlm([]), toolbox=Toolbox(registry=kit.registry)
    )
    texts = []
    for user in ("ghost", "nobody"):
        runner_events = await _run_as(app, user)
        last = runner_events[-1]
        texts.append((last.error_code, last.error_message, json.dumps(last.content.model_dump())))  # type: ignore[union-attr]
    assert texts[0] == texts[1]


async def _run_as(app: App, user: str) -> list[Event]:
    return await one_turn(app, "hi", user_id=user, session_id="s")


async def test_a_file_resolver_that_raises_fails_closed(tmp_path: Path) -> None:
    kit = Kit(tmp_path)

    @tool(registry=kit.registry)
    def read_file(file_id: str) -> dict[str, Any]:
        """Reads a file."""
        kit.ran["read_file"] += 1
        return {}

    async def owner(file_id: str) -> str | None:
        raise TimeoutError("file index at /srv/index timed out")

    llm = ScriptedLlm([call("read_file", file_id="f1"), "never"])
    app = build_app(
        AgentConfig(name="a", tools=("read_file",)),
        kit.principal(),
        model=llm,
        toolbox=Toolbox(registry=kit.registry, file_owner=owner),
    )
    events = await run_turn(app, InMemorySessionService(), "s", "go")
    assert function_responses(events)["read_file"][0]["error"]["code"] == "run_ending"
    assert AuthorizationUnavailable.from_event(events[-1]) is not None
    assert kit.ran["read_file"] == 0 and "/srv/index" not in _dump(events)
