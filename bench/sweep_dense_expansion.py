"""How many candidates the dense search should walk (`EXPANSION_SEARCH`), on real
vectors: the bench's random ones are the worst case for cost and say nothing of recall.

Passages are docstring paragraphs of the installed packages (real English text, none of
it the labelled set), embedded by the offline model; questions are the first twelve
words of other paragraphs. For each expansion: how often the exact top 5 (cosine over
every vector) is within the 20 the search returns, as a query asks for 20, and the
distance computations one search makes (what its time follows: each is a fetch from an
index larger than the cache).

    python -m bench.sweep_dense_expansion [--passages 6000] [--questions 200]
"""

from __future__ import annotations

import argparse
import ast
import random
import statistics
import sysconfig
import time
from pathlib import Path

import numpy as np

from adk_yuxi.knowledge import OfflineEmbedder
from adk_yuxi.knowledge._dense import VECTOR_DTYPE, _index_class

EXPANSIONS = (16, 20, 24, 32, 64)


def paragraphs(limit: int) -> list[str]:
    """Docstring paragraphs of 120-600 characters, shuffled, at most ``limit``."""
    found: set[str] = set()
    for path in sorted(Path(sysconfig.get_paths()["purelib"]).rglob("*.py")):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Module):
                for part in (ast.get_docstring(node) or "").split("\n\n"):
                    text = " ".join(part.split())
                    if 120 <= len(text) <= 600:
                        found.add(text)
    ordered = sorted(found)
    random.Random(1).shuffle(ordered)
    return ordered[:limit]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--passages", type=int, default=6000)
    parser.add_argument("--questions", type=int, default=200)
    args = parser.parse_args(argv)
    texts = paragraphs(args.passages + args.questions)
    passages, asked = texts[: args.passages], texts[args.passages :]
    model = OfflineEmbedder()
    started = time.perf_counter()
    vectors = np.concatenate([model.passages(passages[at : at + 64])
                              for at in range(0, len(passages), 64)])  # fmt: skip
    print(f"{len(passages)} passages embedded in {time.perf_counter() - started:.0f} s")
    questions = [model.query(" ".join(text.split()[:12])) for text in asked]
    index = _index_class()(ndim=vectors.shape[1], metric="cos", dtype="i8")
    index.add(np.arange(len(vectors), dtype=np.uint64), vectors.astype(VECTOR_DTYPE))
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    exact = [set(np.argsort(-(unit @ q))[:5].tolist()) for q in questions]
    for expansion in EXPANSIONS:
        index.expansion_search = expansion
        within, computed = [], []
        for question, best in zip(questions, exact, strict=True):
            found = index.search(question, 20, threads=1)
            within.append(len(best & set(found.keys.tolist())) / 5)
            computed.append(found.computed_distances)
        print(f"expansion {expansion}: exact top 5 within the 20 returned "
              f"{statistics.mean(within):.3f}, distance computations p50 "
              f"{statistics.median(computed):.0f}")  # fmt: skip


if __name__ == "__main__":
    main()
