"""One whole fault-injection run: workers on a fresh PostgreSQL schema, the driver for
`seconds`, the settle, a snapshot of the database, and the checker's verdict."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import json
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from adk_yuxi.storage import open_services
from tests.sql_backends import PG_URL, _pg_execute

from .checker import Violation, check, report
from .client import Client
from .driver import Driver
from .history import History
from .library import Library
from .model import ModelCall, TaggedModel
from .snapshot import Snapshot, read_snapshot, snapshot_json, snapshot_of_json
from .workers import AGENT, USER, WorkerPool, seed_database

__all__ = ["Outcome", "soak"]


@dataclass
class Outcome:
    seed: int
    history: History
    calls: list[ModelCall]
    snapshot: Snapshot
    violations: list[Violation] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)

    def summary(self) -> str:
        pairs = self.history.pairs()
        counts: dict[str, int] = {}
        for invoked, done in pairs:
            key = f"{invoked.f}:{done.type if done else 'none'}"
            counts[key] = counts.get(key, 0) + 1
        shown = ", ".join(f"{k}={v}" for k, v in sorted(counts.items()))
        times = ", ".join(f"{k} {v:.1f}s" for k, v in self.seconds.items())
        return (
            f"seed {self.seed}: {len(pairs)} ops ({shown}); {len(self.calls)} model calls;"
            f" {len(self.snapshot.runs)} runs, {len(self.snapshot.points)} points at the end;"
            f" {times}"
        )

    def report(self) -> str:
        return report(self.seed, self.violations, self.history)

    def save(self, path: Path) -> None:
        """The history (JSON lines) at `path`, the model's calls and the snapshot beside
        it: `load` reads all three back to check them again."""
        path.write_text(self.history.dumps())
        calls = "\n".join(json.dumps(dataclasses.asdict(c)) for c in self.calls)
        path.with_suffix(".calls.jsonl").write_text(calls)
        path.with_suffix(".snapshot.json").write_text(snapshot_json(self.snapshot))

    @classmethod
    def load(cls, path: Path, seed: int = -1) -> Outcome:
        """A saved outcome, checked again by the current rules."""
        history = History.loads(path.read_text())
        lines = path.with_suffix(".calls.jsonl").read_text().splitlines()
        calls = [ModelCall(**json.loads(line)) for line in lines if line.strip()]
        snapshot = snapshot_of_json(path.with_suffix(".snapshot.json").read_text())
        return cls(seed, history, calls, snapshot, check(history, calls, snapshot))


async def soak(
    seed: int,
    seconds: float,
    folder: Path,
    *,
    workers: int = 2,
    clients: int = 4,
    kill_every: tuple[float, float] = (6.0, 12.0),
    lease_seconds: float = 3.0,
    weights: dict[str, int] | None = None,
) -> Outcome:
    """Runs the whole thing on a fresh schema (dropped afterwards); `weights` change
    how often the driver picks each operation (`driver.WEIGHTS`)."""
    schema = f"yx_soak_{uuid.uuid4().hex[:12]}"
    await _pg_execute(f"CREATE SCHEMA {schema}")
    url = f"{PG_URL}?schema={schema}"
    model = TaggedModel(seed)
    pool: WorkerPool | None = None
    libraries: list[Library] = []
    marks = {"start": time.monotonic()}
    try:
        token = await seed_database(url)
        pool = WorkerPool(url, folder, model, workers, lease_seconds=lease_seconds)
        await asyncio.to_thread(pool.start_all)
        marks["started"] = time.monotonic()
        # Two library Runners, each with its own engine: two hosts of the library path.
        libraries += [
            Library(url, folder / "b", model.server_for(f"lib{n}").base_url, lease_seconds)
            for n in range(2)
        ]
        history = History()
        team = [Client(f"c{n}", history, token, libraries) for n in range(clients)]
        driver = Driver(seed, pool, history, team, weights)
        await driver.run(seconds, kill_every)
        marks["driven"] = time.monotonic()
        await driver.settle(lease_seconds)
        services = open_services(url)
        try:
            snapshot = await read_snapshot(services, app_name=AGENT, user_id=USER)
        finally:
            await services.close()
        marks["checked"] = time.monotonic()
        calls = list(model.calls)
        outcome = Outcome(seed, history, calls, snapshot, check(history, calls, snapshot))
        stages = list(marks.items())
        outcome.seconds = {b[0]: b[1] - a[1] for a, b in itertools.pairwise(stages)}
        return outcome
    finally:
        for library in libraries:
            await library.close()
        if pool is not None:
            await asyncio.to_thread(pool.stop_all)
        model.stop()
        await _pg_execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
