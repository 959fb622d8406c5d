"""The `yuxi` command group: a command that reaches a part whose extra is not installed
ends with the one line that installs it, not a traceback."""

from __future__ import annotations

from typing import Any

import click

from adk_yuxi.errors import MissingExtraError

__all__ = ["YuxiGroup"]


class YuxiGroup(click.Group):
    """Turns a `MissingExtraError` from any subcommand into a one-line usage error."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except MissingExtraError as exc:
            raise click.ClickException(str(exc)) from None
