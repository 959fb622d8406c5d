"""One segmentation rule for every text search of adk_yuxi: memory, knowledge, tools.

Neither FTS5's ``unicode61`` tokenizer nor PostgreSQL's ``simple`` parser splits
Chinese or Japanese, which are written without spaces, so the text is split here
and the database only ever sees space-separated ASCII tokens:

* Runs of letters and digits in other scripts become lower-cased words
  (NFKC-normalised, so full-width ``ＡＢＣ`` matches ``abc``).
* Runs of CJK characters are indexed as single characters and overlapping
  bigrams; a query uses the bigrams of its runs (or the single character), so
  ``数据库`` matches text containing ``数据库`` and ranks it above text that only
  shares one character.
* Any token that is not plain ASCII is hex-encoded, so neither backend's parser
  (or its locale) can split, fold or drop it.

Both SQL backends then rank with their own term-frequency scoring (FTS5 ``bm25``,
PostgreSQL ``ts_rank``) over the same tokens; in-memory rankers (the tool retriever) use
the raw terms (`document_terms`, `query_terms`) without the encoding.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = [
    "MAX_BODY_CHARS",
    "cjk_count",
    "document_terms",
    "index_tokens",
    "nfkc",
    "query_terms",
    "query_tokens",
    "text_runs",
]

MAX_BODY_CHARS = 200_000
# Longest token either side ever sees (encoded form).
MAX_TOKEN_CHARS = 256

_CJK_RANGES = (
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x3100, 0x312F),  # Bopomofo
    (0x3131, 0x318F),  # Hangul compatibility Jamo
    (0x3400, 0x4DBF),  # CJK extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xAC00, 0xD7AF),  # Hangul syllables
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0x20000, 0x2FA1F),  # CJK extensions B-F, compatibility supplement
)


def _encode(token: str) -> str:
    encoded = token if token.isascii() else "x" + token.encode("utf-8").hex()
    # PostgreSQL drops a lexeme over 2,047 bytes from a tsquery, which turned a
    # query of one huge word into "everything"; the same cut on both sides keeps
    # such a word matchable, and the answers equal on both backends.
    return encoded[:MAX_TOKEN_CHARS]


_CJK_CLASS = "".join(f"{chr(low)}-{chr(high)}" for low, high in _CJK_RANGES)
# A run of CJK characters, or a run of other letters and digits: `[^\W_]` is exactly
# `str.isalnum()` for str patterns, minus the CJK ranges. One C-level pass instead of a
# Python loop per character (ingest spent most of its time there).
_RUN = re.compile(f"([{_CJK_CLASS}]+)|([^\\W_{_CJK_CLASS}]+)")
# Full-width ASCII forms and the ideographic space: what keeps ordinary Chinese text
# (its full-width comma) from being NFKC-normal. Each maps to its one-character NFKC
# decomposition.
_CJK = re.compile(f"[{_CJK_CLASS}]")
_FULL_WIDTH = re.compile("[\uff01-\uff5e\u3000]")
_HALF_WIDTH = {chr(c): unicodedata.normalize("NFKC", chr(c)) for c in range(0xFF01, 0xFF5F)}
_HALF_WIDTH["\u3000"] = " "


def nfkc(text: str) -> str:
    """``unicodedata.normalize("NFKC", text)``, fast for text whose only compatibility
    characters are full-width forms (most Chinese): those are replaced by their
    decompositions first, which NFKC would do anyway, and the result is then usually
    already normal (a quick check), skipping the full normalization (~8x slower)."""
    if unicodedata.is_normalized("NFKC", text):
        return text
    for wide in set(_FULL_WIDTH.findall(text)):
        text = text.replace(wide, _HALF_WIDTH[wide])
    return text if unicodedata.is_normalized("NFKC", text) else unicodedata.normalize("NFKC", text)


def text_runs(text: str) -> list[tuple[bool, str]]:
    """Splits text into (is_cjk, run) pairs of word characters, NFKC-normalised and
    lower-cased: the runs every term is made of."""
    normal = nfkc(text).lower()
    return [(True, cjk) if cjk else (False, word) for cjk, word in _RUN.findall(normal)]


def document_terms(text: str) -> list[str]:
    """The terms of a document, unencoded: words, CJK characters and CJK bigrams."""
    out: list[str] = []
    for cjk, run in text_runs(text[:MAX_BODY_CHARS]):
        if not cjk:
            out.append(run)
            continue
        out.extend(run)
        out.extend(run[i : i + 2] for i in range(len(run) - 1))
    return out


def query_terms(text: str, *, characters: bool = False) -> list[str]:
    """The distinct terms a query searches for, unencoded, in order of appearance:
    words, and the bigrams of each CJK run (its character when it has only one).
    `characters` adds every CJK character too, for rankers over short texts (tool
    descriptions) where a shared character is better evidence than nothing."""
    seen: dict[str, None] = {}
    for cjk, run in text_runs(text):
        if not cjk or len(run) == 1:
            seen.setdefault(run, None)
            continue
        for i in range(len(run) - 1):
            seen.setdefault(run[i : i + 2], None)
        if characters:
            for ch in run:
                seen.setdefault(ch, None)
    return list(seen)


def index_tokens(text: str) -> str:
    """The space-separated token text stored for a document."""
    return " ".join(_encode(term) for term in document_terms(text))


def query_tokens(text: str) -> list[str]:
    """The distinct tokens a query searches for, in order of appearance."""
    return [_encode(term) for term in query_terms(text)]


def cjk_count(text: str) -> int:
    """How many CJK characters `text` holds (each carries about a word's meaning)."""
    return len(_CJK.findall(text))
