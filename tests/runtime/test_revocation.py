"""Revocation in the middle of a run, against a real SQLite access database."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from google.adk.apps import App
from google.adk.models.llm_request import LlmRequest
from google.adk.sessions import InMemorySessionService
from google.adk.tools.tool_context import ToolContext

from adk_yuxi.access import (
    AccessDenied,
    AccessRepository,
    AgentExecutionRevoked,
    Principal,
    ResourceKind,
    ResourceRecord,
    Role,
    Scope,
    ShareConfig,
    User,
)
from adk_yuxi.errors import RunStopped
from adk_yuxi.runtime import Access, AgentConfig, Refusal, Toolbox, build_app
from adk_yuxi.testing import ScriptedLlm, call
from adk_yuxi.tools import tool

from ._kit import USER, Kit, function_responses, run_turn

CONFIG = AgentConfig(name="helper", tools=("echo", "revoke_me"))


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[tuple[Kit, AccessRepository, Path]]:
    db = tmp_path / "access.db"
    repo = AccessRepository(f"sqlite+aiosqlite:///{db}")
    await repo.prepare()
    await repo.save_user(User(id="boss", role=Role.ADMIN))
    await repo.save_user(User(id=USER, role=Role.USER, department_id="d1"))
    share = ShareConfig(read_scope=Scope.departments("d1"))
    await repo.save_resource(
        ResourceRecord(kind=ResourceKind.AGENT, id="helper", creator_id="boss", share=share)
    )
    kit = Kit(tmp_path)

    @tool(registry=kit.registry)
    async def revoke_me(tool_context: ToolContext) -> dict[str, Any]:
        """Stands for an administrator disabling the user while the run is in flight."""
        kit.ran["revoke_me"] += 1
        await repo.set_user_active(USER, False)
        return {"ok": True}

    yield kit, repo, db
    await repo.close()


def _stopped(events: list[Any], stop: type[RunStopped] = AgentExecutionRevoked) -> RunStopped:
    stopped = [r for e in events if (r := stop.from_event(e))]
    assert len(stopped) == 1, events
    assert events[-1].error_code == stop.CODE
    assert stopped[0].reason == stop.PUBLIC_TEXT  # one public text; the cause is logged
    return stopped[0]


def _app(
    kit: Kit, repo: AccessRepository, principal: Any, llm: ScriptedLlm, log: list[Refusal]
) -> App:
    return build_app(
        CONFIG,
        Access.live(principal, repo),
        model=llm,
        on_refusal=log.append,
        toolbox=Toolbox(registry=kit.registry),
    )


async def test_disabled_between_steps_ends_the_run_before_the_next_model_call(
    world: tuple[Kit, AccessRepository, Path],
) -> None:
    kit, repo, _ = world
    llm = ScriptedLlm([call("revoke_me"), call("echo", text="never")])
    log: list[Refusal] = []
    app = _app(kit, repo, await repo.load_principal(USER), llm, log)
    events = await run_turn(app, InMemorySessionService(), "s", "go")
    _stopped(events)
    assert "disabled" in log[-1].detail
    assert kit.ran["revoke_me"] == 1 and kit.ran["echo"] == 0
    assert len(llm.requests) == 1  # the model was never asked again


async def test_right_withdrawn_before_a_tool_call_blocks_that_call(
    world: tuple[Kit, AccessRepository, Path],
) -> None:
    kit, repo, db = world

    def withdraw_then_call(request: LlmRequest) -> Any:
        # Another process (an administrator's console) narrows the agent's share config
        # while the model is thinking; the write goes straight to the same SQLite file.
        with sqlite3.connect(db) as conn:
            conn.execute(
                "UPDATE yx_resources SET share = ? WHERE kind = 'agent' AND id = 'helper'",
                (ShareConfig().model_dump_json(),),
            )
        return call("echo", text="too late")

    llm = ScriptedLlm([withdraw_then_call, "unreachable"])
    log: list[Refusal] = []
    app = _app(kit, repo, await repo.load_principal(USER), llm, log)
    events = await run_turn(app, InMemorySessionService(), "s", "go")
    assert kit.ran["echo"] == 0
    assert function_responses(events)["echo"][0]["error"]["code"] == "run_ending"
    _stopped(events)
    assert "may not use this agent" in log[-1].detail
    assert len(llm.requests) == 1


async def test_a_run_started_after_revocation_is_denied_before_the_model(
    world: tuple[Kit, AccessRepository, Path],
) -> None:
    kit, repo, _ = world
    principal = await repo.load_principal(USER)
    await repo.set_resource_enabled(ResourceKind.AGENT, "helper", False)
    llm = ScriptedLlm([])
    log: list[Refusal] = []
    events = await run_turn(
        _app(kit, repo, principal, llm, log), InMemorySessionService(), "s", "go"
    )
    _stopped(events, AccessDenied)  # no right at run start: denied, not revoked
    assert llm.requests == []


async def test_a_run_under_another_user_id_is_refused(
    world: tuple[Kit, AccessRepository, Path],
) -> None:
    kit, repo, _ = world
    await repo.save_user(User(id="mallory", role=Role.USER, department_id="d1"))
    principal = await repo.load_principal("mallory")
    llm = ScriptedLlm([])
    log: list[Refusal] = []
    app = _app(kit, repo, principal, llm, log)
    events = await run_turn(app, InMemorySessionService(), "s", "go")  # runs as alice
    _stopped(events, AccessDenied)
    assert "another user" in log[-1].detail
    assert llm.requests == []


async def test_a_fixed_principal_built_by_the_host_runs_on_live_rights(
    world: tuple[Kit, AccessRepository, Path],
) -> None:
    """The host's own principal need not list the agent: the repository decides that."""
    kit, repo, _ = world
    principal = Principal(user=User(id=USER, department_id="d1"))
    llm = ScriptedLlm([call("echo", text="hi"), "done"])
    log: list[Refusal] = []
    events = await run_turn(
        _app(kit, repo, principal, llm, log), InMemorySessionService(), "s", "go"
    )
    assert events[-1].error_code is None and kit.ran["echo"] == 1 and log == []
