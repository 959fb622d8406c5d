"""Every call is decided on the rights of that moment: a right withdrawn mid-run (a
knowledge base, a file's knowledge base, an admin role, a skill, an MCP server) takes
effect at the very next call, on SQLite and on PostgreSQL, through the real Runner."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types

from adk_yuxi.access import (
    AccessRepository,
    ResourceKind,
    ResourceRecord,
    Role,
    Scope,
    ShareConfig,
    User,
)
from adk_yuxi.mcp import McpServerConfig
from adk_yuxi.runtime import AgentConfig, Refusal, Toolbox, build_app
from adk_yuxi.testing import ScriptedLlm, call
from adk_yuxi.tools import tool
from tests.sql_backends import db_url, pg_schema

from ._kit import Kit, function_responses

__all__ = ["db_url", "pg_schema"]

SERVER = Path(__file__).with_name("_mcp_server.py")
D1 = ShareConfig(read_scope=Scope.departments("d1"))


@dataclass
class World:
    kit: Kit
    repo: AccessRepository


@pytest.fixture
async def world(db_url: str, tmp_path: Path) -> AsyncIterator[World]:
    repo = AccessRepository(db_url)
    await repo.prepare()
    await repo.save_user(User(id="boss", role=Role.SUPERADMIN))
    await repo.save_user(User(id="alice", role=Role.ADMIN, department_id="d1"))
    for kind, ident in (
        (ResourceKind.AGENT, "helper"),
        (ResourceKind.KNOWLEDGE_BASE, "kb1"),
        (ResourceKind.SKILL, "reporting"),
        (ResourceKind.MCP_SERVER, "glossary"),
    ):
        await repo.save_resource(ResourceRecord(kind=kind, id=ident, creator_id="boss", share=D1))
    kit = Kit(tmp_path)
    kit.skill("reporting", tool_dependencies=["make_report"])
    kit.load_skills()
    kit.mcp.register(
        McpServerConfig(
            name="glossary",
            transport="stdio",
            command=sys.executable,
            args=(str(SERVER),),
            env={"YUXI_TEST_MARKER": str(tmp_path / "mcp-started")},
            timeout=30,
        )
    )

    @tool(registry=kit.registry)
    def read_file(file_id: str) -> dict[str, Any]:
        """Reads a file of a knowledge base."""
        kit.ran["read_file"] += 1
        return {"file": file_id}

    yield World(kit, repo)
    await repo.close()


Withdraw = Callable[[AccessRepository], Awaitable[Any]]

CASES: dict[str, tuple[dict[str, Any], Withdraw, str, str]] = {
    # name: (a call that needs the right, how an administrator withdraws it,
    #        the refusal code of the next call, the tool the model no longer sees or "")
    "knowledge base": (
        {"name": "read_kb", "kb_id": "kb1"},
        lambda r: r.share(ResourceKind.KNOWLEDGE_BASE, "kb1", ShareConfig.private()),
        "resource_not_available",
        "",
    ),
    "file in a knowledge base": (
        {"name": "read_file", "file_id": "f1"},
        lambda r: r.set_resource_enabled(ResourceKind.KNOWLEDGE_BASE, "kb1", False),
        "resource_not_available",
        "",
    ),
    "admin role": (
        {"name": "drop_tables"},
        lambda r: r.save_user(User(id="alice", role=Role.USER, department_id="d1")),
        "tool_not_available",
        "drop_tables",
    ),
    "skill": (
        {"name": "make_report", "title": "Q3"},
        lambda r: r.share(ResourceKind.SKILL, "reporting", ShareConfig.private()),
        "tool_not_available",
        "make_report",
    ),
    "mcp server": (
        {"name": "lookup_term", "term": "gating"},
        lambda r: r.set_resource_enabled(ResourceKind.MCP_SERVER, "glossary", False),
        "tool_not_available",
        "lookup_term",
    ),
}


async def _owner(file_id: str) -> str | None:
    return {"f1": "kb1"}.get(file_id)


@pytest.mark.parametrize("case", sorted(CASES))
async def test_a_right_withdrawn_mid_run_stops_the_next_call(world: World, case: str) -> None:
    needed, withdraw, code, hidden = CASES[case]
    kit, repo = world.kit, world.repo

    @tool(registry=kit.registry)
    async def administrator_acts() -> dict[str, Any]:
        """Stands for an administrator's change while the run is in flight."""
        await withdraw(repo)
        return {"ok": True}

    needed = dict(needed)
    name = needed.pop("name")
    llm = ScriptedLlm(
        [call(name, **needed), call("administrator_acts"), call(name, **needed), "done"]
    )
    refusals: list[Refusal] = []
    config = AgentConfig(
        name="helper",
        tools=("echo", "read_kb", "read_file", "drop_tables", "administrator_acts"),
        mcps=(),
        preload_skills=("reporting",),
    )
    if case == "mcp server":
        config = config.model_copy(update={"mcps": ("glossary",)})
    app = build_app(
        config,
        repo,
        model=llm,
        on_refusal=refusals.append,
        toolbox=Toolbox(
            registry=kit.registry, skills=kit.catalog, mcp_servers=kit.mcp, file_owner=_owner
        ),
    )
    sessions = InMemorySessionService()
    await sessions.create_session(app_name=app.name, user_id="alice", session_id="s")
    runner = Runner(app=app, session_service=sessions)
    message = types.Content(role="user", parts=[types.Part(text="go")])
    try:
        events = [
            e async for e in runner.run_async(user_id="alice", session_id="s", new_message=message)
        ]
    finally:
        await runner.close()

    first, second = function_responses(events)[name]
    assert "error" not in first, first
    assert second["error"]["code"] == code
    assert [r.code for r in refusals] == [code]
    assert events[-1].error_code is None  # the run went on: only this call was refused
    assert len(llm.requests) == 4
    if hidden:
        assert hidden in llm.tool_names(1)  # declared before the change
        assert hidden not in llm.tool_names(2)  # and not after it
