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
    char_offset: int = 0
    """Where in ``start_line`` the content begins (0: at its start)."""
    next_char_offset: int | None = None
    """Set when ``start_line`` was cut: read on with the same line from this character."""


def line_window(
    lines: list[str], start_index: int, window_size: int, char_offset: int = 0
) -> LineWindow:
    """Lines from ``start_index`` (0-based), the first from ``char_offset``, at most
    ``window_size`` and about ``MAX_WINDOW_CHARS`` characters; ``next_offset`` continues
    after the last line, and a first line longer than the window is cut with
    ``next_char_offset`` saying where to read on (never silently)."""
    total = len(lines)
    if start_index < 0 or (total and start_index >= total) or (not total and start_index):
        raise InvalidKnowledgeRequestError(
            f"the document has {total} lines; the window must start inside it"
        )
    first = lines[start_index] if total else ""
    if char_offset < 0 or (char_offset and char_offset >= len(first)):
        raise InvalidKnowledgeRequestError(
            f"line {start_index + 1} has {len(first)} characters; char_offset must be inside it"
        )
    if len(first) - char_offset > MAX_WINDOW_CHARS:
        end = char_offset + MAX_WINDOW_CHARS
        return LineWindow(
            start_line=start_index + 1,
            end_line=start_index + 1,
            total_lines=total,
            has_more_before=start_index > 0 or char_offset > 0,
            has_more_after=True,
            next_offset=start_index + 1 if start_index + 1 < total else None,
            content=first[char_offset:end],
            char_offset=char_offset,
            next_char_offset=end,
        )
    taken: list[str] = [first[char_offset:]] if total else []
    size = len(taken[0]) + 1 if taken else 0
    for line in lines[start_index + 1 : start_index + window_size]:
        if size + len(line) > MAX_WINDOW_CHARS:
            break
        taken.append(line)
        size += len(line) + 1
    end_index = start_index + len(taken)
    return LineWindow(
        start_line=start_index + 1,
        end_line=end_index,
        total_lines=total,
        has_more_before=start_index > 0 or char_offset > 0,
        has_more_after=end_index < total,
        next_offset=end_index if end_index < total else None,
        content="\n".join(taken),
        char_offset=char_offset,
    )


@dataclass(frozen=True)
class FoundWindow:
    start_line: int
    end_line: int
    match_lines: tuple[int, ...]
    content: str
    char_offset: int = 0
    """Where in ``start_line`` the content begins."""
    cut: bool = False
    """The window is part of one long line, around its match: read on with
    open_kb_document(line=start_line, char_offset=...)."""


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
) -> dict[int, int]:
    """Regular expressions line by line (a match never spans a line break): matching
    line index -> where its first match starts."""
    matches: dict[int, int] = {}
    for index, line in enumerate(lines):
        for pattern in compiled:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _too_long()
            try:
                hit = pattern.search(line, timeout=remaining, concurrent=True)
            except TimeoutError:
                raise _too_long() from None
            if hit is not None:
                matches[index] = min(hit.start(), matches.get(index, hit.start()))
    return matches


def _matching_lines_in_text(
    lines: list[str], compiled: list[regex.Pattern[str]], deadline: float
) -> dict[int, int]:
    """Literal patterns over the joined text, one scan per pattern (they hold no line
    break, so a match lies within one line): fast on a long document."""
    text = "\n".join(lines)
    starts = list(itertools.accumulate((len(line) + 1 for line in lines[:-1]), initial=0))
    found: dict[int, int] = {}
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
            position = match.start() - starts[index]
            found[index] = min(position, found.get(index, position))
            if index + 1 >= len(starts):
                break
            at = starts[index + 1]
    return dict(sorted(found.items()))


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
    matches = scan(lines, compiled, deadline) if lines else {}
    windows: list[tuple[int, int, list[int]]] = []
    for index in sorted(matches):
        start, end = max(index - window_size, 0), min(index + window_size, len(lines) - 1)
        if windows and start <= windows[-1][1] + 1:
            windows[-1] = (windows[-1][0], max(end, windows[-1][1]), [*windows[-1][2], index])
        else:
            windows.append((start, end, [index]))
    found: list[FoundWindow] = []
    for start, end, hits in windows:
        content = "\n".join(lines[start : end + 1])
        if len(content) <= MAX_WINDOW_CHARS:
            found.append(FoundWindow(start + 1, end + 1, tuple(i + 1 for i in hits), content))
        else:
            found.extend(_around(lines[i], i, matches[i]) for i in hits)
    return found[:max_windows], len(found) > max_windows


def _around(line: str, index: int, position: int) -> FoundWindow:
    """A window too long to return whole, as the match's own line: all of it when it
    fits, else the part around the match, flagged as cut with its character offset."""
    if len(line) <= MAX_WINDOW_CHARS:
        return FoundWindow(index + 1, index + 1, (index + 1,), line)
    begin = max(0, min(position - MAX_WINDOW_CHARS // 4, len(line) - MAX_WINDOW_CHARS))
    return FoundWindow(
        index + 1,
        index + 1,
        (index + 1,),
        line[begin : begin + MAX_WINDOW_CHARS],
        char_offset=begin,
        cut=True,
    )
