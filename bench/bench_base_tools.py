"""What the run ledger and the base tools cost per turn, on the SQL services (SQLite file).

Every contender is one turn in a fresh session through the real Runner on
`SqlSessionService`: a user message, one tool call with its result, a final answer.
Anchor: the same turn with a plain function tool and no ledger. Contenders: the anchor
plus the `LedgerPlugin` (record, lease, close); `mark_for_improvement` (its transaction
with the lease check); `ask_user_question` (open the waiting point, pause, answer through
the store, resume from a second `run_async`).

    python -m bench.bench_base_tools [--turns N] [--rounds R]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.events import Event
from google.adk.models.llm_request import LlmRequest
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.runners import Runner
from google.adk.tools.function_tool import FunctionTool
from google.genai import types

from adk_yuxi.ledger import LedgerPlugin
from adk_yuxi.storage import YuxiServices, open_services
from adk_yuxi.testing import ScriptedLlm, call
from adk_yuxi.tools.base import base_tool
from adk_yuxi.waitpoints import WaitpointStore
from bench._timing import format_table, median_rate, timed_rounds

USER = "bench"


def note(text: str) -> dict[str, Any]:
    """Takes a note (the anchor's plain tool)."""
    return {"saved": True, "text": text}


CALLS = {
    "note": call("note", text="x"),
    "mark_for_improvement": call("mark_for_improvement", reason="a tool failed"),
    "ask_user_question": call("ask_user_question", questions=[{"question": "Which one?"}]),
}


def _player(tool: str) -> Callable[[LlmRequest], Any]:
    def play(request: LlmRequest) -> Any:
        last = request.contents[-1]
        if last.parts and last.parts[0].function_response is not None:
            return types.Part(text="done")
        return CALLS[tool]

    return play


def _runner(services: YuxiServices, tool: str, plugins: Sequence[BasePlugin], turns: int) -> Runner:
    tools: list[Any] = [FunctionTool(note)] if tool == "note" else [base_tool(tool)]
    agent = LlmAgent(name="bench", model=ScriptedLlm([_player(tool)] * (2 * turns)), tools=tools)
    app = App(name="bench", root_agent=agent, plugins=list(plugins))
    return Runner(app=app, session_service=services.session_service)


async def _turn(runner: Runner, services: YuxiServices, points: WaitpointStore) -> None:
    session = await services.session_service.create_session(app_name="bench", user_id=USER)
    message = types.Content(role="user", parts=[types.Part(text="go")])
    events: list[Event] = [
        e async for e in runner.run_async(user_id=USER, session_id=session.id, new_message=message)
    ]
    pending = [
        fc for e in events for fc in e.get_function_calls() if fc.name == "adk_request_input"
    ]
    if pending:
        point = await points.answer(pending[0].id, {"q-1": "this one"}, user_id=USER)
        async for _ in runner.run_async(
            user_id=USER, session_id=session.id, new_message=point.resume_message()
        ):
            pass


def _contender(
    services: YuxiServices, tool: str, ledger: bool, turns: int, rounds: int
) -> Callable[[], Awaitable[int]]:
    plugins = [LedgerPlugin(services.store)] if ledger else []
    runner = _runner(services, tool, plugins, turns * rounds)
    points = WaitpointStore(services.store)

    async def run() -> int:
        for _ in range(turns):
            await _turn(runner, services, points)
        return turns

    return run


async def bench(turns: int, rounds: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        services = open_services(f"sqlite+aiosqlite:///{Path(folder) / 'bench.db'}")
        await services.prepare()
        contenders = {
            "anchor: plain tool, no ledger": _contender(services, "note", False, turns, rounds),
            "plain tool + LedgerPlugin": _contender(services, "note", True, turns, rounds),
            "mark_for_improvement + ledger": _contender(
                services, "mark_for_improvement", True, turns, rounds
            ),
            "ask_user_question + answer + resume": _contender(
                services, "ask_user_question", True, turns, rounds
            ),
        }
        samples = await timed_rounds(contenders, rounds)
        await services.close()
    anchor = median_rate(samples["anchor: plain tool, no ledger"])
    rows = [
        [name, f"{median_rate(s) * 1000:.2f}", f"{median_rate(s) / anchor:.2f}"]
        for name, s in samples.items()
    ]
    print(f"{turns} turns per round, {rounds} rounds, SQLite file; median per turn")
    print(format_table(["contender", "ms/turn", "x anchor"], rows))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    if args.quick:
        args.turns, args.rounds = 10, 3
    asyncio.run(bench(args.turns, args.rounds))


if __name__ == "__main__":
    main()
