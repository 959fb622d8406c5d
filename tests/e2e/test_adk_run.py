"""`adk run agents/assistant`, driven by piped input, offline on the demo model."""

from __future__ import annotations

import pytest

from tests.e2e._cli import BIN, free_port, run_command

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


def test_adk_run_reports_an_unusable_model_at_start_and_in_the_conversation() -> None:
    done = run_command(
        [str(BIN / "adk"), "run", "--in_memory", "agents/assistant"],
        stdin="hello\nagain\nexit\n",
        YUXI_MODEL="no-such-model",
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stderr.count("[adk_yuxi] YUXI_MODEL='no-such-model' cannot be used") == 1
    answer = "[assistant]: [YUXI_MODEL_UNUSABLE] YUXI_MODEL='no-such-model' cannot be used"
    assert done.stdout.count(answer) == 2
    assert "openai/MODEL" in done.stdout
    assert "Traceback" not in done.stdout + done.stderr


def test_adk_run_names_a_model_host_that_is_down() -> None:
    base_url = f"http://127.0.0.1:{free_port()}/v1"
    done = run_command(
        [str(BIN / "adk"), "run", "--in_memory", "agents/assistant", "hello"],
        YUXI_MODEL="openai/qwen-plus",
        OPENAI_API_KEY="k",
        OPENAI_BASE_URL=base_url,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert (
        f"[assistant]: [MODEL_UNREACHABLE] The model 'qwen-plus' at {base_url} failed:"
        in done.stdout
    )
    assert "Is the server at OPENAI_BASE_URL running" in done.stdout
    assert "Traceback" not in done.stdout + done.stderr


def test_adk_run_recalls_the_first_turn_after_compaction() -> None:
    """The demo assistant compacts within a dozen turns; the first turn is still
    answered, from the summary."""
    facts = [f"Fact {i}: meeting room {i} is on floor {i % 5}." for i in range(11)]
    lines = ["My locker code is 4711.", *facts, "What did I tell you about my locker code?"]
    done = run_command(
        [str(BIN / "adk"), "run", "--in_memory", "agents/assistant"],
        stdin="\n".join([*lines, "exit"]) + "\n",
    )
    assert done.returncode == 0, done.stderr[-2000:]
    expected = "You told me: 'My locker code is 4711.' (from the summary of earlier turns)."
    assert expected in done.stdout, done.stdout[-3000:]
