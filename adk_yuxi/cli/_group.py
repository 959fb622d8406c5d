"""The `yuxi` command group: a command that reaches a part whose extra is not installed
ends with the one line that installs it, not a traceback; and every error line any
command ends with is one line, escaped and bounded (`_printable.one_line`): an
argument or a stored value cannot forge lines or flood the terminal."""

from __future__ import annotations

from typing import Any

import click

from adk_yuxi.errors import MissingExtraError

from ._printable import one_line

__all__ = ["YuxiGroup"]


class YuxiGroup(click.Group):
    """Turns a `MissingExtraError` from any subcommand into a one-line usage error,
    and makes every error line printable and bounded."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except MissingExtraError as exc:
            raise click.ClickException(one_line(str(exc))) from None
        except click.ClickException as exc:
            vars(exc)["message"] = one_line(exc.message)  # its own type: a usage hint stays
            raise
