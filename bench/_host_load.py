"""The load client of the host API benchmark (and its bounded test): many users, each
its own session, turns one after another, every answer read to the end of its stream.

One object per kind of server (ADK's `adk api_server`, ours) says how a session is
opened, how a turn is posted, when a stream is a failure and how the stored events are
read back; the driver and the storage check are shared, so both are judged alike.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import statistics
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import httpx

__all__ = [
    "AdkServer",
    "Audit",
    "LoadResult",
    "Target",
    "TurnResult",
    "YuxiServer",
    "audit_turns",
    "percentile",
    "run_load",
    "sse_frames",
]

TURN_TEXT = '/call calculate {"expression": "6 * 7"}'


@dataclass(frozen=True)
class TurnResult:
    seconds: float
    failure: str | None  # None: the turn succeeded; else why it counts as failed


@dataclass
class LoadResult:
    turns: list[TurnResult] = field(default_factory=list)
    complete: int = 0  # complete turns found in storage afterwards
    failed_stored: int = 0  # stored turns that end with an error event, nothing dangling
    half_turns: int = 0  # stored invocations that miss a part of a turn
    seconds: float = 0.0  # wall time of the whole load

    @property
    def ok(self) -> int:
        return sum(1 for t in self.turns if t.failure is None)

    @property
    def failures(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for turn in self.turns:
            if turn.failure is not None:
                counts[turn.failure] = counts.get(turn.failure, 0) + 1
        return counts

    def latency(self, q: float) -> float:
        return percentile([t.seconds for t in self.turns], q)


def percentile(values: Sequence[float], q: float) -> float:
    """The q-quantile (0..1), inclusive method; 0.0 for no values."""
    if not values:
        return 0.0
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[round(q * 100) - 1]


async def sse_frames(lines: AsyncIterator[str]) -> AsyncIterator[tuple[str, Any]]:
    """(event name, parsed data) per frame; comments (heartbeats) are skipped."""
    name, data = "message", []
    async for line in lines:
        if not line:
            if data:
                yield name, json.loads("\n".join(data))
            name, data = "message", []
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
        elif line.startswith("event:"):
            name = line[6:].strip()
    if data:
        yield name, json.loads("\n".join(data))


def _parts(event: dict[str, Any]) -> list[dict[str, Any]]:
    content = event.get("content") or {}
    parts: list[dict[str, Any]] = content.get("parts") or []
    return parts


def _is_final_text(event: dict[str, Any]) -> bool:
    parts = _parts(event)
    return (
        event.get("author") != "user"
        and not event.get("partial")
        and any(p.get("text") for p in parts)
        and not any("functionCall" in p or "functionResponse" in p for p in parts)
    )


def _event_failure(event: dict[str, Any]) -> str | None:
    if "error" in event:  # ADK's api_server: an exception inside the 200 stream
        return f"stream error: {event['error']}"[:120]
    if event.get("errorCode"):
        return f"error event: {event['errorCode']}"
    return None


@dataclass(frozen=True)
class Audit:
    """A session's stored invocations, sorted into three kinds."""

    complete: int = 0  # the user's message, a call, its response, a final text
    failed: int = 0  # ended by a stored error event, no call left without its response
    half: int = 0  # anything else: a call without response, no answer and no error


def _dangling_calls(events: list[dict[str, Any]]) -> set[str]:
    parts = [p for e in events for p in _parts(e)]
    calls = {p["functionCall"].get("id") for p in parts if "functionCall" in p}
    return calls - {p["functionResponse"].get("id") for p in parts if "functionResponse" in p}


def audit_turns(events: list[dict[str, Any]]) -> Audit:
    """Sorts a session's stored events, by invocation, into complete turns, cleanly
    failed ones and half-turns."""
    by_invocation: dict[str, list[dict[str, Any]]] = {}
    for event in events:
        by_invocation.setdefault(str(event.get("invocationId")), []).append(event)
    complete = failed = half = 0
    for group in by_invocation.values():
        parts = [p for e in group for p in _parts(e)]
        asked = any(e.get("author") == "user" for e in group)
        if _dangling_calls(group) or not asked:
            half += 1
        elif group[-1].get("errorCode"):
            failed += 1
        elif (
            any("functionCall" in p for p in parts)
            and not any(e.get("errorCode") for e in group)
            and _is_final_text(group[-1])
        ):
            complete += 1
        else:
            half += 1
    return Audit(complete, failed, half)


def _whole_turn(streamed: list[dict[str, Any]]) -> str | None:
    """None when the streamed events are one whole turn (the user's message is stored,
    not streamed, so it is not asked for here)."""
    parts = [p for e in streamed for p in _parts(e)]
    if not any("functionCall" in p for p in parts):
        return "no function call"
    if not any("functionResponse" in p for p in parts):
        return "no function response"
    return None if any(_is_final_text(e) for e in streamed) else "no final answer"


class Target(Protocol):
    """One server under load, as the client sees it."""

    async def open_session(self, client: httpx.AsyncClient, user: str) -> str: ...

    def turn_request(self, user: str, session: str) -> tuple[str, dict[str, Any], dict[str, str]]:
        """(path, JSON body, headers) of one turn."""
        ...

    def stream_failure(self, frames: list[tuple[str, Any]]) -> str | None: ...

    async def stored_events(
        self, client: httpx.AsyncClient, user: str, session: str
    ) -> list[dict[str, Any]]: ...


