"""`adk run agents/team`: the multi-agent app in the terminal, on the demo model."""

from __future__ import annotations

import pytest

from tests.e2e._cli import BIN, run_command

pytestmark = pytest.mark.slow


def test_adk_run_team_calls_the_researcher_and_hands_over_to_the_writer() -> None:
    script = "ask researcher what is 6 * 7\nhand it to the critic\nhand it to the writer\nexit\n"
    done = run_command([str(BIN / "adk"), "run", "--in_memory", "agents/team"], stdin=script)
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    assert "researcher returned" in out and "42" in out  # the nested run's calculator
    assert "handoff_not_allowed" in out and '"name": "writer"' in out
    assert "[writer]: (demo model) writer here" in out, out[-3000:]


def test_adk_run_team_answers_a_new_message_after_the_handoff_for_itself() -> None:
    script = "hand it to the writer\nwhat are my notes?\nexit\n"
    done = run_command([str(BIN / "adk"), "run", "--in_memory", "agents/team"], stdin=script)
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    assert "[writer]: (demo model) writer here" in out, out[-3000:]
    after = out.split("writer here", 1)[1]
    assert "transfer_to_agent returned" not in after, after
    assert "list_notes" in after, after  # "my notes", answered for itself
