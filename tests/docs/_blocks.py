"""The marked blocks of a documentation page, as a reader would type them.

A fenced block is run when the line before its opening fence is an HTML comment
`<!-- run -->` (invisible on the site), optionally with options:

- `<!-- run -->` before a shell block: each `$ command` line is run and the lines after it,
  up to the next `$`, are its shown output; a block without `$` lines is a script whose
  every line is one command (a trailing backslash continues it; `<<'EOF'` takes the lines
  up to `EOF` as its standard input).
- `<!-- run -->` before a `python` block: the block is run as a script.
- `<!-- run: file=PATH -->`: the block is written to PATH (a YAML config, a client
  script) for the commands after it.
- `<!-- run: background wait=URL -->`: each command of the block starts in the background;
  the next block runs once URL answers.
- A snippet line (`--8<-- "samples/first_agent.py"`) stands for that file of the clone,
  as on the site.
- `port=8080` on any marker: the page's 8080 becomes a free port in every later block (its
  commands, files and output), so a page can say 8080 while CI runs beside other servers.

Shown output matches line by line after trailing spaces are dropped; `…` inside a line
matches any text and a line that is only `…` matches any number of lines. A command
whose shown output has an `Error:` line must fail; any other command must succeed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Block", "Command", "output_matches", "page_blocks"]

_MARKER = re.compile(r"^<!--\s*run(?::\s*(?P<options>.*?))?\s*-->\s*$")
_FENCE = re.compile(r"^(?P<fence>```+|~~~+)\s*(?P<lang>[\w+-]*)")
_SNIPPET = re.compile(r'^--8<-- "(?P<path>[^"]+)"\s*$')
_HEREDOC = re.compile(r"<<-?\s*'?\"?(?P<word>\w+)'?\"?")
SHELL = {"", "console", "shell", "sh", "bash", "text"}
ANY_LINES = "…"


@dataclass(frozen=True)
class Command:
    """One command as typed, the text its standard input gets, and its shown output."""

    line: str
    stdin: str | None = None
    shown: tuple[str, ...] | None = None  # None: the page shows none, nothing is checked


@dataclass
class Block:
    """One marked fence: where it is, its language, its options and its body."""

    page: str
    line: int
    lang: str
    body: str
    options: dict[str, str] = field(default_factory=dict)

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"

    def commands(self) -> list[Command]:
        """The shell block's commands with their input and shown output."""
        lines = self.body.splitlines()
        prompted = any(line.startswith("$ ") for line in lines)
        found: list[Command] = []
        index = 0
        while index < len(lines):
            line = lines[index]
            index += 1
            if prompted and not line.startswith("$ "):
                raise ValueError(f"{self.where}: output before the first command: {line!r}")
            text = line[2:] if prompted else line
            if not prompted and (not text.strip() or text.lstrip().startswith("#")):
                continue
            while text.endswith("\\") and index < len(lines):
                text = text[:-1] + " " + lines[index].removeprefix("> ").strip()
                index += 1
            stdin = None
            heredoc = _HEREDOC.search(text)
            if heredoc:
                end = lines.index(heredoc.group("word"), index)
                stdin = "".join(f"{body}\n" for body in lines[index:end])
                text = text[: heredoc.start()].rstrip()
                index = end + 1
            shown: list[str] | None = None
            if prompted:
                shown = []
                while index < len(lines) and not lines[index].startswith("$ "):
                    shown.append(lines[index])
                    index += 1
            found.append(Command(text, stdin, tuple(shown) if shown else None))
        return found


def page_blocks(path: Path, *, name: str | None = None, base: Path | None = None) -> list[Block]:
    """Every marked block of the page at `path`, in page order; a snippet line
    (`--8<-- "samples/x.py"`) is replaced by that file under `base`, as the site shows it."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    options: dict[str, str] | None = None
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        marker = _MARKER.match(line)
        if marker:
            options = _options(marker.group("options") or "")
            continue
        fence = _FENCE.match(line)
        if fence is None:
            if line.strip():
                options = None
            continue
        close = fence.group("fence")
        start = index
        while index < len(lines) and not lines[index].startswith(close):
            index += 1
        body = "".join(_expand(text, base) for text in lines[start:index])
        index += 1
        if options is not None:
            blocks.append(Block(name or path.name, start, fence.group("lang"), body, options))
        options = None
    return blocks


def _expand(line: str, base: Path | None) -> str:
    snippet = _SNIPPET.match(line)
    if snippet is None or base is None:
        return f"{line}\n"
    return (base / snippet.group("path")).read_text(encoding="utf-8")


def _options(text: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for word in text.replace(",", " ").split():
        key, _, value = word.partition("=")
        found[key] = value
    return found


def output_matches(shown: tuple[str, ...], actual: str) -> bool:
    """Whether `actual` is what the page shows, with `…` as the wildcard."""
    pattern = ""
    shown = tuple(line.rstrip() for line in shown)
    while shown and not shown[-1]:
        shown = shown[:-1]
    for line in shown:
        line = line.rstrip()
        if line == ANY_LINES:
            pattern += r"(?:[^\n]*\n)*?"
            continue
        pattern += "[^\n]*?".join(re.escape(part) for part in line.split(ANY_LINES)) + "\n"
    lines = "".join(f"{line.rstrip()}\n" for line in actual.rstrip().splitlines())
    return re.fullmatch(pattern, lines) is not None
