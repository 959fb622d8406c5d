"""What recording the platform's metrics costs per host API turn.

One host API in process (ASGI, an SQLite file, the demo model): a turn is a fresh
session, a message whose answer calls `calculate` once, and the final answer, its event
stream read to the end. Contenders, interleaved round by round on the same host:

- anchor: adk_yuxi's instruments on the API's no-op provider (no provider installed);
- recorded: the same instruments on the OpenTelemetry SDK with the Prometheus reader
  (what `--metrics-port` installs), scraped once per round as Prometheus would.

ADK's own instruments record to the global provider, which cannot be switched round by
round; they are off in both (as they are until an operator asks for metrics).

    python -m bench.bench_metrics [--turns N] [--rounds R] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx
from opentelemetry.metrics import MeterProvider, NoOpMeterProvider

from adk_yuxi.observability import PrometheusExposition, use_meter_provider
from bench._timing import format_table, median_rate, timed_rounds
from bench.bench_host_api import AGENT, YUXI_AGENT, seed_users

ANCHOR = "no provider (anchor)"
RECORDED = "SDK + Prometheus reader"


async def _turn(client: httpx.AsyncClient, auth: dict[str, str]) -> None:
    session = (await client.post(f"/v1/agents/{AGENT}/sessions", headers=auth)).json()["id"]
    path = f"/v1/agents/{AGENT}/sessions/{session}/runs"
    body = {"text": '/call calculate {"expression": "6 * 7"}'}
    async with client.stream("POST", path, json=body, headers=auth) as response:
        text = "".join([chunk async for chunk in response.aiter_text()])
    if '"status":"completed"' not in text.replace(" ", ""):
        raise RuntimeError(f"the turn did not complete: {text[-300:]}")


async def measure(turns: int, rounds: int) -> dict[str, dict[str, float]]:
    import adk_yuxi.tools.builtin  # noqa: F401  (the agent names calculate)
    from adk_yuxi.host import ApiConfig, create_app
    from adk_yuxi.runtime import AgentCatalog

    exposition = PrometheusExposition("bench")
    with tempfile.TemporaryDirectory() as work:
        url = f"sqlite+aiosqlite:///{Path(work) / 'bench.db'}"
        tokens = await seed_users(url, ["u"])
        auth = {"Authorization": f"Bearer {tokens['u']}"}
        (Path(work) / "calc.yaml").write_text(YUXI_AGENT)
        catalog = AgentCatalog.from_yaml(Path(work) / "calc.yaml")
        app = create_app(ApiConfig(database_url=url, agents=catalog, model="yuxi-demo"))
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://api") as client:

                def contender(
                    provider: MeterProvider, scrape: bool
                ) -> Callable[[], Awaitable[int]]:
                    async def run() -> int:
                        use_meter_provider(provider)
                        for _ in range(turns):
                            await _turn(client, auth)
                        if scrape:
                            await asyncio.to_thread(exposition.scrape)
                        return turns

                    return run

                contenders = {
                    ANCHOR: contender(NoOpMeterProvider(), scrape=False),
                    RECORDED: contender(exposition.provider, scrape=True),
                }
                for run in contenders.values():  # warm both paths
                    await run()
                wall = await timed_rounds(contenders, rounds)
                cpu = await timed_rounds(contenders, rounds, clock=time.process_time)
    exposition.shutdown()
    use_meter_provider(None)
    return {
        "wall": {name: median_rate(s) for name, s in wall.items()},
        "cpu": {name: median_rate(s) for name, s in cpu.items()},
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=20, help="turns per contender per round")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="fewer turns and rounds")
    args = parser.parse_args(argv)
    turns, rounds = (10, 3) if args.quick else (args.turns, args.rounds)
    os.environ.setdefault("ADK_DISABLE_TELEMETRY", "1")
    result = asyncio.run(measure(turns, rounds))
    print(f"Host API turn (fresh session, one tool call, answer): {turns} turns x {rounds} rounds")
    for clock, rates in result.items():
        anchor = rates[ANCHOR]
        rows = [
            [name, f"{s * 1e3:,.2f}", f"{(s - anchor) * 1e6:+,.0f}", f"{s / anchor:.3f}"]
            for name, s in rates.items()
        ]
        print(format_table(["metrics", f"ms per turn ({clock})", "µs vs anchor", "ratio"], rows))


if __name__ == "__main__":
    main()
