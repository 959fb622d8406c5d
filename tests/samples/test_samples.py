"""Samples run as users run them: a subprocess on the real database file."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import pytest

from tests.e2e._cli import run_command

pytestmark = pytest.mark.slow


def test_host_service_sample_runs_then_stops_a_revoked_user(tmp_path: Path) -> None:
    db = tmp_path / "platform.db"
    done = run_command([sys.executable, "samples/host_service.py", "--db", str(db)])
    assert done.returncode == 0, done.stderr[-2000:]
    first, second = done.stdout.split("(an administrator narrows")
    assert "'value': 15000" in first
    # mei without the agent, then an unknown user on the same App: one public text.
    assert second.count("access denied: this user may not run this agent") == 2
    assert "→ calculate" not in second
    with sqlite3.connect(db) as conn:
        [(events,)] = conn.execute("SELECT count(*) FROM yx_events").fetchall()
        [(users,)] = conn.execute("SELECT count(*) FROM yx_users").fetchall()
    assert users == 2
    assert events >= 5
