"""A whole turn on the full stack against a plain ADK agent: what live rights cost.

A turn is one user message, one tool call with its result, and a final answer. The
anchor is a plain `LlmAgent` holding the function as an ADK `FunctionTool`, on ADK's
`InMemorySessionService`: no persistence, no checks. The contender is the full stack:
`build_app` with the principal loaded from the SQL access tables at every run
(`AccessRepository.load_principal`), live rights at every model and tool call
(`repository=`), and `SqlSessionService` on the same SQLite file. Both run the same
function on the same scripted player, interleaved round by round.

    python -m bench.bench_live_rights [--turns N] [--rounds R] [--resources K]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.adk.sessions.base_session_service import BaseSessionService
from google.adk.tools.function_tool import FunctionTool
from google.genai import types

from adk_yuxi.access import AccessRepository, ResourceKind, ResourceRecord, ShareConfig, User
from adk_yuxi.runtime import AgentConfig, Toolbox, build_app
from adk_yuxi.storage import open_services
from adk_yuxi.testing import call
from adk_yuxi.tools import ToolRegistry, tool
from bench._timing import format_table, median_rate, timed_rounds

AGENT, USER = "bench", "u"
ANCHOR = "plain ADK agent, in-memory sessions (anchor)"
FULL = "full stack: SQL principal + live rights + SqlSessionService"


def lookup(city: str, limit: int = 3) -> dict[str, Any]:
    """Looks a city up."""
    return {"city": city, "limit": limit}


class _Player(BaseLlm):
    """Calls `lookup` once per turn, then answers: the same script for both agents."""

    model: str = "bench-player"
    calls: int = 0

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        self.calls += 1
        last = llm_request.contents[-1]
        if last.parts and last.parts[0].function_response is not None:
            part = types.Part(text="done")
        else:
            part = call("lookup", city="Hangzhou", limit=5)
        usage = types.GenerateContentResponseUsageMetadata(
            prompt_token_count=0, candidates_token_count=0, total_token_count=0
        )
        yield LlmResponse(content=types.Content(role="model", parts=[part]), usage_metadata=usage)


def _runner_for(
    app: App, sessions: BaseSessionService, llm: _Player, turns: int, conversations: int
) -> Callable[[], Awaitable[int]]:
    async def run() -> int:
        runner = Runner(app=app, session_service=sessions, auto_create_session=False)
        message = types.Content(role="user", parts=[types.Part(text="go")])
        before = llm.calls
        for _ in range(conversations):
            session = await sessions.create_session(app_name=app.name, user_id=USER)
            for _ in range(turns):
                async for event in runner.run_async(
                    user_id=USER, session_id=session.id, new_message=message
                ):
                    assert event.error_code is None, event.error_message
        await runner.close()
        done = turns * conversations
        assert llm.calls - before == 2 * done, "every turn must make the same calls"
        return done

    return run


async def _seed(access: AccessRepository, resources: int) -> None:
    await access.save_user(User(id=USER, department_id="d1"))
    records = [ResourceRecord(kind=ResourceKind.AGENT, id=AGENT, creator_id=USER)]
    records += [
        ResourceRecord(
            kind=ResourceKind.KNOWLEDGE_BASE,
            id=f"kb{i:04d}",
            creator_id=USER,
            share=ShareConfig.public(),
        )
        for i in range(resources)
    ]
    for record in records:
        await access.save_resource(record)


async def measure(
    turns: int, conversations: int, rounds: int, resources: int
) -> tuple[dict[str, float], dict[str, float]]:
    """Median seconds per turn of each contender: wall time, then this process's CPU."""
    registry = ToolRegistry()
    tool(registry=registry)(lookup)
    with tempfile.TemporaryDirectory() as tmp:
        async with open_services(f"sqlite+aiosqlite:///{tmp}/platform.db") as services:
            access = AccessRepository(services.store)
            await access.prepare()
            await _seed(access, resources)
            llms = [_Player() for _ in range(4)]

            def plain(llm: _Player) -> App:
                agent = LlmAgent(name=AGENT, model=llm, tools=[FunctionTool(lookup)])
                return App(name=AGENT, root_agent=agent)

            def full(llm: _Player) -> App:
                return build_app(
                    AgentConfig(name=AGENT, tools=("lookup",)),
                    access,
                    model=llm,
                    toolbox=Toolbox(registry=registry),
                )

            memory, sql = InMemorySessionService(), services.session_service
            setups = {
                ANCHOR: (plain, memory),
                FULL: (full, sql),
                "  plain ADK agent on SqlSessionService": (plain, sql),
                "  full stack on in-memory sessions": (full, memory),
            }
            contenders = {
                name: _runner_for(make(llm), sessions, llm, turns, conversations)
                for (name, (make, sessions)), llm in zip(setups.items(), llms, strict=True)
            }
            await timed_rounds(contenders, 1)  # warm-up: imports, caches, assembly
            wall = await timed_rounds(contenders, rounds)
            cpu = await timed_rounds(contenders, rounds, clock=time.process_time)
    return (
        {name: median_rate(values) for name, values in wall.items()},
        {name: median_rate(values) for name, values in cpu.items()},
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=10, help="turns per conversation")
    parser.add_argument("--conversations", type=int, default=4, help="per round")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--resources", type=int, default=100, help="shared knowledge bases")
    parser.add_argument("--quick", action="store_true", help="fewer turns and rounds")
    args = parser.parse_args(argv)
    turns, rounds = (10, 3) if args.quick else (args.turns, args.rounds)
    conversations = 2 if args.quick else args.conversations
    os.environ.setdefault("ADK_DISABLE_TELEMETRY", "1")
    wall, cpu = asyncio.run(measure(turns, conversations, rounds, args.resources))
    print(
        f"Whole turn (message, one tool call, answer): {conversations} conversations of"
        f" {turns} turns x {rounds} rounds (median), {args.resources} shared resources in"
        " the access tables; the two indented rows split the difference"
    )
    for clock, result in (("wall", wall), ("cpu", cpu)):
        anchor = next(iter(result.values()))
        rows = [
            [name, f"{s * 1e6:,.0f}", f"{(s - anchor) * 1e6:+,.0f}", f"{s / anchor:.3f}"]
            for name, s in result.items()
        ]
        print(format_table(["agent", f"µs per turn ({clock})", "µs vs anchor", "ratio"], rows))


if __name__ == "__main__":
    main()
