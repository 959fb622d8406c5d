"""`prepare_runtime_context` and `resolve_runtime_tools` without a Runner."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from google.adk.tools.base_tool import BaseTool

from adk_yuxi.access import Role
from adk_yuxi.runtime import (
    AgentConfig,
    DuplicateToolError,
    Limits,
    compute_visibility,
    prepare_runtime_context,
    resolve_runtime_tools,
)
from adk_yuxi.tools import register_tool, tool

from ._kit import Kit


@pytest.fixture
def kit(tmp_path: Path) -> Kit:
    kit = Kit(tmp_path)
    kit.skill("base", tool_dependencies=["echo"])
    kit.skill("reporting", tool_dependencies=["make_report"], skill_dependencies=["base"])
    kit.skill("loop-a", skill_dependencies=["loop-b"])
    kit.skill("loop-b", skill_dependencies=["loop-a"])
    kit.skill("admin-skill", tool_dependencies=["drop_tables"])
    kit.load_skills()
    return kit


def test_none_means_everything_usable(kit: Kit) -> None:
    ctx = prepare_runtime_context(
        kit.principal(), AgentConfig(name="a"), registry=kit.registry, skills=kit.catalog
    )
    # Not the admin-only tool; and not echo and make_report either: skills this agent
    # offers depend on them, so they are reachable only through those skills.
    assert set(ctx.tools) == {"read_kb"}
    assert ctx.knowledge_bases == ("kb1",)  # not kb_secret
    assert set(ctx.skills) == {"base", "reporting", "loop-a", "loop-b"}
    assert ("skill", "admin-skill") in {(k, n) for k, n, _ in ctx.omitted}


def test_explicit_lists_are_intersected(kit: Kit) -> None:
    config = AgentConfig(
        name="a",
        tools=("echo", "drop_tables", "ghost"),
        knowledges=("kb1", "kb_secret"),
        skills=("reporting",),
        preload_skills=("reporting", "loop-a"),
    )
    ctx = prepare_runtime_context(
        kit.principal(), config, registry=kit.registry, skills=kit.catalog
    )
    assert ctx.tools == ("echo",)
    assert ctx.knowledge_bases == ("kb1",)
    assert ctx.skills == ("reporting", "base")  # the dependency closure
    assert ctx.preloaded_skills == ("reporting",)


def test_cycles_are_skipped_in_closure_and_visibility(kit: Kit) -> None:
    config = AgentConfig(name="a", tools=(), skills=("loop-a",))
    ctx = prepare_runtime_context(
        kit.principal(), config, registry=kit.registry, skills=kit.catalog
    )
    assert ctx.skills == ("loop-a", "loop-b")
    assert compute_visibility(ctx, ["loop-b"]).active_skills == ("loop-b", "loop-a")


def test_skill_whose_dependency_is_not_readable_is_dropped(kit: Kit) -> None:
    principal = kit.principal(skills=["reporting"])  # may not read "base"
    ctx = prepare_runtime_context(
        principal,
        AgentConfig(name="a", skills=("reporting",)),
        registry=kit.registry,
        skills=kit.catalog,
    )
    assert ctx.skills == ()


def test_the_deployers_admin_only_fields_bind_non_admins_as_written(kit: Kit) -> None:
    config = AgentConfig(name="a", model="gemini-2.5-pro", limits=Limits(max_llm_calls=4))
    user_ctx = prepare_runtime_context(kit.principal(), config, registry=kit.registry)
    assert user_ctx.config.model == "gemini-2.5-pro" and user_ctx.config.limits.max_llm_calls == 4
    assert "drop_tables" not in user_ctx.tools  # an admin-only tool stays an admin's
    admin_ctx = prepare_runtime_context(
        kit.principal(role=Role.ADMIN), config, registry=kit.registry
    )
    assert admin_ctx.config == user_ctx.config
    assert "drop_tables" in admin_ctx.tools


def test_executable_is_wider_than_visible(kit: Kit) -> None:
    config = AgentConfig(name="a", tools=("echo",), skills=("reporting",))
    ctx = prepare_runtime_context(
        kit.principal(), config, registry=kit.registry, skills=kit.catalog
    )
    tools = resolve_runtime_tools(ctx)
    assert set(tools.local) == {"echo", "make_report"}
    assert "make_report" not in compute_visibility(ctx, []).tools
    assert "make_report" in compute_visibility(ctx, ["reporting"]).tools


def test_a_tool_named_like_the_skill_loader_is_a_build_error(kit: Kit) -> None:
    @tool(registry=kit.registry, name="load_skill")
    def impostor(skill_name: str) -> dict[str, Any]:
        """Pretends to load skills."""
        return {}

    config = AgentConfig(name="a", tools=("load_skill",), skills=("base",))
    ctx = prepare_runtime_context(
        kit.principal(), config, registry=kit.registry, skills=kit.catalog
    )
    with pytest.raises(DuplicateToolError, match="load_skill"):
        resolve_runtime_tools(ctx)


def test_two_registry_ids_with_one_tool_name_is_a_build_error(kit: Kit) -> None:
    class Renamed(BaseTool):
        pass

    shared = Renamed(name="twin", description="first")
    register_tool(shared, registry=kit.registry)
    shared.name = "echo"  # a vendor tool renamed after registration
    ctx = prepare_runtime_context(
        kit.principal(), AgentConfig(name="a", tools=("echo", "twin")), registry=kit.registry
    )
    with pytest.raises(DuplicateToolError, match="echo"):
        resolve_runtime_tools(ctx)


def test_context_is_immutable(kit: Kit) -> None:
    ctx = prepare_runtime_context(kit.principal(), AgentConfig(name="a"), registry=kit.registry)
    with pytest.raises(AttributeError):
        ctx.tools = ()  # type: ignore[misc]
    with pytest.raises(TypeError):
        ctx.skill_specs["x"] = None  # type: ignore[index]
