"""Per-turn overhead of a registry-built agent against a plain ADK `LlmAgent`.

Both agents hold the same three functions and run on the same scripted model through
the real Runner; a turn is a user message, one tool call with its result, and a final
answer. The anchor is the plain agent with ADK `FunctionTool`s; the ratio says what the
registry's strict argument validation adds to a whole turn.

    python -m bench.bench_turn_overhead [--turns N] [--rounds R]
"""

from __future__ import annotations

import argparse
import asyncio
import os
from collections.abc import Awaitable, Callable
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.models.llm_request import LlmRequest
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.adk.tools.function_tool import FunctionTool
from google.genai import types

from adk_yuxi.testing import ScriptedLlm, call
from adk_yuxi.tools import ToolRegistry, tool
from bench._timing import format_table, median_rate, timed_rounds


def lookup(city: str, limit: int = 3, exact: bool = False) -> dict[str, Any]:
    """Looks a city up."""
    return {"city": city, "limit": limit, "exact": exact}


def convert(amount: float, currency: str) -> dict[str, Any]:
    """Converts an amount."""
    return {"amount": amount, "currency": currency}


def tags(values: list[str]) -> int:
    """Counts tags."""
    return len(values)


def _answer(request: LlmRequest) -> types.Part:
    last = request.contents[-1]
    if last.parts and last.parts[0].function_response is not None:
        return types.Part(text="done")
    return call("lookup", city="Hangzhou", limit=5, exact=True)


def _agent(tools: list[Any], turns: int) -> LlmAgent:
    return LlmAgent(name="bench", model=ScriptedLlm([_answer] * (2 * turns)), tools=tools)


def _runner_for(agent: LlmAgent, turns: int) -> Callable[[], Awaitable[int]]:
    async def run() -> int:
        service = InMemorySessionService()
        runner = Runner(app_name="bench", agent=agent, session_service=service)
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


async def measure(turns: int, rounds: int) -> dict[str, float]:
    registry = ToolRegistry()
    for fn in (lookup, convert, tags):
        tool(registry=registry)(fn)

    def contenders() -> dict[str, Callable[[], Awaitable[int]]]:
        plain = _agent([FunctionTool(f) for f in (lookup, convert, tags)], turns)
        built = _agent(registry.tools(["lookup", "convert", "tags"]), turns)
        return {
            "plain ADK agent": _runner_for(plain, turns),
            "registry agent": _runner_for(built, turns),
        }

    # Fresh agents (and scripts) every round: a ScriptedLlm is consumed as it plays.
    samples: dict[str, list[float]] = {"plain ADK agent": [], "registry agent": []}
    await timed_rounds(contenders(), 1)  # warm-up: imports, declaration caches
    for _ in range(rounds):
        for name, values in (await timed_rounds(contenders(), 1)).items():
            samples[name].extend(values)
    return {name: median_rate(values) for name, values in samples.items()}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="fewer turns and rounds")
    args = parser.parse_args(argv)
    turns, rounds = (20, 3) if args.quick else (args.turns, args.rounds)
    os.environ.setdefault("ADK_DISABLE_TELEMETRY", "1")
    result = asyncio.run(measure(turns, rounds))
    anchor = result["plain ADK agent"]
    rows = [
        [name, f"{seconds * 1e6:,.0f}", f"{seconds / anchor:.3f}"]
        for name, seconds in result.items()
    ]
    print(f"Per-turn cost, {turns} turns x {rounds} rounds (median), one tool call per turn")
    print(format_table(["agent", "µs per turn", "ratio vs plain ADK"], rows))


if __name__ == "__main__":
    main()
