"""The rules a history, the model's call log and the final database must satisfy.

Each rule is a function of `Facts` and the model calls returning the violations it
found, each naming the sessions, runs and points involved so the report can shorten
the history to them. The rules, in the words of the promise:

- `single_holder`: at most one execution of a run at any moment (no two model calls of
  one invocation overlap, whichever workers made them);
- `closed_stays_closed`: no model call of a run starts after a client saw it ended, after
  the ledger closed it, or after its session was deleted;
- `answer_resumed_once`: of the answers to one waiting point at most one is accepted;
  it is resumed at most once (exactly once when its run went on), no refused answer is
  resumed, and no accepted answer is left hanging with its run `waiting`;
- `deleted_stays_deleted`: after a delete, nothing of the deleted session (runs, waiting
  points, events) is listed again or left in the database;
- `no_half_turn`: a run recorded or reported `completed` has the agent's final answer;
- `final_status`: every request ends with a final status, or with a connection error
  while its worker was killed; no 5xx;
- `one_outcome`: an ended run's status told to a client is the one the ledger keeps;
- `idempotent_create`: concurrent retries of one create (one `Idempotency-Key`) all
  answer with the same session.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from .facts import STREAMS, TERMINAL, Facts
from .history import History, Op
from .model import ModelCall
from .snapshot import Snapshot

__all__ = ["RULES", "Violation", "check", "report"]

SLACK_S = 0.1
"""How late a model request may reach the model server after its run was closed: the
request was sent before (loopback, same clock)."""
FINAL = (*TERMINAL, "waiting")


@dataclass(frozen=True)
class Violation:
    rule: str
    message: str
    sessions: frozenset[str] = field(default_factory=frozenset)
    runs: frozenset[str] = field(default_factory=frozenset)
    points: frozenset[str] = field(default_factory=frozenset)


def _v(
    rule: str,
    message: str,
    *,
    sessions: Sequence[str | None] = (),
    runs: Sequence[str | None] = (),
    points: Sequence[str | None] = (),
) -> Violation:
    return Violation(
        rule,
        message,
        frozenset(s for s in sessions if s),
        frozenset(r for r in runs if r),
        frozenset(p for p in points if p),
    )


def _by_tag(calls: Sequence[ModelCall]) -> dict[str, list[ModelCall]]:
    grouped: dict[str, list[ModelCall]] = defaultdict(list)
    for call in calls:
        if call.tag is not None:
            grouped[call.tag].append(call)
    for group in grouped.values():
        group.sort(key=lambda c: c.started)
    return grouped


def single_holder(facts: Facts, calls: Sequence[ModelCall]) -> list[Violation]:
    found = []
    for tag, group in _by_tag(calls).items():
        for i, first in enumerate(group):
            for second in group[i + 1 :]:
                if second.started >= first.ended:
                    break
                found.append(
                    _v(
                        "single_holder",
                        f"run {tag} executed twice at once: model calls by {first.worker}"
                        f" [{first.started:.3f}, {first.ended:.3f}] and {second.worker}"
                        f" [{second.started:.3f}, {second.ended:.3f}]",
                        sessions=[facts.tag_session.get(tag)],
                    )
                )
    return found


def _deletes(facts: Facts) -> list[tuple[str, float, float]]:
    """(session, invoked, acknowledged) of every acknowledged delete."""
    out = []
    for op in facts.history.ops:
        if op.type == "ok" and op.f == "delete" and op.session is not None:
            out.append((op.session, facts.invocation[op.id].time, op.time))
    return out


def closed_stays_closed(facts: Facts, calls: Sequence[ModelCall]) -> list[Violation]:
    found = []
    ends: dict[str, list[tuple[float, str]]] = defaultdict(list)
    for closed in facts.closed:
        if closed.tag is not None:
            ends[closed.tag].append(
                (closed.time, f"a client saw it {closed.status} (op #{closed.op})")
            )
    for run in facts.snapshot.runs:
        tag = facts.invocation_tag.get(run.invocation_id)
        if tag is not None and run.status in TERMINAL and run.ended_at is not None:
            ends[tag].append((run.ended_at, f"the ledger closed it {run.status}"))
    for session, invoked, acknowledged in _deletes(facts):
        for tag, owner in facts.tag_session.items():
            if owner == session and facts.started_before(tag, invoked):
                ends[tag].append((acknowledged, "its session was deleted"))
    for tag, group in _by_tag(calls).items():
        for call in group:
            late = [why for at, why in ends.get(tag, ()) if call.started > at + SLACK_S]
            if late:
                found.append(
                    _v(
                        "closed_stays_closed",
                        f"run {tag} called the model on {call.worker} at {call.started:.3f}"
                        f" (resuming {call.answer}) after {late[0]}",
                        sessions=[facts.tag_session.get(tag)],
                    )
                )
    return found


def answer_resumed_once(facts: Facts, calls: Sequence[ModelCall]) -> list[Violation]:
    resumed: dict[str, list[ModelCall]] = defaultdict(list)
    for call in calls:
        if call.answer is not None:
            resumed[call.answer].append(call)
    return _answers_told(facts, resumed) + _answers_stored(facts, resumed)


def _answers_told(facts: Facts, resumed: dict[str, list[ModelCall]]) -> list[Violation]:
    """What the clients were told about their answers, against the model's calls."""
    found = []
    by_point: dict[str, list[str]] = defaultdict(list)
    for token, op in facts.token_op.items():
        if op.point is not None:
            by_point[op.point].append(token)
    for point, tokens in by_point.items():
        session = facts.token_op[tokens[0]].session

        def bad(message: str, point: str = point, session: str | None = session) -> None:
            found.append(_v("answer_resumed_once", message, sessions=[session], points=[point]))

        accepted = [t for t in tokens if _outcome(facts, t) == "ok"]
        if len(accepted) > 1:
            bad(f"{point}: answers {accepted} all accepted")
        ran = [t for t in tokens if resumed.get(t)]
        if len(ran) > 1:
            bad(f"{point}: answers {ran} all resumed")
        for token in tokens:
            count = len(resumed.get(token, ()))
            if count > 1:
                bad(f"{point}: {token} resumed {count} times")
            if count and _outcome(facts, token) == "fail":
                bad(f"{point}: refused {token} resumed")
            done = facts.completion.get(facts.token_op[token].id)
            if done is not None and done.type == "ok" and done.value.get("refused"):
                bad(
                    f"{point}: {token} accepted, then its resume refused"
                    f" ({done.value['refused']}): the answer is lost"
                )
    return found


