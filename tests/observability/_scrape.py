"""A Prometheus scrape over HTTP, parsed with prometheus_client's own text parser."""

from __future__ import annotations

import httpx
from prometheus_client.parser import text_string_to_metric_families

__all__ = ["Scrape", "scrape"]


class Scrape:
    """The samples of one scrape: `value(name, **labels)` sums the samples of `name`
    whose labels include `labels`; `families` are the metric family names."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.families: set[str] = set()
        self.samples: list[tuple[str, dict[str, str], float]] = []
        for family in text_string_to_metric_families(text):
            self.families.add(family.name)
            for sample in family.samples:
                self.samples.append((sample.name, dict(sample.labels), float(sample.value)))

    def value(self, name: str, **labels: str) -> float:
        return sum(
            v
            for n, found, v in self.samples
            if n == name and all(found.get(k) == want for k, want in labels.items())
        )

    def has(self, name: str, **labels: str) -> bool:
        return any(
            n == name and all(found.get(k) == want for k, want in labels.items())
            for n, found, _ in self.samples
        )


def scrape(url: str) -> Scrape:
    response = httpx.get(url, timeout=30)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain")
    return Scrape(response.text)
