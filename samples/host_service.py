"""A host service's request path, offline: one database, many users, rights re-checked.

What a production host does per chat request:
  1. open the platform database once (sessions, memory, artifacts and access records);
  2. per request, load the caller's principal and build the agent's App for them;
  3. run it with `Runner.run_async` and stream the events out.
Here an administrator withdraws a user's right to the agent between two requests, and
the second request ends with an AGENT_EXECUTION_REVOKED event instead of running tools.

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
from adk_yuxi.access import (
    AccessRepository,
    AgentExecutionRevoked,
    ResourceKind,
    ResourceRecord,
    Role,
    Scope,
    ShareConfig,
    User,
)
from adk_yuxi.runtime import AgentConfig, build_app
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


async def handle_request(
    services: YuxiServices, access: AccessRepository, user_id: str, session_id: str, text: str
) -> None:
    """One chat request: the caller's rights are loaded now, not at process start."""
    principal = await access.load_principal(user_id)
    app = build_app(AGENT, principal, repository=access)
    runner = Runner(
        app=app,
        session_service=services.session_service,
        memory_service=services.memory_service,
        artifact_service=services.artifact_service,
    )
    sessions = services.session_service
    found = await sessions.get_session(app_name=app.name, user_id=user_id, session_id=session_id)
    if found is None:
        await sessions.create_session(app_name=app.name, user_id=user_id, session_id=session_id)
    print(f"{user_id}: {text}")
    message = types.Content(role="user", parts=[types.Part(text=text)])
    try:
        async for event in runner.run_async(
            user_id=user_id, session_id=session_id, new_message=message
        ):
            revoked = AgentExecutionRevoked.from_event(event)
            if revoked is not None:
                print(f"  ! {revoked}")
                continue
            for part in event.content.parts if event.content and event.content.parts else []:
                if part.function_call:
                    print(f"  → {part.function_call.name}({part.function_call.args})")
                elif part.function_response:
                    print(f"  ← {part.function_response.response}")
                elif part.text:
                    print(f"  {event.author}: {part.text}")
    finally:
        await runner.close()


async def main(db: Path) -> None:
    async with open_services(f"sqlite+aiosqlite:///{db}") as services:
        # The access records live in the same database and share the connections.
        access = AccessRepository(services.store)
        await seed(access)
        await handle_request(services, access, "mei", "s1", "what is 1250 * 12?")
        print("(an administrator narrows the agent's share config)")
        await access.share(ResourceKind.AGENT, AGENT.name, ShareConfig(read_scope=Scope.users()))
        await handle_request(services, access, "mei", "s1", "and 1250 * 13?")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, default=None)
    args = parser.parse_args()
    if args.db is not None:
        asyncio.run(main(args.db))
    else:
        with tempfile.TemporaryDirectory() as tmp:
            asyncio.run(main(Path(tmp) / "platform.db"))
