"""The rules about executions: one holder at a time, closed runs stay closed, each
accepted answer resumed once. They compare the model server's call log (what was really
executed, tagged by run and answer) with what clients were told and the ledger keeps."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from adk_yuxi.ledger import LeaseExpired

from .facts import TERMINAL, Facts
from .history import Op
from .model import ModelCall
from .violation import Violation
from .violation import violation as _v

__all__ = ["SLACK_S", "answer_resumed_once", "closed_stays_closed", "deletes", "single_holder"]

SLACK_S = 0.1
"""How late a model request may reach the model server after its run was closed: the
request was sent before (loopback, same clock)."""


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
                        **facts.about_tag(tag),
                        until=second.ended,
                    )
                )
    return found


def deletes(facts: Facts) -> list[tuple[str, float, float]]:
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
    for session, invoked, acknowledged in deletes(facts):
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
                        **facts.about_tag(tag),
                        until=call.ended,
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
            # Refused after it was recorded: lost unless a later resume carried it (a
            # recorded answer waits for whoever resumes the run next).
            if (
                done is not None
                and done.type == "ok"
                and done.value.get("refused")
                and not count
                and not _cancel_raced(facts, facts.token_op[token], done)
                and not _died_with_its_worker(facts, facts.token_op[token], done)
            ):
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


def _cancel_raced(facts: Facts, answered: Op, refused: Op) -> bool:
    """A caller's cancel of the session's run, in flight between the two-step answer
    and its resume, wins: the resume is refused as cancelled and the client is told."""
    if "(cancelled)" not in str(refused.value.get("refused")):
        return False
    for op in facts.invocation.values():
        if op.f != "cancel" or op.session != answered.session or op.time > refused.time:
            continue
        done = facts.completion.get(op.id)
        if done is None or done.time >= answered.time:
            return True
    return False


def _died_with_its_worker(facts: Facts, answered: Op, refused: Op) -> bool:
    """The run's worker was killed holding it, and a host closed it failed when its
    lease lapsed (docs/ledger.md: it never runs again) before the two-step answer could
    take it over: the resume is refused as failed and the client is told."""
    if "(failed)" not in str(refused.value.get("refused")):
        return False
    if not any(op.f == "kill" and op.time <= refused.time for op in facts.history.ops):
        return False
    run = facts.snapshot.run_of(str(answered.value.get("invocation_id", "")))
    if run is None and answered.point is not None:
        point = next((p for p in facts.snapshot.points if p.id == answered.point), None)
        run = None if point is None else facts.snapshot.run_of(point.invocation_id)
    if run is None:  # deleted with its session since: nothing says otherwise
        return any(s == answered.session for s, _, _ in deletes(facts))
    return run.status == "failed" and run.error == LeaseExpired.code


def _outcome(facts: Facts, token: str) -> str | None:
    done = facts.completion.get(facts.token_op[token].id)
    return None if done is None else done.type
