"""Rights withdrawn while an agent tree runs, against a real SQLite access database:
inside a nested run, on the caller of a nested run, and on a transfer target."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from adk_yuxi.access import (
    AccessRepository,
    AgentExecutionRevoked,
    ResourceKind,
    ResourceRecord,
    Role,
    Scope,
    ShareConfig,
    User,
)
from adk_yuxi.runtime import Toolbox, build_app
from adk_yuxi.testing import ScriptedLlm, call
from adk_yuxi.tools import tool

from ._tree_kit import AGENTS, Tools, final_text, responses, run, tree_catalog


class World:
    def __init__(self, repo: AccessRepository) -> None:
        self.repo = repo
        self.tools = Tools()
        self.withdrawn: list[str] = []
        world = self

        @tool(registry=self.tools.registry)
        async def withdraw(agent: str) -> dict[str, Any]:
            """Stands for an administrator withdrawing a share while the run is in flight."""
            await repo.share(ResourceKind.AGENT, agent, ShareConfig())
            world.withdrawn.append(agent)
            return {"ok": True}


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[World]:
    repo = AccessRepository(f"sqlite+aiosqlite:///{tmp_path / 'access.db'}")
    await repo.prepare()
    await repo.save_user(User(id="boss", role=Role.ADMIN))
    await repo.save_user(User(id="alice", department_id="d1"))
    share = ShareConfig(read_scope=Scope.departments("d1"))
    for agent in AGENTS:
        await repo.save_resource(
            ResourceRecord(kind=ResourceKind.AGENT, id=agent, creator_id="boss", share=share)
        )
    yield World(repo)
    await repo.close()


def _app(world: World, models: dict[str, ScriptedLlm], **changes: dict[str, Any]) -> Any:
    catalog = tree_catalog(**changes)
    return build_app(
        "coordinator",
        world.repo,
        catalog=catalog,
        model=models,
        toolbox=Toolbox(registry=world.tools.registry),
    )


async def test_right_to_the_nested_agent_withdrawn_during_its_run(world: World) -> None:
    models = {
        "coordinator": ScriptedLlm(
            [call("researcher", request="q"), call("researcher", request="again"), "without it"]
        ),
        "researcher": ScriptedLlm([call("withdraw", agent="researcher"), "never"]),
    }
    app = _app(world, models, researcher={"tools": ["lookup", "withdraw"]})
    events = await run(app, "alice")
    first, second = responses(events, "researcher")
    assert first["error"]["code"] == "agent_stopped"
    assert first["error"]["reason"] == AgentExecutionRevoked.CODE
    assert second["error"]["code"] == "tool_not_available"  # refused before it starts
    assert final_text(events) == "without it"
    assert len(models["researcher"].requests) == 1  # stopped at its next call


async def test_right_to_the_caller_withdrawn_during_a_nested_run(world: World) -> None:
    models = {
        "coordinator": ScriptedLlm([call("researcher", request="q"), "never"]),
        "researcher": ScriptedLlm([call("withdraw", agent="coordinator"), "never"]),
    }
    app = _app(world, models, researcher={"tools": ["withdraw"]})
    events = await run(app, "alice")
    stopped = responses(events, "researcher")[0]["error"]
    assert stopped["reason"] == AgentExecutionRevoked.CODE
    assert AgentExecutionRevoked.from_event(events[-1]) is not None
    assert len(models["researcher"].requests) == 1
    assert len(models["coordinator"].requests) == 1


async def test_transfer_target_withdrawn_is_refused_at_the_next_call(world: World) -> None:
    models = {
        "coordinator": ScriptedLlm(
            [
                call("withdraw", agent="writer"),
                call("transfer_to_agent", agent_name="writer"),
                "I will answer myself.",
            ]
        ),
        "writer": ScriptedLlm([]),
    }
    app = _app(world, models, coordinator={"tools": ["withdraw"]})
    events = await run(app, "alice")
    refused = responses(events, "transfer_to_agent")[0]["error"]
    assert refused["code"] == "handoff_not_allowed" and refused["allowed"] == []
    assert final_text(events) == "I will answer myself."
    assert models["writer"].requests == []
    # The next run starts from current rights: the writer is no longer offered at all.
    models["coordinator"].extend(["hello"])
    await run(app, "alice", session_id="s2")
    assert "transfer_to_agent" not in models["coordinator"].tool_names()
