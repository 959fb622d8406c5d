"""Pattern search over a document: bounded compile cost, and the literal fast path equal
to line-by-line matching."""

from __future__ import annotations

import random

import pytest
import regex

from adk_yuxi.knowledge import InvalidKnowledgeRequestError
from adk_yuxi.knowledge._windows import MAX_COMPILED_SIZE, compiled_size, find_windows


def _find(lines: list[str], patterns: list[str], **kw: object) -> list[int]:
    options = {"use_regex": False, "case_sensitive": False, "max_windows": 20, "window_size": 0}
    windows, _ = find_windows(lines, patterns, **{**options, **kw})  # type: ignore[arg-type]
    return [line for w in windows for line in w.match_lines]


@pytest.mark.parametrize(
    "pattern",
    [
        "(?:(?:a{200}){200}){200}z",
        "(?x)(?:(?:a{ 200 }){ 200 }){ 200 }",  # verbose mode: blanks inside the braces
        "(?:(?:a{1,46}){46}){46}",
        "((((a{20}){20}){20}){20})",
        "(?:a|bb|ccc){40000}",
    ],
)
def test_patterns_that_expand_too_far_are_refused_before_compiling(pattern: str) -> None:
    assert compiled_size(pattern) > MAX_COMPILED_SIZE
    with pytest.raises(InvalidKnowledgeRequestError, match="repeats too much"):
        _find(["aaa"], [pattern], use_regex=True)


@pytest.mark.parametrize(
    ("pattern", "at_least"),
    [
        ("a{1000}", 1000),
        ("(?:a{10}b{10}){10}", 200),
        (r"\p{Han}{5}", 5),
        ("x{2,300}", 300),
    ],
)
def test_the_bound_never_undercounts(pattern: str, at_least: int) -> None:
    assert compiled_size(pattern) >= at_least
    regex.compile(pattern)


def test_literal_braces_classes_and_escapes_cost_one_item_each() -> None:
    assert compiled_size(r"\{1000}") < 10
    assert compiled_size("[a{1000}]") == 1
    assert compiled_size("x{abc}") == 6


def test_line_breaks_in_a_pattern_are_refused() -> None:
    with pytest.raises(InvalidKnowledgeRequestError, match="within one line"):
        _find(["a", "b"], ["a\nb"])


def test_literal_search_equals_line_by_line_matching() -> None:
    rng = random.Random(5)
    words = ["alpha", "Beta", "gamma", "连接池", "ERROR-1", "a.b", "(x)", "ǅ"]
    lines = [" ".join(rng.choices(words, k=rng.randint(0, 4))) for _ in range(3000)]
    for _ in range(100):
        patterns = rng.sample(words, rng.randint(1, 3))
        for case_sensitive in (False, True):
            flags = 0 if case_sensitive else regex.IGNORECASE
            compiled = [regex.compile(regex.escape(p), flags | regex.V0) for p in patterns]
            expected = [
                i + 1 for i, line in enumerate(lines) if any(c.search(line) for c in compiled)
            ]
            got = _find(lines, patterns, case_sensitive=case_sensitive, max_windows=10_000)
            assert got == expected, patterns


def test_a_keyword_search_over_a_long_document_finishes() -> None:
    lines = [f"row {i} of the export" for i in range(200_000)]
    assert _find(lines, ["row 199999 "]) == [200_000]
    assert _find(lines, [f"row {i} " for i in (5, 70_000, 199_998)]) == [6, 70_001, 199_999]
