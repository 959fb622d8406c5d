"""SKILL.md loading and validation against real folders on disk."""

from __future__ import annotations

from pathlib import Path

import pytest

from adk_yuxi.mcp import McpServerConfig, McpServerRegistry
from adk_yuxi.skills import KNOWLEDGE_TOOL_NAMES, SkillCatalog, SkillValidationError
from adk_yuxi.skills.builtin import BUILTIN_SKILLS_DIR
from adk_yuxi.tools import ToolRegistry, tool


def write(root: Path, name: str, front: str, folder: str | None = None) -> Path:
    path = root / (folder or name)
    path.mkdir(parents=True)
    (path / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: The {name} skill.\n{front}---\nBody of {name}.\n"
    )
    return path


@pytest.fixture
def catalog() -> SkillCatalog:
    registry = ToolRegistry()

    @tool(registry=registry)
    def summarise(text: str) -> str:
        """Summarises."""
        return text

    mcp = McpServerRegistry(
        [
            McpServerConfig(name="knowledge", transport="streamable_http", url="http://x/mcp"),
            McpServerConfig(name="old", transport="stdio", command="x", enabled=False),
        ]
    )
    return SkillCatalog(registry, mcp)


def test_dependencies_are_read_from_front_matter(tmp_path: Path, catalog: SkillCatalog) -> None:
    write(tmp_path, "brief", "tool_dependencies: [summarise]\nmcp_dependencies: [knowledge]\n")
    (spec,) = catalog.load_dir(tmp_path)
    assert spec.tool_dependencies == ("summarise",)
    assert spec.mcp_dependencies == ("knowledge",)
    assert spec.instructions.strip() == "Body of brief."


@pytest.mark.parametrize("name", sorted(KNOWLEDGE_TOOL_NAMES))
def test_knowledge_tools_are_refused_as_local_dependencies(
    tmp_path: Path, catalog: SkillCatalog, name: str
) -> None:
    write(tmp_path, "reader", f"tool_dependencies: [{name}]\n")
    with pytest.raises(SkillValidationError, match="mcp_dependencies"):
        catalog.load_dir(tmp_path)
    assert "reader" not in catalog


@pytest.mark.parametrize(
    ("front", "problem"),
    [
        ("tool_dependencies: [nope]\n", "unknown tool"),
        ("mcp_dependencies: [nowhere]\n", "unknown MCP server"),
        ("mcp_dependencies: [old]\n", "disabled"),
        ("skill_dependencies: [me]\n", "itself"),
        ("tool_dependencies: summarise\n", "lists of names"),
        ("tool_dependencies: [1, 2]\n", "lists of names"),
    ],
)
def test_invalid_skills_are_rejected(
    tmp_path: Path, catalog: SkillCatalog, front: str, problem: str
) -> None:
    write(tmp_path, "me", front)
    with pytest.raises(SkillValidationError, match=problem):
        catalog.load_dir(tmp_path)


def test_folder_must_be_named_after_the_skill(tmp_path: Path, catalog: SkillCatalog) -> None:
    write(tmp_path, "real-name", "", folder="other-name")
    with pytest.raises(SkillValidationError, match="does not match"):
        catalog.load_dir(tmp_path)


def test_a_bad_skill_loads_nothing_from_its_folder(tmp_path: Path, catalog: SkillCatalog) -> None:
    write(tmp_path, "aaa-good", "")
    write(tmp_path, "zzz-bad", "tool_dependencies: [nope]\n")
    with pytest.raises(SkillValidationError):
        catalog.load_dir(tmp_path)
    assert catalog.all() == []


def test_cycles_close_once_and_unknown_dependencies_are_reported(
    tmp_path: Path, catalog: SkillCatalog
) -> None:
    write(tmp_path, "a", "skill_dependencies: [b]\n")
    write(tmp_path, "b", "skill_dependencies: [c]\n")
    write(tmp_path, "c", "skill_dependencies: [a]\n")
    catalog.load_dir(tmp_path)
    catalog.check_complete()
    assert catalog.closure(["a"]) == ["a", "b", "c"]
    assert catalog.closure(["c", "a"]) == ["c", "a", "b"]
    other = tmp_path / "more"
    other.mkdir()
    write(other, "d", "skill_dependencies: [ghost]\n")
    catalog.load_dir(other)
    with pytest.raises(SkillValidationError, match="ghost"):
        catalog.check_complete()


def test_duplicate_names_are_rejected(tmp_path: Path, catalog: SkillCatalog) -> None:
    write(tmp_path / "one", "same", "")
    write(tmp_path / "two", "same", "")
    catalog.load_dir(tmp_path / "one")
    with pytest.raises(SkillValidationError, match="already loaded"):
        catalog.load_dir(tmp_path / "two", agent="analyst")


def test_builtin_skills_load_against_the_builtin_tools() -> None:
    import adk_yuxi.tools.builtin  # noqa: F401
    from adk_yuxi.tools import default_registry

    catalog = SkillCatalog(default_registry, McpServerRegistry())
    names = [s.name for s in catalog.load_dir(BUILTIN_SKILLS_DIR)]
    assert names == ["exact-arithmetic", "note-keeping"]
