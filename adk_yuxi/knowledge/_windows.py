"""Windows over a parsed document: paging by line, and pattern search with bounds.

Regular expressions come from the model, so each is bounded in length and in how far
its counted repeats expand when compiled, and run with the `regex` module's timeout;
the whole search shares one time budget.
"""

from __future__ import annotations

import bisect
import itertools
import time
from dataclasses import dataclass

import regex

from ._errors import InvalidKnowledgeRequestError
from ._regex_bound import MAX_COMPILED_SIZE, CompileProbeFailed, compiled_size, probe_compile

__all__ = [
    "MAX_COMPILED_SIZE",
    "FoundWindow",
    "LineWindow",
    "compiled_size",
    "find_windows",
    "line_window",
]

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


def _compile(
    patterns: list[str], use_regex: bool, case_sensitive: bool, deadline: float
) -> list[regex.Pattern[str]]:
    if not 1 <= len(patterns) <= MAX_PATTERNS:
        raise InvalidKnowledgeRequestError(f"give 1-{MAX_PATTERNS} patterns")
    flags = regex.V0 if case_sensitive else regex.IGNORECASE | regex.V0
    compiled = []
    for pattern in patterns:
        if not isinstance(pattern, str) or not pattern or len(pattern) > MAX_PATTERN_CHARS:
            raise InvalidKnowledgeRequestError(
                f"each pattern must be 1-{MAX_PATTERN_CHARS} characters"
            )
        if "\n" in pattern or "\r" in pattern:
            raise InvalidKnowledgeRequestError("a pattern matches within one line: no line breaks")
        if use_regex and compiled_size(pattern) > MAX_COMPILED_SIZE:
            raise InvalidKnowledgeRequestError(
                "a regular expression repeats too much (nested counts multiply); "
                "use fewer or smaller {m,n} counts"
            )
        try:
            if use_regex:
                probe_compile(pattern, flags, deadline - time.monotonic())
            compiled.append(regex.compile(pattern if use_regex else regex.escape(pattern), flags))
        except CompileProbeFailed:
            raise _too_long() from None
        except regex.error as exc:
            raise InvalidKnowledgeRequestError(
                f"invalid regular expression {pattern[:60]!r}: {exc}"
            ) from None
    return compiled


def _too_long() -> InvalidKnowledgeRequestError:
    return InvalidKnowledgeRequestError(
        f"the search did not finish in {SEARCH_BUDGET_SECONDS:g} s; use simpler or fewer "
        "patterns, or query_kb to find the right part of the document first"
    )


def _matching_lines_by_line(
    lines: list[str], compiled: list[regex.Pattern[str]], deadline: float
) -> list[int]:
    """Regular expressions line by line: a match never spans a line break."""
    matches: list[int] = []
    for index, line in enumerate(lines):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise _too_long()
        try:
            hit = any(p.search(line, timeout=remaining, concurrent=True) for p in compiled)
        except TimeoutError:
            raise _too_long() from None
        if hit:
            matches.append(index)
    return matches


def _matching_lines_in_text(
    lines: list[str], compiled: list[regex.Pattern[str]], deadline: float
) -> list[int]:
    """Literal patterns over the joined text, one scan per pattern (they hold no line
    break, so a match lies within one line): fast on a long document."""
    text = "\n".join(lines)
    starts = list(itertools.accumulate((len(line) + 1 for line in lines[:-1]), initial=0))
    found: set[int] = set()
    for pattern in compiled:
        at = 0
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _too_long()
            try:
                match = pattern.search(text, at, timeout=remaining, concurrent=True)
            except TimeoutError:
                raise _too_long() from None
            if match is None:
                break
            index = bisect.bisect_right(starts, match.start()) - 1
            found.add(index)
            if index + 1 >= len(starts):
                break
            at = starts[index + 1]
    return sorted(found)


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
    they touch; returns them and whether more matches were left out. CPU-bound and
    bounded by ``SEARCH_BUDGET_SECONDS``: callers on an event loop run it in a thread
    (matching releases the GIL)."""
    # The budget covers compiling too: a pattern's compile cost is the model's to choose.
    deadline = time.monotonic() + SEARCH_BUDGET_SECONDS
    compiled = _compile(patterns, use_regex, case_sensitive, deadline)
    scan = _matching_lines_by_line if use_regex else _matching_lines_in_text
    matches = scan(lines, compiled, deadline) if lines else []
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
