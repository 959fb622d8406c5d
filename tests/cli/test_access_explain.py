"""`yuxi access explain` agrees with a real run through the Runner: the same user, agent
config and access database; an allowed and a refused tool, an allowed and a refused
knowledge base, a user the agent is not shared with, on SQLite and on PostgreSQL."""

from __future__ import annotations

import asyncio
import importlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService

from adk_yuxi.access import (
    AccessRepository,
    ResourceKind,
    ResourceRecord,
    Role,
    Scope,
    ShareConfig,
    User,
)
from adk_yuxi.runtime import AgentCatalog, Refusal, build_app
from adk_yuxi.testing import ScriptedLlm, call
from adk_yuxi.tools import default_registry
from tests.conftest import function_responses, user_message
from tests.e2e._cli import yuxi_here
from tests.sql_backends import db_url, pg_schema

__all__ = ["db_url", "pg_schema"]

pytestmark = pytest.mark.slow
TOOLS = "tests.cli._explain_tools"


@pytest.fixture
def explain_tools() -> Iterator[None]:
    """The tools the command imports, registered here too for the real run."""
    module = importlib.import_module(TOOLS)
    if "count_docs" not in default_registry:
        module.register()
    try:
        yield
    finally:
        for tool_id in module.TOOL_IDS:
            default_registry.unregister(tool_id)
        sys.modules.pop(TOOLS, None)


async def seed(db: str) -> None:
    repository = AccessRepository(db)
    try:
        await repository.prepare()
        await repository.save_user(User(id="root", role=Role.SUPERADMIN))
        await repository.save_user(User(id="ann"))
        await repository.save_user(User(id="bob"))
        for kind, ident, scope in (
            (ResourceKind.AGENT, "helper", Scope.users("ann")),
            (ResourceKind.KNOWLEDGE_BASE, "kb-open", Scope.everyone()),
            (ResourceKind.KNOWLEDGE_BASE, "kb-closed", Scope.users()),
        ):
            share = ShareConfig(read_scope=scope)
            record = ResourceRecord(kind=kind, id=ident, creator_id="root", share=share)
            await repository.save_resource(record)
    finally:
        await repository.close()


async def real_run(
    db: str, agents: Path, user: str, script: list[Any]
) -> tuple[list[Refusal], list[dict[str, Any]]]:
    """One turn through the Runner; the refusals reported and the tool results."""
    refusals: list[Refusal] = []
    events = []
    repository = AccessRepository(db)
    app = build_app(
        "helper",
        repository,
        catalog=AgentCatalog.from_yaml(agents),
        model=ScriptedLlm(script),
        on_refusal=refusals.append,
    )
    sessions = InMemorySessionService()
    runner = Runner(app=app, session_service=sessions)
    session = await sessions.create_session(app_name=app.name, user_id=user)
    async for event in runner.run_async(
        user_id=user, session_id=session.id, new_message=user_message("go")
    ):
        events.append(event)
    await runner.close()
    await repository.close()
    return refusals, [dict(r.response or {}) for r in function_responses(events)]


def explain(db: str, agents: Path, *args: str) -> dict[str, Any]:
    options = ("--agents", str(agents), "--import", TOOLS, "--db", db, "--json")
    done: subprocess.CompletedProcess[str] = yuxi_here(["access", "explain", *args, *options])
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


async def test_explain_says_what_a_run_does(
    db_url: str, tmp_path: Path, explain_tools: None
) -> None:
    await seed(db_url)
    agents = tmp_path / "agents"
    agents.mkdir()
    (agents / "helper.yaml").write_text("description: Counts documents.\ntools: [count_docs]\n")
    script = [
        [
            call("count_docs", kb_id="kb-open"),
            call("count_docs", kb_id="kb-closed"),
            call("wipe_docs"),
        ],
        "done",
    ]
    ann, results = await real_run(db_url, agents, "ann", script)
    bob, _ = await real_run(db_url, agents, "bob", ["never asked"])

    runs = await asyncio.gather(
        *(
            asyncio.to_thread(explain, db_url, agents, *args)
            for args in (
                ("ann", "helper", "--tool", "count_docs"),
                ("ann", "helper", "--tool", "wipe_docs"),
                ("ann", "helper", "--kb", "kb-open"),
                ("ann", "helper", "--kb", "kb-closed"),
                ("bob", "helper", "--tool", "count_docs"),
            )
        )
    )
    tool_ok, tool_refused, kb_ok, kb_refused, not_shared = runs

    # The run refused exactly the kb-closed call and the unlisted tool.
    by_tool = {(r.tool, r.code): r.detail for r in ann}
    assert set(by_tool) == {
        ("count_docs", "resource_not_available"),
        ("wipe_docs", "tool_not_available"),
    }
    assert {"documents": 3} in results  # the allowed call ran
    assert tool_ok["allowed"] and tool_ok["rule"] == "agent_tool"
    assert kb_ok["allowed"] and kb_ok["rule"] == "kb_readable"
    assert not tool_refused["allowed"] and tool_refused["rule"] == "tool_not_in_agent"
    assert by_tool[("wipe_docs", "tool_not_available")].startswith("tool_not_in_agent: ")
    assert not kb_refused["allowed"] and kb_refused["rule"] == "kb_not_readable"
    assert by_tool[("count_docs", "resource_not_available")].startswith("kb_not_readable: ")
    assert kb_refused["record"]["read_scope"] == {"kind": "user", "ids": []}

    (refused_run,) = bob
    assert refused_run.code == "access_denied"
    assert not not_shared["allowed"] and not_shared["rule"] == "agent_not_usable"
    assert [s["kind"] for s in not_shared["steps"]] == ["agent"]  # the run stops there
    assert refused_run.detail.startswith("agent_not_usable: ")
