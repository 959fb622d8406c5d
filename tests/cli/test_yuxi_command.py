"""The `yuxi` console command, run as a user would."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.e2e._cli import BIN, REPO, run_command

pytestmark = pytest.mark.slow


def yuxi(*args: str, cwd: Path = REPO, **env: str) -> subprocess.CompletedProcess[str]:
    return run_command([str(BIN / "yuxi"), *args], cwd=cwd, **env)


def test_help_lists_the_commands() -> None:
    done = yuxi("--help")
    assert done.returncode == 0
    for command in ("demo", "tools", "model", "web-check"):
        assert command in done.stdout


def test_demo_tour_persists_state_across_a_restart(tmp_path: Path) -> None:
    db = tmp_path / "tour.db"
    done = yuxi("demo", "--db", str(db))
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "Offline demo model in use" in done.stderr
    assert "→ assistant calls save_note" in out
    assert "→ assistant calls calculate" in out
    # After the restart a new Runner reads the note written before it.
    after_restart = out.split("== Run 2")[1]
    assert '"notes": ["the launch is on Friday"]' in after_restart
    assert "user:notes = ['the launch is on Friday']" in out
    assert db.exists()


def test_tools_json_is_the_catalog() -> None:
    done = yuxi("tools", "--json")
    assert done.returncode == 0, done.stderr
    entries = {e["id"]: e for e in json.loads(done.stdout)}
    assert entries["save_note"]["display_name"] == "Save a note"
    assert entries["calculate"]["parameters"]["required"] == ["expression"]


def test_model_reports_unusable_configuration() -> None:
    done = yuxi("model", YUXI_MODEL="openai/")
    assert done.returncode == 1
    assert "YUXI_MODEL='openai/' cannot be used" in done.stderr


def test_web_check_tries_a_draft_key_from_stdin_without_printing_it() -> None:
    from adk_yuxi.testing import DEEPSEEK, ProviderFakeServer

    with ProviderFakeServer(api_key="good-key") as fake:
        env = {"DEEPSEEK_BASE_URL": fake.base_url(DEEPSEEK), "DEEPSEEK_API_KEY": "env-key"}
        args = ["web-check", "--provider", "deepseek", "--key-stdin"]
        good = run_command([str(BIN / "yuxi"), *args], stdin="good-key\n", **env)
        bad = run_command([str(BIN / "yuxi"), *args], stdin="draft-wrong\n", **env)
        configured = yuxi("web-check", **env)
    assert good.returncode == 0, good.stderr
    assert json.loads(good.stdout)["ok"] is True
    assert bad.returncode == 1
    assert json.loads(bad.stdout)["code"] == "auth_failed"
    assert "draft-wrong" not in bad.stdout + bad.stderr
    # Without a draft: the environment's key (wrong for this fake) is what is checked.
    assert json.loads(configured.stdout)["code"] == "auth_failed"
    assert [r[1] for r in fake.requests] == [
        "Bearer good-key",
        "Bearer draft-wrong",
        "Bearer env-key",
    ]
