"""All known skills, validated against the tools and MCP servers that exist.

Validation happens when skills are added, not when a run needs them, so a broken skill
is reported once, at start, with its name and the reason. Dependency closure tolerates
cycles (a run gets each skill once) but not self-dependency, which is always a mistake.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from pathlib import Path

from ..mcp import McpServerRegistry
from ..tools import ToolRegistry
from ._spec import SkillSpec, SkillValidationError, load_skill_spec

__all__ = ["SkillCatalog"]


class SkillCatalog:
    """Skills by name. Names are unique across shared and agent-specific skills, because
    activation is stored by name in session state."""

    def __init__(self, tools: ToolRegistry, mcp_servers: McpServerRegistry) -> None:
        self._tools = tools
        self._mcp = mcp_servers
        self._lock = threading.Lock()
        self._skills: dict[str, SkillSpec] = {}

    def add(self, spec: SkillSpec) -> SkillSpec:
        """Validates `spec` against the registries and adds it; adds nothing on error.

        Skill dependencies may name skills added later (checked by `check_complete`).
        """
        missing_tools = [t for t in spec.tool_dependencies if t not in self._tools]
        if missing_tools:
            raise SkillValidationError(spec.name, f"unknown tool dependencies {missing_tools}")
        for server in spec.mcp_dependencies:
            if server not in self._mcp:
                raise SkillValidationError(spec.name, f"unknown MCP server {server!r}")
            # A built-in server switched off keeps its skills known; the runtime reports
            # them unavailable instead.
            if not self._mcp.is_enabled(server) and not self._mcp.is_builtin(server):
                raise SkillValidationError(spec.name, f"MCP server {server!r} is disabled")
        with self._lock:
            if spec.name in self._skills:
                raise SkillValidationError(spec.name, "a skill with this name is already loaded")
            self._skills[spec.name] = spec
        return spec

    def load_dir(self, root: str | Path, *, agent: str | None = None) -> list[SkillSpec]:
        """Loads every `root/<name>/SKILL.md`; all or nothing."""
        directories = sorted(p for p in Path(root).iterdir() if (p / "SKILL.md").is_file())
        specs = [load_skill_spec(d, agent=agent) for d in directories]
        added: list[SkillSpec] = []
        try:
            for spec in specs:
                added.append(self.add(spec))
        except SkillValidationError:
            with self._lock:
                for spec in added:
                    self._skills.pop(spec.name, None)
            raise
        return added

    def check_complete(self) -> None:
        """Raises if any skill depends on a skill that is not loaded."""
        for spec in self.all():
            missing = [d for d in spec.skill_dependencies if d not in self._skills]
            if missing:
                raise SkillValidationError(spec.name, f"unknown skill dependencies {missing}")

    def get(self, name: str) -> SkillSpec | None:
        return self._skills.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._skills

    def all(self) -> list[SkillSpec]:
        with self._lock:
            return list(self._skills.values())

    def closure(self, names: Iterable[str]) -> list[str]:
        """`names` plus everything they depend on, transitively, each once, in discovery
        order. Cycles end where they meet a skill already taken; unknown names are
        dropped (the catalog validates them separately)."""
        seen: dict[str, None] = {}
        stack = [n for n in reversed(list(names))]
        while stack:
            name = stack.pop()
            spec = self._skills.get(name)
            if spec is None or name in seen:
                continue
            seen[name] = None
            stack.extend(reversed(spec.skill_dependencies))
        return list(seen)
