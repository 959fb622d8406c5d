"""The pages a newcomer follows run as written: their marked blocks (`<!-- run -->`, see
`tests/docs/_blocks.py`) run against the built wheel, installed into a fresh virtual
environment outside the clone, each page in an empty folder, and what a page shows a
command printing is what it prints. A page that drifts from the code fails here."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs._blocks import Block, output_matches, page_blocks
from tests.docs._run import run_page
from tests.packaging._wheel import REPO, built_dist, run_dir, shared_venv

# A page is a walk-through of several commands, some starting servers; the first test also
# builds the wheel and installs it.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

DOCS = REPO / "docs"
# The pages whose commands and programs a reader types in; each has marked blocks.
PAGES = (
    "getting-started.md",
    "knowledge.md",
    "host-api.md",
    "multi-agent.md",
    "operations.md",
    "storage.md",
)
# What the pages install: the core and the knowledge extra (knowledge.md says so).
EXTRAS = "knowledge"


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bin folder of a fresh environment holding the built wheel with EXTRAS, made
    once per run (both xdist workers run pages in it)."""
    dist = built_dist(tmp_path_factory)
    assert not run_dir(tmp_path_factory).resolve().is_relative_to(REPO.resolve())
    return shared_venv(tmp_path_factory, "docs-venv", f"{dist.wheel}[{EXTRAS}]")


@pytest.mark.parametrize("page", PAGES)
def test_the_page_runs_as_written(page: str, installed: Path, tmp_path: Path) -> None:
    done = run_page(DOCS / page, tmp_path / "work", installed, name=page)
    assert not done.problems, "\n".join(done.problems)
    assert done.ran > 0, f"{page} has no marked block that runs"


@pytest.mark.parametrize("page", PAGES)
def test_every_page_marks_blocks_that_parse(page: str) -> None:
    blocks = page_blocks(DOCS / page, name=page)
    assert blocks, f"mark the blocks of {page} that a reader runs with <!-- run -->"
    for block in blocks:
        if block.lang != "python" and "file" not in block.options:
            assert block.commands(), block.where


def test_a_page_whose_shown_output_drifted_fails(installed: Path, tmp_path: Path) -> None:
    text = (DOCS / "host-api.md").read_text(encoding="utf-8")
    shown = "root\tsuperadmin\t-\n"
    assert shown in text
    drifted = tmp_path / "host-api.md"
    drifted.write_text(text.replace(shown, "root\tadmin\t-\n"), encoding="utf-8")
    done = run_page(drifted, tmp_path / "work", installed)
    assert len(done.problems) == 1, done.problems
    problem = done.problems[0]
    assert "`yuxi access user add root --role superadmin` printed something else" in problem
    assert "root\tadmin\t-" in problem and "root\tsuperadmin\t-" in problem
    assert not (tmp_path / "work" / "ann.key").exists()  # it stopped at the first problem


def test_a_page_whose_command_drifted_fails(installed: Path, tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "<!-- run -->\n```console\n$ yuxi access user add ann --departement eng\n```\n",
        encoding="utf-8",
    )
    done = run_page(page, tmp_path / "work", installed)
    assert len(done.problems) == 1
    assert "exited 2 (success expected)" in done.problems[0]
    assert "No such option '--departement'" in done.problems[0]


def test_a_shown_error_must_be_an_error(installed: Path, tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "<!-- run -->\n```console\n$ yuxi access user add ann\nError: …\n```\n",
        encoding="utf-8",
    )
    done = run_page(page, tmp_path / "work", installed)
    assert len(done.problems) == 1 and "exited 0 (a failure expected)" in done.problems[0]


def test_output_matching_takes_ellipses_and_nothing_else() -> None:
    assert output_matches(("a …", "…", "z"), "a b c\nx\ny\nz\n\n")
    assert output_matches(("a", "z"), "a  \nz")
    assert not output_matches(("a", "z"), "a\nb\nz\n")
    assert not output_matches(("a …",), "a b\nc\n")  # … inside a line stays on the line
    assert not output_matches(("a.c",), "abc")  # no regular expressions in pages


def test_a_shell_block_splits_into_commands_inputs_and_outputs() -> None:
    body = "$ one \\\n    --flag\nout 1\n$ adk run x <<'EOF'\nhello\nEOF\n$ three\n"
    commands = Block("p.md", 1, "console", body).commands()
    assert [c.line for c in commands] == ["one  --flag", "adk run x", "three"]
    assert [c.stdin for c in commands] == [None, "hello\n", None]
    assert [c.shown for c in commands] == [("out 1",), None, None]
    script = Block("p.md", 1, "", "# a note\nyuxi demo\n\nyuxi create x  # two\n").commands()
    assert [c.line for c in script] == ["yuxi demo", "yuxi create x  # two"]


def test_only_marked_fences_are_blocks(tmp_path: Path) -> None:
    page = tmp_path / "p.md"
    page.write_text(
        "```\nnot run\n```\n<!-- run: file=a.yaml port=8080 -->\n```yaml\nx: 1\n```\n"
        "<!-- run -->\n\nwords between\n```\nnot run either\n```\n",
        encoding="utf-8",
    )
    (block,) = page_blocks(page)
    assert block.options == {"file": "a.yaml", "port": "8080"} and block.body == "x: 1\n"


def test_a_snippet_stands_for_its_file(tmp_path: Path) -> None:
    (tmp_path / "samples").mkdir()
    (tmp_path / "samples" / "x.py").write_text("print('x')\n")
    page = tmp_path / "p.md"
    page.write_text('<!-- run: file=x.py -->\n```python\n--8<-- "samples/x.py"\n```\n')
    (block,) = page_blocks(page, base=tmp_path)
    assert block.body == "print('x')\n" and block.options == {"file": "x.py"}
