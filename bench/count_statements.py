"""SQL statements of one host API turn, counted at the store's transaction objects.

The same agent as `bench_host_api` (the demo model, one `calculate` call per turn),
served in this process over the ASGI transport; each `Tx` class of both backends
records the statements that pass through it (an instrument, nothing is changed).

    python -m bench.count_statements [--turns 5] [--no-pg] [--show]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import functools
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from adk_yuxi._sql._pg_backend import PgTx
from adk_yuxi._sql._sqlite_tx import AioSqliteTx, InlineTx
from adk_yuxi.runtime import AgentConfig
from bench._host_load import YuxiServer, sse_frames
from bench.bench_host_api import AGENT, pg_reason, pg_url, seed_users

SEEN: list[str] = []


def _counted(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    async def wrapper(self: Any, sql: str, *args: Any, **kwargs: Any) -> Any:
        SEEN.append(sql)
        return await method(self, sql, *args, **kwargs)

    return wrapper


def instrument() -> None:
    """Every statement through a `Tx` lands in `SEEN` (InlineReadTx inherits InlineTx)."""
    for cls in (PgTx, InlineTx, AioSqliteTx):
        for name in ("execute", "executemany", "fetchall"):
            setattr(cls, name, _counted(cls.__dict__[name]))


def _shape(sql: str) -> str:
    return re.sub(r"\s+", " ", sql)[:110]


async def count(url: str, turns: int, work: Path) -> tuple[float, collections.Counter[str]]:
    from adk_yuxi.host import ApiConfig, create_app

    tokens = await seed_users(url, ["u1"])
    config = ApiConfig(
        database_url=url,
        agents=(AgentConfig(name=AGENT, description="Calculates.", tools=("calculate",)),),
        model="yuxi-demo",
        worker="count-worker",
    )
    app = create_app(config)
    target = YuxiServer(AGENT, tokens)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            session = await target.open_session(client, "u1")
            for index in range(turns + 1):
                if index == 1:  # the first turn warms caches up
                    SEEN.clear()
                path, body, headers = target.turn_request("u1", session)
                async with client.stream("POST", path, json=body, headers=headers) as response:
                    frames = [f async for f in sse_frames(response.aiter_lines())]
                failure = target.stream_failure(frames)
                if failure is not None:
                    raise RuntimeError(f"turn failed: {failure}")
            await asyncio.sleep(0)
            counted = list(SEEN)
    return len(counted) / turns, collections.Counter(_shape(s) for s in counted)


async def main_async(turns: int, with_pg: bool, show: bool) -> None:
    import adk_yuxi.tools.builtin  # noqa: F401  (registers calculate, as `yuxi serve` does)

    instrument()
    with tempfile.TemporaryDirectory(prefix="yx_count_") as tmp:
        targets = {"SQLite": f"sqlite+aiosqlite:///{Path(tmp) / 'p.db'}"}
        for name, url in targets.items():
            await _report(name, url, turns, Path(tmp), show)
        reason = await pg_reason() if with_pg else "--no-pg"
        if reason is not None:
            print(f"PostgreSQL skipped: {reason}")
            return
        async with pg_url() as url:
            await _report("PostgreSQL", url, turns, Path(tmp), show)


async def _report(name: str, url: str, turns: int, work: Path, show: bool) -> None:
    per_turn, shapes = await count(url, turns, work)
    print(f"{name}: {per_turn:.1f} statements per turn ({turns} turns)")
    if show:
        for sql, n in shapes.most_common():
            print(f"  {n / turns:5.1f}  {sql}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--no-pg", action="store_true")
    parser.add_argument("--show", action="store_true", help="list the statements")
    args = parser.parse_args(argv)
    asyncio.run(main_async(args.turns, not args.no_pg, args.show))


if __name__ == "__main__":
    main()
