"""The deployer's config binds every user; a config a non-admin writes cannot raise it."""

from __future__ import annotations

from pathlib import Path

import pytest
from google.adk.sessions import InMemorySessionService

from adk_yuxi.access import (
    AccessRepository,
    ResourceKind,
    ResourceRecord,
    Role,
    ShareConfig,
    User,
)
from adk_yuxi.runtime import (
    AgentConfig,
    AgentConfigError,
    Limits,
    LlmCallLimitReached,
    LocalPrincipals,
    Toolbox,
    ToolCallLimitReached,
    ToolResultOffload,
    build_app,
)
from adk_yuxi.testing import ScriptedLlm, call
from tests.sql_backends import db_url, pg_schema

from ._kit import USER, Kit, run_turn

__all__ = ["db_url", "pg_schema"]

CAPPED = AgentConfig(
    name="a", tools=("echo",), limits=Limits(max_llm_calls=2, early_stopping="force")
)


def _echoing() -> ScriptedLlm:
    return ScriptedLlm([call("echo", text=str(i)) for i in range(8)])


async def test_a_fixed_plain_principal_is_bound_by_the_deployers_limits(tmp_path: Path) -> None:
    kit, llm = Kit(tmp_path), _echoing()
    app = build_app(CAPPED, kit.principal(), model=llm, toolbox=Toolbox(registry=kit.registry))
    events = await run_turn(app, InMemorySessionService(), "s", "go")
    assert LlmCallLimitReached.from_event(events[-1]) is not None
    assert len(llm.requests) == 2 and kit.ran["echo"] == 2


async def test_a_principal_source_is_bound_by_the_deployers_limits(tmp_path: Path) -> None:
    kit, llm = Kit(tmp_path), _echoing()
    config = AgentConfig(name="a", tools=("echo",), limits=Limits(max_tool_calls_per_turn=1))
    app = build_app(config, LocalPrincipals(()), model=llm, toolbox=Toolbox(registry=kit.registry))
    events = await run_turn(app, InMemorySessionService(), "s", "go")
    assert ToolCallLimitReached.from_event(events[-1]) is not None
    assert kit.ran["echo"] == 1


@pytest.mark.parametrize("db_url", ["sqlite", "postgresql"], indirect=True)
async def test_the_sql_access_repository_is_bound_by_the_deployers_limits(
    db_url: str, tmp_path: Path
) -> None:
    repo = AccessRepository(db_url)
    await repo.prepare()
    try:
        await repo.save_user(User(id="root", role=Role.SUPERADMIN))
        await repo.save_user(User(id=USER))
        await repo.save_resource(
            ResourceRecord(
                kind=ResourceKind.AGENT, id="a", creator_id="root", share=ShareConfig.public()
            )
        )
        kit, llm = Kit(tmp_path), _echoing()
        app = build_app(CAPPED, repo, model=llm, toolbox=Toolbox(registry=kit.registry))
        events = await run_turn(app, InMemorySessionService(), "s", "go")
        assert LlmCallLimitReached.from_event(events[-1]) is not None
        assert len(llm.requests) == 2
    finally:
        await repo.close()


