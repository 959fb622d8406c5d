"""What the operator's commands print: an aligned table for a person, JSON with `--json`.

The JSON keys are the records' own field names and do not change with the terminal;
the table is for reading and may change its columns' widths and wording. Every cell
and line goes through `printable` (`_printable`): text a model or a user wrote cannot
forge a row or reach the terminal as a control sequence; the JSON stays exact.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any

import click

from ._printable import json_safe_text, printable

__all__ = [
    "JSON_OPTION",
    "echo_cells",
    "echo_json",
    "echo_line",
    "echo_more",
    "echo_table",
    "lease_text",
    "when",
]

JSON_OPTION = click.option(
    "--json", "as_json", is_flag=True, help="Print JSON (stable keys) instead of a table."
)


def when(seconds: float | None) -> str:
    """An epoch time as UTC ISO 8601 to the second; "-" for none."""
    if seconds is None:
        return "-"
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def lease_text(status: str, expires_at: float, now: float) -> str:
    """A running run's lease as a person reads it: live for how long, or lapsed since."""
    if status != "running":
        return "-"
    left = expires_at - now
    if left > 0:
        return f"live, {left:.0f}s left"
    return f"expired {-left:.0f}s ago"


def echo_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """Left-aligned columns two spaces apart, the header first; "(none)" for no rows."""
    if not rows:
        click.echo("(none)")
        return
    cells = [
        [printable(h) for h in headers],
        *[["-" if c is None else printable(c) for c in r] for r in rows],
    ]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    for row in cells:
        click.echo("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())


def echo_line(text: object, *, err: bool = False) -> None:
    """One line of text, its control characters escaped."""
    click.echo(printable(text), err=err)


def echo_cells(cells: Sequence[Any], *, err: bool = False) -> None:
    """One tab-separated row (for scripts that cut fields), each cell escaped."""
    click.echo("\t".join("-" if c is None else printable(c) for c in cells), err=err)


def echo_json(value: Any) -> None:
    """JSON, exact: what a terminal would act on is written as JSON escapes."""
    click.echo(json_safe_text(json.dumps(value, ensure_ascii=False, indent=2, sort_keys=False)))


def echo_more(next_page_token: str | None) -> None:
    """After a table: how to get the next page (on stderr, so the table stays clean)."""
    if next_page_token is not None:
        echo_line(f"more: --page-token {next_page_token}", err=True)
