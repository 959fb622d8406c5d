"""A small agent tree for the multi-agent tests: a coordinator that calls a researcher
as a tool and may hand off to a writer (not to a critic), one tool registry, and
principals that may read a chosen set of agents."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from google.adk.apps import App
from google.adk.events import Event
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.adk.sessions.base_session_service import BaseSessionService
from google.genai import types

from adk_yuxi.access import Principal, ResourceKind, ResourceRecord, Role, ShareConfig, User
from adk_yuxi.runtime import AgentCatalog, AgentConfig
from adk_yuxi.tools import ToolRegistry, tool

AGENTS = ("coordinator", "researcher", "writer", "critic")


def tree_catalog(**changes: dict[str, Any]) -> AgentCatalog:
    configs = {
        "coordinator": {
            "tools": ["plan"],
            "agent_tools": ["researcher"],
            "sub_agents": ["writer", "critic"],
            "can_handoff_to": ["writer"],
        },
        "researcher": {"description": "Finds facts on a topic.", "tools": ["lookup"]},
        "writer": {"description": "Drafts the text.", "tools": []},
        "critic": {"description": "Criticises drafts.", "tools": []},
    }
    for name, fields in changes.items():
        configs.setdefault(name, {}).update(fields)
    return AgentCatalog(AgentConfig(name=n, **f) for n, f in configs.items())


class Tools:
    """The registry of the tree's tools; counts every run of each."""

    def __init__(self) -> None:
        self.registry = ToolRegistry()
        self.ran: Counter[str] = Counter()
        ran = self.ran

        @tool(registry=self.registry)
        def lookup(topic: str) -> dict[str, Any]:
            """Looks a topic up."""
            ran["lookup"] += 1
            return {"facts": f"{topic} purr"}

        @tool(registry=self.registry)
        def plan(goal: str) -> dict[str, Any]:
            """Plans the work (the coordinator's own tool)."""
            ran["plan"] += 1
            return {"plan": goal}


def principal(user_id: str, agents: Iterable[str] = AGENTS, *, role: Role = Role.USER) -> Principal:
    records = [
        ResourceRecord(kind=ResourceKind.AGENT, id=a, creator_id="x", share=ShareConfig.public())
        for a in agents
    ]
    return Principal.from_records(User(id=user_id, role=role), records)


async def run(
    app: App,
    user_id: str,
    message: str = "go",
    *,
    sessions: BaseSessionService | None = None,
    session_id: str = "s",
) -> list[Event]:
    sessions = sessions or InMemorySessionService()
    runner = Runner(app=app, session_service=sessions)
    if (
        await sessions.get_session(app_name=app.name, user_id=user_id, session_id=session_id)
        is None
    ):
        await sessions.create_session(app_name=app.name, user_id=user_id, session_id=session_id)
    events = []
    try:
        async for event in runner.run_async(
            user_id=user_id,
            session_id=session_id,
            new_message=types.Content(role="user", parts=[types.Part(text=message)]),
        ):
            events.append(event)
    finally:
        await runner.close()
    return events


def responses(events: list[Event], name: str) -> list[dict[str, Any]]:
    return [
        dict(r.response or {}) for e in events for r in e.get_function_responses() if r.name == name
    ]


def final_text(events: list[Event]) -> str:
    last = events[-1]
    assert last.content is not None and last.content.parts
    return "".join(p.text or "" for p in last.content.parts)
