"""The platform's own metrics, through the OpenTelemetry metrics API only.

Library code records through `instruments()`: with no provider installed every
instrument is the API's no-op (or its proxy, bound once the operator installs one), so
recording costs a method call. The instruments come from the global `MeterProvider`
unless `use_meter_provider` binds them to another one: the global provider can be set
once per process, so a test (or an embedding application) injects its own.

Model and tool call latency are ADK's own instruments (`gen_ai.client.operation.duration`,
`gen_ai.execute_tool.duration`), recorded through the same API; they are not repeated
here. Gauges that read state (the stores' connection pools, the waiting points still
pending) are observed at collection time from sources registered by their owners.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import weakref
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from opentelemetry import metrics
from opentelemetry.metrics import CallbackOptions, Meter, MeterProvider, Observation

__all__ = [
    "METER_NAME",
    "PoolState",
    "YuxiMetrics",
    "instruments",
    "track_pool",
    "use_meter_provider",
    "watch_pending_waitpoints",
]

METER_NAME = "adk_yuxi"
_log = logging.getLogger("adk_yuxi.observability")

# Seconds: a turn is a model round trip or many (up to minutes with tools).
_TURN_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 80, 160, 320, 640]
_QUERY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
_HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10]
_WAIT_BUCKETS = [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10]


@dataclass(frozen=True)
class PoolState:
    """One store's connections as of now (`db.client.connection.*`)."""

    name: str
    used: int
    idle: int
    max: int
    pending: int


class _Pooled(Protocol):
    def pool_state(self) -> PoolState: ...


_pools: weakref.WeakSet[Any] = weakref.WeakSet()
_pools_lock = threading.Lock()


def track_pool(store: _Pooled) -> None:
    """Observes `store.pool_state()` at every collection while the store lives."""
    with _pools_lock:
        _pools.add(store)


class _LoopReading:
    """A count read by a coroutine on its event loop, for a gauge observed on another
    thread (the scrape's). Read from the loop's own thread it cannot wait for the
    loop: the last value read stands."""

    def __init__(
        self,
        read: Callable[[], Awaitable[Mapping[str, int]]],
        loop: asyncio.AbstractEventLoop,
        timeout: float,
    ) -> None:
        self.read, self.loop, self.timeout = read, loop, timeout
        self.last: Mapping[str, int] = {}

    async def _read(self) -> Mapping[str, int]:
        return await self.read()

    def value(self) -> Mapping[str, int]:
        if self.loop.is_closed():
            return self.last
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self.loop:
            return self.last
        future = asyncio.run_coroutine_threadsafe(self._read(), self.loop)
        try:
            self.last = dict(future.result(self.timeout))
        except Exception as exc:  # a slow or failing database: the last value stands
            future.cancel()
            _log.warning("reading the pending waiting points failed: %r", exc)
        return self.last


_waitpoints: list[_LoopReading] = []


def watch_pending_waitpoints(
    read: Callable[[], Awaitable[Mapping[str, int]]], *, timeout: float = 2.0
) -> Callable[[], None]:
    """Observes `read()` (pending waiting points by app) at each collection, on the
    calling task's event loop; returns the function that stops it."""
    reading = _LoopReading(read, asyncio.get_running_loop(), timeout)
    _waitpoints.append(reading)

    def unwatch() -> None:
        if reading in _waitpoints:
            _waitpoints.remove(reading)

    return unwatch


def _pool_states() -> dict[str, PoolState]:
    """Live stores' pools by name; stores on one database are summed."""
    with _pools_lock:
        stores = list(_pools)
    states: dict[str, PoolState] = {}
    for store in stores:
        try:
            s = store.pool_state()
        except Exception:  # a store closing meanwhile
            continue
        if (o := states.get(s.name)) is not None:
            s = PoolState(
                s.name, o.used + s.used, o.idle + s.idle, o.max + s.max, o.pending + s.pending
            )
        states[s.name] = s
    return states


_POOL = "db.client.connection.pool.name"
_STATE = "db.client.connection.state"


def _observe_connections(_options: CallbackOptions) -> Iterable[Observation]:
    for name, s in _pool_states().items():
        yield Observation(s.used, {_POOL: name, _STATE: "used"})
        yield Observation(s.idle, {_POOL: name, _STATE: "idle"})


def _observe_max(_options: CallbackOptions) -> Iterable[Observation]:
    return [Observation(s.max, {_POOL: n}) for n, s in _pool_states().items()]


def _observe_pending(_options: CallbackOptions) -> Iterable[Observation]:
    return [Observation(s.pending, {_POOL: n}) for n, s in _pool_states().items()]


def _observe_waitpoints(_options: CallbackOptions) -> Iterable[Observation]:
    totals: dict[str, int] = {}
    for reading in list(_waitpoints):
        for app, count in reading.value().items():
            totals[app] = max(totals.get(app, 0), count)  # one database seen twice
    return [Observation(n, {"yuxi.app.name": app}) for app, n in totals.items()]


