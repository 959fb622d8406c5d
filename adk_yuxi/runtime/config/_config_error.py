"""`AgentConfigError`: a config that cannot be used, with every problem by field.

A leaf beside the config, so the config, the configs users write and the YAML catalog
all raise it without importing each other."""

from __future__ import annotations

from pydantic import ValidationError

from ...errors import YuxiError

__all__ = ["AgentConfigError", "validation_problems"]


class AgentConfigError(YuxiError, ValueError):
    """An agent config that cannot be used: `problems` lists (field, message) pairs;
    `source` is the file (or "code") it came from."""

    def __init__(self, source: str, problems: list[tuple[str, str]]) -> None:
        self.source = source
        self.problems = problems
        lines = "; ".join(f"field {f!r}: {m}" if f else m for f, m in problems)
        super().__init__(f"{source}: {lines}")


def validation_problems(error: ValidationError) -> list[tuple[str, str]]:
    return [(".".join(str(p) for p in e["loc"]), e["msg"]) for e in error.errors()]
