"""Shared pieces of the runtime tests: a private tool registry whose tools count their
runs, skill folders written on disk, and a runner loop that returns every event."""

from __future__ import annotations

import textwrap
from collections import Counter
from pathlib import Path
from typing import Any

from google.adk.apps import App
from google.adk.events import Event
from google.adk.sessions.base_session_service import BaseSessionService
from google.adk.tools.tool_context import ToolContext

from adk_yuxi.access import Principal, ResourceKind, ResourceRecord, Role, ShareConfig, User
from adk_yuxi.errors import ToolErrorCode, tool_error
from adk_yuxi.mcp import McpServerRegistry
from adk_yuxi.runtime import ResourceDenied, check_resource
from adk_yuxi.skills import SkillCatalog
from adk_yuxi.testing import run_turn as one_turn
from adk_yuxi.tools import ToolRegistry, tool

USER = "alice"


class Kit:
    """One test's world: tools, skills, MCP servers and a run counter per tool."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.registry = ToolRegistry()
        self.mcp = McpServerRegistry()
        self.ran: Counter[str] = Counter()
        self._define_tools()
        self.catalog = SkillCatalog(self.registry, self.mcp)

    def _define_tools(self) -> None:
        ran = self.ran

        @tool(registry=self.registry)
        def echo(text: str) -> dict[str, Any]:
            """Echoes the text back."""
            ran["echo"] += 1
            return {"echo": text}

        @tool(registry=self.registry)
        def make_report(title: str) -> dict[str, Any]:
            """Writes a report (gated behind the reporting skill)."""
            ran["make_report"] += 1
            return {"report": f"# {title}"}

        @tool(registry=self.registry, admin_only=True)
        def drop_tables() -> dict[str, Any]:
            """An admin-only tool."""
            ran["drop_tables"] += 1
            return {"dropped": True}

        @tool(registry=self.registry)
        async def read_kb(kb_id: str, tool_context: ToolContext) -> dict[str, Any]:
            """Reads a knowledge base; checks its own target too, so it refuses on its own
            outside a Yuxi runtime as well."""
            try:
                await check_resource(tool_context, "knowledge_base", kb_id)
            except ResourceDenied:
                return tool_error(ToolErrorCode.RESOURCE_NOT_AVAILABLE, "read_kb", argument="kb_id")
            ran["read_kb"] += 1
            return {"kb": kb_id, "text": "contents"}

    def skill(self, name: str, body: str = "Follow the steps.", **front: Any) -> Path:
        folder = self.root / "skills" / name
        folder.mkdir(parents=True, exist_ok=True)
        lines = [f"name: {name}", f"description: The {name} skill."]
        for key, value in front.items():
            lines.append(f"{key}: {list(value)!r}")
        (folder / "SKILL.md").write_text(
            "---\n" + "\n".join(lines) + "\n---\n" + textwrap.dedent(body) + "\n"
        )
        return folder

    def load_skills(self) -> None:
        self.catalog.load_dir(self.root / "skills")
        self.catalog.check_complete()

    def principal(
        self,
        *,
        role: Role = Role.USER,
        skills: list[str] | None = None,
        kbs: tuple[str, ...] = ("kb1",),
        mcps: tuple[str, ...] = (),
    ) -> Principal:
        """`alice`, who may read `kbs`, the given skills (default: all) and `mcps`."""
        records = [
            ResourceRecord(
                kind=ResourceKind.KNOWLEDGE_BASE, id=k, creator_id="x", share=ShareConfig.public()
            )
            for k in kbs
        ]
        records += [
            ResourceRecord(kind=ResourceKind.KNOWLEDGE_BASE, id="kb_secret", creator_id="x")
        ]
        names = [s.name for s in self.catalog.all()] if skills is None else skills
        records += [
            ResourceRecord(
                kind=ResourceKind.SKILL, id=n, creator_id="x", share=ShareConfig.public()
            )
            for n in names
        ]
        records += [
            ResourceRecord(
                kind=ResourceKind.MCP_SERVER, id=m, creator_id="x", share=ShareConfig.public()
            )
            for m in mcps
        ]
        return Principal.from_records(User(id=USER, role=role, department_id="d1"), records)


async def run_turn(
    app: App, sessions: BaseSessionService, session_id: str, message: str
) -> list[Event]:
    return await one_turn(
        app, message, session_service=sessions, session_id=session_id, user_id=USER
    )


def function_responses(events: list[Event]) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {}
    for event in events:
        for response in event.get_function_responses():
            found.setdefault(response.name or "", []).append(dict(response.response or {}))
    return found
