"""One skill: ADK's SKILL.md model plus the Yuxi dependency keys it ignores.

ADK's loader parses SKILL.md, checks the name and that the directory is named after
it, and keeps unknown front-matter keys without looking at them. The dependency keys
(`tool_dependencies`, `mcp_dependencies`, `skill_dependencies`) are read here from
those kept keys, strictly: a misspelt or mistyped dependency list is an error at load,
not a skill that silently depends on nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pydantic
from google.adk.skills import Skill, load_skill_from_dir

from adk_yuxi.errors import YuxiError

__all__ = ["KNOWLEDGE_TOOL_NAMES", "SkillSpec", "SkillValidationError", "load_skill_spec"]

KNOWLEDGE_TOOL_NAMES: frozenset[str] = frozenset(
    {"list_kbs", "query_kb", "find_kb_document", "open_kb_document", "search_file"}
)
"""Knowledge reaches skills through `mcp_dependencies: ["knowledge"]`, never as local
tools, so access to knowledge bases is decided in one place (the knowledge server)."""

_DEPENDENCY_KEYS = ("tool_dependencies", "mcp_dependencies", "skill_dependencies")


class SkillValidationError(YuxiError, ValueError):
    """A skill that cannot be used: bad SKILL.md, unknown or forbidden dependency."""

    def __init__(self, skill: str, problem: str) -> None:
        super().__init__(f"skill {skill!r}: {problem}")
        self.skill = skill
        self.problem = problem


class _Dependencies(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(strict=True, frozen=True)

    tool_dependencies: tuple[str, ...] = ()
    mcp_dependencies: tuple[str, ...] = ()
    skill_dependencies: tuple[str, ...] = ()


@dataclass(frozen=True)
class SkillSpec:
    """A loaded skill. `agent` is None for a shared skill, else the one agent it serves."""

    skill: Skill
    tool_dependencies: tuple[str, ...] = ()
    mcp_dependencies: tuple[str, ...] = ()
    skill_dependencies: tuple[str, ...] = ()
    agent: str | None = None

    @property
    def name(self) -> str:
        return self.skill.name

    @property
    def description(self) -> str:
        return self.skill.description

    @property
    def instructions(self) -> str:
        return self.skill.instructions

    @classmethod
    def from_skill(cls, skill: Skill, *, agent: str | None = None) -> SkillSpec:
        """Reads the dependency keys of an already-parsed ADK skill and checks them."""
        extra = skill.frontmatter.model_extra or {}
        raw = {key: extra[key] for key in _DEPENDENCY_KEYS if key in extra}
        for key, value in raw.items():
            if isinstance(value, list):
                raw[key] = tuple(value)
        try:
            deps = _Dependencies.model_validate(raw)
        except pydantic.ValidationError as exc:
            fields = ", ".join(".".join(map(str, e["loc"])) for e in exc.errors())
            raise SkillValidationError(
                skill.name, f"dependency lists must be lists of names ({fields})"
            ) from None
        spec = cls(
            skill=skill,
            tool_dependencies=_unique(deps.tool_dependencies),
            mcp_dependencies=_unique(deps.mcp_dependencies),
            skill_dependencies=_unique(deps.skill_dependencies),
            agent=agent,
        )
        spec._check_static()
        return spec

    def _check_static(self) -> None:
        """The checks that need nothing but the skill itself."""
        if self.name in self.skill_dependencies:
            raise SkillValidationError(self.name, "a skill cannot depend on itself")
        knowledge = sorted(KNOWLEDGE_TOOL_NAMES.intersection(self.tool_dependencies))
        if knowledge:
            raise SkillValidationError(
                self.name,
                f"knowledge tools {knowledge} cannot be local tool_dependencies;"
                ' declare mcp_dependencies: ["knowledge"] instead',
            )
        for name in (*self.tool_dependencies, *self.mcp_dependencies, *self.skill_dependencies):
            if not name.strip():
                raise SkillValidationError(self.name, "dependency names must not be empty")


def _unique(names: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(names))


def load_skill_spec(directory: str | Path, *, agent: str | None = None) -> SkillSpec:
    """Loads `directory/SKILL.md`; every failure is a `SkillValidationError` naming it."""
    path = Path(directory)
    try:
        skill = load_skill_from_dir(path)
    except (OSError, ValueError) as exc:
        raise SkillValidationError(path.name, f"cannot load {path}: {exc}") from None
    return SkillSpec.from_skill(skill, agent=agent)
