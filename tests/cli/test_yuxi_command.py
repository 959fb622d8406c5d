"""The `yuxi` console command, run as a user would."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from adk_yuxi.testing import OpenAIScriptServer
from tests.e2e._cli import BIN, REPO, free_port, run_command, yuxi_here

pytestmark = pytest.mark.slow


def yuxi(*args: str, cwd: Path = REPO, **env: str) -> subprocess.CompletedProcess[str]:
    """A real `yuxi` process: for the start-up itself, and for imports of a user's
    module or agent folder (they would stay registered in this process)."""
    return run_command([str(BIN / "yuxi"), *args], cwd=cwd, **env)


def here(*args: str, stdin: str | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    """`yuxi` in this process, for what a command answers."""
    return yuxi_here(list(args), stdin=stdin, **env)


def test_help_lists_the_commands() -> None:
    done = yuxi("--help")
    assert done.returncode == 0
    for command in ("demo", "tools", "model", "web-check"):
        assert command in done.stdout


def test_demo_tour_persists_state_across_a_restart(tmp_path: Path) -> None:
    db = tmp_path / "tour.db"
    done = here("demo", "--db", str(db))
    assert done.returncode == 0, done.stderr
    out = done.stdout
    # The banner is said once per process (checked in a real process by test_demo_model.py
    # and test_adk_run.py); this one runs in the test's process, after other commands.
    assert "→ assistant calls save_note" in out
    assert "→ assistant calls calculate" in out
    # After the restart a new Runner reads the note written before it.
    after_restart = out.split("== Run 2")[1]
    assert '"notes": ["the launch is on Friday"]' in after_restart
    assert "user:notes = ['the launch is on Friday']" in out
    assert db.exists()


def test_tools_json_is_the_catalog() -> None:
    done = here("tools", "--json")
    assert done.returncode == 0, done.stderr
    entries = {e["id"]: e for e in json.loads(done.stdout)}
    assert entries["save_note"]["display_name"] == "Save a note"
    assert entries["calculate"]["parameters"]["required"] == ["expression"]


def test_model_reports_unusable_configuration() -> None:
    done = here("model", YUXI_MODEL="openai/")
    assert done.returncode == 1
    assert "YUXI_MODEL='openai/' cannot be used" in done.stderr


def test_web_check_tries_a_draft_key_from_stdin_without_printing_it() -> None:
    from adk_yuxi.testing import DEEPSEEK, ProviderFakeServer

    with ProviderFakeServer(api_key="good-key") as fake:
        env = {"DEEPSEEK_BASE_URL": fake.base_url(DEEPSEEK), "DEEPSEEK_API_KEY": "env-key"}
        args = ["web-check", "--provider", "deepseek", "--key-stdin"]
        good = here(*args, stdin="good-key\n", **env)
        bad = here(*args, stdin="draft-wrong\n", **env)
        configured = here("web-check", **env)
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


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"YUXI_MODEL": "gpt-4o"}, "OPENAI_API_KEY is not set"),
        (
            {"YUXI_MODEL": "openai/m", "OPENAI_API_KEY": "k", "OPENAI_BASE_URL": "localhost:1"},
            "OPENAI_BASE_URL='localhost:1' is not an http(s) URL",
        ),
        ({"YUXI_MODEL": "deepseek-chat"}, "write 'openai/deepseek-chat'"),
    ],
)
def test_model_checks_what_a_run_needs(env: dict[str, str], expected: str) -> None:
    done = here("model", **env)
    assert done.returncode == 1, done.stdout
    assert expected in done.stderr


def test_model_prints_the_base_url_and_pings_it() -> None:
    with OpenAIScriptServer(["pong"], api_key="k") as server:
        env = {"YUXI_MODEL": "openai/qwen-plus", "OPENAI_API_KEY": "k"}
        done = here("model", "--ping", OPENAI_BASE_URL=server.base_url, **env)
    assert done.returncode == 0, done.stderr
    assert "OpenAICompatibleLlm: qwen-plus" in done.stdout
    assert f"base URL: {server.base_url}" in done.stdout
    assert "ping: answered in" in done.stdout and "pong" in done.stdout
    assert len(server.requests) == 1


def test_model_ping_names_a_host_that_is_down() -> None:
    base_url = f"http://127.0.0.1:{free_port()}/v1"
    env = {"YUXI_MODEL": "openai/m", "OPENAI_API_KEY": "k", "OPENAI_BASE_URL": base_url}
    done = here("model", "--ping", **env)
    assert done.returncode == 1
    assert "ping failed after" in done.stderr
    assert f"The model 'm' at {base_url} failed: Connection error." in done.stderr
    assert "Is the server at OPENAI_BASE_URL running" in done.stderr
    assert "Traceback" not in done.stderr


def test_tools_imports_a_users_module(tmp_path: Path) -> None:
    (tmp_path / "my_tools.py").write_text(
        "from adk_yuxi.tools import tool\n\n"
        "@tool(category='mine', display_name='Greet someone')\n"
        "def greet(name: str) -> str:\n"
        '    """Says hello."""\n'
        "    return f'hello {name}'\n"
    )
    done = yuxi("tools", "--json", "--import", "my_tools", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    entries = {e["id"]: e for e in json.loads(done.stdout)}
    assert entries["greet"]["display_name"] == "Greet someone"
    assert "save_note" in entries  # the built-ins are still listed

    by_path = yuxi("tools", "--import", str(tmp_path / "my_tools.py"))
    assert by_path.returncode == 0, by_path.stderr
    assert "Greet someone" in by_path.stdout


def test_tools_imports_an_agent_folder() -> None:
    done = yuxi("tools", "--json", "--agent", "agents/assistant")
    assert done.returncode == 0, done.stderr
    entries = {e["id"]: e for e in json.loads(done.stdout)}
    assert entries["save_text_file"]["category"] == "demo"


def test_tools_explains_an_import_that_fails(tmp_path: Path) -> None:
    done = yuxi_here(["tools", "--import", "no_such_module_here"], cwd=tmp_path)
    assert done.returncode == 2
    assert "cannot import 'no_such_module_here'" in done.stderr
    assert "Traceback" not in done.stderr
    not_agent = here("tools", "--agent", str(tmp_path))
    assert not_agent.returncode == 2
    assert "is not an agent folder" in not_agent.stderr
