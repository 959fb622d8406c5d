"""Each rule of the checker on small hand-made histories: one it must pass, one it must
fail, so the checker itself can fail."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .checker import RULES, check, report
from .facts import Facts
from .history import History, Op
from .model import ModelCall
from .snapshot import EventRow, PointRow, RunRow, Snapshot
from .soak import Outcome

S, R, P, INV = "s1", "run-1", "wp-1", "e-1"


class Story:
    """A history written by hand: each op with its invoke and completion times."""

    def __init__(self) -> None:
        self.ops: list[Op] = []

    def op(
        self, f: str, start: float, end: float | None, outcome: str = "ok", **about: Any
    ) -> Story:
        n = len({o.id for o in self.ops})
        invoke = {k: v for k, v in about.items() if k != "got"}
        self.ops.append(Op(id=n, process=f"c{n}", type="invoke", f=f, time=start, **invoke))
        if end is not None:
            done = {**invoke, "value": about.get("got", {})}
            self.ops.append(Op(id=n, process=f"c{n}", type=outcome, f=f, time=end, **done))  # type: ignore[arg-type]
        return self

    def history(self) -> History:
        return History(sorted(self.ops, key=lambda o: o.time))


def run_started(story: Story, status: str = "waiting", end: float = 2.0) -> Story:
    got = {
        "status": status,
        "invocation_id": INV,
        "final_text": "done t1" if status == "completed" else "",
    }
    return story.op("run", 1.0, end, session=S, run_id=R, value={"tag": "t1"}, got=got)


def call(start: float, end: float, worker: str = "w0", answer: str | None = None) -> ModelCall:
    return ModelCall(worker, "t1", answer, "done", start, end)


def events(final: bool = True, at: float = 1.0) -> list[EventRow]:
    rows = [EventRow(INV, "user", at, text="go t1")]
    if final:
        rows.append(EventRow(INV, "helper", at + 1, text="done t1"))
    else:
        rows.append(EventRow(INV, "helper", at + 1, calls=("call-1",)))
    return rows


def snap(status: str = "waiting", ended: float | None = None, **more: Any) -> Snapshot:
    run = RunRow(R, S, INV, status, None, 1.0, ended)
    return Snapshot(runs=[run], sessions={S: events(status == "completed")}, **more)


def violations(
    rule: str, history: History, calls: list[ModelCall], snapshot: Snapshot
) -> list[str]:
    return [v.message for v in RULES[rule](Facts(history, snapshot), calls)]


def test_single_holder() -> None:
    h = run_started(Story()).history()
    assert not violations("single_holder", h, [call(1.1, 1.5), call(1.5, 1.9, "w1")], snap())
    found = violations("single_holder", h, [call(1.1, 1.5), call(1.4, 1.9, "w1")], snap())
    assert len(found) == 1 and "executed twice at once" in found[0]


def test_closed_stays_closed() -> None:
    h = run_started(Story(), "completed").history()
    done = snap("completed", ended=2.0)
    assert not violations("closed_stays_closed", h, [call(1.1, 1.9)], done)
    found = violations("closed_stays_closed", h, [call(1.1, 1.9), call(3.0, 3.5, "lib")], done)
    assert found and all("after" in m for m in found)
    # Rewritten to completed later by the re-execution: the client's view still counts.
    cancelled = run_started(Story()).op(
        "cancel", 2.5, 2.6, session=S, run_id=R, got={"status": "cancelled"}
    )
    rerun = snap("completed", ended=4.0)
    found = violations("closed_stays_closed", cancelled.history(), [call(3.0, 3.5)], rerun)
    assert found == [found[0]] and "cancelled" in found[0]


def test_closed_stays_closed_after_a_delete() -> None:
    h = run_started(Story()).op("delete", 3.0, 3.1, session=S).history()
    assert not violations("closed_stays_closed", h, [call(1.1, 1.5)], Snapshot())
    assert violations("closed_stays_closed", h, [call(1.1, 1.5), call(3.5, 3.9)], Snapshot())
    # A message sent before the delete but served once the session was re-created runs
    # in the new session: its model call after the delete is not a rerun.
    got = {"status": "completed", "invocation_id": INV, "final_text": "done t1"}
    late = Story().op("delete", 3.0, 3.1, session=S)
    late.op("run", 2.9, 4.0, session=S, run_id=R, value={"tag": "t1"}, got=got)
    run = RunRow(R, S, INV, "completed", None, 3.5, 4.0)
    rows = Snapshot(runs=[run], sessions={S: events(at=3.5)})
    assert not violations("closed_stays_closed", late.history(), [call(3.6, 3.9)], rows)
    assert not violations("deleted_stays_deleted", late.history(), [], rows)


def _answered(story: Story, outcomes: dict[str, str]) -> Story:
    for n, (token, outcome) in enumerate(outcomes.items()):
        got = {"status": "completed", "final_text": "done t1"} if outcome == "ok" else {"http": 409}
        story.op(
            "answer",
            3.0 + n / 10,
            4.0,
            outcome,
            session=S,
            point=P,
            value={"token": token},
            got=got,
        )
    return story


def test_answer_resumed_once_history() -> None:
    point = PointRow(P, S, INV, "answered", {"q-1": "ans-1"}, 1.8)
    done = snap("completed", ended=4.0, points=[point])
    good = _answered(run_started(Story()), {"ans-1": "ok", "ans-2": "fail"}).history()
    assert not violations("answer_resumed_once", good, [call(3.2, 3.5, answer="ans-1")], done)
    both = _answered(run_started(Story()), {"ans-1": "ok", "ans-2": "ok"}).history()
    assert any("all accepted" in m for m in violations("answer_resumed_once", both, [], done))
    twice = [call(3.2, 3.5, answer="ans-1"), call(3.6, 3.9, "w1", answer="ans-1")]
    assert any("resumed 2 times" in m for m in violations("answer_resumed_once", good, twice, done))
    refused = [call(3.2, 3.5, answer="ans-1"), call(3.6, 3.9, "w1", answer="ans-2")]
    found = violations("answer_resumed_once", good, refused, done)
    assert any("refused ans-2 resumed" in m for m in found)


def test_answer_recorded_then_refused_is_lost_unless_resumed_later() -> None:
    point = PointRow(P, S, INV, "answered", {"q-1": "ans-1"}, 1.8)
    done = snap("completed", ended=4.0, points=[point])
    refused = {"refused": "LeaseHeld: run 'run-1' is held by another worker's live lease"}
    story = run_started(Story()).op(
        "lib_answer", 3.0, 3.1, session=S, point=P, value={"token": "ans-1"}, got=refused
    )
    lost = violations("answer_resumed_once", story.history(), [], done)
    assert any("the answer is lost" in m for m in lost)
    # A later resume (a retry, or whoever resumes the run next) carried it: not lost.
    carried = violations(
        "answer_resumed_once", story.history(), [call(3.5, 3.9, answer="ans-1")], done
    )
    assert not carried


def test_a_cancel_in_flight_may_win_over_a_recorded_answer() -> None:
    point = PointRow(P, S, INV, "answered", {"q-1": "ans-1"}, 1.8)
    done = snap("cancelled", ended=3.05, points=[point])
    refused = {"refused": "RunEnded: run 'run-1' has ended (cancelled)"}

    def answered(story: Story) -> Story:
        return story.op(
            "lib_answer", 3.0, 3.1, session=S, point=P, value={"token": "ans-1"}, got=refused
        )

    alone = answered(run_started(Story())).history()
    assert any(
        "the answer is lost" in m for m in violations("answer_resumed_once", alone, [], done)
    )
    raced = answered(run_started(Story()).op("cancel", 2.9, 3.05, session=S, run_id=R))
    assert not violations("answer_resumed_once", raced.history(), [], done)
    # A cancel acknowledged before the answer was sent does not excuse it.
    before = answered(run_started(Story()).op("cancel", 2.5, 2.6, session=S, run_id=R))
    assert any(
        "the answer is lost" in m
        for m in violations("answer_resumed_once", before.history(), [], done)
    )


def test_a_run_that_died_with_its_worker_may_refuse_a_recorded_answer() -> None:
    """The seed 20261202 history under CI load: the worker holding the run was killed,
    the lease lapsed, and a host closed the run failed before the two-step answer could
    take it over. The refusal says failed; the ledger says the lease lapsed."""
    point = PointRow(P, S, INV, "answered", {"q-1": "ans-1"}, 1.8)
    refused = {"refused": "RunEnded: run 'run-1' has ended (failed)"}

    def ledger(error: str | None) -> Snapshot:
        run = RunRow(R, S, INV, "failed", error, 1.0, 3.05)
        return Snapshot(runs=[run], sessions={S: events(False)}, points=[point])

    def answered(story: Story) -> Story:
        return story.op(
            "lib_answer", 3.0, 3.1, session=S, point=P, value={"token": "ans-1"}, got=refused
        )

    killed = answered(run_started(Story()).op("kill", 2.0, 2.1, worker="w0")).history()
    assert not violations("answer_resumed_once", killed, [], ledger("worker_lease_expired"))
    # Failed for another reason, or with no worker killed: the answer is lost.
    for history, error in (
        (killed, "model_error"),
        (answered(run_started(Story())).history(), "worker_lease_expired"),
    ):
        found = violations("answer_resumed_once", history, [], ledger(error))
        assert any("the answer is lost" in m for m in found), error


def test_answer_resumed_once_database() -> None:
    h = _answered(run_started(Story()), {"ans-1": "ok"}).history()
    point = PointRow(P, S, INV, "answered", {"q-1": "ans-1"}, 1.8)
    lost = violations("answer_resumed_once", h, [], snap("completed", 4.0, points=[point]))
    assert any("resumed 0 times" in m for m in lost)
    hanging = violations("answer_resumed_once", h, [], snap("waiting", points=[point]))
    assert any("waits on nothing" in m for m in hanging)
    failed = violations("answer_resumed_once", h, [], snap("failed", 4.0, points=[point]))
    assert failed == []  # killed before the resume: nothing was promised to run


def test_deleted_stays_deleted() -> None:
    h = run_started(Story()).op("delete", 3.0, 3.1, session=S).history()
    assert not violations("deleted_stays_deleted", h, [], Snapshot())
    found = violations("deleted_stays_deleted", h, [], snap())
    assert len(found) == 1 and "still stored" in found[0]
    # The old run's events written into the re-created session after the delete.
    late = Snapshot(sessions={S: [EventRow(INV, "helper", 5.0, text="done t1")]})
    found = violations("deleted_stays_deleted", h, [], late)
    assert len(found) == 1 and "1 events" in found[0]
    listed = {"runs": [], "points": [{"id": P, "invocation_id": INV, "created_at": 1.8}]}
    again = run_started(Story()).op("delete", 3.0, 3.1, session=S)
    again.op("list", 3.5, 3.6, session=S, got=listed)
    found = violations("deleted_stays_deleted", again.history(), [], Snapshot())
    assert len(found) == 1 and "listed ['wp-1']" in found[0]
    fresh = {"runs": [], "points": [{"id": "wp-2", "invocation_id": "e-2", "created_at": 3.4}]}
    ok = (
        run_started(Story())
        .op("delete", 3.0, 3.1, session=S)
        .op("list", 3.5, 3.6, session=S, got=fresh)
    )
    assert not violations("deleted_stays_deleted", ok.history(), [], Snapshot())


def test_no_half_turn() -> None:
    h = run_started(Story(), "completed").history()
    assert not violations("no_half_turn", h, [], snap("completed", 2.0))
    half = Snapshot(
        runs=[RunRow(R, S, INV, "completed", None, 1.0, 2.0)], sessions={S: events(False)}
    )
    assert violations("no_half_turn", h, [], half)
    told = Story().op(
        "run", 1.0, 2.0, session=S, run_id=R, value={"tag": "t1"}, got={"status": "completed"}
    )
    assert violations("no_half_turn", told.history(), [], snap("completed", 2.0))


def test_final_status() -> None:
    good = run_started(Story()).history()
    assert not violations("final_status", good, [], snap())
    broken = Story().op("run", 1.0, 2.0, "info", session=S, worker="w0", value={"tag": "t1"})
    assert violations("final_status", broken.history(), [], snap())
    broken.op("kill", 1.5, 1.6, worker="w0")
    assert not violations("final_status", broken.history(), [], snap())
    hung = Story().op("follow", 1.0, None, session=S)
    assert violations("final_status", hung.history(), [], snap())
    silent = Story().op("answer", 1.0, 2.0, session=S, got={"status": None})
    assert violations("final_status", silent.history(), [], snap())
    crashed = Story().op("cancel", 1.0, 2.0, "fail", session=S, got={"http": 500})
    assert violations("final_status", crashed.history(), [], snap())


def test_a_library_resume_whose_session_was_deleted_before_its_read_has_no_status() -> None:
    """The library's status is read after its run: a delete acknowledged meanwhile (the
    seed 20261202 race under load) leaves none; without that delete, None is a fault."""
    silent = Story().op("lib_answer", 1.0, 2.0, session=S, got={"status": None})
    assert violations("final_status", silent.history(), [], snap())
    deleted = Story().op("lib_answer", 1.0, 2.0, session=S, got={"status": None})
    deleted.op("delete", 1.5, 1.9, session=S)
    assert not violations("final_status", deleted.history(), [], snap())
    other = Story().op("lib_answer", 1.0, 2.0, session=S, got={"status": None})
    other.op("delete", 1.5, 1.9, session="other")
    assert violations("final_status", other.history(), [], snap())
    later = Story().op("lib_answer", 1.0, 2.0, session=S, got={"status": None})
    later.op("delete", 2.1, 2.3, session=S)
    assert violations("final_status", later.history(), [], snap())


def test_one_outcome() -> None:
    h = run_started(Story(), "completed").history()
    assert not violations("one_outcome", h, [], snap("completed", 2.0))
    found = violations("one_outcome", h, [], snap("failed", 2.0))
    assert len(found) == 1 and "ledger says failed" in found[0]


def test_idempotent_create() -> None:
    same = Story().op("create", 1.0, 1.2, value={"key": "k"}, session="s9")
    same.op("create", 1.0, 1.3, value={"key": "k"}, session="s9")
    assert not violations("idempotent_create", same.history(), [], Snapshot())
    same.op("create", 1.0, 1.4, "fail", value={"key": "k"}, got={"http": 404, "code": "not_found"})
    assert violations("idempotent_create", same.history(), [], Snapshot())


def test_report_names_the_seed_and_only_the_broken_session() -> None:
    story = run_started(Story(), "completed")
    story.op("run", 1.0, 2.0, session="other", value={"tag": "t9"}, got={"status": "waiting"})
    story.op("kill", 1.5, 1.6, worker="w1")
    history = story.history()
    found = check(history, [call(1.1, 1.9), call(3.0, 3.5)], snap("completed", 2.0))
    assert [v.rule for v in found] == ["closed_stays_closed"]
    text = report(1234, found, history)
    assert text.startswith("seed 1234: 1 violation(s) of closed_stays_closed")
    assert "session=s1" in text and "session=other" not in text and "kill" in text


def test_history_round_trips() -> None:
    history = run_started(Story()).history()
    assert History.loads(history.dumps()).ops == history.ops


def test_a_saved_outcome_is_checked_again_the_same(tmp_path: Path) -> None:
    history = run_started(Story(), "completed").history()
    calls = [call(1.1, 1.9), call(3.0, 3.5)]
    outcome = Outcome(5, history, calls, snap("completed", 2.0), [])
    outcome.save(tmp_path / "h.jsonl")
    loaded = Outcome.load(tmp_path / "h.jsonl", 5)
    assert loaded.calls == calls and loaded.snapshot == outcome.snapshot
    assert [v.rule for v in loaded.violations] == ["closed_stays_closed"]


def test_the_window_is_the_stretch_naming_the_run() -> None:
    story = Story().op("list", 0.1, 0.2, session=S)
    run_started(story).op("list", 5.0, 5.1, session=S)
    short = story.history().window(runs={R}, points=set())
    assert [(o.f, o.type) for o in short.ops] == [("run", "invoke"), ("run", "ok")]
    assert story.history().window(runs={"run-x"}, points=set()).ops == story.history().ops
