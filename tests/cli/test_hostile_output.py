"""What the operator's terminal shows of model-written text: a question or a mark reason
holding a newline and a terminal control sequence neither forges a row nor reaches the
terminal raw, while `--json` keeps the exact text; error lines are one line and bounded.
`yuxi` runs as a subprocess on SQLite, over rows the real Runner and base tools wrote."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from adk_yuxi.cli._printable import json_safe_text, one_line, printable
from adk_yuxi.storage import open_services
from adk_yuxi.testing import call
from tests.cli.test_operator_commands import commands, one_run

EVIL = "Pick one\nFORGED-ROW  app  user\x1b]0;owned\x07 \x9b31m red\u202e"


def test_printable_escapes_every_control_and_invisible_character() -> None:
    assert printable(EVIL) == (
        "Pick one\\nFORGED-ROW  app  user\\x1b]0;owned\\x07 \\x9b31m red\\u202e"
    )
    assert printable("plain 中文 text") == "plain 中文 text"
    assert printable("\ud800") == "\\ud800"
    long = one_line("x" * 20_000)
    assert len(long) < 500 and long.endswith("(20000 characters in all)")
    text = json.dumps({"q": EVIL}, ensure_ascii=False)
    assert json.loads(json_safe_text(text)) == {"q": EVIL}
    assert all(c not in json_safe_text(text) for c in "\x1b\x07\x9b\u202e\n")


@pytest.mark.slow
async def test_tables_escape_model_text_and_json_keeps_it(tmp_path: Path) -> None:
    db = f"sqlite+aiosqlite:///{tmp_path / 'yuxi.db'}"
    services = open_services(db, blob_dir=tmp_path / "blobs")
    try:
        question = {"question": EVIL, "question_id": "q"}
        await one_run(services, [call("ask_user_question", questions=[question])])
        await one_run(services, [call("mark_for_improvement", reason=EVIL), "ok"])
    finally:
        await services.close()
    points, marks, points_json, marks_json, nope, token = await commands(
        (db, "waitpoints", "list"),
        (db, "marks", "list"),
        (db, "waitpoints", "list", "--json"),
        (db, "marks", "list", "--json"),
        (db, "waitpoints", "cancel", "wp-nope"),
        (db, "waitpoints", "list", "--page-token", "A" * 20_000),
    )
    for table in (points, marks):
        assert table.returncode == 0, table.stderr
        _, *rows = table.stdout.splitlines()
        assert len(rows) == 1 and "FORGED-ROW" in rows[0]
        assert not any(c in table.stdout for c in "\x1b\x07\x9b\u202e")
        assert "\\x1b]0;owned\\x07" in rows[0]
    assert json.loads(points_json.stdout)["waitpoints"][0]["questions"][0]["question"] == EVIL
    assert json.loads(marks_json.stdout)["marks"][0]["reason"] == EVIL
    assert not any(c in points_json.stdout + marks_json.stdout for c in "\x1b\x07\x9b\u202e")
    assert nope.returncode == 1 and nope.stderr.strip() == "Error: no waiting point 'wp-nope'"
    assert token.returncode == 1 and len(token.stderr) < 600
    assert token.stderr.count("\n") == 1 and "characters in all" in token.stderr
