"""`yuxi serve api` on a database it cannot open: one line naming the database and the
cause (password hidden), exit code 1, no traceback, nothing served."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from click.testing import CliRunner

from adk_yuxi.cli import main


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])  # nothing listens once it is closed


@pytest.fixture
def agent(tmp_path: Path) -> Path:
    path = tmp_path / "calc.yaml"
    path.write_text("name: calc\ndescription: Calculates.\ntools: [calculate]\n")
    return path


def _serve(db: str, agent: Path) -> tuple[int, str]:
    argv = ["serve", "api", "--db", db, "--agents", str(agent), "--model", "yuxi-demo"]
    result = CliRunner().invoke(main, argv)
    return result.exit_code, result.output


def test_an_unreachable_postgresql_is_one_clear_line(agent: Path) -> None:
    url = f"postgresql+asyncpg://postgres:hunter2@127.0.0.1:{_closed_port()}/test"
    code, output = _serve(url, agent)
    assert code == 1
    assert "Cannot open the database postgresql+asyncpg://postgres:***@127.0.0.1:" in output
    assert "Connect call failed" in output
    assert "hunter2" not in output and "Traceback" not in output


def test_a_sqlite_file_whose_folder_cannot_be_made_is_one_clear_line(
    agent: Path, tmp_path: Path
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the database's folder would go")
    code, output = _serve(str(blocker / "platform.db"), agent)
    assert code == 1
    assert "Cannot create the folder of the SQLite database" in output
    assert "Traceback" not in output


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("", "the file is empty"),
        ("name: calc\ntools: [calculate, clculate]\n", "no tool named 'clculate' is registered"),
        ("name: calc\nskills: [nope]\n", "no skill named 'nope'"),
    ],
)
def test_a_broken_agent_file_is_refused_at_start(
    tmp_path: Path, content: str, expected: str
) -> None:
    path = tmp_path / "calc.yaml"
    path.write_text(content)
    code, output = _serve(str(tmp_path / "platform.db"), path)
    assert code == 1 and expected in output and "Traceback" not in output


def test_a_folder_without_agent_files_is_refused(tmp_path: Path) -> None:
    empty = tmp_path / "agents"
    empty.mkdir()
    code, output = _serve(str(tmp_path / "platform.db"), empty)
    assert code == 1 and "no agent config" in output


@pytest.mark.parametrize("option", ["--workspaces", "--blobs"])
def test_a_folder_that_cannot_be_made_is_refused_at_start(
    agent: Path, tmp_path: Path, option: str
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    argv = ["serve", "api", "--db", str(tmp_path / "p.db"), "--agents", str(agent)]
    result = CliRunner().invoke(main, [*argv, "--model", "yuxi-demo", option, str(blocker / "x")])
    assert result.exit_code == 1, result.output
    assert "cannot create the" in result.output and "Traceback" not in result.output


def test_a_port_out_of_range_is_refused(agent: Path, tmp_path: Path) -> None:
    argv = [
        "serve",
        "api",
        "--db",
        str(tmp_path / "p.db"),
        "--agents",
        str(agent),
        "--port",
        "70000",
    ]
    result = CliRunner().invoke(main, argv)
    assert result.exit_code == 2 and "70000 is not in the range" in result.output
