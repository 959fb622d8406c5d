"""`yuxi create NAME`: a folder that `adk run` and `adk web` load at once, and names or
places it refuses without writing anything."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from adk_yuxi.cli import main
from tests.e2e._cli import BIN, run_command
from tests.e2e._web import adk_web

FILES = ["README.md", "__init__.py", "agent.py", "services.py"]
CALL_SECOND = '/call second_count_words {"text": "a b"}'


def create(folder: Path, name: str, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    """`yuxi create NAME` in-process, with `folder` as the working directory."""
    monkeypatch.chdir(folder)
    done = CliRunner().invoke(main, ["create", name], prog_name="yuxi")
    return done.exit_code, done.output


@pytest.mark.slow
def test_created_agent_runs_in_adk_run_on_the_demo_model(tmp_path: Path) -> None:
    made = run_command([str(BIN / "yuxi"), "create", "helper"], cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert "adk run helper" in made.stdout
    assert sorted(p.name for p in (tmp_path / "helper").iterdir()) == FILES
    script = (
        "what is 6 * 7?\n"
        '/call helper_count_words {"text": "one two three"}\n'
        "remember the folder works\nwhat are my notes?\nexit\n"
    )
    done = run_command([str(BIN / "adk"), "run", "helper"], stdin=script, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Offline demo model in use" in done.stderr + done.stdout
    assert '"value": 42' in done.stdout
    assert 'helper_count_words returned {"words": 3, "lines": 1, "characters": 13}' in done.stdout
    assert '"notes": ["the folder works"]' in done.stdout
    assert "Traceback" not in done.stdout + done.stderr


@pytest.mark.slow
def test_two_created_agents_load_together_in_adk_web(tmp_path: Path) -> None:
    for name in ("first", "second"):
        assert run_command([str(BIN / "yuxi"), "create", name], cwd=tmp_path).returncode == 0
    with adk_web(log=tmp_path / "web.log", agents=".", cwd=tmp_path) as web:
        assert sorted(httpx.get(f"{web}/list-apps", timeout=10).json()) == ["first", "second"]
        session = httpx.post(f"{web}/apps/second/users/u/sessions/s1", json={}, timeout=30)
        assert session.status_code == 200, session.text
        body = {
            "appName": "second",
            "userId": "u",
            "sessionId": "s1",
            "newMessage": {"role": "user", "parts": [{"text": CALL_SECOND}]},
        }
        events = httpx.post(f"{web}/run", json=body, timeout=60).json()
    responses = [
        part["functionResponse"]
        for event in events
        for part in (event.get("content") or {}).get("parts", [])
        if "functionResponse" in part
    ]
    assert [r["name"] for r in responses] == ["second_count_words"]
    assert responses[0]["response"]["words"] == 2


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("my-agent", "use 1-48 ASCII letters"),
        ("1st", "use 1-48 ASCII letters"),
        ("../escape", "use 1-48 ASCII letters"),
        ("a" * 49, "use 1-48 ASCII letters"),
        ("class", "reserved"),
        ("services", "reserved"),
        ("user", "reserved"),
        ("json", "already an importable module"),
        ("adk_yuxi", "already an importable module"),
    ],
)
def test_invalid_names_are_refused_and_nothing_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, says: str
) -> None:
    code, output = create(tmp_path, name, monkeypatch)
    assert code == 2, output
    assert says in output
    assert list(tmp_path.iterdir()) == []


def test_an_existing_non_empty_folder_or_a_file_is_left_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "agent.py").write_text("# the user's own\n")
    (tmp_path / "afile").write_text("x")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "elsewhere")
    refusals = (
        ("mine", "exists and is not empty"),
        ("afile", "is not a folder"),
        ("link", "is not a folder"),
    )
    for name, says in refusals:
        code, output = create(tmp_path, name, monkeypatch)
        assert code == 1, output
        assert says in output and "nothing written" in output
    assert (tmp_path / "mine" / "agent.py").read_text() == "# the user's own\n"
    assert sorted(p.name for p in (tmp_path / "mine").iterdir()) == ["agent.py"]
    assert (tmp_path / "afile").read_text() == "x"
    assert list((tmp_path / "elsewhere").iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "elsewhere", "link", "mine"]


def test_an_existing_empty_folder_is_filled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "ok_name").mkdir()
    code, output = create(tmp_path, "ok_name", monkeypatch)
    assert code == 0, output
    assert sorted(p.name for p in (tmp_path / "ok_name").iterdir()) == FILES
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ok_name"]


def test_help_points_at_the_tour_and_create_not_at_a_folder_of_the_clone() -> None:
    done = CliRunner().invoke(main, ["--help"], prog_name="yuxi")
    assert done.exit_code == 0
    assert "yuxi create NAME" in done.output and "yuxi demo" in done.output
    assert "agents/" not in done.output
    assert "create" in CliRunner().invoke(main, ["create", "--help"]).output
