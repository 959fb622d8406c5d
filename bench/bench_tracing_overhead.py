"""What adk_yuxi's spans cost a whole turn, off (no provider) and recording (the SDK).

A turn is a Yuxi agent (`build_app`: the authorization plugin decides each model and
tool call, so each turn opens three decision spans) on a scripted model through the
real Runner: a user message, one tool call with its result, a final answer.

The anchor is the same turn with adk_yuxi's spans stubbed out: our tracer replaced
(`use_tracer_provider`) by one whose spans are a constant that attaches no context and
records nothing, the closest a running process gets to the spans not being there; our
thin call-site wrappers still run in both. Both are timed interleaved in each phase:

1. no provider installed (the OpenTelemetry API's no-op; ADK's spans are no-ops too):
   the ratio is what our spans cost when nothing records (target: at most 1.02);
2. the SDK's `TracerProvider` set globally, recording to an in-memory exporter (ADK's
   spans record in both contenders): the ratio is what recording our spans adds
   (target: at most 1.10).

Machine noise on a shared machine can exceed the effect, so each phase also prints the
cost of one of our spans measured alone (`decided` in a tight loop) and the ratio it
implies: 1 + our spans per turn x that cost / the anchor turn.

The whole-turn cost of recording everything (ADK's spans included), phase 2 over
phase 1 for the plain turn, is printed for information; the phases run one after the
other, so that number is not interleaved.

    python -m bench.bench_tracing_overhead [--turns N] [--rounds R]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple

from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider as SdkTracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from adk_yuxi.access import Principal, User
from adk_yuxi.models import declared_tool_names  # noqa: F401  (warms the models package)
from adk_yuxi.observability import INSTRUMENTATION_NAME, use_tracer_provider
from adk_yuxi.runtime import AgentConfig, Toolbox, build_app, host_run_config
from adk_yuxi.runtime.authorization._decision_spans import decided
from adk_yuxi.testing import ScriptedLlm, call
from adk_yuxi.tools import ToolRegistry, tool
from bench._timing import format_table, median_rate, timed_rounds

PLAIN, STUBBED = "yuxi turn", "yuxi turn, our spans stubbed"


class _Nothing:
    def __enter__(self) -> trace.Span:
        return trace.INVALID_SPAN

    def __exit__(self, *_exc: object) -> None:
        return None


_NOTHING = _Nothing()


class _StubTracer(trace.Tracer):
    def start_span(self, *args: Any, **kwargs: Any) -> trace.Span:
        return trace.INVALID_SPAN

    def start_as_current_span(self, *args: Any, **kwargs: Any) -> Any:
        return _NOTHING


class _StubProvider(trace.TracerProvider):
    def get_tracer(self, *args: Any, **kwargs: Any) -> trace.Tracer:
        return _StubTracer()


def _registry() -> ToolRegistry:
    registry = ToolRegistry()

    @tool(registry=registry)
    def lookup(city: str, limit: int = 3) -> dict[str, Any]:
        """Looks a city up."""
        return {"city": city, "limit": limit}

    return registry


def _answer(request: Any) -> types.Part:
    last = request.contents[-1]
    if last.parts and last.parts[0].function_response is not None:
        return types.Part(text="done")
    return call("lookup", city="Hangzhou", limit=5)


def _turns(registry: ToolRegistry, turns: int, stubbed: bool) -> Callable[[], Awaitable[int]]:
    config = AgentConfig(name="bench", tools=("lookup",))
    principal = Principal.from_records(User(id="u"), [])

    async def run() -> int:
        app = build_app(
            config,
            principal,
            model=ScriptedLlm([_answer] * (2 * turns)),
            toolbox=Toolbox(registry=registry),
        )
        service = InMemorySessionService()
        runner = Runner(app=app, session_service=service)
        session = await service.create_session(app_name=app.name, user_id="u")
        message = types.Content(role="user", parts=[types.Part(text="go")])
        use_tracer_provider(_StubProvider() if stubbed else None)
        try:
            for _ in range(turns):
                async for _event in runner.run_async(
                    user_id="u",
                    session_id=session.id,
                    new_message=message,
                    run_config=host_run_config(),
                ):
                    pass
        finally:
            use_tracer_provider(None)
            await runner.close()
        return turns

    return run


async def _phase(turns: int, rounds: int, between: Callable[[], None]) -> dict[str, float]:
    registry = _registry()

    def contenders(flip: bool) -> dict[str, Callable[[], Awaitable[int]]]:
        order = (STUBBED, PLAIN) if flip else (PLAIN, STUBBED)
        return {name: _turns(registry, turns, name == STUBBED) for name in order}

    samples: dict[str, list[float]] = {PLAIN: [], STUBBED: []}
    await timed_rounds(contenders(False), 1)  # warm-up: imports, caches
    between()
    for index in range(rounds):
        # CPU time of this process (a machine shared with other work distorts it less),
        # after a collection, each contender first in every other round.
        timed = await timed_rounds(
            contenders(index % 2 == 1), 1, clock=time.process_time, collect=True
        )
        for name, values in timed.items():
            samples[name].extend(values)
        between()
    return {name: median_rate(values) for name, values in samples.items()}


async def _per_decision(count: int = 4000) -> float:
    """CPU seconds one decision span adds (`decided` around a check that allows), over
    awaiting the same check bare: our spans' own cost, free of the turn's noise."""

    async def allowed() -> None:
        return None

    start = time.process_time()
    for _ in range(count):
        await allowed()
    bare = time.process_time() - start
    start = time.process_time()
    for _ in range(count):
        await decided("tool", allowed(), user_id="u", agent="bench", tool="lookup")
    return max(0.0, time.process_time() - start - bare) / count


class Measured(NamedTuple):
    off: dict[str, float]
    on: dict[str, float]
    span_off: float
    span_on: float
    ours_per_turn: float
    spans_per_round: int


def measure(turns: int, rounds: int) -> Measured:
    off = asyncio.run(_phase(turns, rounds, lambda: None))
    span_off = asyncio.run(_per_decision())
    exporter = InMemorySpanExporter()
    provider = SdkTracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    recorded: list[tuple[int, int]] = []

    def drain() -> None:
        finished = exporter.get_finished_spans()
        scopes = [s.instrumentation_scope for s in finished]
        scoped = [s for s in scopes if s is not None and s.name == INSTRUMENTATION_NAME]
        recorded.append((len(finished), len(scoped)))
        exporter.clear()

    on = asyncio.run(_phase(turns, rounds, drain))
    span_on = asyncio.run(_per_decision())
    exporter.clear()
    ours = max(r[1] for r in recorded) / turns  # only the plain contender makes ours
    return Measured(off, on, span_off, span_on, ours, max(r[0] for r in recorded))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=31)
    parser.add_argument("--quick", action="store_true", help="fewer turns and rounds")
    args = parser.parse_args(argv)
    turns, rounds = (5, 7) if args.quick else (args.turns, args.rounds)
    if not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        print("a tracer provider is set already (another bench?): run this one alone")
        return
    m = measure(turns, rounds)
    cases = (
        ("no provider", m.off, m.span_off, "1.02"),
        ("SDK, in-memory", m.on, m.span_on, "1.10"),
    )
    rows = [
        [
            phase,
            *(f"{r[n] * 1e6:,.0f}" for n in (STUBBED, PLAIN)),
            f"{r[PLAIN] / r[STUBBED]:.3f}",
            f"{one * 1e6:.1f}",
            f"{1 + m.ours_per_turn * one / r[STUBBED]:.4f}",
            t,
        ]
        for phase, r, one, t in cases
    ]
    print(f"Per-turn CPU, {turns} turns x {rounds} rounds (median), one tool call per turn")
    headers = ["phase", "µs anchor", "µs with spans", "ratio", "µs/span", "computed", "target"]
    print(format_table(headers, rows))
    print(
        f"ratio: interleaved whole turns (noise included); computed: 1 + our"
        f" {m.ours_per_turn:.0f} spans per turn x µs per span / anchor turn."
        f" Recording everything (ADK's spans too) vs nothing: {m.on[PLAIN] / m.off[PLAIN]:.2f}x"
        f" the turn (phases not interleaved); up to {m.spans_per_round} spans per round."
    )


if __name__ == "__main__":
    main()
