"""The `yuxi` command: the offline tour and a look at what the SDK holds."""

from ._main import main

__all__ = ["main"]
