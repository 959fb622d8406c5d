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
