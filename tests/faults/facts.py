"""What a history and a snapshot say together: which tag, run, invocation and point are
one run, and when a client learnt that a run had ended.

The driver tags each new message (`go <tag>`) and names each answer by a token, so
every model call can be tied back to the run it belongs to without trusting the
system under test for it: the tag comes from the request the model server received.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .history import History, Op
from .model import tag_of_text
from .snapshot import Snapshot

__all__ = ["TERMINAL", "Closed", "Facts"]

TERMINAL = ("completed", "failed", "cancelled")
STREAMS = ("run", "answer", "follow", "lib_answer", "lib_resume")


@dataclass(frozen=True)
class Closed:
    """A client saw run `run_id` (tag `tag`) ended `status` by `time` (op `op`)."""

    tag: str | None
    run_id: str | None
    status: str
    time: float
    op: int


@dataclass
class Facts:
    history: History
    snapshot: Snapshot
    tag_session: dict[str, str] = field(default_factory=dict)
    tag_invocation: dict[str, str] = field(default_factory=dict)
    invocation_tag: dict[str, str] = field(default_factory=dict)
    run_invocation: dict[str, str] = field(default_factory=dict)
    run_tag: dict[str, str] = field(default_factory=dict)
    point_invocation: dict[str, str] = field(default_factory=dict)
    point_created: dict[str, float] = field(default_factory=dict)
    invocation_started: dict[str, float] = field(default_factory=dict)
    token_op: dict[str, Op] = field(default_factory=dict)  # the answer's invocation
    completion: dict[int, Op] = field(default_factory=dict)
    invocation: dict[int, Op] = field(default_factory=dict)
    closed: list[Closed] = field(default_factory=list)

    def __post_init__(self) -> None:
        ops = self.history.ops
        self.completion = {o.id: o for o in ops if o.type != "invoke"}
        self.invocation = {o.id: o for o in ops if o.type == "invoke"}
        for op in ops:
            if op.type == "invoke" and op.f == "run" and op.session is not None:
                self.tag_session[str(op.value["tag"])] = op.session
            if op.type == "invoke" and op.f in ("answer", "lib_answer") and "token" in op.value:
                self.token_op[str(op.value["token"])] = op
        for sid, events in self.snapshot.sessions.items():
            for event in events:
                tag = tag_of_text(event.text) if event.author == "user" else None
                if tag is not None:
                    self._bind(tag=tag, invocation=event.invocation_id)
                    self.tag_session.setdefault(tag, sid)
        for run in self.snapshot.runs:
            self._bind(run_id=run.run_id, invocation=run.invocation_id)
            self._started(run.invocation_id, run.started_at)
        for point in self.snapshot.points:
            self.point_invocation[point.id] = point.invocation_id
            self.point_created[point.id] = point.created_at
        for op in ops:
            if op.type == "invoke":
                continue
            self._learn(op)
        for op in ops:
            if op.type == "ok":
                self._closings(op)

    def _bind(
        self, *, tag: str | None = None, run_id: str | None = None, invocation: str | None = None
    ) -> None:
        if invocation is not None and tag is not None:
            self.tag_invocation.setdefault(tag, invocation)
            self.invocation_tag.setdefault(invocation, tag)
        if invocation is not None and run_id is not None:
            self.run_invocation.setdefault(run_id, invocation)
        if run_id is not None and tag is not None:
            self.run_tag.setdefault(run_id, tag)

    def _learn(self, op: Op) -> None:
        invocation = op.value.get("invocation_id")
        tag = self.invocation[op.id].value.get("tag") if op.f == "run" else None
        self._bind(
            tag=None if tag is None else str(tag),
            run_id=op.run_id,
            invocation=None if invocation is None else str(invocation),
        )
        for run in op.value.get("runs", ()):
            self._bind(run_id=run["id"], invocation=run["invocation_id"])
            self._started(run["invocation_id"], float(run["started_at"]))
        for point in op.value.get("points", ()):
            self.point_invocation.setdefault(point["id"], point["invocation_id"])
            self.point_created.setdefault(point["id"], float(point["created_at"]))

    def _started(self, invocation: str, at: float) -> None:
        self.invocation_started[invocation] = min(at, self.invocation_started.get(invocation, at))

    def started_before(self, tag: str, at: float) -> bool:
        """Whether the run tagged `tag` surely began before `at`: the ledger or a listing
        says so, or its request was answered by then (a request sent earlier may still
        have been served later, in a session re-created meanwhile)."""
        invocation = self.tag_invocation.get(tag)
        started = self.invocation_started.get(invocation or "")
        if started is not None:
            return started < at
        for op in self.invocation.values():
            if op.f == "run" and op.value.get("tag") == tag:
                done = self.completion.get(op.id)
                return done is not None and done.time < at
        return False

    def about_tag(self, tag: str) -> dict[str, list[str | None]]:
        """The session, runs and waiting points of the run tagged `tag` (for a report)."""
        invocation = self.tag_invocation.get(tag)
        runs: list[str | None] = [r for r, i in self.run_invocation.items() if i == invocation]
        runs += [r for r, t in self.run_tag.items() if t == tag]
        points = [p for p, i in self.point_invocation.items() if i == invocation]
        return {"sessions": [self.tag_session.get(tag)], "runs": runs, "points": [*points]}

    def tag_of_run(self, run_id: str | None) -> str | None:
        if run_id is None:
            return None
        tag = self.run_tag.get(run_id)
        if tag is None and run_id in self.run_invocation:
            tag = self.invocation_tag.get(self.run_invocation[run_id])
        return tag

    def tag_of_point(self, point: str | None) -> str | None:
        invocation = self.point_invocation.get(point or "")
        return None if invocation is None else self.invocation_tag.get(invocation)

    def _closings(self, op: Op) -> None:
        seen: list[tuple[str | None, str]] = []
        if op.f in ("run", "answer", "follow") and op.value.get("status") in TERMINAL:
            seen.append((op.run_id, str(op.value["status"])))
        if op.f == "cancel" and op.value.get("status") in TERMINAL:
            seen.append((op.run_id, str(op.value["status"])))
        for run in op.value.get("runs", ()):
            if run["status"] in TERMINAL:
                seen.append((run["id"], run["status"]))
        for run_id, status in seen:
            self.closed.append(Closed(self.tag_of_run(run_id), run_id, status, op.time, op.id))

    def kills_during(self, worker: str | None, start: float, end: float) -> bool:
        """Whether `worker` was killed (or was down) while an op ran from start to end."""
        for op in self.history.ops:
            kill = op.f == "kill" and op.worker == worker and op.type == "invoke"
            if kill and start - 0.05 <= op.time <= end + 0.05:
                return True
        return False