class YuxiMetrics:
    """The instruments of one meter, and the one-line recorders the code calls."""

    def __init__(self, meter: Meter) -> None:
        self.runs = meter.create_counter(
            "yuxi.runs", unit="{run}", description="Runs closed in the ledger, by outcome."
        )
        self.turn_duration = meter.create_histogram(
            "yuxi.turn.duration",
            unit="s",
            description="From a run's claim to its close in the ledger (one user turn).",
            explicit_bucket_boundaries_advisory=_TURN_BUCKETS,
        )
        self.refusals = meter.create_counter(
            "yuxi.refusals", unit="{refusal}", description="Refused calls and stopped runs."
        )
        self.tool_failures = meter.create_counter(
            "yuxi.tool.failures", unit="{failure}", description="Tool calls that raised."
        )
        self.repairs = meter.create_counter(
            "yuxi.tool.repairs",
            unit="{repair}",
            description="Malformed calls sent back to the model to repair.",
        )
        self.lease_expirations = meter.create_counter(
            "yuxi.lease.expirations",
            unit="{run}",
            description="Runs closed as failed because their worker's lease lapsed.",
        )
        self.lease_takeovers = meter.create_counter(
            "yuxi.lease.takeovers", unit="{run}", description="Lapsed runs taken over."
        )
        self.lease_losses = meter.create_counter(
            "yuxi.lease.losses",
            unit="{run}",
            description="Runs this worker found taken over or closed under it.",
        )
        self.knowledge_duration = meter.create_histogram(
            "yuxi.knowledge.call.duration",
            unit="s",
            description="Knowledge server tool calls, as the server answered them.",
            explicit_bucket_boundaries_advisory=_QUERY_BUCKETS,
        )
        self.sse_streams = meter.create_up_down_counter(
            "yuxi.sse.active_streams", unit="{stream}", description="Event streams open now."
        )
        self.http_duration = meter.create_histogram(
            "http.server.request.duration",
            unit="s",
            description="HTTP requests of the host API, to the last byte of the response.",
            explicit_bucket_boundaries_advisory=_HTTP_BUCKETS,
        )
        self.pool_wait = meter.create_histogram(
            "db.client.connection.wait_time",
            unit="s",
            description="Time to obtain a connection from the pool.",
            explicit_bucket_boundaries_advisory=_WAIT_BUCKETS,
        )
        meter.create_observable_up_down_counter(
            "db.client.connection.count",
            [_observe_connections],
            unit="{connection}",
            description="Connections of the pool, used or idle.",
        )
        meter.create_observable_up_down_counter(
            "db.client.connection.max",
            [_observe_max],
            unit="{connection}",
            description="Connections the pool keeps at most (overflow excluded).",
        )
        meter.create_observable_up_down_counter(
            "db.client.connection.pending_requests",
            [_observe_pending],
            unit="{request}",
            description="Tasks waiting for a connection now.",
        )
        meter.create_observable_gauge(
            "yuxi.waitpoints.pending",
            [_observe_waitpoints],
            unit="{waitpoint}",
            description="Waiting points not answered or cancelled yet (read from the store).",
        )

    # -- recorders: one line at each call site ----------------------------------------

    def run_closed(self, status: str, code: str | None) -> None:
        """`code`: a failed run's public error code (`ledger._codes.run_error_code`)."""
        attrs = {"yuxi.run.outcome": status}
        if code is not None:
            attrs["error.type"] = code
        self.runs.add(1, attrs)

    def lease_expired(self, code: str) -> None:
        """A run closed as failed (`code`) because its worker's lease lapsed."""
        self.lease_expirations.add(1)
        self.run_closed("failed", code)

    def turn(self, seconds: float, status: str, agent: str) -> None:
        attrs = {"yuxi.run.outcome": status, "gen_ai.agent.name": agent}
        self.turn_duration.record(seconds, attrs)

    def refusal(self, code: str, tool: str | None, agent: str) -> None:
        attrs = {"yuxi.refusal.code": code, "gen_ai.agent.name": agent}
        if tool is not None:
            attrs["gen_ai.tool.name"] = tool
        self.refusals.add(1, attrs)

    def tool_failure(self, tool: str, within_budget: bool) -> None:
        attrs: dict[str, str | bool] = {"gen_ai.tool.name": tool}
        attrs["yuxi.budget.within"] = within_budget
        self.tool_failures.add(1, attrs)

    def repair(self, code: str, tool: str, within_budget: bool) -> None:
        attrs: dict[str, str | bool] = {"yuxi.repair.code": code, "gen_ai.tool.name": tool}
        attrs["yuxi.budget.within"] = within_budget
        self.repairs.add(1, attrs)

    def knowledge_call(self, tool: str, seconds: float, error: str | None) -> None:
        attrs = {"gen_ai.tool.name": tool}
        if error is not None:
            attrs["error.type"] = error
        self.knowledge_duration.record(seconds, attrs)

    def http_request(self, method: str, route: str | None, status: int, seconds: float) -> None:
        attrs: dict[str, str | int] = {
            "http.request.method": method,
            "http.response.status_code": status,
        }
        if route is not None:
            attrs["http.route"] = route
        self.http_duration.record(seconds, attrs)

    def pool_waited(self, pool: str, seconds: float) -> None:
        self.pool_wait.record(seconds, {_POOL: pool})


_current: YuxiMetrics | None = None
_current_lock = threading.Lock()


def instruments() -> YuxiMetrics:
    """The process's instruments (made from the global provider at first use)."""
    current = _current
    if current is None:
        return use_meter_provider(None, replace=False)
    return current


def use_meter_provider(provider: MeterProvider | None, *, replace: bool = True) -> YuxiMetrics:
    """Binds the instruments to `provider` (None: the global one, which may be set
    later: the API's proxy follows it). Instruments made before stay bound where they
    were; code records through `instruments()` at each call, so it follows."""
    global _current
    with _current_lock:
        if _current is not None and not replace:
            return _current
        source = provider if provider is not None else metrics.get_meter_provider()
        _current = YuxiMetrics(source.get_meter(METER_NAME))
        return _current
