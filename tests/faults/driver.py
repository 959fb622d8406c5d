"""Random operations from a seeded RNG, by a few concurrent clients, with a nemesis that
SIGKILLs and restarts workers. The sequence of choices each client makes is fixed by
the seed; the interleaving is what the machine makes of it."""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass, field

from .client import Client
from .history import History
from .model import answer_token, message_text
from .workers import Worker, WorkerPool

__all__ = ["Driver", "Knowledge"]

WEIGHTS = {
    "run": 24,
    "answer": 14,
    "answer_race": 12,
    "lib_answer_dup": 8,
    "lib_resume_spent": 5,
    "cancel": 8,
    "delete": 5,
    "create_race": 5,
    "follow": 8,
    "list": 6,
}


@dataclass
class Knowledge:
    """What the clients believe (never what the checker trusts)."""

    sessions: list[str] = field(default_factory=list)
    spent: list[tuple[str, str]] = field(default_factory=list)  # (session, point) answered
    counter: int = 0

    def next(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"


class Driver:
    def __init__(
        self,
        seed: int,
        pool: WorkerPool,
        history: History,
        clients: list[Client],
        weights: dict[str, int] | None = None,
    ) -> None:
        self.weights = {**WEIGHTS, **(weights or {})}
        self.seed = seed
        self.pool = pool
        self.history = history
        self.clients = clients
        self.known = Knowledge()
        self.rng = random.Random(seed)

    # -- choosing ---------------------------------------------------------------------------

    def _worker(self, rng: random.Random, other_than: Worker | None = None) -> Worker:
        live = [w for w in self.pool.workers if w.ready and w is not other_than]
        pick = live if live and rng.random() < 0.9 else self.pool.workers
        return rng.choice(pick)

    def _session(self, rng: random.Random) -> str | None:
        return rng.choice(self.known.sessions) if self.known.sessions else None

    async def _pending(self, client: Client, rng: random.Random, session: str) -> str | None:
        listed = await client.list(self._worker(rng), session)
        points = listed.value.get("points", []) if listed.type == "ok" else []
        return str(rng.choice(points)["id"]) if points else None

    # -- one step of one client -------------------------------------------------------------

    async def step(self, client: Client, rng: random.Random) -> None:
        kind = rng.choices(list(self.weights), weights=list(self.weights.values()))[0]
        session = self._session(rng)
        if session is None or kind == "create_race":
            await self._create_race(client, rng)
            return
        if kind == "run":
            tag = self.known.next("t")
            await client.run(self._worker(rng), session, tag, message_text(tag))
        elif kind in ("answer", "answer_race", "lib_answer_dup"):
            point = await self._pending(client, rng, session)
            if point is not None:
                await self._answer(kind, client, rng, session, point)
        elif kind == "lib_resume_spent" and self.known.spent:
            spent_session, point = rng.choice(self.known.spent)
            await client.lib_resume(spent_session, point, rng.randrange(2))
        elif kind == "cancel":
            listed = await client.list(self._worker(rng), session)
            runs = listed.value.get("runs", []) if listed.type == "ok" else []
            if runs:
                run = runs[0]
                done = await client.cancel(self._worker(rng), session, str(run["id"]))
                if done.type == "ok":  # its waiting points are withdrawn: resuming is a rerun
                    points = listed.value.get("points", [])
                    mine = [p for p in points if p["invocation_id"] == run["invocation_id"]]
                    self.known.spent += [(session, str(p["id"])) for p in mine]
        elif kind == "delete":
            await self._delete(client, rng, session)
        elif kind == "follow":
            await client.follow(self._worker(rng), session)
        elif kind == "list":
            await client.list(self._worker(rng), session)

    async def _answer(
        self, kind: str, client: Client, rng: random.Random, session: str, point: str
    ) -> None:
        token = answer_token(self.known.next(""))
        if kind == "answer":
            ops = [await client.answer(self._worker(rng), session, point, token)]
        elif kind == "lib_answer_dup":
            # The library path, with a duplicate resume of the same answer while the first
            # is inside its model call: on the same Runner (0.25 s later), or at once on a
            # second Runner with its own engine (two hosts racing for one run) once the
            # answer is recorded.
            late, other = (0.25, 0) if rng.random() < 0.5 else (0.05, 1)
            one_step = rng.random() < 0.5
            first, _ = await asyncio.gather(
                client.lib_answer(session, point, token, one_step=one_step),
                self._later(late, client.lib_resume(session, point, other)),
            )
            ops = [first]
        else:
            a = self._worker(rng)
            b = self._worker(rng, other_than=a)
            racers = [
                client.answer(a, session, point, token),
                client.answer(b, session, point, answer_token(self.known.next(""))),
            ]
            if rng.random() < 0.3:
                lib_token = answer_token(self.known.next(""))
                racers.append(
                    client.lib_answer(session, point, lib_token, one_step=rng.random() < 0.5)
                )
            ops = list(await asyncio.gather(*racers))
        if any(op.type == "ok" for op in ops):  # answered: resuming it again is a duplicate
            self.known.spent.append((session, point))

    @staticmethod
    async def _later(delay: float, work: object) -> None:
        await asyncio.sleep(delay)
        await work  # type: ignore[misc]

    async def _delete(self, client: Client, rng: random.Random, session: str) -> None:
        done = await client.delete(self._worker(rng), session)
        if done.type == "ok" and session in self.known.sessions:
            self.known.sessions.remove(session)
        if rng.random() < 0.6:  # the same id again: it must start clean
            again = await client.create(self._worker(rng), session, None)
            if again.type == "ok":
                self.known.sessions.append(session)
                await client.list(self._worker(rng), session)

    async def _create_race(self, client: Client, rng: random.Random) -> None:
        """Concurrent retries of one create (one Idempotency-Key) through two workers."""
        key = self.known.next("k")
        a = self._worker(rng)
        b = self._worker(rng, other_than=a)
        made = await asyncio.gather(*(client.create(w, None, key) for w in (a, b, a)))
        for op in made:
            if op.type == "ok" and op.session not in self.known.sessions:
                self.known.sessions.append(str(op.session))

    # -- loops -------------------------------------------------------------------------------

    async def client_loop(self, client: Client, rng: random.Random, until: float) -> None:
        while time.time() < until:
            await self.step(client, rng)
            await asyncio.sleep(rng.uniform(0.0, 0.15))

    async def nemesis(self, rng: random.Random, until: float, every: tuple[float, float]) -> None:
        """Kills a live worker now and then (never the last one) and restarts it."""
        restarts: list[asyncio.Task[None]] = []
        while True:
            await asyncio.sleep(rng.uniform(*every))
            if time.time() >= until:
                break
            live = [w for w in self.pool.workers if w.alive and w.ready]
            if len(live) < 2:
                continue
            victim = rng.choice(live)
            op = self.history.invoke("nemesis", "kill", worker=victim.name)
            self.pool.kill(victim)
            self.history.complete(op, "ok")
            restarts.append(asyncio.create_task(self._restart(victim, rng.uniform(0.5, 2.0))))
        await asyncio.gather(*restarts)

    async def _restart(self, worker: Worker, delay: float) -> None:
        await asyncio.sleep(delay)
        op = self.history.invoke("nemesis", "restart", worker=worker.name)
        self.pool.spawn(worker)
        healthy = await asyncio.to_thread(self.pool.wait_healthy, worker)
        self.history.complete(op, "ok" if healthy else "fail")

    async def run(self, seconds: float, kill_every: tuple[float, float]) -> None:
        until = time.time() + seconds
        first = self.clients[0]
        for _ in range(3):
            await self._create_race(first, self.rng)
        loops = [
            self.client_loop(c, random.Random(f"{self.seed}:{c.name}"), until) for c in self.clients
        ]
        await asyncio.gather(
            self.nemesis(random.Random(f"{self.seed}:nemesis"), until, kill_every), *loops
        )

    async def settle(self, lease_seconds: float) -> None:
        """After the last operation: once every lease has lapsed, each session is listed
        (closing runs of dead workers), so the database holds only closed or waiting runs."""
        await asyncio.sleep(lease_seconds + 0.5)
        client = self.clients[0]
        live = [w for w in self.pool.workers if w.ready]
        sessions = {o.session for o in self.history.ops if o.session is not None}
        for session in sorted(sessions):
            await client.list(self.rng.choice(live), session)
