"""An App serving many users from a real SQLite access database (`load_principal`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from google.adk.apps import App
from google.adk.events import Event
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.adk.tools.tool_context import ToolContext
from google.genai import types

from adk_yuxi.access import (
    AccessDenied,
    AccessRepository,
    AgentExecutionRevoked,
    ResourceKind,
    ResourceRecord,
    Role,
    Scope,
    ShareConfig,
    User,
)
from adk_yuxi.runtime import AgentConfig, Refusal, Toolbox, build_app
from adk_yuxi.testing import ScriptedLlm, call
from adk_yuxi.tools import tool

from ._kit import Kit

CONFIG = AgentConfig(name="helper", tools=("echo", "revoke_me"), preload_skills=("reporting",))


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[tuple[Kit, AccessRepository]]:
    repo = AccessRepository(f"sqlite+aiosqlite:///{tmp_path / 'access.db'}")
    await repo.prepare()
    await repo.save_user(User(id="boss", role=Role.ADMIN))
    for user in ("alice", "bob"):
        await repo.save_user(User(id=user, department_id="d1"))
    await repo.save_user(User(id="gone", department_id="d1", active=False))
    share = ShareConfig(read_scope=Scope.departments("d1"))
    await repo.save_resource(
        ResourceRecord(kind=ResourceKind.AGENT, id="helper", creator_id="boss", share=share)
    )
    await repo.save_resource(
        ResourceRecord(
            kind=ResourceKind.SKILL,
            id="reporting",
            creator_id="boss",
            share=ShareConfig(read_scope=Scope.users("alice")),
        )
    )
    kit = Kit(tmp_path)
    kit.skill("reporting", tool_dependencies=["make_report"])
    kit.load_skills()

    @tool(registry=kit.registry)
    async def revoke_me(tool_context: ToolContext) -> dict[str, Any]:
        """Stands for an administrator disabling the caller while the run is in flight."""
        kit.ran["revoke_me"] += 1
        await repo.set_user_active(tool_context.user_id, False)
        return {"ok": True}

    yield kit, repo
    await repo.close()


def _app(
    kit: Kit, repo: AccessRepository, llm: ScriptedLlm, log: list[Refusal] | None = None
) -> App:
    return build_app(
        CONFIG,
        repo,
        model=llm,
        on_refusal=None if log is None else log.append,
        toolbox=Toolbox(registry=kit.registry, skills=kit.catalog),
    )


async def _run(runner: Runner, user: str, text: str = "go") -> list[Event]:
    sessions = runner.session_service
    if await sessions.get_session(app_name=runner.app_name, user_id=user, session_id="s") is None:
        await sessions.create_session(app_name=runner.app_name, user_id=user, session_id="s")
    message = types.Content(role="user", parts=[types.Part(text=text)])
    return [e async for e in runner.run_async(user_id=user, session_id="s", new_message=message)]


async def test_rights_come_from_the_database_per_user_and_per_run(
    world: tuple[Kit, AccessRepository],
) -> None:
    kit, repo = world
    llm = ScriptedLlm(["a", "b", "c"])
    runner = Runner(app=_app(kit, repo, llm), session_service=InMemorySessionService())
    await _run(runner, "alice")
    await _run(runner, "bob")
    # The skill's owner widens its share config; bob's next run shows it.
    await repo.share(ResourceKind.SKILL, "reporting", ShareConfig(read_scope=Scope.everyone()))
    await _run(runner, "bob")
    await runner.close()
    assert "make_report" in llm.tool_names(0)
    assert "make_report" not in llm.tool_names(1)
    assert "make_report" in llm.tool_names(2)


@pytest.mark.parametrize(("user", "reason"), [("nobody", "not known"), ("gone", "disabled")])
async def test_an_unknown_or_disabled_user_is_refused_before_the_model(
    world: tuple[Kit, AccessRepository], user: str, reason: str
) -> None:
    kit, repo = world
    llm = ScriptedLlm([])
    log: list[Refusal] = []
    runner = Runner(app=_app(kit, repo, llm, log), session_service=InMemorySessionService())
    events = await _run(runner, user)
    await runner.close()
    denied = [d for e in events if (d := AccessDenied.from_event(e))]
    # One public text for every cause, so the event does not say which ids exist.
    assert len(denied) == 1 and denied[0].reason == AccessDenied.PUBLIC_TEXT
    [part] = events[-1].content.parts  # type: ignore[union-attr]
    assert part.text == f"This run was stopped: {AccessDenied.PUBLIC_TEXT}."
    assert reason in log[-1].detail
    assert AgentExecutionRevoked.from_event(events[-1]) is None
    assert llm.requests == []


async def test_revocation_mid_run_still_ends_the_run(
    world: tuple[Kit, AccessRepository],
) -> None:
    kit, repo = world
    llm = ScriptedLlm([call("revoke_me"), "hello alice"])
    log: list[Refusal] = []
    runner = Runner(app=_app(kit, repo, llm, log), session_service=InMemorySessionService())
    events = await _run(runner, "bob")
    revoked = [r for e in events if (r := AgentExecutionRevoked.from_event(e))]
    assert len(revoked) == 1 and "disabled" in log[-1].detail
    assert kit.ran["revoke_me"] == 1
    assert len(llm.requests) == 1  # the model was never asked again

    # bob's next run is refused at its start; alice, on the same runner, is unaffected.
    refused = await _run(runner, "bob")
    assert AccessDenied.from_event(refused[-1]) is not None
    served = await _run(runner, "alice")
    await runner.close()
    assert served[-1].error_code is None and len(llm.requests) == 2
    assert kit.ran["echo"] == 0


async def test_a_user_without_the_agent_at_run_start_is_denied(
    world: tuple[Kit, AccessRepository],
) -> None:
    kit, repo = world
    await repo.share(ResourceKind.AGENT, "helper", ShareConfig(read_scope=Scope.users("alice")))
    llm = ScriptedLlm([])
    runner = Runner(app=_app(kit, repo, llm), session_service=InMemorySessionService())
    events = await _run(runner, "bob")  # bob exists and is active, but may not use the agent
    await runner.close()
    assert AccessDenied.from_event(events[-1]) is not None
    assert AgentExecutionRevoked.from_event(events[-1]) is None
    assert llm.requests == []
