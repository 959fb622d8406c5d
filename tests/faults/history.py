"""A Jepsen-style history: every operation's invocation and its completion.

An operation is invoked by one client process and completes as `ok` (it happened,
with the observed value), `fail` (it surely did not happen: refused, or the connection
was never made) or `info` (unknown: the connection broke, or the client gave up).
Invocation and completion share the operation's `id`; both carry a wall-clock time
(`time.time()`, the clock the ledger and the model log use too).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

__all__ = ["History", "Op", "OpType"]

OpType = Literal["invoke", "ok", "fail", "info"]


@dataclass(frozen=True)
class Op:
    """One line of the history. `f` names the operation (run, answer, cancel, ...);
    `session`, `run_id`, `point` and `worker` are what it acted on, when known."""

    id: int
    process: str
    type: OpType
    f: str
    time: float
    worker: str | None = None
    session: str | None = None
    run_id: str | None = None
    point: str | None = None
    value: dict[str, Any] = field(default_factory=dict)

    def line(self) -> str:
        """One readable line (for a failure report)."""
        parts = [f"{self.time:.3f}", f"#{self.id}", self.process, self.type, self.f]
        for name in ("worker", "session", "run_id", "point"):
            got = getattr(self, name)
            if got is not None:
                parts.append(f"{name}={got}")
        if self.value:
            parts.append(json.dumps(self.value, sort_keys=True, default=str)[:300])
        return " ".join(parts)


class History:
    """Append-only and thread-safe; `invoke` returns the id its completion repeats."""

    def __init__(self, ops: Iterable[Op] = ()) -> None:
        self.ops: list[Op] = list(ops)
        self._lock = threading.Lock()
        self._next = max((o.id for o in self.ops), default=-1) + 1

    def invoke(self, process: str, f: str, **about: Any) -> Op:
        with self._lock:
            op = Op(id=self._next, process=process, type="invoke", f=f, time=time.time(), **about)
            self._next += 1
            self.ops.append(op)
        return op

    def complete(self, invoked: Op, type_: OpType, **about: Any) -> Op:
        """The completion of `invoked`; `about` adds to (or corrects) what it acted on."""
        fields: dict[str, Any] = {
            "worker": invoked.worker,
            "session": invoked.session,
            "run_id": invoked.run_id,
            "point": invoked.point,
            "value": {},
        }
        fields.update(about)
        op = Op(
            id=invoked.id,
            process=invoked.process,
            type=type_,
            f=invoked.f,
            time=time.time(),
            **fields,
        )
        with self._lock:
            self.ops.append(op)
        return op

    def pairs(self) -> list[tuple[Op, Op | None]]:
        """Each invocation with its completion (None: it never completed)."""
        done = {o.id: o for o in self.ops if o.type != "invoke"}
        return [(o, done.get(o.id)) for o in self.ops if o.type == "invoke"]

    def about(self, *, sessions: set[str], runs: set[str], points: set[str]) -> History:
        """The operations touching any of these sessions, runs or points, plus the kills
        and restarts (the faults): the shortened history printed with a failure."""
        keep = {
            o.id
            for o in self.ops
            if o.f in ("kill", "restart")
            or (o.session is not None and o.session in sessions)
            or (o.run_id is not None and o.run_id in runs)
            or (o.point is not None and o.point in points)
        }
        return History(o for o in self.ops if o.id in keep)

    def window(self, *, runs: set[str], points: set[str], until: float | None = None) -> History:
        """The stretch from the first to the last operation naming one of these runs or
        points, or to `until` if later (all of it when none does): the shorter history
        of a failure."""
        named = [i for i, o in enumerate(self.ops) if o.run_id in runs or o.point in points]
        if not named:
            return self
        first = self.ops[named[0]]
        # From the invocation of the first op that names them, to the last line naming them.
        start = next(i for i, o in enumerate(self.ops) if o.id == first.id)
        end = named[-1]
        if until is not None:
            end = max(end, max((i for i, o in enumerate(self.ops) if o.time <= until), default=end))
        return History(self.ops[start : end + 1])

    def dumps(self) -> str:
        return "\n".join(json.dumps(asdict(o), sort_keys=True, default=str) for o in self.ops)

    @classmethod
    def loads(cls, text: str) -> History:
        return cls(Op(**json.loads(line)) for line in text.splitlines() if line.strip())

    def render(self, limit: int = 200) -> str:
        lines = [o.line() for o in self.ops]
        if len(lines) > limit:
            lines = [
                *lines[: limit // 2],
                f"... {len(lines) - limit} more ...",
                *lines[-limit // 2 :],
            ]
        return "\n".join(lines)