def test_a_fixed_plain_principal_runs_on_the_configs_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("YUXI_MODEL", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    kit = Kit(tmp_path)
    config = AgentConfig(name="a", model="openai/house-model")
    for who in (kit.principal(), kit.principal(role=Role.ADMIN), LocalPrincipals(())):
        app = build_app(config, who, toolbox=Toolbox(registry=kit.registry))
        assert app.root_agent.model.model == "house-model"


def test_a_user_may_lower_a_limit_and_inherits_the_rest(tmp_path: Path) -> None:
    plain = Kit(tmp_path).principal()
    deployer = AgentConfig(name="a", model="demo", limits=Limits(max_llm_calls=10))
    mine = AgentConfig.from_user(
        {"name": "a", "limits": {"max_llm_calls": 3}}, plain, deployer=deployer
    )
    assert mine.limits == deployer.limits.model_copy(update={"max_llm_calls": 3})
    assert mine.model == "demo"
    unset = AgentConfig.from_user(
        {"name": "a", "instruction": "be brief"}, plain, deployer=deployer
    )
    assert unset.limits == deployer.limits and unset.model == "demo"
    assert unset.instruction == "be brief"


@pytest.mark.parametrize(
    ("limits", "field"),
    [
        ({"max_llm_calls": 11}, "limits.max_llm_calls"),
        ({"max_tool_calls_per_turn": 101}, "limits.max_tool_calls_per_turn"),
        ({"max_tool_failures": 4}, "limits.max_tool_failures"),
        ({"early_stopping": "generate"}, "limits.early_stopping"),
    ],
)
def test_a_user_may_not_raise_a_limit(
    tmp_path: Path, limits: dict[str, object], field: str
) -> None:
    plain = Kit(tmp_path).principal()
    deployer = AgentConfig(name="a", limits=Limits(max_llm_calls=10, early_stopping="force"))
    with pytest.raises(AgentConfigError) as refused:
        AgentConfig.from_user({"name": "a", "limits": limits}, plain, deployer=deployer)
    assert [f for f, _ in refused.value.problems] == [field]
    assert USER in str(refused.value)


def test_a_user_may_not_choose_the_model_but_an_admin_may(tmp_path: Path) -> None:
    kit = Kit(tmp_path)
    data = {"name": "a", "model": "openai/gpt-x", "limits": {"max_llm_calls": 400}}
    with pytest.raises(AgentConfigError) as refused:
        AgentConfig.from_user(data, kit.principal())
    assert {f for f, _ in refused.value.problems} == {"model", "limits.max_llm_calls"}
    admins = AgentConfig.from_user(data, kit.principal(role=Role.ADMIN))
    assert admins.model == "openai/gpt-x" and admins.limits.max_llm_calls == 400


def test_a_user_config_that_does_not_validate_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(AgentConfigError) as refused:
        AgentConfig.from_user({"name": "a", "bogus": 1}, Kit(tmp_path).principal())
    assert refused.value.problems[0][0] == "bogus"


def test_a_user_may_offload_more_never_less(tmp_path: Path) -> None:
    plain = Kit(tmp_path).principal()
    deployer = AgentConfig(
        name="a", offload_tool_results=ToolResultOffload(max_inline_bytes=8192, preview_chars=500)
    )
    lower = {"name": "a", "offload_tool_results": {"max_inline_bytes": 4096}}
    mine = AgentConfig.from_user(lower, plain, deployer=deployer)
    assert mine.offload_tool_results == ToolResultOffload(max_inline_bytes=4096, preview_chars=500)
    assert AgentConfig.from_user({"name": "a"}, plain, deployer=deployer) == deployer
    for asked, field in [
        ({"max_inline_bytes": 8193}, "offload_tool_results.max_inline_bytes"),
        ({"preview_chars": 501}, "offload_tool_results.preview_chars"),
        ({"exempt_tools": ["dump"]}, "offload_tool_results.exempt_tools"),
        (None, "offload_tool_results"),
    ]:
        with pytest.raises(AgentConfigError) as refused:
            AgentConfig.from_user(
                {"name": "a", "offload_tool_results": asked}, plain, deployer=deployer
            )
        assert [f for f, _ in refused.value.problems] == [field]
    admins = AgentConfig.from_user(
        {"name": "a", "offload_tool_results": None}, Kit(tmp_path).principal(role=Role.ADMIN)
    )
    assert admins.offload_tool_results is None


def test_only_an_admin_chooses_the_embedding_tool_retriever(tmp_path: Path) -> None:
    kit = Kit(tmp_path)
    data = {"name": "a", "tool_retrieval": {"top_k": 4, "retriever": "offline"}}
    with pytest.raises(AgentConfigError, match=r"tool_retrieval\.retriever"):
        AgentConfig.from_user(data, kit.principal())
    assert AgentConfig.from_user(data, kit.principal(role=Role.ADMIN)).tool_retrieval
    deployer = AgentConfig.model_validate(data)  # the deployer chose it: users keep it
    assert AgentConfig.from_user(data, kit.principal(), deployer=deployer).tool_retrieval
    bm25 = {"name": "a", "tool_retrieval": {"top_k": 4}}
    assert AgentConfig.from_user(bm25, kit.principal()).tool_retrieval
