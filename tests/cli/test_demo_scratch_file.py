"""`yuxi demo` plays in a scratch file of its own and never deletes a file it did not make
(the one database, say, which a `--db` typo could otherwise wipe)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from click.testing import CliRunner

from adk_yuxi.cli import main


def demo(db: Path) -> tuple[int, str]:
    done = CliRunner().invoke(main, ["demo", "--db", str(db)], prog_name="yuxi")
    return done.exit_code, done.output


def test_a_file_the_tour_did_not_make_is_refused_and_left_as_it_is(tmp_path: Path) -> None:
    data = tmp_path / "yuxi.db"
    with sqlite3.connect(data) as conn:
        conn.execute("CREATE TABLE yx_users (id TEXT)")
        conn.execute("INSERT INTO yx_users VALUES ('ann')")
    before = data.read_bytes()
    code, out = demo(data)
    assert code == 1
    assert "was not made by `yuxi demo`" in out and "give --db a new path" in out
    assert data.read_bytes() == before
    text = tmp_path / "notes.txt"
    text.write_text("not a database")
    code, out = demo(text)
    assert code == 1 and text.read_text() == "not a database"


def test_the_tour_recreates_its_own_file(tmp_path: Path) -> None:
    db = tmp_path / "demo.db"
    for _ in range(2):
        code, out = demo(db)
        assert code == 0, out
        assert "(the tour's own scratch file)" in out
        # Recreated, not appended to: one note after the second tour too.
        assert "user:notes = ['the launch is on Friday']" in out
