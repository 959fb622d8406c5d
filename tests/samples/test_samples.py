"""Samples run as users run them: a subprocess on the real database file."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import pytest

from tests.e2e._cli import REPO, run_command

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


def test_waiting_point_sample_asks_answers_and_resumes(tmp_path: Path) -> None:
    db = tmp_path / "platform.db"
    done = run_command([sys.executable, "samples/waiting_point.py", "--db", str(db)])
    assert done.returncode == 0, done.stderr[-2000:]
    first, second = done.stdout.split("request 2:")
    assert "→ adk_request_input" in first and "ledger: ['waiting']" in first
    assert 'answered: {"q-1": "fri"}' in second
    assert second.count("← ") == 1  # the resumed tool's result, then the model's answer
    assert "is answered, not pending" in second
    assert "ledger: ['completed']" in second
    with sqlite3.connect(db) as conn:
        [(status, answers)] = conn.execute("SELECT status, answers FROM yx_waitpoints").fetchall()
    assert status == "answered" and answers == '{"q-1": "fri"}'


def test_agent_tree_sample_gives_each_user_the_tree_their_rights_allow(tmp_path: Path) -> None:
    # From another folder: the sample finds the team's configs beside itself, not in the cwd.
    sample = str(REPO / "samples" / "agent_tree.py")
    done = run_command([sys.executable, sample, "--db", str(tmp_path / "p.db")], cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    assert "mei reaches ['coordinator', 'researcher', 'critic', 'writer']; left out: nothing" in out
    assert "li reaches ['coordinator', 'critic', 'writer']; left out: ['researcher']" in out
    mei, li = out.split("mei: ", 1)[1].split("li: ask researcher", 1)
    assert mei.count("coordinator → researcher(") == 2 and "15000" in mei
    assert "researcher(" not in li and "I cannot see a tool named 'researcher'" in li
    assert "writer: (demo model) writer here" in li


def test_first_agent_sample_calls_its_tool_on_the_demo_model() -> None:
    done = run_command([sys.executable, "samples/first_agent.py"])
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert lines[0] == "call   count_words {'text': 'one two three'}"
    assert lines[1] == "result {'words': 3}"
    assert lines[2].startswith("answer (demo model) count_words returned")
    assert "Offline demo model in use" in done.stderr
