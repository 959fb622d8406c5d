"""`yuxi tools`: one row per tool, its description kept under its column."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

import adk_yuxi.tools.builtin  # noqa: F401
from adk_yuxi.cli import main
from adk_yuxi.tools import ToolRegistry, catalog
from adk_yuxi.tools.base import register_base_tools


def entries() -> list:  # type: ignore[type-arg]
    """What `yuxi tools` lists: the registry's tools and the base tools."""
    base = ToolRegistry()
    register_base_tools(base)
    return catalog() + base.catalog()


@pytest.mark.parametrize("args", [(), ("--long",)])
def test_every_line_is_a_tool_row_or_sits_under_the_description_column(
    args: tuple[str, ...],
) -> None:
    listed = CliRunner().invoke(main, ["tools", *args], env={"COLUMNS": "80"})
    assert listed.exit_code == 0, listed.output
    ids = {entry.id for entry in entries()}
    multi_line = [e.id for e in entries() if "\n" in e.description.strip()]
    assert multi_line, "the check needs a tool with a multi-line description"
    rows = []
    for line in listed.output.splitlines():
        assert len(line) <= 80 or line.split()[0] in ids, line
        if line and not line.startswith(" "):
            rows.append(line.split()[0])
        else:
            assert line == "" or (line.startswith(" " * 21) and line[21] != " "), repr(line)
    assert sorted(rows) == sorted(ids)
    text = listed.output
    if args:  # the whole description: the second paragraph of a long one is there
        assert "Use it when you cannot continue well" in text
    else:
        assert "Use it when you cannot continue well" not in text
