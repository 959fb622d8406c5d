"""`adk run` on a `yuxi create` folder whose model misbehaves as a real server did: an
empty reply and a context-length refusal each end the turn with a line the user reads
(before, an empty reply printed nothing at all)."""

from __future__ import annotations

from pathlib import Path

import pytest

from adk_yuxi.testing import EmptyReply, ErrorReply, OpenAIScriptServer
from tests.e2e._cli import BIN, run_command

REFUSAL = ErrorReply(400, "Requested tokens (9120) exceed context window of 8192")


@pytest.mark.slow
def test_adk_run_says_what_went_wrong_with_the_model(tmp_path: Path) -> None:
    assert run_command([str(BIN / "yuxi"), "create", "helper"], cwd=tmp_path).returncode == 0
    with OpenAIScriptServer([EmptyReply(), REFUSAL], api_key="test-key") as server:
        done = run_command(
            [str(BIN / "adk"), "run", "helper"],
            stdin="hello\nhello again\nexit\n",
            cwd=tmp_path,
            YUXI_MODEL="openai/tiny",
            OPENAI_BASE_URL=server.base_url,
            OPENAI_API_KEY="test-key",
        )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "[MODEL_EMPTY_REPLY] The model 'tiny'" in done.stdout
    assert "it sent an empty reply (finish reason: stop)" in done.stdout
    assert "[MODEL_CONTEXT_EXCEEDED]" in done.stdout
    assert "the model's context window of 8,192 tokens" in done.stdout
    assert "Traceback" not in done.stdout + done.stderr
