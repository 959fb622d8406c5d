"""A whole turn on a long session: the full Yuxi stack against itself on a new session.

A turn is a user message, a tool call and its result, and a final answer (2 model calls
+ 1 tool call) on a scripted model, through `build_app` (authorization, strict tools,
the run ledger), `SqlSessionService` on SQLite and the host's `RunConfig` (which reads
the session through a `SessionWindow`). The anchor is the same stack's turn on a new
session, measured in the same run; plain ADK in memory at the same sizes is printed
beside it (issue 29 measured both growing 17-25x by 1,000 events).

Prior events are inserted in bulk (four per prior turn, as a turn stores them), so a
10,000-event session takes a second to seed. Each size is measured twice:

- with a summary: the history ends like a long conversation under token-threshold
  compaction (one summary event covering all but the last four events, with the floor
  the service would have stored), which is what the window reads from;
- without one: the whole history is read and sent, as without compaction.

After every timed turn of a "+ summary" row a rolling summary of all but the last four
raw events is appended through the service (untimed; `--grow` leaves it out), as
token-threshold compaction leaves the session after a turn: every turn then starts from
a summary and four retained events, whatever the history's length, and the ratio shows
what the window saves. The summarizer's own model call is not part of this figure.

The model request size (characters of the contents sent at the second model call) is
printed per contender. Once `build_app` wires compaction by default the "without"
rows compact on their first turn, and the "with" rows are the steady state.

    python -m bench.bench_long_sessions [--quick] [--sizes 1000,10000]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from pathlib import Path
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.events.event import Event
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.adk.tools.function_tool import FunctionTool
from google.genai import types
from pydantic import Field

from adk_yuxi.access import Principal, ResourceKind, ResourceRecord, ShareConfig, User
from adk_yuxi.runtime import AgentConfig, RunRecords, Toolbox, build_app, host_run_config
from adk_yuxi.storage import YuxiServices, open_services
from adk_yuxi.tools import ToolRegistry, tool
from bench._history import resummarize, seed_sql, turn_events, with_summary
from bench._timing import format_table, median_rate

AGENT, USER = "bench", "u"
HEAVY = 5000


def lookup(topic: str) -> dict[str, Any]:
    """Looks a topic up."""
    return {"topic": topic, "facts": ["a fact of modest length about the topic"] * 3}


class Player(BaseLlm):
    """Calls `lookup` once, then answers; records the size of what it was sent. Light:
    no copy of the request (a copy grows with the history and would be billed to it)."""

    model: str = "bench-player"
    sent: list[int] = Field(default_factory=list)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        self.sent.append(
            sum(len(c.model_dump_json(exclude_none=True)) for c in llm_request.contents)
        )
        last = llm_request.contents[-1] if llm_request.contents else None
        answered = bool(last and last.parts and last.parts[0].function_response)
        if answered or not llm_request.tools_dict:  # a summarizer's request has no tools
            part = types.Part(text="done: the facts, summed up in a sentence or two.")
        else:
            part = types.Part(function_call=types.FunctionCall(name="lookup", args={"topic": "q"}))
        usage = types.GenerateContentResponseUsageMetadata(
            prompt_token_count=0, candidates_token_count=0, total_token_count=0
        )
        yield LlmResponse(content=types.Content(role="model", parts=[part]), usage_metadata=usage)


Contender = Callable[[], Awaitable[float]]  # one turn; returns its seconds


async def yuxi_contender(
    services: YuxiServices,
    prior: list[Event],
    player: Player,
    session_id: str,
    compact: bool = False,
) -> Contender:
    registry = ToolRegistry()
    tool(registry=registry)(lookup)
    record = ResourceRecord(
        kind=ResourceKind.AGENT, id=AGENT, creator_id="x", share=ShareConfig.public()
    )
    app = build_app(
        AgentConfig(name=AGENT, tools=("lookup",)),
        Principal.from_records(User(id=USER), [record]),
        model=player,
        name=AGENT,
        toolbox=Toolbox(registry=registry),
        capabilities=[RunRecords(services.store)],
    )
    runner = Runner(app=app, session_service=services.session_service)
    sessions = services.session_service

    async def session_for_turn() -> str:
        if prior:  # the long session, seeded once
            return session_id
        return (await sessions.create_session(app_name=AGENT, user_id=USER)).id

    if prior:
        await sessions.create_session(app_name=AGENT, user_id=USER, session_id=session_id)
        await seed_sql(services, AGENT, USER, session_id, prior)

    async def after_turn() -> None:
        if compact:
            await resummarize(services, AGENT, USER, session_id)

    return _turns(runner, session_for_turn, lambda: host_run_config(), after_turn)


async def plain_contender(prior: list[Event], player: Player) -> Contender:
    agent = LlmAgent(name=AGENT, model=player, tools=[FunctionTool(lookup)])
    service = InMemorySessionService()
    runner = Runner(app=App(name=AGENT, root_agent=agent), session_service=service)
    long_session = await service.create_session(app_name=AGENT, user_id=USER)
    for event in prior:
        await service.append_event(long_session, event)

    async def session_for_turn() -> str:
        if prior:
            return long_session.id
        return (await service.create_session(app_name=AGENT, user_id=USER)).id

    return _turns(runner, session_for_turn, lambda: None, None)


def _turns(
    runner: Runner,
    session_for_turn: Callable[[], Awaitable[str]],
    config: Callable[[], Any],
    after_turn: Callable[[], Awaitable[None]] | None,
) -> Contender:
    """A new session for every turn of the anchors (untimed), the long one otherwise;
    `after_turn` (untimed) runs after each."""
    message = types.Content(role="user", parts=[types.Part(text="what do we know?")])

    async def turn() -> float:
        session_id = await session_for_turn()
        start = time.perf_counter()
        async for _ in runner.run_async(
            user_id=USER, session_id=session_id, new_message=message, run_config=config()
        ):
            pass
        seconds = time.perf_counter() - start
        if after_turn is not None:
            await after_turn()
        return seconds

    return turn


async def measure(sizes: list[int], rounds: int, compact: bool) -> list[list[str]]:
    tmp = Path(tempfile.mkdtemp(prefix="yuxi-long-"))
    services = open_services(f"sqlite+aiosqlite:///{tmp / 'bench.db'}")
    players: dict[str, Player] = {}
    contenders: dict[str, Contender] = {}
    heavy: set[str] = set()  # whole-history turns of seconds each: one turn, no warm-up

    def player(name: str) -> Player:
        players[name] = Player(sent=[])
        return players[name]

    new = "Yuxi, new session"
    contenders[new] = await yuxi_contender(services, [], player(new), "s-new")
    for size in sizes:
        history = [e for i in range(size // 4) for e in turn_events(i)]
        summarized = with_summary(history)
        name = f"Yuxi, {size:,} events + summary"
        contenders[name] = await yuxi_contender(
            services, summarized, player(name), f"s{size}w", compact=compact
        )
        name = f"Yuxi, {size:,} events, no summary"
        contenders[name] = await yuxi_contender(services, history, player(name), f"s{size}f")
        plain = f"plain ADK in memory, {size:,} events"
        contenders[plain] = await plain_contender(history, player(plain))
        if size >= HEAVY:
            heavy |= {name, plain}
    name = "plain ADK in memory, new session"
    contenders[name] = await plain_contender([], player(name))

    for name, turn in contenders.items():  # warm-up: imports, caches, the first proofs
        if name not in heavy:
            await turn()
    samples: dict[str, list[float]] = {name: [] for name in contenders}
    for index in range(rounds):
        for name, turn in contenders.items():
            if index == 0 or name not in heavy:
                samples[name].append(await turn())
    await services.close()
    anchor = median_rate(samples[new])
    plain_anchor = median_rate(samples["plain ADK in memory, new session"])
    rows = []
    for name, values in samples.items():
        seconds = median_rate(values)
        base = plain_anchor if name.startswith("plain") else anchor
        sent = players[name].sent[-1] if players[name].sent else 0
        rows.append([name, f"{seconds * 1e3:,.1f}", f"{seconds / base:.2f}x", f"{sent:,}"])
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="3 rounds")
    parser.add_argument(
        "--grow",
        action="store_true",
        help="no summary after each turn: the '+ summary' windows grow turn by turn",
    )
    args = parser.parse_args(argv)
    os.environ.setdefault("ADK_DISABLE_TELEMETRY", "1")
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = asyncio.run(measure(sizes, 3 if args.quick else args.rounds, not args.grow))
    print("Whole turn (2 model calls + 1 tool call), median of interleaved rounds.")
    print("Ratio: Yuxi rows vs Yuxi on a new session; plain ADK rows vs plain ADK new.")
    headers = ["contender", "ms per turn", "ratio", "chars sent (2nd call)"]
    print(format_table(headers, rows))


if __name__ == "__main__":
    main()
