"""An in-memory BM25 index over tool descriptions, on the project's one segmentation rule.

Every term's weight in every document is computed when the index is built, so a query
only adds up precomputed numbers for the documents it is allowed to rank.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from .._text import document_terms

__all__ = ["BM25Index", "ToolDocument"]

_K1 = 1.2
_B = 0.75


@dataclass(frozen=True)
class ToolDocument:
    """What a tool is searched by. The id, display name and tags count twice: they are
    short and chosen on purpose, while descriptions are long and loose."""

    name: str
    display_name: str = ""
    description: str = ""
    tags: tuple[str, ...] = ()

    def terms(self) -> list[str]:
        # Ids are snake_case or dotted: `_runs` splits them at every non-word character.
        head = " ".join([self.name, self.display_name, *self.tags])
        return document_terms(head) * 2 + document_terms(self.description)


class BM25Index:
    """Okapi BM25 (k1=1.2, b=0.75, Lucene's non-negative idf) over a fixed set of tools."""

    def __init__(self, documents: Iterable[ToolDocument]) -> None:
        docs = list(documents)
        self.names: tuple[str, ...] = tuple(d.name for d in docs)
        self.position: dict[str, int] = {name: i for i, name in enumerate(self.names)}
        counts = [Counter(d.terms()) for d in docs]
        lengths = [sum(c.values()) for c in counts]
        self.size = len(docs)
        self.average_length = (sum(lengths) / self.size) if self.size else 1.0
        frequency: Counter[str] = Counter()
        for c in counts:
            frequency.update(c.keys())
        self.document_frequency: dict[str, int] = dict(frequency)
        self.postings: dict[str, list[tuple[int, float]]] = {}
        for index, (c, length) in enumerate(zip(counts, lengths, strict=True)):
            for term, weight in self.weights(c, length).items():
                self.postings.setdefault(term, []).append((index, weight))

    def idf(self, term: str) -> float:
        df = self.document_frequency.get(term, 0)
        return math.log(1.0 + (self.size - df + 0.5) / (df + 0.5))

    def weights(self, counts: Mapping[str, int], length: int) -> dict[str, float]:
        """The BM25 weight of each term of one document, against this index's statistics
        (also used for documents outside the index, which share its idf)."""
        norm = _K1 * (1.0 - _B + _B * length / self.average_length)
        return {t: self.idf(t) * tf * (_K1 + 1.0) / (tf + norm) for t, tf in counts.items()}

    def scores(self, query: Sequence[str]) -> dict[int, float]:
        """Scores of the documents (by position) that share a term with the query.

        Terms found in more than half the documents (stop words, mostly) are skipped
        unless the query has nothing else: their weight is a tenth of a rare term's at
        most, and their postings are most of the work."""
        common = self.size // 2
        rare = [t for t in query if self.document_frequency.get(t, 0) <= common]
        scores: dict[int, float] = {}
        get = scores.get
        for term in rare or query:
            for index, weight in self.postings.get(term, ()):
                scores[index] = get(index, 0.0) + weight
        return scores
