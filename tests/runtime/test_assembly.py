"""`build_app`'s values: capabilities bring their plugins (in their stage) and their base
tools, defaults are replaced by a listed capability of their type, and the host builds
its apps from the same values (`ApiConfig`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from google.adk.apps import App
from google.adk.plugins.base_plugin import BasePlugin
from pydantic import BaseModel

from adk_yuxi import (
    AgentConfig,
    Compaction,
    LocalPrincipals,
    Offload,
    RunRecords,
    Toolbox,
    build_app,
)
from adk_yuxi.access import Principal, User
from adk_yuxi.guards import CallRepairPlugin
from adk_yuxi.host import ApiConfig
from adk_yuxi.host._host import Host
from adk_yuxi.ledger import LedgerPlugin
from adk_yuxi.mcp import McpResultPlugin
from adk_yuxi.runtime import AuthorizationPlugin, Refusal, ToolResultOffloadPlugin
from adk_yuxi.runtime.assembly._prompt_estimate import PromptEstimatePlugin
from adk_yuxi.testing import ScriptedLlm
from adk_yuxi.tools import ToolRegistry, tool

CONFIG = AgentConfig(name="helper", tools=())
ANN = Principal.from_records(User(id="ann"), [])


class Audit(BasePlugin):
    def __init__(self) -> None:
        super().__init__(name="audit")


def kinds(app: App) -> list[type]:
    return [type(p) for p in app.plugins]


def test_the_defaults_are_offload_and_compaction_and_no_records() -> None:
    app = build_app(CONFIG, LocalPrincipals(), model=ScriptedLlm([]))
    shown = kinds(app)
    assert shown[0] is AuthorizationPlugin and shown[-1] is ToolResultOffloadPlugin
    assert PromptEstimatePlugin in shown  # the compaction's, for models that report no usage
    assert LedgerPlugin not in shown
    assert app.events_compaction_config is not None
    plugin = app.plugins[0]
    assert isinstance(plugin, AuthorizationPlugin)
    assert plugin.cache.get(ANN).root.context.base_tools == ("read_tool_result",)


def test_each_capability_lands_in_its_stage(tmp_path: Path) -> None:
    """Records right after the authorization plugin (they must see a run before anything
    acts on it), plain plugins after the guards, the offload plugin last."""
    app = build_app(
        CONFIG,
        LocalPrincipals(),
        model=ScriptedLlm([]),
        capabilities=[Audit(), RunRecords(f"sqlite+aiosqlite:///{tmp_path / 'r.db'}")],
    )
    shown = kinds(app)
    assert shown[0] is AuthorizationPlugin and shown[-1] is ToolResultOffloadPlugin
    order = [shown.index(k) for k in (McpResultPlugin, LedgerPlugin, CallRepairPlugin, Audit)]
    assert order == sorted(order)
    plugin = app.plugins[0]
    assert isinstance(plugin, AuthorizationPlugin)
    runtime = plugin.cache.get(ANN).root
    assert runtime.context.base_tools == (
        "ask_user_question",
        "mark_for_improvement",
        "present_artifacts",
        "read_tool_result",
    )


def test_a_listed_capability_replaces_the_default_of_its_type() -> None:
    summarizer = ScriptedLlm([])
    app = build_app(
        CONFIG,
        LocalPrincipals(),
        model=ScriptedLlm([]),
        capabilities=[Offload(name="my_offload"), Compaction(summarizer=summarizer)],
    )
    offloads = [p for p in app.plugins if isinstance(p, ToolResultOffloadPlugin)]
    assert [p.name for p in offloads] == ["my_offload"]
    assert app.plugins[-1] is offloads[0]
    assert app.events_compaction_config is not None


def test_two_capabilities_of_one_type_are_refused() -> None:
    with pytest.raises(TypeError, match="more than one RunRecords"):
        build_app(
            CONFIG,
            LocalPrincipals(),
            model=ScriptedLlm([]),
            capabilities=[RunRecords("sqlite+aiosqlite://"), RunRecords("sqlite+aiosqlite://")],
        )


def test_a_base_tool_name_clashing_with_a_registered_tool_is_refused() -> None:
    registry = ToolRegistry()

    def read_tool_result(text: str) -> str:
        """A local tool under a base tool's name."""
        return text

    tool(registry=registry)(read_tool_result)
    with pytest.raises(ValueError, match="read_tool_result"):
        build_app(
            AgentConfig(name="helper", tools=("read_tool_result",)),
            LocalPrincipals(),
            model=ScriptedLlm([]),
            toolbox=Toolbox(registry=registry),
        )


class Answer(BaseModel):
    text: str


async def test_the_host_builds_its_apps_from_the_same_values(tmp_path: Path) -> None:
    refusals: list[Refusal] = []
    config = ApiConfig(
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'h.db'}",
        agents=(CONFIG,),
        model=ScriptedLlm([]),
        capabilities=[Audit(), Compaction(summarizer=ScriptedLlm([]))],
        output_schema=Answer,
        on_refusal=refusals.append,
    )
    host = Host(config)
    try:
        app = host.runners["helper"].app
        assert app is not None
        assert Audit in kinds(app) and LedgerPlugin in kinds(app)
        assert kinds(app).index(LedgerPlugin) < kinds(app).index(Audit)
        assert app.root_agent.output_schema is Answer  # type: ignore[attr-defined]
    finally:
        await host.close()


def test_the_host_records_its_runs_itself() -> None:
    with pytest.raises(ValueError, match="records its runs itself"):
        ApiConfig(
            database_url="sqlite+aiosqlite://",
            agents=(CONFIG,),
            capabilities=[RunRecords("sqlite+aiosqlite://")],
        )
