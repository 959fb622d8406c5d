"""A host service's request path, offline: one database, many users, rights re-checked.

What a production host does:
  1. open the platform database once (sessions, memory, artifacts and access records);
  2. build the agent's App and Runner once, with the `AccessRepository` as its access: every
     run loads its caller's principal when it starts, so one App serves every user;
  3. per chat request, run it with `Runner.run_async` and stream the events out.
Here an administrator withdraws a user's right to the agent between two requests, and
the second request ends with an ACCESS_DENIED event before the model is asked; so does
a request from a user the database does not know, with the same public text (the cause
goes to the operator log). A right withdrawn *during* a run ends it with
AGENT_EXECUTION_REVOKED at the next call.

    .venv/bin/python samples/host_service.py [--db PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from pathlib import Path

from google.adk.runners import Runner
from google.genai import types

import adk_yuxi.tools.builtin  # noqa: F401  (registers the built-in tools)
from adk_yuxi import AgentConfig, build_app
from adk_yuxi.access import (
    AccessDenied,
    AccessRepository,
    AgentExecutionRevoked,
    ResourceKind,
    ResourceRecord,
    Role,
    Scope,
    ShareConfig,
    User,
)
from adk_yuxi.runtime import host_run_config
from adk_yuxi.storage import YuxiServices, open_services

AGENT = AgentConfig(
    name="helpdesk",
    description="Answers with exact arithmetic and keeps notes.",
    instruction="Use the calculator for every number.",
    tools=("calculate", "save_note", "list_notes"),
)


async def seed(access: AccessRepository) -> None:
    await access.save_user(User(id="root", role=Role.SUPERADMIN))
    await access.save_user(User(id="mei", department_id="finance"))
    share = ShareConfig(read_scope=Scope.departments("finance"))
    await access.save_resource(
        ResourceRecord(kind=ResourceKind.AGENT, id=AGENT.name, creator_id="root", share=share)
    )


def open_runner(services: YuxiServices, access: AccessRepository) -> Runner:
    """One App and one Runner for the agent, shared by every user and request."""
    app = build_app(AGENT, access)
    return Runner(
        app=app,
        session_service=services.session_service,
        memory_service=services.memory_service,
        artifact_service=services.artifact_service,
    )


async def handle_request(runner: Runner, user_id: str, session_id: str, text: str) -> None:
    """One chat request: the caller's rights are loaded as the run starts."""
    sessions = runner.session_service
    app_name = runner.app_name
    found = await sessions.get_session(app_name=app_name, user_id=user_id, session_id=session_id)
    if found is None:
        await sessions.create_session(app_name=app_name, user_id=user_id, session_id=session_id)
    print(f"{user_id}: {text}")
    message = types.Content(role="user", parts=[types.Part(text=text)])
    async for event in runner.run_async(
        user_id=user_id, session_id=session_id, new_message=message, run_config=host_run_config()
    ):
        refused = AgentExecutionRevoked.from_event(event) or AccessDenied.from_event(event)
        if refused is not None:
            print(f"  ! {refused}")
            continue
        for part in event.content.parts if event.content and event.content.parts else []:
            if part.function_call:
                print(f"  → {part.function_call.name}({part.function_call.args})")
            elif part.function_response:
                print(f"  ← {part.function_response.response}")
            elif part.text:
                print(f"  {event.author}: {part.text}")


async def main(db: Path) -> None:
    async with open_services(f"sqlite+aiosqlite:///{db}") as services:
        # The access records live in the same database and share the connections.
        access = AccessRepository(services.store)
        await seed(access)
        runner = open_runner(services, access)
        try:
            await handle_request(runner, "mei", "s1", "what is 1250 * 12?")
            print("(an administrator narrows the agent's share config)")
            share = ShareConfig(read_scope=Scope.users())
            await access.share(ResourceKind.AGENT, AGENT.name, share)
            await handle_request(runner, "mei", "s1", "and 1250 * 13?")
            await handle_request(runner, "nobody", "s2", "what is 2 + 2?")
        finally:
            await runner.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, default=None)
    args = parser.parse_args()
    if args.db is not None:
        asyncio.run(main(args.db))
    else:
        with tempfile.TemporaryDirectory() as tmp:
            asyncio.run(main(Path(tmp) / "platform.db"))
