"""The exactly-once promise under random faults, as CI runs it: two `yuxi serve api`
workers on one PostgreSQL database plus the library resume path, four clients issuing
random runs, answers (duplicated and concurrent), cancels, deletes and creates from a
fixed seed, a nemesis SIGKILLing and restarting workers, then the checker over the
history, the model's call log and the database (tests/faults/checker.py). A failure
prints the seed and the history shortened to the run that broke; the full history is
left in the test's tmp_path. The longer soak: `python -m bench.soak_exactly_once`."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from tests.faults.soak import soak
from tests.sql_backends import require_pg

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

SEED = int(os.environ.get("YUXI_SOAK_SEED", "20261202"))
SECONDS = float(os.environ.get("YUXI_SOAK_SECONDS", "30"))


def test_runs_happen_exactly_once_under_random_faults(tmp_path: Path) -> None:
    require_pg()
    # Library duplicates more often than the soak's mix: 30 s must reach the race of two
    # resumes of one run inside its model call.
    mix = {"lib_answer_dup": 14}
    outcome = asyncio.run(soak(SEED, SECONDS, tmp_path, workers=2, clients=4, weights=mix))
    # YUXI_SOAK_OUT keeps the outcome where pytest's rotation of tmp_path cannot reach.
    saved = Path(os.environ.get("YUXI_SOAK_OUT", tmp_path / "history.jsonl"))
    outcome.save(saved)
    print(outcome.summary())
    if outcome.violations:
        pytest.fail(f"{outcome.summary()}\n{outcome.report()}\nhistory: {saved}", pytrace=False)
    # It did something worth checking: runs reached waiting points that were answered,
    # and the nemesis killed a worker.
    kinds = {(o.f, o.type) for o in outcome.history.ops}
    assert {("run", "ok"), ("kill", "ok")} <= kinds, outcome.summary()
    assert kinds & {("answer", "ok"), ("lib_answer", "ok")}, outcome.summary()
