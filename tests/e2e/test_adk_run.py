"""`adk run agents/assistant`, driven by piped input, offline on the demo model."""

from __future__ import annotations

import pytest

from tests.e2e._cli import BIN, run_command

pytestmark = pytest.mark.slow


def test_adk_run_assistant_offline_transcript() -> None:
    script = "remember the demo runs offline\nwhat is 7 * 6?\nwhat are my notes?\nexit\n"
    done = run_command([str(BIN / "adk"), "run", "--in_memory", "agents/assistant"], stdin=script)
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    assert "Offline demo model in use" in done.stderr + out
    assert 'save_note returned {"saved": true, "note_number": 1}' in out
    assert '"value": 42' in out
    assert '"notes": ["the demo runs offline"]' in out


def test_adk_run_fails_at_start_on_an_unusable_model() -> None:
    done = run_command(
        [str(BIN / "adk"), "run", "agents/assistant"],
        stdin="hello\nexit\n",
        YUXI_MODEL="no-such-model",
    )
    combined = done.stdout + done.stderr
    assert done.returncode != 0
    assert "YUXI_MODEL='no-such-model' cannot be used" in combined
    assert "[assistant]" not in done.stdout
