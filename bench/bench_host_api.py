"""The host API under load against ADK's own `adk api_server`, in the same run.

Every contender is a real server process on 127.0.0.1 with the same agent: the offline
demo model (`DemoLlm`, the same class in every server) answering each message with one
`calculate` call and, after its result, a short text. `users` clients, each its own
session, post `turns` turns one after another, concurrently with all other users; a
turn is one POST whose server-sent event stream is read to its end. Afterwards every
session's stored events are read back through the server and audited for half-turns.

Contenders, one after another: ADK's api_server with in-memory sessions (the anchor),
the same with its SQLite session service, ours (`yuxi serve api`) on SQLite, ours on
the test PostgreSQL (a fresh schema; skipped with a reason when unreachable).

    python -m bench.bench_host_api [--users 50] [--turns 10] [--rounds 1] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from bench._host_load import AdkServer, LoadResult, Target, YuxiServer, run_load
from bench._timing import format_table

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
PG_DSN = os.environ.get("YUXI_TEST_PG_DSN", "postgresql://postgres@127.0.0.1:5432/test")
AGENT = "calc"
ADK_AGENT = f"""from google.adk.agents import LlmAgent

from adk_yuxi.models import DemoLlm
from adk_yuxi.tools.builtin.calculator import calculate

root_agent = LlmAgent(name="{AGENT}", model=DemoLlm(), tools=[calculate])
"""
YUXI_AGENT = f"name: {AGENT}\ndescription: Calculates.\ntools: [calculate]\n"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def cpu_seconds(pid: int) -> float:
    """utime + stime of one process, from /proc (psutil is not a dependency)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def postgres_cpu_seconds() -> float:
    """utime + stime of every `postgres` process, with the children they reaped (a
    backend that exited counts in its postmaster): the whole database server, other
    users of this machine's server included."""
    total = 0.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:  # exited meanwhile
            continue
        if "(postgres)" not in text:
            continue
        fields = text.rsplit(")", 1)[1].split()
        total += sum(int(fields[i]) for i in (11, 12, 13, 14))
    return total / os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Served:
    base_url: str
    pid: int
    target: Target
    database: bool = False  # whether it runs on the PostgreSQL server


@asynccontextmanager
async def _process(
    argv: list[str], env: dict[str, str], log: Path
) -> AsyncIterator[tuple[str, int]]:
    port = free_port()
    with log.open("w") as out:
        server = await asyncio.create_subprocess_exec(
            *argv, "--port", str(port), cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        async with httpx.AsyncClient(timeout=2) as client:
            while True:
                try:
                    # Any answer means it listens (ADK has no /healthz, ours no /list-apps).
                    await client.get(f"{base}/healthz")
                    break
                except httpx.TransportError:
                    pass
                if server.returncode is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"{argv[0]} did not start: {_tail(log)}")
                await asyncio.sleep(0.2)
        yield base, server.pid
    finally:
        if server.returncode is None:
            server.terminate()
        try:
            await asyncio.wait_for(server.wait(), 30)
        except TimeoutError:
            server.kill()
            await server.wait()


def _tail(log: Path) -> str:
    return log.read_text(errors="replace")[-2000:]


def _env() -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "ADK_DISABLE_TELEMETRY": "1",
        "YUXI_MODEL": "yuxi-demo",
    }


@asynccontextmanager
async def adk_server(work: Path, session_uri: str) -> AsyncIterator[Served]:
    agents = work / "adk_agents"
    (agents / AGENT).mkdir(parents=True, exist_ok=True)
    (agents / AGENT / "__init__.py").write_text("from . import agent  # noqa: F401\n")
    (agents / AGENT / "agent.py").write_text(ADK_AGENT)
    # Explicit URIs: without them ADK keeps sessions in a SQLite file under the agent.
    argv = [str(BIN / "adk"), "api_server", "--no-reload", "--host", "127.0.0.1"]
    argv += ["--session_service_uri", session_uri, "--artifact_service_uri", "memory://"]
    async with _process([*argv, str(agents)], _env(), work / "adk.log") as (base, pid):
        yield Served(base, pid, AdkServer(AGENT))


async def seed_users(url: str, users: list[str]) -> dict[str, str]:
    """The agent shared publicly and one key per user (as `yuxi api-key issue` would)."""
    from adk_yuxi.access import AccessRepository, ResourceKind, ResourceRecord, ShareConfig, User
    from adk_yuxi.apikeys import ApiKeyStore
    from adk_yuxi.storage import open_services

    services = open_services(url)
    try:
        await services.prepare()
        access = AccessRepository(services.store)
        await access.save_user(User(id="owner"))
        await access.save_resource(
            ResourceRecord(
                kind=ResourceKind.AGENT, id=AGENT, creator_id="owner", share=ShareConfig.public()
            )
        )
        keys = ApiKeyStore(services.store)
        tokens = {}
        for user in users:
            await access.save_user(User(id=user))
            tokens[user] = (await keys.issue(user, issued_by=user)).token
        return tokens
    finally:
        await services.close()


@asynccontextmanager
async def yuxi_server(work: Path, url: str, users: list[str]) -> AsyncIterator[Served]:
    tokens = await seed_users(url, users)
    (work / "calc.yaml").write_text(YUXI_AGENT)
    argv = [str(BIN / "yuxi"), "serve", "api", "--db", url, "--agents", str(work / "calc.yaml")]
    argv += ["--model", "yuxi-demo", "--host", "127.0.0.1"]
    async with _process(argv, _env(), work / "yuxi.log") as (base, pid):
        yield Served(base, pid, YuxiServer(AGENT, tokens), url.startswith("postgresql"))


