"""Windows over a parsed document: paging by line, and pattern search with bounds.

Regular expressions come from the model, so each is bounded in size and run with the
`regex` module's timeout; the whole search shares one time budget.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import regex

from ._errors import InvalidKnowledgeRequestError

__all__ = ["FoundWindow", "LineWindow", "find_windows", "line_window"]

MAX_PATTERN_CHARS = 200
MAX_PATTERNS = 10
MAX_WINDOW_CHARS = 20_000
SEARCH_BUDGET_SECONDS = 1.0


@dataclass(frozen=True)
class LineWindow:
    start_line: int
    end_line: int
    total_lines: int
    has_more_before: bool
    has_more_after: bool
    next_offset: int | None
    content: str


def line_window(lines: list[str], start_index: int, window_size: int) -> LineWindow:
    """Lines from ``start_index`` (0-based), at most ``window_size`` and about
    ``MAX_WINDOW_CHARS`` characters; ``next_offset`` continues after the last one."""
    total = len(lines)
    if start_index < 0 or (total and start_index >= total) or (not total and start_index):
        raise InvalidKnowledgeRequestError(
            f"the document has {total} lines; the window must start inside it"
        )
    taken: list[str] = []
    size = 0
    for line in lines[start_index : start_index + window_size]:
        if taken and size + len(line) > MAX_WINDOW_CHARS:
            break
        taken.append(line[:MAX_WINDOW_CHARS])
        size += len(line) + 1
    end_index = start_index + len(taken)
    return LineWindow(
        start_line=start_index + 1,
        end_line=end_index,
        total_lines=total,
        has_more_before=start_index > 0,
        has_more_after=end_index < total,
        next_offset=end_index if end_index < total else None,
        content="\n".join(taken),
    )


@dataclass(frozen=True)
class FoundWindow:
    start_line: int
    end_line: int
    match_lines: tuple[int, ...]
    content: str


def _compile(patterns: list[str], use_regex: bool, case_sensitive: bool) -> list[regex.Pattern]:
    if not 1 <= len(patterns) <= MAX_PATTERNS:
        raise InvalidKnowledgeRequestError(f"give 1-{MAX_PATTERNS} patterns")
    flags = regex.V0 if case_sensitive else regex.IGNORECASE | regex.V0
    compiled = []
    for pattern in patterns:
        if not isinstance(pattern, str) or not pattern or len(pattern) > MAX_PATTERN_CHARS:
            raise InvalidKnowledgeRequestError(
                f"each pattern must be 1-{MAX_PATTERN_CHARS} characters"
            )
        try:
            compiled.append(regex.compile(pattern if use_regex else regex.escape(pattern), flags))
        except regex.error as exc:
            raise InvalidKnowledgeRequestError(
                f"invalid regular expression {pattern!r}: {exc}"
            ) from None
    return compiled


def find_windows(
    lines: list[str],
    patterns: list[str],
    *,
    use_regex: bool,
    case_sensitive: bool,
    max_windows: int,
    window_size: int,
) -> tuple[list[FoundWindow], bool]:
    """Windows of ``window_size`` lines of context around matching lines, merged where
    they touch; returns them and whether more matches were left out."""
    compiled = _compile(patterns, use_regex, case_sensitive)
    deadline = time.monotonic() + SEARCH_BUDGET_SECONDS
    matches: list[int] = []
    for index, line in enumerate(lines):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise InvalidKnowledgeRequestError("the search took too long; use simpler patterns")
        try:
            hit = any(p.search(line, timeout=remaining) for p in compiled)
        except TimeoutError:
            raise InvalidKnowledgeRequestError(
                "the search took too long; use simpler patterns"
            ) from None
        if hit:
            matches.append(index)
    windows: list[tuple[int, int, list[int]]] = []
    for index in matches:
        start, end = max(index - window_size, 0), min(index + window_size, len(lines) - 1)
        if windows and start <= windows[-1][1] + 1:
            windows[-1] = (windows[-1][0], max(end, windows[-1][1]), [*windows[-1][2], index])
        else:
            windows.append((start, end, [index]))
    truncated = len(windows) > max_windows
    return [
        FoundWindow(
            start_line=start + 1,
            end_line=end + 1,
            match_lines=tuple(i + 1 for i in hits),
            content="\n".join(lines[start : end + 1])[:MAX_WINDOW_CHARS],
        )
        for start, end, hits in windows[:max_windows]
    ], truncated
