"""Plots of `bench/results.json` (written by `bench/bench_scale.py`): PNG files people look at.

`plot(results, out_dir)` writes three figures and returns their paths:

- `scale_throughput.png`: requests/s of each verb against the store size,
  with the bare Hypercorn + quart-trio route (GET and POST) as dashed floors;
- `scale_latency.png`: p50 and p99 latency of each verb at each size;
- `scale_ratio.png`: each verb's rate as a fraction of the bare route's
  (GET for reads, POST for writes), at each size.

Needs matplotlib (`pip install -e '.[bench]'`, which `make bench` does);
`python bench/scale_plots.py [results.json]` redraws from a saved run.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

__all__ = ["plot"]


def _sizes(results: dict[str, Any]) -> list[int]:
    return [run["size"] for run in results["runs"]]


def plot(results: dict[str, Any], out_dir: Path) -> list[Path]:
    """Draw the figures of `results` into `out_dir`; return their paths. Raises ImportError without matplotlib."""
    import matplotlib  # noqa: PLC0415 - optional: only plotting needs it
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    out_dir.mkdir(parents=True, exist_ok=True)
    runs = results["runs"]
    sizes = _sizes(results)
    labels = [f"{s:,}" for s in sizes]
    verbs = list(runs[0]["verbs"])
    paths = []

    fig, ax = plt.subplots(figsize=(9, 5.5))
    for verb in verbs:
        ax.plot(labels, [run["verbs"][verb]["rps"] for run in runs], marker="o", label=verb)
    for floor, style in (("GET", "--"), ("POST", ":")):
        ax.plot(labels, [run["floor"][floor]["rps"] for run in runs], linestyle=style, color="black",
                label=f"bare route {floor}")
    ax.set_xlabel("objects in the store")
    ax.set_ylabel("requests/s (16 connections, HTTPS)")
    ax.set_title("miniplane throughput against store size")
    ax.legend(fontsize=8, ncol=2)
    ax.grid(alpha=0.3)
    paths.append(out_dir / "scale_throughput.png")
    fig.savefig(paths[-1], dpi=120, bbox_inches="tight")
    plt.close(fig)

    fig, axes = plt.subplots(1, len(runs), figsize=(5 * len(runs), 5), sharey=True, squeeze=False)
    for ax, run, label in zip(axes[0], runs, labels):
        names = verbs + ["bare GET", "bare POST"]
        figures = [run["verbs"][v] for v in verbs] + [run["floor"]["GET"], run["floor"]["POST"]]
        x = range(len(names))
        ax.bar([i - 0.2 for i in x], [f["p50_ms"] for f in figures], width=0.4, label="p50")
        ax.bar([i + 0.2 for i in x], [f["p99_ms"] for f in figures], width=0.4, label="p99")
        ax.set_xticks(list(x), names, rotation=60, ha="right", fontsize=8)
        ax.set_title(f"{label} objects")
        ax.grid(axis="y", alpha=0.3)
    axes[0][0].set_ylabel("latency (ms)")
    axes[0][0].legend()
    fig.suptitle("latency percentiles per verb")
    paths.append(out_dir / "scale_latency.png")
    fig.savefig(paths[-1], dpi=120, bbox_inches="tight")
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(9, 5.5))
    width = 0.8 / len(runs)
    for k, (run, label) in enumerate(zip(runs, labels)):
        ax.bar([i + k * width for i in range(len(verbs))], [run["verbs"][v]["ratio"] for v in verbs], width=width,
               label=f"{label} objects")
    ax.axhline(0.5, color="red", linestyle="--", linewidth=1, label="CREATE target (0.5 of bare POST)")
    ax.set_xticks([i + width * (len(runs) - 1) / 2 for i in range(len(verbs))], verbs, rotation=30, ha="right")
    ax.set_ylabel("rate / bare route rate (GET for reads, POST for writes)")
    ax.set_title("miniplane against the bare Hypercorn + quart-trio route")
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    paths.append(out_dir / "scale_ratio.png")
    fig.savefig(paths[-1], dpi=120, bbox_inches="tight")
    plt.close(fig)
    return paths


if __name__ == "__main__":
    source = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).with_name("results.json")
    for path in plot(json.loads(source.read_text()), source.parent / "plots"):
        print(path)
