"""Sample shared skills over the built-in tools; `BUILTIN_SKILLS_DIR` is their root."""

from pathlib import Path

BUILTIN_SKILLS_DIR = Path(__file__).parent

__all__ = ["BUILTIN_SKILLS_DIR"]
