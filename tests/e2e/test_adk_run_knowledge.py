"""`adk run agents/knowledge`: the offline demo model answers from the sample corpus
through the built-in knowledge server, in Chinese and in English."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e._cli import BIN, run_command

pytestmark = pytest.mark.slow


def test_adk_run_knowledge_quotes_the_corpus(tmp_path: Path) -> None:
    script = (
        "报销单据最晚多久提交？\nhow long may I work remotely each week?\n连接池配置多大？\n"
        "what is the travel and expenses policy?\nexit\n"
    )
    done = run_command(
        [str(BIN / "adk"), "run", "--in_memory", "agents/knowledge"],
        stdin=script,
        YUXI_KNOWLEDGE_DB=f"sqlite+aiosqlite:///{tmp_path / 'kb.db'}",
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    assert "“费用发生后 30 天内提交报销申请，超过 90 天的单据财务系统不予受理。”" in out
    assert "(报销制度.md, lines" in out
    assert "up to three days a week" in out and "(onboarding.md, lines" in out
    # The sentence that answers, not the heading above it.
    assert "“应用的数据库连接池大小建议设置为 CPU 核数的两倍" in out, out[-2000:]
    assert "“## " not in out and "“# " not in out, out[-2000:]
