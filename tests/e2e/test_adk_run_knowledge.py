"""`adk run agents/knowledge`: the offline demo model answers from the sample corpus
through the built-in knowledge server, in Chinese and in English, and from what
`yuxi kb ingest` put into the same default database. `adk run` is the real process here;
the `yuxi` commands that set up its database run in-process (`yuxi_here`), as their own
tests in tests/cli run them."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tests.e2e._cli import BIN, REPO, run_command, yuxi_here

pytestmark = pytest.mark.slow
# The agent embeds the sample corpus with the offline model on its first start: seconds
# on an idle machine, minutes on a shared one.
SLOW = 600


def test_adk_run_knowledge_quotes_the_corpus(tmp_path: Path) -> None:
    script = (
        "报销单据最晚多久提交？\nhow long may I work remotely each week?\n连接池配置多大？\n"
        "what is the travel and expenses policy?\nexit\n"
    )
    done = run_command(
        [str(BIN / "adk"), "run", "--in_memory", "agents/knowledge"],
        stdin=script,
        timeout=SLOW,
        YUXI_DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path / 'kb.db'}",
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    assert "“费用发生后 30 天内提交报销申请，超过 90 天的单据财务系统不予受理。”" in out
    assert "(报销制度.md, lines" in out
    assert "up to three days a week" in out and "(onboarding.md, lines" in out
    # The sentence that answers, not the heading above it.
    assert "“应用的数据库连接池大小建议设置为 CPU 核数的两倍" in out, out[-2000:]
    assert "“## " not in out and "“# " not in out, out[-2000:]


def test_the_agent_answers_from_what_yuxi_kb_ingest_put_into_the_default_database(
    tmp_path: Path,
) -> None:
    """No --db and no variable anywhere: the CLI and the agent meet in .yuxi/yuxi.db."""
    docs = tmp_path / "docs"
    (docs / "ops").mkdir(parents=True)
    (docs / "ops" / "kiln.md").write_text(
        "# Kiln\n\nThe ceramics kiln is fired every second Thursday at dawn.\n"
    )
    (docs / "cafe.txt").write_text("The cafeteria serves noodles on Mondays.\n")
    (docs / ".draft.md").write_text("The kiln is fired daily.\n")  # hidden: skipped
    unset = {"YUXI_DATABASE_URL": ""}
    owner = yuxi_here(["access", "user", "add", "root"], cwd=tmp_path, **unset)
    assert owner.returncode == 0, owner.stderr
    create = ["kb", "create", "Studio", "--id", "studio", "--public", "--owner", "root"]
    made = yuxi_here(create, cwd=tmp_path, **unset)
    assert made.returncode == 0, made.stderr
    added = yuxi_here(["kb", "ingest", "studio", "docs"], cwd=tmp_path, **unset)
    assert added.returncode == 0, added.stderr
    assert "skipped docs/.draft.md (hidden)" in added.stderr
    assert [line.split("\t")[1] for line in added.stdout.splitlines()] == ["cafe.txt", "kiln.md"]
    asked = run_command(
        [str(BIN / "adk"), "run", "--in_memory", str(REPO / "agents" / "knowledge")],
        stdin="ceramics kiln?\nexit\n",
        cwd=tmp_path,
        timeout=SLOW,
        **unset,
    )
    assert asked.returncode == 0, asked.stderr[-2000:]
    assert "“The ceramics kiln is fired every second Thursday at dawn.” (kiln.md, lines" in (
        asked.stdout
    )
    # One file holds both: the operator's base and the sample base seeded beside it.
    assert sorted(p.name for p in (tmp_path / ".yuxi").glob("*.db")) == ["yuxi.db"]
    with sqlite3.connect(tmp_path / ".yuxi" / "yuxi.db") as conn:
        bases = {row[0] for row in conn.execute("SELECT kb_id FROM yx_kb_bases")}
    assert bases == {"studio", "handbook"}


def test_questions_in_other_words_and_the_other_language_and_a_one_file_base(
    tmp_path: Path,
) -> None:
    """Offline, through the demo model: a paraphrase and a cross-lingual question find
    their passage by meaning, and a base of one file beside the handbook answers the
    question it holds (bases ranked together on comparable scores)."""
    (tmp_path / "ops.md").write_text("The zebrafinch gateway listens on port 9443 by default.\n")
    url = f"sqlite+aiosqlite:///{tmp_path / 'kb.db'}"
    owner = yuxi_here(["access", "user", "add", "root"], YUXI_DATABASE_URL=url)
    assert owner.returncode == 0, owner.stderr
    create = ["kb", "create", "Ops", "--id", "ops", "--public", "--owner", "root"]
    made = yuxi_here(create, YUXI_DATABASE_URL=url)
    assert made.returncode == 0, made.stderr
    added = yuxi_here(["kb", "ingest", "ops", str(tmp_path / "ops.md")], YUXI_DATABASE_URL=url)
    assert added.returncode == 0, added.stderr
    assert "embedding" in added.stderr
    script = (
        "which port does the zebrafinch gateway listen on?\n"
        "how many days can I work from home?\n"
        "火警时大家在哪里集合？\nexit\n"
    )
    done = run_command(
        [str(BIN / "adk"), "run", "--in_memory", "agents/knowledge"],
        stdin=script,
        timeout=SLOW,
        YUXI_DATABASE_URL=url,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    assert "“The zebrafinch gateway listens on port 9443 by default.” (ops.md, lines" in out
    # Lexically the travel policy's "work" and "days" win; by meaning, the remote-work
    # rule. The Chinese question shares no term with the English answer.
    assert "“You may work remotely up to three days a week" in out, out[-3000:]
    assert "The fire assembly point is the north courtyard" in out, out[-3000:]
