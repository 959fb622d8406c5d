"""Access decisions with their rule: each agrees with the check the runtime makes
(`compute_visibility`, the guard's knowledge bases, the skill loader's skills)."""

from __future__ import annotations

from pathlib import Path

import pytest

from adk_yuxi.access import Role
from adk_yuxi.runtime import AgentConfig, compute_visibility, prepare_runtime_context
from adk_yuxi.runtime.rights._decisions import kb_decision, skill_decision, tool_decision

from ._kit import Kit


@pytest.fixture
def kit(tmp_path: Path) -> Kit:
    kit = Kit(tmp_path)
    kit.skill("base", tool_dependencies=["echo"])
    kit.skill("reporting", tool_dependencies=["make_report"], skill_dependencies=["base"])
    kit.skill("admin-skill", tool_dependencies=["drop_tables"])
    kit.load_skills()
    return kit


def test_tool_rules_follow_visibility(kit: Kit) -> None:
    ctx = prepare_runtime_context(
        kit.principal(), AgentConfig(name="a"), registry=kit.registry, skills=kit.catalog
    )
    cases = {
        ("read_kb", ()): (True, "agent_tool"),
        ("echo", ()): (False, "tool_behind_skill"),
        ("echo", ("base",)): (True, "opened_by_skill"),
        ("make_report", ("reporting",)): (True, "opened_by_skill"),
        ("load_skill", ()): (True, "skill_loader"),
        ("drop_tables", ()): (False, "tool_admin_only"),
        ("ghost", ()): (False, "tool_unknown"),
    }
    for (name, active), (allowed, rule) in cases.items():
        decision = tool_decision(ctx, name, active)
        assert (decision.allowed, decision.rule) == (allowed, rule), name
        assert decision.allowed == compute_visibility(ctx, active).shows_tool(name)
    assert "'base'" in tool_decision(ctx, "echo").detail


def test_tool_rules_of_an_explicit_list(kit: Kit) -> None:
    config = AgentConfig(name="a", tools=("echo", "drop_tables"), skills=())
    ctx = prepare_runtime_context(kit.principal(), config, registry=kit.registry)
    assert tool_decision(ctx, "echo").rule == "agent_tool"
    assert tool_decision(ctx, "drop_tables").rule == "tool_admin_only"
    assert tool_decision(ctx, "read_kb").rule == "tool_not_in_agent"
    assert tool_decision(ctx, "load_skill").rule == "tool_not_in_agent"
    admin = prepare_runtime_context(kit.principal(role=Role.ADMIN), config, registry=kit.registry)
    assert tool_decision(admin, "drop_tables").allowed


def test_kb_and_skill_rules(kit: Kit) -> None:
    config = AgentConfig(name="a", knowledges=("kb1", "kb_secret"), skills=("reporting",))
    ctx = prepare_runtime_context(
        kit.principal(skills=["reporting"]), config, registry=kit.registry, skills=kit.catalog
    )
    assert kb_decision(ctx, "kb1").rule == "kb_readable"
    assert kb_decision(ctx, "kb_secret").rule == "kb_not_readable"
    assert kb_decision(ctx, "kb2").rule == "kb_not_in_agent"
    assert skill_decision(ctx, "reporting").rule == "skill_dependency_out_of_reach"
    assert skill_decision(ctx, "admin-skill").rule == "skill_not_offered"
    full = prepare_runtime_context(
        kit.principal(),
        AgentConfig(name="a", skills=("reporting",), preload_skills=("base",)),
        registry=kit.registry,
        skills=kit.catalog,
    )
    assert skill_decision(full, "reporting").rule == "skill_usable"
    assert skill_decision(full, "base").rule == "skill_preloaded"
    for name in ("reporting", "base", "admin-skill"):
        assert skill_decision(full, name).allowed == (name in full.skill_specs)