def _answers_stored(facts: Facts, resumed: dict[str, list[ModelCall]]) -> list[Violation]:
    """Answered points in the database, against the model's calls and their runs."""
    found = []
    points = facts.snapshot.points
    for point in points:
        if point.status != "answered":
            continue
        token = str((point.answers or {}).get("q-1", ""))
        run = facts.snapshot.run_of(point.invocation_id)

        def bad(message: str, point_id: str = point.id, session: str = point.session_id) -> None:
            found.append(_v("answer_resumed_once", message, sessions=[session], points=[point_id]))

        if token in facts.token_op and _outcome(facts, token) == "fail":
            bad(f"{point.id}: refused {token} recorded")
        later = [
            p
            for p in points
            if p.invocation_id == point.invocation_id and p.created_at > point.created_at
        ]
        went_on = run is not None and (run.status == "completed" or bool(later))
        count = len(resumed.get(token, ()))
        if went_on and token in facts.token_op and count != 1:
            bad(f"{point.id}: its run went on, but {token} was resumed {count} times")
        if (
            run is not None
            and run.status == "waiting"
            and not any(p.status == "pending" for p in later)
        ):
            bad(f"{point.id}: answered ({token}) but run {run.run_id} still waits on nothing")
    return found


def _outcome(facts: Facts, token: str) -> str | None:
    done = facts.completion.get(facts.token_op[token].id)
    return None if done is None else done.type


def deleted_stays_deleted(facts: Facts, calls: Sequence[ModelCall]) -> list[Violation]:
    found = []
    snap = facts.snapshot
    for session, invoked, acknowledged in _deletes(facts):
        where = {"sessions": [session]}
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
        for op in snap_ops_after(facts, session, acknowledged):
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


def snap_ops_after(facts: Facts, session: str, after: float) -> list[Op]:
    """Acknowledged ops on `session` invoked after `after`."""
    return [
        op
        for op in facts.history.ops
        if op.type == "ok" and op.session == session and facts.invocation[op.id].time > after
    ]


def no_half_turn(facts: Facts, calls: Sequence[ModelCall]) -> list[Violation]:
    found = []
    deleted = _deletes(facts)
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
        where = {"sessions": [invoked.session], "runs": [invoked.run_id], "points": [invoked.point]}
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
            if done.value.get("refused"):
                continue
            allowed = (*FINAL, "gone") if done.f == "follow" else FINAL
            if status not in allowed:
                found.append(
                    _v(
                        "final_status",
                        f"op #{done.id} {done.f} ended with status {status}",
                        **where,
                    )
                )
        elif done.type == "fail" and int(done.value.get("http", 0)) >= 500:
            found.append(
                _v("final_status", f"op #{done.id} {done.f} answered {done.value}", **where)
            )
    return found


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


Rule = Callable[[Facts, Sequence[ModelCall]], list[Violation]]
RULES: dict[str, Rule] = {
    "single_holder": single_holder,
    "closed_stays_closed": closed_stays_closed,
    "answer_resumed_once": answer_resumed_once,
    "deleted_stays_deleted": deleted_stays_deleted,
    "no_half_turn": no_half_turn,
    "final_status": final_status,
    "one_outcome": one_outcome,
    "idempotent_create": idempotent_create,
}


def check(history: History, calls: Sequence[ModelCall], snapshot: Snapshot) -> list[Violation]:
    facts = Facts(history, snapshot)
    return [v for rule in RULES.values() for v in rule(facts, calls)]


def report(seed: int, violations: Sequence[Violation], history: History) -> str:
    """The seed, each broken rule, and for the first violation of each rule the history
    shortened to the sessions, runs and points it involves (and the faults)."""
    rules = sorted({v.rule for v in violations})
    lines = [f"seed {seed}: {len(violations)} violation(s) of {', '.join(rules)}"]
    for rule in rules:
        mine = [v for v in violations if v.rule == rule]
        first = mine[0]
        short = history.about(
            sessions=set(first.sessions), runs=set(first.runs), points=set(first.points)
        )
        lines.append(f"\n[{rule}] {first.message}")
        lines += [f"  also: {v.message}" for v in mine[1:4]]
        if len(mine) > 4:
            lines.append(f"  ... and {len(mine) - 4} more")
        lines.append(short.render(limit=60))
    return "\n".join(lines)
