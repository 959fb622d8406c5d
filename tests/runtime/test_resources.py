"""Resource checks on tool arguments: at the plugin, and inside the tool itself."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.sessions import InMemorySessionService

from adk_yuxi.runtime import AgentConfig, ResourceGuard, ResourceType, Toolbox, build_app
from adk_yuxi.runtime import prepare_runtime_context as prepare
from adk_yuxi.testing import ScriptedLlm, call

from ._kit import Kit, function_responses, run_turn


async def test_forbidden_kb_is_refused_without_naming_it(tmp_path: Path) -> None:
    kit = Kit(tmp_path)
    llm = ScriptedLlm(
        [
            call("read_kb", kb_id="kb_secret"),
            call("read_kb", kb_id="kb_missing"),
            call("read_kb", kb_id="kb1"),
            "done",
        ]
    )
    app = build_app(
        AgentConfig(name="a", tools=("read_kb",)),
        kit.principal(),
        model=llm,
        toolbox=Toolbox(registry=kit.registry),
    )
    events = await run_turn(app, InMemorySessionService(), "s", "read")
    secret, missing, allowed = function_responses(events)["read_kb"]
    assert secret["error"]["code"] == "resource_not_available"
    assert secret["error"]["argument"] == "kb_id"
    assert "kb_secret" not in json.dumps(secret)
    # An existing-but-forbidden id and a nonexistent one are indistinguishable.
    assert json.dumps(secret) == json.dumps(missing)
    assert allowed == {"kb": "kb1", "text": "contents"}
    assert kit.ran["read_kb"] == 1


async def test_the_tool_refuses_on_its_own_outside_a_yuxi_runtime(tmp_path: Path) -> None:
    kit = Kit(tmp_path)
    llm = ScriptedLlm([call("read_kb", kb_id="kb1"), "done"])
    plain = LlmAgent(name="plain", model=llm, tools=[kit.registry.get("read_kb")])
    app = App(name="plain", root_agent=plain)
    events = await run_turn(app, InMemorySessionService(), "s", "read")
    # No Yuxi runtime, nothing to check against: the tool's own check refuses.
    assert kit.ran["read_kb"] == 0
    refused = function_responses(events)["read_kb"][0]
    assert refused["error"]["code"] == "resource_not_available"


@pytest.fixture
def guard(tmp_path: Path) -> ResourceGuard:
    kit = Kit(tmp_path)
    workspace = tmp_path / "ws"
    (workspace / "docs").mkdir(parents=True)
    (tmp_path / "outside.txt").write_text("secret")
    os.symlink(tmp_path / "outside.txt", workspace / "escape")

    async def owner(file_id: str) -> str | None:
        return {"f1": "kb1", "f2": "kb_secret"}.get(file_id)

    ctx = prepare(kit.principal(), AgentConfig(name="a"), registry=kit.registry)
    return ResourceGuard(ctx, workspace=workspace, file_owner=owner)


@pytest.mark.parametrize(
    ("kind", "value", "allowed"),
    [
        (ResourceType.PATH, "docs/a.md", True),
        (ResourceType.PATH, "new.txt", True),
        (ResourceType.PATH, "../outside.txt", False),
        (ResourceType.PATH, "docs/../../outside.txt", False),
        (ResourceType.PATH, "/etc/passwd", False),
        (ResourceType.PATH, "escape", False),  # a symlink out of the workspace
        (ResourceType.PATH, "", False),
        (ResourceType.FILE, "f1", True),
        (ResourceType.FILE, "f2", False),
        (ResourceType.FILE, "f3", False),
        (ResourceType.KNOWLEDGE_BASE, ["kb1"], True),
        (ResourceType.KNOWLEDGE_BASE, ["kb1", "kb_secret"], False),
        (ResourceType.KNOWLEDGE_BASE, 7, False),
    ],
)
async def test_guard_table(
    guard: ResourceGuard, kind: ResourceType, value: object, allowed: bool
) -> None:
    assert (await guard.allows(kind, value) is None) is allowed


async def test_unconfigured_checks_fail_closed(tmp_path: Path) -> None:
    kit = Kit(tmp_path)
    guard = ResourceGuard(prepare(kit.principal(), AgentConfig(name="a"), registry=kit.registry))
    assert await guard.allows(ResourceType.PATH, "a.txt") is not None
    assert await guard.allows(ResourceType.FILE, "f1") is not None
