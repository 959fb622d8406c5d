"""One database for every `yuxi` command, named in any of the accepted spellings."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from adk_yuxi.cli import main
from adk_yuxi.storage import (
    DEFAULT_DATABASE_URL,
    UnsupportedDatabaseUrlError,
    database_url,
)
from tests.sql_backends import db_url, pg_schema

__all__ = ["db_url", "pg_schema"]


def yuxi(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(main, list(args), env={"YUXI_DATABASE_URL": "", **(env or {})})


def spellings(url: str, tmp_path: Path) -> list[str]:
    """The ways a user may write this database, ending with the one the test made."""
    if url.startswith("sqlite"):
        path = url.removeprefix("sqlite+aiosqlite:///")
        return [f"sqlite:///{path}", f"yuxi+sqlite:///{path}", path, url]
    rest = url.removeprefix("postgresql+asyncpg://")
    return [f"postgresql://{rest}", f"postgres://{rest}", f"yuxi+postgresql://{rest}", url]


def test_the_default_the_variable_and_a_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("YUXI_DATABASE_URL", raising=False)
    assert database_url() == DEFAULT_DATABASE_URL == "sqlite+aiosqlite:///.yuxi/yuxi.db"
    monkeypatch.setenv("YUXI_DATABASE_URL", "  ")
    assert database_url() == DEFAULT_DATABASE_URL
    monkeypatch.setenv("YUXI_DATABASE_URL", "postgresql://u@h/d")
    assert database_url() == "postgresql://u@h/d"
    assert database_url(str(tmp_path / "a.db")) == f"sqlite+aiosqlite:///{tmp_path / 'a.db'}"
    for bad in ("mysql://u@h/d", "sqlite://", "sqlite:///:memory:"):
        with pytest.raises(UnsupportedDatabaseUrlError):
            database_url(bad)


def test_every_command_reaches_one_database_in_every_spelling(db_url: str, tmp_path: Path) -> None:
    names = spellings(db_url, tmp_path)
    # The KB owner must exist: the user is added under one spelling, used under others.
    assert yuxi("access", "user", "add", "ann", "--db", names[0]).exit_code == 0
    made = yuxi("kb", "create", "Notes", "--id", "notes", "--owner", "ann", "--db", names[1])
    assert made.exit_code == 0, made.output
    assert yuxi("kb", "list", "--db", names[2]).output == "notes\tNotes\t0 files\n"
    issued = yuxi("api-key", "issue", "--user", "ann", "--db", names[3])
    assert issued.exit_code == 0, issued.output
    listed = yuxi("api-key", "list", env={"YUXI_DATABASE_URL": names[0]})
    assert listed.exit_code == 0, listed.output
    assert listed.output.count("\tann\t") == 1
    users = yuxi("access", "user", "list", env={"YUXI_DATABASE_URL": names[2]})
    assert users.output == "ann\tuser\t-\tactive\n"
    for name in names:
        runs = yuxi("runs", "list", "--json", "--db", name)
        assert runs.exit_code == 0 and '"runs": []' in runs.output, runs.output


def test_a_misspelt_database_is_a_usage_error_that_creates_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for command in (
        ("access", "user", "list"),
        ("kb", "create", "x"),
        ("api-key", "list"),
        ("runs", "list"),
        ("waitpoints", "list"),
        ("marks", "list"),
    ):
        wrong = yuxi(*command, "--db", "sqlit:///typo.db")
        assert wrong.exit_code == 2, wrong.output
        assert "Invalid value for --db" in wrong.output
        from_env = yuxi(*command, env={"YUXI_DATABASE_URL": "mysql://u@h/d"})
        assert from_env.exit_code == 2
        assert "$YUXI_DATABASE_URL" in from_env.output and "'mysql'" in from_env.output
    assert list(tmp_path.iterdir()) == []


def test_every_db_option_says_what_it_accepts() -> None:
    commands = [
        ("access", "user", "add"),
        ("access", "share"),
        ("kb", "create"),
        ("kb", "ingest"),
        ("kb", "query"),
        ("serve", "knowledge"),
        ("serve", "api"),
        ("api-key", "issue"),
        ("api-key", "list"),
        ("api-key", "revoke"),
        ("runs", "list"),
        ("runs", "take-over"),
        ("runs", "cancel"),
        ("waitpoints", "cancel"),
        ("marks", "list"),
        ("access", "explain"),
    ]
    for command in commands:
        text = " ".join(yuxi(*command, "--help").output.split())
        for spelling in ("sqlite:///", "postgresql://", "sqlite+aiosqlite://", "yuxi+sqlite://"):
            assert spelling in text, (command, spelling)
        assert "$YUXI_DATABASE_URL, else .yuxi/yuxi.db" in text, command


def test_a_retired_variable_is_named_not_silently_ignored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    old = f"sqlite+aiosqlite:///{tmp_path / 'platform.db'}"
    listed = yuxi("access", "user", "list", env={"YUXI_API_DB": old})
    assert listed.exit_code == 0
    assert "note: YUXI_API_DB is no longer read; every command uses YUXI_DATABASE_URL" in (
        listed.output
    )
    assert (tmp_path / ".yuxi" / "yuxi.db").exists() and not (tmp_path / "platform.db").exists()
    quiet = yuxi("access", "user", "list", "--db", "x.db", env={"YUXI_API_DB": old})
    assert quiet.exit_code == 0 and "no longer read" not in quiet.output
