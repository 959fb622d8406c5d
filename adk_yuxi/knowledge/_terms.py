"""Chunk terms as 64-bit keys: what ingest stores per chunk and the index is built from.

The terms are those of the one segmentation rule (`adk_yuxi._text`): words, CJK
characters and CJK bigrams. Each becomes an integer key so the index is array work:

* a CJK character is its code point (below 2**18);
* a CJK bigram is ``BIGRAM | first << 18 | second`` (below 2**37), exact;
* a word is ``WORD | 62 bits of its BLAKE2b digest``; two words collide with
  probability about n**2 / 2**63 (10**-7 for a million distinct words).

The CJK part of a chunk is computed on whole arrays of code points, not per term.
"""

from __future__ import annotations

import functools
import hashlib
import itertools

import numpy as np
import numpy.typing as npt

from .._text import MAX_BODY_CHARS, text_runs

__all__ = ["BIGRAM", "CJK_KEY_LIMIT", "WORD", "ChunkTerms", "chunk_terms", "query_keys", "word_key"]

BIGRAM = 1 << 36
WORD = 1 << 62
CJK_KEY_LIMIT = 1 << 37
_MAX_TF = np.iinfo(np.uint16).max

Keys = npt.NDArray[np.int64]


@functools.lru_cache(maxsize=1 << 16)
def word_key(word: str) -> int:
    digest = hashlib.blake2b(word.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return WORD | (int.from_bytes(digest, "little") >> 2)


def _code_points(text: str) -> npt.NDArray[np.int64]:
    return np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32).astype(np.int64)


class ChunkTerms:
    """A chunk's distinct term keys (sorted), their frequencies and its term count."""

    __slots__ = ("freqs", "keys", "length")

    def __init__(self, keys: Keys, freqs: npt.NDArray[np.uint16], length: int) -> None:
        self.keys = keys
        self.freqs = freqs
        self.length = length

    def key_bytes(self) -> bytes:
        return self.keys.astype("<i8").tobytes()

    def freq_bytes(self) -> bytes:
        return self.freqs.astype("<u2").tobytes()


def chunk_terms(text: str) -> ChunkTerms:
    """The terms of ``text`` exactly as `document_terms` counts them, as keys."""
    words: list[int] = []
    cjk: list[str] = []
    for is_cjk, run in text_runs(text[:MAX_BODY_CHARS]):
        if is_cjk:
            cjk.append(run)
        else:
            words.append(word_key(run))
    parts = [np.array(words, dtype=np.int64)]
    length = len(words)
    if cjk:
        # Runs joined by NUL (never part of a run): characters are the non-zero code
        # points, bigrams the neighbouring pairs with no NUL between them.
        points = _code_points("\x00".join(cjk))
        chars = points[points != 0]
        first, second = points[:-1], points[1:]
        pair = (first != 0) & (second != 0)
        bigrams = BIGRAM | (first[pair] << 18) | second[pair]
        parts += [chars, bigrams]
        length += len(chars) + len(bigrams)
    keys, counts = np.unique(np.concatenate(parts), return_counts=True)
    return ChunkTerms(keys, np.minimum(counts, _MAX_TF).astype(np.uint16), length)


def query_keys(text: str) -> list[int]:
    """The distinct keys a query searches for, as `query_terms` chooses its terms:
    words, and the bigrams of each CJK run (its character when it has only one)."""
    seen: dict[int, None] = {}
    for is_cjk, run in text_runs(text):
        if not is_cjk:
            seen.setdefault(word_key(run), None)
        elif len(run) == 1:
            seen.setdefault(ord(run), None)
        else:
            for a, b in itertools.pairwise(run):
                seen.setdefault(BIGRAM | ord(a) << 18 | ord(b), None)
    return list(seen)
