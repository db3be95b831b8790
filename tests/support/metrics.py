"""Reading a `/metrics` exposition in tests, with Prometheus' own parser.

Contract: `Samples.parse(text)` parses the text format with
`prometheus_client.parser`; `samples.value(metric, **labels)` is the one
sample of `metric` whose labels include `labels` (AssertionError when there is
none or more than one), `samples.total(metric, **labels)` the sum of every
matching sample (0.0 when none), `samples.names()` every sample name.
`scrape(client)` GETs `/metrics` and parses it (asserting a 200).
"""

from __future__ import annotations

from dataclasses import dataclass

import httpx
from prometheus_client.parser import text_string_to_metric_families

__all__ = ["Samples", "scrape"]


@dataclass(frozen=True)
class Samples:
    samples: tuple[tuple[str, dict[str, str], float], ...]

    @classmethod
    def parse(cls, text: str) -> "Samples":
        return cls(tuple((s.name, dict(s.labels), s.value) for family in text_string_to_metric_families(text)
                         for s in family.samples))

    def matching(self, metric: str, /, **labels: str) -> list[tuple[dict[str, str], float]]:
        return [(have, value) for sample, have, value in self.samples
                if sample == metric and all(have.get(k) == v for k, v in labels.items())]

    def value(self, metric: str, /, **labels: str) -> float:
        found = self.matching(metric, **labels)
        assert len(found) == 1, f"{metric}{labels}: {len(found)} samples: {found}"
        return found[0][1]

    def total(self, metric: str, /, **labels: str) -> float:
        return sum(value for _, value in self.matching(metric, **labels))

    def names(self) -> set[str]:
        return {name for name, _, _ in self.samples}


async def scrape(client: httpx.AsyncClient) -> Samples:
    response = await client.get("/metrics")
    assert response.status_code == 200, response.text
    assert response.headers["Content-Type"].startswith("text/plain; version=0.0.4")
    return Samples.parse(response.text)