@dataclass(frozen=True)
class AdkServer:
    """ADK's `adk api_server`: unauthenticated, the user id in the path and the body."""

    app: str

    async def open_session(self, client: httpx.AsyncClient, user: str) -> str:
        response = await client.post(f"/apps/{self.app}/users/{user}/sessions", json={})
        response.raise_for_status()
        return str(response.json()["id"])

    def turn_request(self, user: str, session: str) -> tuple[str, dict[str, Any], dict[str, str]]:
        message = {"role": "user", "parts": [{"text": TURN_TEXT}]}
        body = {
            "app_name": self.app,
            "user_id": user,
            "session_id": session,
            "new_message": message,
        }
        return "/run_sse", body, {}

    def stream_failure(self, frames: list[tuple[str, Any]]) -> str | None:
        events = [data for _, data in frames]
        for event in events:
            if (failure := _event_failure(event)) is not None:
                return failure
        return _whole_turn(events)

    async def stored_events(
        self, client: httpx.AsyncClient, user: str, session: str
    ) -> list[dict[str, Any]]:
        response = await client.get(f"/apps/{self.app}/users/{user}/sessions/{session}")
        response.raise_for_status()
        events: list[dict[str, Any]] = response.json()["events"]
        return events


@dataclass(frozen=True)
class YuxiServer:
    """Our host API: a key per user, `…/runs` answered with `adk_event` frames and one
    `run_status`."""

    agent: str
    tokens: dict[str, str]

    def _auth(self, user: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[user]}"}

    async def open_session(self, client: httpx.AsyncClient, user: str) -> str:
        response = await client.post(f"/v1/agents/{self.agent}/sessions", headers=self._auth(user))
        response.raise_for_status()
        return str(response.json()["id"])

    def turn_request(self, user: str, session: str) -> tuple[str, dict[str, Any], dict[str, str]]:
        path = f"/v1/agents/{self.agent}/sessions/{session}/runs"
        return path, {"text": TURN_TEXT}, self._auth(user)

    def stream_failure(self, frames: list[tuple[str, Any]]) -> str | None:
        events = [data for name, data in frames if name == "adk_event"]
        for event in events:
            if (failure := _event_failure(event)) is not None:
                return failure
        if not frames or frames[-1][0] != "run_status":
            return "no run_status"
        status = frames[-1][1]
        if status.get("status") != "completed":
            return f"run_status {status.get('status')}: {status.get('error_code')}"
        return _whole_turn(events)

    async def stored_events(
        self, client: httpx.AsyncClient, user: str, session: str
    ) -> list[dict[str, Any]]:
        path = f"/v1/agents/{self.agent}/sessions/{session}/events"
        async with client.stream("GET", path, headers=self._auth(user)) as response:
            response.raise_for_status()
            return [d async for n, d in sse_frames(response.aiter_lines()) if n == "adk_event"]


async def _turn(client: httpx.AsyncClient, target: Target, user: str, session: str) -> TurnResult:
    path, body, headers = target.turn_request(user, session)
    start = time.perf_counter()
    try:
        async with client.stream("POST", path, json=body, headers=headers) as response:
            if response.status_code != 200:
                await response.aread()
                return TurnResult(time.perf_counter() - start, f"HTTP {response.status_code}")
            frames = [f async for f in sse_frames(response.aiter_lines())]
    except httpx.HTTPError as exc:
        return TurnResult(time.perf_counter() - start, f"transport: {type(exc).__name__}")
    return TurnResult(time.perf_counter() - start, target.stream_failure(frames))


async def run_load(
    base_url: str,
    target: Target,
    users: Sequence[str],
    turns: int,
    read_timeout: float = 120.0,
    on_turns_done: Callable[[], None] | None = None,
) -> LoadResult:
    """Every user opens a session, then all post their `turns` turns concurrently (each
    user's one after another); afterwards every session's stored events are audited.

    Each user has a client of its own (one connection), as real users do: with one
    shared pool, turns waited up to seconds inside httpx's pool before being sent
    (`bench/README.md`), which measured the load generator, not the server."""
    async with contextlib.AsyncExitStack() as stack:
        clients = [
            await stack.enter_async_context(
                httpx.AsyncClient(
                    base_url=base_url, timeout=read_timeout, limits=httpx.Limits(max_connections=1)
                )
            )
            for _ in users
        ]
        pairs = list(zip(clients, users, strict=True))
        sessions = await asyncio.gather(*(target.open_session(c, u) for c, u in pairs))
        result = LoadResult()

        async def user_turns(client: httpx.AsyncClient, user: str, session: str) -> None:
            for _ in range(turns):
                result.turns.append(await _turn(client, target, user, session))

        start = time.perf_counter()
        await asyncio.gather(
            *(user_turns(c, u, s) for (c, u), s in zip(pairs, sessions, strict=True))
        )
        result.seconds = time.perf_counter() - start
        if on_turns_done is not None:
            on_turns_done()  # e.g. read the server's CPU clock before the audit's reads
        for (client, user), session in zip(pairs, sessions, strict=True):
            audit = audit_turns(await target.stored_events(client, user, session))
            result.complete += audit.complete
            result.failed_stored += audit.failed
            result.half_turns += audit.half
    return result
