"""One `AgentTool` round trip in a Yuxi agent tree against the same tree of plain ADK agents.

A turn: the coordinator calls the researcher agent tool; ADK runs the researcher in a
nested Runner, where it calls `lookup` and answers; the coordinator then answers. Both
trees run the same functions on the same scripted models through the real Runner. The
anchor is the plain ADK tree (`LlmAgent` + `AgentTool` + `FunctionTool`); the Yuxi tree is
`build_app` from a catalog: per-agent runtimes, the nested run bound to the caller's
principal and runtime, every model and tool call checked, one model-call budget.

    python -m bench.bench_agent_tool [--turns N] [--rounds R]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from collections.abc import Awaitable, Callable
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.models.llm_request import LlmRequest
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.adk.tools.agent_tool import AgentTool
from google.adk.tools.function_tool import FunctionTool
from google.genai import types

from adk_yuxi.access import Principal, ResourceKind, ResourceRecord, ShareConfig, User
from adk_yuxi.runtime import AgentCatalog, AgentConfig, Toolbox, build_app
from adk_yuxi.testing import ScriptedLlm, call
from adk_yuxi.tools import ToolRegistry, tool
from bench._timing import format_table, median_rate, timed_rounds

PLAIN = "plain ADK tree"
YUXI = "Yuxi tree"


def lookup(topic: str) -> dict[str, Any]:
    """Looks a topic up."""
    return {"topic": topic, "facts": ["a", "b"]}


def _answered(request: LlmRequest) -> bool:
    parts = request.contents[-1].parts or []
    return bool(parts) and parts[0].function_response is not None


def _coordinator(request: LlmRequest) -> types.Part:
    return types.Part(text="done") if _answered(request) else call("researcher", request="q")


def _researcher(request: LlmRequest) -> types.Part:
    return types.Part(text="facts") if _answered(request) else call("lookup", topic="q")


def _models(turns: int) -> dict[str, ScriptedLlm]:
    return {
        "coordinator": ScriptedLlm([_coordinator] * (2 * turns)),
        "researcher": ScriptedLlm([_researcher] * (2 * turns)),
    }


def plain_app(turns: int) -> App:
    models = _models(turns)
    researcher = LlmAgent(
        name="researcher",
        description="Finds facts.",
        model=models["researcher"],
        tools=[FunctionTool(lookup)],
    )
    coordinator = LlmAgent(
        name="coordinator", model=models["coordinator"], tools=[AgentTool(researcher)]
    )
    return App(name="bench", root_agent=coordinator)


def yuxi_app(turns: int, registry: ToolRegistry, catalog: AgentCatalog, who: Principal) -> App:
    return build_app(
        "coordinator",
        who,
        catalog=catalog,
        model=_models(turns),
        name="bench",
        toolbox=Toolbox(registry=registry),
    )


def _runner_for(app: App, turns: int) -> Callable[[], Awaitable[int]]:
    async def run() -> int:
        service = InMemorySessionService()
        runner = Runner(app=app, session_service=service)
        session = await service.create_session(app_name="bench", user_id="u")
        message = types.Content(role="user", parts=[types.Part(text="go")])
        for _ in range(turns):
            async for _event in runner.run_async(
                user_id="u", session_id=session.id, new_message=message
            ):
                pass
        await runner.close()
        return turns

    return run


async def measure(
    turns: int, rounds: int, clock: Callable[[], float] = time.perf_counter
) -> dict[str, float]:
    registry = ToolRegistry()
    tool(registry=registry)(lookup)
    catalog = AgentCatalog(
        [
            AgentConfig(name="coordinator", tools=[], agent_tools=["researcher"]),
            AgentConfig(name="researcher", description="Finds facts.", tools=["lookup"]),
        ]
    )
    records = [
        ResourceRecord(kind=ResourceKind.AGENT, id=n, creator_id="x", share=ShareConfig.public())
        for n in catalog.names()
    ]
    who = Principal.from_records(User(id="u"), records)

    def contenders() -> dict[str, Callable[[], Awaitable[int]]]:
        return {
            PLAIN: _runner_for(plain_app(turns), turns),
            YUXI: _runner_for(yuxi_app(turns, registry, catalog, who), turns),
        }

    # Fresh apps (and scripts) every round: a ScriptedLlm is consumed as it plays.
    samples: dict[str, list[float]] = {PLAIN: [], YUXI: []}
    await timed_rounds(contenders(), 1)  # warm-up: imports, declaration caches
    for _ in range(rounds):
        for name, values in (
            await timed_rounds(contenders(), 1, clock=clock, collect=True)
        ).items():
            samples[name].extend(values)
    return {name: median_rate(values) for name, values in samples.items()}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="fewer turns and rounds")
    args = parser.parse_args(argv)
    turns, rounds = (10, 3) if args.quick else (args.turns, args.rounds)
    os.environ.setdefault("ADK_DISABLE_TELEMETRY", "1")
    wall = asyncio.run(measure(turns, rounds))
    cpu = asyncio.run(measure(turns, rounds, clock=time.process_time))
    rows = [
        [
            name,
            f"{wall[name] * 1e6:,.0f}",
            f"{wall[name] / wall[PLAIN]:.3f}",
            f"{cpu[name] * 1e6:,.0f}",
            f"{cpu[name] / cpu[PLAIN]:.3f}",
        ]
        for name in wall
    ]
    print(f"AgentTool round trip per turn, {turns} turns x {rounds} rounds (median)")
    headers = ["tree", "wall µs/turn", "wall ratio", "CPU µs/turn", "CPU ratio"]
    print(format_table(headers, rows))


if __name__ == "__main__":
    main()
