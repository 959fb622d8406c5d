"""`yuxi kb ingest` on folders and `yuxi kb create`'s owner, on real SQLite files."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import click
import pytest
from click.testing import CliRunner, Result

from adk_yuxi.cli import main
from adk_yuxi.cli._kb_files import plan_ingest, read_walked


def yuxi(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), env={"YUXI_DATABASE_URL": ""})


def users(db: Path) -> list[str]:
    with sqlite3.connect(db) as conn:
        return [row[0] for row in conn.execute("SELECT id FROM yx_users ORDER BY id")]


def test_a_folder_is_walked_in_order_and_what_is_left_out_is_named(tmp_path: Path) -> None:
    db = str(tmp_path / "yuxi.db")
    docs = tmp_path / "docs"
    (docs / "guides" / "deep").mkdir(parents=True)
    (docs / ".git").mkdir()
    (docs / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (docs / "b.md").write_text("# B\n\nBackups run nightly.\n")
    (docs / "guides" / "a.txt").write_text("Alpha guide.\n")
    (docs / "guides" / "deep" / "c.html").write_text("<p>Parking is free.</p>")
    (docs / ".secret.md").write_text("hidden\n")
    (docs / "blob.bin").write_bytes(b"\x00\x01\x02" * 100)
    (docs / "archive.zip").write_bytes(b"PK\x03\x04" + b"\x00" * 60)
    outside = tmp_path / "id_rsa"
    outside.write_text("PRIVATE KEY\n")
    os.symlink(outside, docs / "key.md")
    os.symlink(tmp_path, docs / "loop")
    assert yuxi("access", "user", "add", "ann", "--db", db).exit_code == 0
    assert yuxi("kb", "create", "Docs", "--id", "docs", "--owner", "ann", "--db", db).exit_code == 0
    done = yuxi("kb", "ingest", "docs", str(docs), "--db", db)
    assert done.exit_code == 0, done.output
    out = done.output
    assert f"skipped {docs / '.git'}{os.sep} (hidden)" in out
    assert f"skipped {docs / '.secret.md'} (hidden)" in out
    assert f"skipped {docs / 'key.md'} (symbolic link, not followed)" in out
    assert f"skipped {docs / 'loop'}{os.sep} (symbolic link, not followed)" in out
    assert f"skipped {docs / 'blob.bin'} (unsupported: no converter accepts" in out
    assert f"skipped {docs / 'archive.zip'} (unsupported: no converter accepts" in out
    assert "[1/3] b.md: indexing chunks done (1/1)" in out  # the progress, per file
    assert "[3/3] c.html: indexing chunks done (1/1)" in out
    ingested = [line.split("\t")[1] for line in out.splitlines() if "\tv1\t" in line]
    assert ingested == ["b.md", "a.txt", "c.html"]
    listed = yuxi("kb", "list", "docs", "--db", db).output
    assert "PRIVATE" not in yuxi("kb", "query", "docs", "PRIVATE KEY", "--db", db).output
    assert sorted(line.split("\t")[1] for line in listed.splitlines()) == [
        "a.txt", "b.md", "c.html",
    ]  # fmt: skip


def test_two_files_of_one_name_are_refused_before_anything_is_written(tmp_path: Path) -> None:
    db = str(tmp_path / "yuxi.db")
    for sub in ("v1", "v2"):
        (tmp_path / "docs" / sub).mkdir(parents=True)
        (tmp_path / "docs" / sub / "index.md").write_text(f"Version {sub}.\n")
    (tmp_path / "docs" / "first.md").write_text("First.\n")
    assert yuxi("access", "user", "add", "ann", "--db", db).exit_code == 0
    assert yuxi("kb", "create", "Docs", "--id", "docs", "--owner", "ann", "--db", db).exit_code == 0
    refused = yuxi("kb", "ingest", "docs", str(tmp_path / "docs"), "--db", db)
    assert refused.exit_code == 2
    assert "2 files would be named 'index.md'" in refused.output
    assert "Nothing was ingested" in refused.output
    assert yuxi("kb", "list", "--db", db).output == "docs\tDocs\t0 files\n"
    empty = tmp_path / "empty"
    (empty / ".hidden").mkdir(parents=True)
    nothing = yuxi("kb", "ingest", "docs", str(empty), "--db", db)
    assert nothing.exit_code == 1 and "no file to ingest in" in nothing.output


def test_create_needs_an_existing_owner_and_adds_no_user(tmp_path: Path) -> None:
    db = tmp_path / "yuxi.db"
    ghost = yuxi("kb", "create", "Notes", "--owner", "ghost", "--db", str(db))
    assert ghost.exit_code == 1
    assert "no user 'ghost'" in ghost.output and "yuxi access user add ghost" in ghost.output
    assert not db.exists()  # no database made for a refused base
    nobody = yuxi("kb", "create", "Notes", "--db", str(db))
    assert nobody.exit_code == 2, nobody.output
    assert "Missing option '--owner'" in nobody.output
    assert "yuxi access user add USER" in nobody.output
    assert not db.exists()
    assert yuxi("access", "user", "add", "ann", "--db", str(db)).exit_code == 0
    ghost = yuxi("kb", "create", "Notes", "--owner", "ghost", "--db", str(db))
    assert ghost.exit_code == 1 and "yuxi access user add ghost" in ghost.output
    nobody = yuxi("kb", "create", "Notes", "--db", str(db))
    assert nobody.exit_code == 2 and "Missing option '--owner'" in nobody.output
    assert yuxi("kb", "list", "--db", str(db)).output == ""
    owned = yuxi("kb", "create", "Notes", "--id", "n", "--owner", "ann", "--db", str(db))
    assert owned.output == "n\tNotes\n"
    assert users(db) == ["ann"]  # never a user added behind the operator's back


def test_a_walked_file_swapped_for_a_link_after_the_walk_is_not_read(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "notes.md").write_text("Notes.\n")
    (docs / "sub" / "deep.md").write_text("Deep.\n")
    secret = tmp_path / "secret.txt"
    secret.write_text("PRIVATE\n")
    plan = plan_ingest((docs,))
    assert [f.path.name for f in plan.files] == ["notes.md", "deep.md"]
    assert read_walked(plan.files[0], 1000) == b"Notes.\n"
    # The file becomes a link, and the folder holding the other one a link out.
    (docs / "notes.md").unlink()
    os.symlink(secret, docs / "notes.md")
    (docs / "sub" / "deep.md").unlink()
    (docs / "sub").rmdir()
    os.symlink(tmp_path, docs / "sub")
    (tmp_path / "deep.md").write_text("PRIVATE\n")
    for planned in plan.files:
        with pytest.raises(click.ClickException) as caught:
            read_walked(planned, 1000)
        assert str(planned.path) in caught.value.message
