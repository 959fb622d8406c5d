"""A host program building one agent tree from YAML configs for users with different rights.

The tree is the one of `agents/team` (a coordinator that calls a researcher as a tool
and may hand drafting to a writer), loaded from its YAML files into an `AgentCatalog`.
One App and one Runner serve every user; each run gets the tree its user's rights allow,
decided from the platform's access records and re-checked at every call:
  - mei (finance) may use every agent of the team;
  - li (sales) may use the coordinator and the writer, not the researcher: for li the
    researcher is left out (the coordinator is never told it exists) and a call to it
    is refused.

    python samples/agent_tree.py [--db PATH] [--configs DIR]

It runs from any folder: the configs are found beside the sample (`--configs` names
another copy of `agents/team/configs`).
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from pathlib import Path

from google.adk.runners import Runner
from google.genai import types

import adk_yuxi.tools.builtin  # noqa: F401  (registers the built-in tools)
from adk_yuxi import AgentCatalog, build_app
from adk_yuxi.access import (
    AccessRepository,
    ResourceKind,
    ResourceRecord,
    Role,
    Scope,
    ShareConfig,
    User,
)
from adk_yuxi.runtime import AgentTree
from adk_yuxi.storage import open_services

CONFIGS = Path(__file__).resolve().parent.parent / "agents" / "team" / "configs"
EVERYONE = ("finance", "sales")
RIGHTS = {
    "coordinator": EVERYONE,
    "writer": EVERYONE,
    "critic": EVERYONE,
    "researcher": ("finance",),
}


async def seed(access: AccessRepository) -> None:
    await access.save_user(User(id="root", role=Role.SUPERADMIN))
    await access.save_user(User(id="mei", department_id="finance"))
    await access.save_user(User(id="li", department_id="sales"))
    for agent, departments in RIGHTS.items():
        share = ShareConfig(read_scope=Scope.departments(*departments))
        await access.save_resource(
            ResourceRecord(kind=ResourceKind.AGENT, id=agent, creator_id="root", share=share)
        )


async def handle_request(runner: Runner, user_id: str, text: str) -> None:
    sessions = runner.session_service
    session = await sessions.create_session(app_name=runner.app_name, user_id=user_id)
    print(f"{user_id}: {text}")
    message = types.Content(role="user", parts=[types.Part(text=text)])
    async for event in runner.run_async(
        user_id=user_id, session_id=session.id, new_message=message
    ):
        for part in event.content.parts if event.content and event.content.parts else []:
            if part.function_call:
                print(f"  {event.author} → {part.function_call.name}({part.function_call.args})")
            elif part.function_response:
                print(f"  {event.author} ← {part.function_response.response}")
            elif part.text:
                print(f"  {event.author}: {part.text}")


async def main(db: Path, configs: Path = CONFIGS) -> None:
    catalog = AgentCatalog.from_yaml(configs)
    tree = AgentTree.build(catalog, "coordinator")
    async with open_services(f"sqlite+aiosqlite:///{db}") as services:
        access = AccessRepository(services.store)
        await seed(access)
        for user_id in ("mei", "li"):
            reached, left_out = tree.reachable_by(await access.load_principal(user_id))
            print(f"{user_id} reaches {reached[::-1]}; left out: {left_out or 'nothing'}")
        app = build_app("coordinator", access, catalog=catalog, name="team")
        runner = Runner(app=app, session_service=services.session_service)
        try:
            for user_id in ("mei", "li"):
                await handle_request(runner, user_id, "ask researcher what is 1250 * 12")
                await handle_request(runner, user_id, '/call researcher {"request": "1250 * 12"}')
            await handle_request(runner, "li", "hand it to the writer")
        finally:
            await runner.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, default=None)
    parser.add_argument("--configs", type=Path, default=CONFIGS)
    args = parser.parse_args()
    if not args.configs.is_dir():
        parser.error(f"no agent configs at {args.configs}: pass --configs agents/team/configs")
    if args.db is not None:
        asyncio.run(main(args.db, args.configs))
    else:
        with tempfile.TemporaryDirectory() as tmp:
            asyncio.run(main(Path(tmp) / "platform.db", args.configs))
