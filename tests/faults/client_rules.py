"""The rules about what clients see and what stays stored: deletes stick, no half-turn
is complete, every request gets a final status, one outcome per run, idempotent creates."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from .facts import STREAMS, TERMINAL, Facts
from .history import Op
from .model import ModelCall
from .run_rules import deletes
from .violation import Violation
from .violation import violation as _v

__all__ = [
    "deleted_stays_deleted",
    "final_status",
    "idempotent_create",
    "no_half_turn",
    "one_outcome",
]

FINAL = (*TERMINAL, "waiting")


def deleted_stays_deleted(facts: Facts, calls: Sequence[ModelCall]) -> list[Violation]:
    found = []
    snap = facts.snapshot
    for session, invoked, acknowledged in deletes(facts):
        where: dict[str, Any] = {"sessions": [session]}
        old_runs = [
            r.run_id for r in snap.runs if r.session_id == session and r.started_at < invoked
        ]
        old_points = [
            p.id for p in snap.points if p.session_id == session and p.created_at < invoked
        ]
        old_invocations = {
            facts.tag_invocation[tag]
            for tag, owner in facts.tag_session.items()
            if owner == session
            and tag in facts.tag_invocation
            and facts.started_before(tag, invoked)
        }
        old_events = [
            e
            for e in snap.sessions.get(session, ())
            if e.timestamp < invoked or e.invocation_id in old_invocations
        ]
        if old_runs or old_points or old_events:
            found.append(
                _v(
                    "deleted_stays_deleted",
                    f"session {session} deleted at {invoked:.3f}; still stored: runs {old_runs},"
                    f" points {old_points}, {len(old_events)} events",
                    runs=old_runs,
                    points=old_points,
                    **where,
                )
            )
        for op in _acknowledged_after(facts, session, acknowledged):
            shown = [r["id"] for r in op.value.get("runs", ()) if r["started_at"] < invoked]
            shown += [p["id"] for p in op.value.get("points", ()) if p["created_at"] < invoked]
            if shown:
                found.append(
                    _v(
                        "deleted_stays_deleted",
                        f"op #{op.id} listed {shown} of session {session} deleted at {invoked:.3f}",
                        runs=shown,
                        **where,
                    )
                )
            if op.f in ("answer", "lib_answer") and _old_point(facts, op.point, invoked):
                found.append(
                    _v(
                        "deleted_stays_deleted",
                        f"op #{op.id} had {op.point} of session {session} answered after"
                        " its delete",
                        points=[op.point],
                        **where,
                    )
                )
    return found


def _old_point(facts: Facts, point_id: str | None, deleted: float) -> bool:
    """Whether the point was opened before the delete."""
    created = facts.point_created.get(point_id or "")
    return created is not None and created < deleted


def _acknowledged_after(facts: Facts, session: str, after: float) -> list[Op]:
    """Acknowledged ops on `session` invoked after `after`."""
    return [
        op
        for op in facts.history.ops
        if op.type == "ok" and op.session == session and facts.invocation[op.id].time > after
    ]


def no_half_turn(facts: Facts, calls: Sequence[ModelCall]) -> list[Violation]:
    found = []
    deleted = deletes(facts)
    for run in facts.snapshot.runs:
        events = facts.snapshot.sessions.get(run.session_id)
        if run.status != "completed" or events is None:
            continue
        if any(s == run.session_id and run.started_at < at for s, at, _ in deleted):
            continue  # a deleted session's run left behind: `deleted_stays_deleted`
        mine = [e for e in events if e.invocation_id == run.invocation_id and e.author != "user"]
        if not mine or not mine[-1].final:
            last = mine[-1] if mine else None
            found.append(
                _v(
                    "no_half_turn",
                    f"run {run.run_id} is completed but its last event is {last}",
                    sessions=[run.session_id],
                    runs=[run.run_id],
                )
            )
    for op in facts.history.ops:
        told = op.type == "ok" and op.f in ("run", "answer")
        if told and op.value.get("status") == "completed" and not op.value.get("final_text"):
            found.append(
                _v(
                    "no_half_turn",
                    f"op #{op.id} was told completed without a final answer in its stream",
                    sessions=[op.session],
                    runs=[op.run_id],
                )
            )
    return found


def final_status(facts: Facts, calls: Sequence[ModelCall]) -> list[Violation]:
    found = []
    for invoked, done in facts.history.pairs():
        where: dict[str, Any] = {
            "sessions": [invoked.session],
            "runs": [invoked.run_id],
            "points": [invoked.point],
        }
        if done is None:
            found.append(
                _v("final_status", f"op #{invoked.id} {invoked.f} never completed", **where)
            )
            continue
        status = done.value.get("status")
        if done.type == "info":
            killed = facts.kills_during(invoked.worker, invoked.time, done.time)
            if not killed:
                found.append(
                    _v(
                        "final_status",
                        f"op #{done.id} {done.f} on {done.worker} ended without a final status:"
                        f" {done.value.get('error')}",
                        **where,
                    )
                )
        elif done.type == "ok" and done.f in STREAMS and done.f != "lib_resume":
            if done.value.get("refused") or _gone_before_read(facts, invoked, done):
                continue
            allowed = (*FINAL, "gone", "none") if done.f == "follow" else FINAL
            if status not in allowed:
                found.append(
                    _v(
                        "final_status",
                        f"op #{done.id} {done.f} ended with status {status}"
                        f" ({done.value.get('error', 'its last run_status')})",
                        **where,
                    )
                )
        elif done.type == "fail" and int(done.value.get("http", 0)) >= 500:
            found.append(
                _v("final_status", f"op #{done.id} {done.f} answered {done.value}", **where)
            )
    return found


def _gone_before_read(facts: Facts, invoked: Op, done: Op) -> bool:
    """A library resume reads its run's status after the run, from the database: a
    delete of the session acknowledged meanwhile (refused while the run ran, so it
    came after the run's end) leaves nothing to read. Its stream has no status."""
    if done.f != "lib_answer" or done.value.get("status") is not None:
        return False
    return any(
        session == invoked.session and asked < done.time and acknowledged > invoked.time
        for session, asked, acknowledged in deletes(facts)
    )


def idempotent_create(facts: Facts, calls: Sequence[ModelCall]) -> list[Violation]:
    found = []
    by_key: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for invoked, done in facts.history.pairs():
        key = invoked.value.get("key")
        if invoked.f != "create" or not key or done is None:
            continue
        if done.type == "ok":
            by_key[key].append((done.id, f"session {done.session}"))
        elif done.type == "fail" and "http" in done.value:
            by_key[key].append((done.id, f"{done.value['http']} {done.value.get('code')}"))
    for key, answers in by_key.items():
        if len({a for _, a in answers}) > 1:
            sessions = [a.removeprefix("session ") for _, a in answers if a.startswith("session ")]
            found.append(
                _v(
                    "idempotent_create",
                    f"retries of one create (Idempotency-Key {key}) answered differently:"
                    f" {answers}",
                    sessions=sessions,
                )
            )
    return found


def one_outcome(facts: Facts, calls: Sequence[ModelCall]) -> list[Violation]:
    found = []
    rows = {r.run_id: r for r in facts.snapshot.runs}
    for closed in facts.closed:
        row = rows.get(closed.run_id or "")
        if row is not None and row.status != closed.status:
            found.append(
                _v(
                    "one_outcome",
                    f"op #{closed.op} was told run {closed.run_id} ended {closed.status};"
                    f" the ledger says {row.status} ({row.error})",
                    sessions=[row.session_id],
                    runs=[row.run_id],
                )
            )
    return found
