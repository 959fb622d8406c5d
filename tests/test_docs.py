"""The documentation cannot rot unseen (CI runs `make test`): the site builds strictly (a
broken link, anchor or reference fails), every pinned public package has a reference
page, the README shows the first agent sample as it is, and the Python on every page
parses and imports only names that exist."""

from __future__ import annotations

import importlib.util
import os
import re
import sys
from pathlib import Path

import pytest

from tests.e2e._cli import REPO, run_command
from tests.test_public_api import PUBLIC

pytestmark = pytest.mark.slow

DOCS = REPO / "docs"


def _reference_targets() -> set[str]:
    found: set[str] = set()
    for page in (DOCS / "reference").glob("*.md"):
        found.update(re.findall(r"^::: ([\w.]+)$", page.read_text(encoding="utf-8"), re.M))
    return found


def test_every_pinned_public_package_has_a_reference_page() -> None:
    missing = set(PUBLIC) - {"adk_yuxi"} - _reference_targets()
    assert not missing, f"add docs/reference/<name>.md with '::: <package>' for {sorted(missing)}"


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    if importlib.util.find_spec("mkdocs") is None and not os.environ.get("CI"):
        pytest.skip("mkdocs is not installed (pip install -e '.[docs]')")
    done = run_command(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        NO_MKDOCS_2_WARNING="1",
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert (tmp_path / "site" / "reference" / "runtime" / "index.html").is_file()
    assert not (tmp_path / "site" / "_incoming").exists()
    # The first agent page includes the sample itself (a reformatted marker would not).
    page = (tmp_path / "site" / "getting-started" / "index.html").read_text(encoding="utf-8")
    assert "Counts the words of a text." in page and "--8" not in page
    # The command reference is generated from the click commands, down to the options.
    cli = (tmp_path / "site" / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    assert "yuxi kb create [OPTIONS] NAME" in cli and "--owner USER" in cli
    assert "yuxi serve api" in cli and "Sentinel" not in cli


def test_the_readme_shows_the_first_agent_sample_as_it_is() -> None:
    sample = (REPO / "samples" / "first_agent.py").read_text(encoding="utf-8")
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert f"```python\n{sample}```" in readme, "copy samples/first_agent.py into README.md"


def _python_blocks() -> list[tuple[str, str]]:
    pages = sorted(p for p in DOCS.rglob("*.md") if "_incoming" not in p.parts)
    pages.insert(0, REPO / "README.md")
    blocks: list[tuple[str, str]] = []
    for page in pages:
        text = page.read_text(encoding="utf-8")
        for code in re.findall(r"^```python\n(.*?)^```", text, re.M | re.S):
            if not code.startswith("--8<--"):
                blocks.append((str(page.relative_to(REPO)), code))
    return blocks


def test_the_python_in_the_docs_parses_and_imports_names_that_exist() -> None:
    """A renamed or dropped public name breaks the page that shows it, here."""
    import ast
    import importlib

    problems: list[str] = []
    for page, code in _python_blocks():
        try:
            tree = compile(code, page, "exec", ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        except SyntaxError as error:
            problems.append(f"{page}: {error}")
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("adk_yuxi"):
                module = importlib.import_module(node.module or "")
                missing = [a.name for a in node.names if not hasattr(module, a.name)]
                if missing:
                    problems.append(f"{page}: {node.module} has no {missing}")
    assert not problems, "\n".join(problems)