async def _pg(sql: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(PG_DSN, timeout=3)
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


@asynccontextmanager
async def pg_url() -> AsyncIterator[str]:
    schema = f"yx_bench_{uuid.uuid4().hex[:12]}"
    await _pg(f"CREATE SCHEMA {schema}")
    try:
        base = PG_DSN.replace("postgresql://", "postgresql+asyncpg://", 1)
        yield f"{base}?schema={schema}"
    finally:
        await _pg(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


async def pg_reason() -> str | None:
    """Why PostgreSQL cannot be used (None: it answers)."""
    try:
        await _pg("SELECT 1")
    except Exception as exc:  # refused, timeout, auth, driver missing: all mean "skip"
        return f"{type(exc).__name__}: {exc}"
    return None


@dataclass(frozen=True)
class Measured:
    load: LoadResult
    cpu_ms_per_turn: float
    db_cpu_ms_per_turn: float | None = None


async def _measure(served: Served, users: list[str], turns: int) -> Measured:
    # One uncounted turn first: ADK loads the agent module on the first request.
    await run_load(served.base_url, served.target, users[:1], 1)
    clock = [cpu_seconds(served.pid)]
    db = [postgres_cpu_seconds()] if served.database else []

    def done() -> None:
        clock.append(cpu_seconds(served.pid))
        if served.database:
            db.append(postgres_cpu_seconds())

    # The turns only: the audit's read-back differs between the servers.
    load = await run_load(served.base_url, served.target, users, turns, on_turns_done=done)
    per_turn = 1000 / max(len(load.turns), 1)
    db_ms = (db[1] - db[0]) * per_turn if db else None
    return Measured(load, (clock[1] - clock[0]) * per_turn, db_ms)


@asynccontextmanager
async def adk_memory(work: Path, users: list[str]) -> AsyncIterator[Served]:
    async with adk_server(work, "memory://") as served:
        yield served


@asynccontextmanager
async def adk_sqlite(work: Path, users: list[str]) -> AsyncIterator[Served]:
    async with adk_server(work, f"sqlite:///{work / 'adk_sessions.db'}") as served:
        yield served


@asynccontextmanager
async def yuxi_sqlite(work: Path, users: list[str]) -> AsyncIterator[Served]:
    async with yuxi_server(work, f"sqlite+aiosqlite:///{work / 'platform.db'}", users) as served:
        yield served


@asynccontextmanager
async def yuxi_pg(work: Path, users: list[str]) -> AsyncIterator[Served]:
    async with pg_url() as url, yuxi_server(work, url, users) as served:
        yield served


ANCHOR = "ADK api_server, in-memory"
Opener = Callable[[Path, list[str]], AbstractAsyncContextManager[Served]]
CONTENDERS: dict[str, Opener] = {
    ANCHOR: adk_memory,
    "ADK api_server, SQLite": adk_sqlite,
    "ours, SQLite": yuxi_sqlite,
    "ours, PostgreSQL": yuxi_pg,
}


async def measure(
    users_n: int, turns: int, rounds: int, with_pg: bool, only: str | None = None
) -> dict[str, list[Measured]]:
    """Every contender once per round, one after another (never two servers at once)."""
    users = [f"user{i:03d}" for i in range(users_n)]
    reason = await pg_reason() if with_pg else "--no-pg given"
    contenders = {
        name: opener
        for name, opener in CONTENDERS.items()
        if name == ANCHOR or only is None or only.lower() in name.lower()
    }
    if "ours, PostgreSQL" in contenders and reason is not None:
        print(f"ours on PostgreSQL skipped: {reason}")
        del contenders["ours, PostgreSQL"]
    results: dict[str, list[Measured]] = {name: [] for name in contenders}
    for _ in range(rounds):
        for name, opener in contenders.items():
            with tempfile.TemporaryDirectory(prefix="yx_bench_api_") as tmp:
                async with opener(Path(tmp), users) as served:
                    results[name].append(await _measure(served, users, turns))
    return results


def _row(name: str, m: Measured, anchor_p95: float, planned: int) -> list[str]:
    load = m.load
    failures = "; ".join(f"{k} x{v}" for k, v in load.failures.items()) or "-"
    return [
        name,
        f"{load.ok}/{planned}",
        str(len(load.turns) - load.ok),
        str(load.failed_stored),
        str(load.half_turns),
        f"{load.latency(0.5) * 1000:,.0f}",
        f"{load.latency(0.95) * 1000:,.0f}",
        f"{m.cpu_ms_per_turn:.1f}",
        "-" if m.db_cpu_ms_per_turn is None else f"{m.db_cpu_ms_per_turn:.1f}",
        f"{load.latency(0.95) / anchor_p95:.2f}",
        failures,
    ]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--no-pg", action="store_true", help="leave PostgreSQL out")
    parser.add_argument("--only", help="only contenders whose name contains this (and the anchor)")
    parser.add_argument("--quick", action="store_true", help="20 users x 3 turns, one round")
    args = parser.parse_args(argv)
    users, turns, rounds = (20, 3, 1) if args.quick else (args.users, args.turns, args.rounds)
    results = asyncio.run(measure(users, turns, rounds, not args.no_pg, args.only))
    headers = ["server", "ok", "failed", "stored failed", "half-turns", "p50 ms", "p95 ms"]
    headers += ["CPU ms/turn", "PG CPU ms/turn", "p95 / ADK in-memory", "failures"]
    print(f"{users} users x {turns} turns each, one calculate call per turn, loopback")
    for index in range(rounds):
        # Ratios within one round: the anchor ran minutes, not hours, before the others.
        anchor_p95 = results[ANCHOR][index].load.latency(0.95)
        rows = [_row(n, r[index], anchor_p95, users * turns) for n, r in results.items()]
        print(f"\nround {index + 1} of {rounds}")
        print(format_table(headers, rows))


if __name__ == "__main__":
    main()
