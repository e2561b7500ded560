"""The chart of bench/adbench/run.py: gradient overheads next to Futhark's,
and gradient times of the three tools, saved as docs/adbench.png."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")  # no display: write the file only
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from common import ROOT  # noqa: E402

CHART = ROOT / "docs" / "adbench.png"
# label, key in Row.times, colour
TOOLS = [("ours", "ours", "tab:blue"), ("ours, all threads", "ours all-threads", "tab:cyan"), ("JAX", "JAX", "tab:orange"), ("PyTorch", "PyTorch", "tab:green")]


def save_chart(rows, futhark: dict[str, float]) -> None:
    labels = [f"{r.name}\n{r.size}" for r in rows]
    x = np.arange(len(rows))
    width = 0.8 / len(TOOLS)
    figure, (overheads, times) = plt.subplots(2, 1, figsize=(11, 8), sharex=True)
    for i, (label, key, colour) in enumerate(TOOLS):
        ratio = [r.times[f"{key} gradient"] / r.times[f"{key} primal"] if f"{key} primal" in r.times else np.nan for r in rows]
        seconds = [r.times.get(f"{key} gradient", np.nan) * 1e3 for r in rows]
        offset = (i - (len(TOOLS) - 1) / 2) * width  # the group of bars centred on its label
        overheads.bar(x + offset, ratio, width, label=label, color=colour)
        times.bar(x + offset, seconds, width, label=label, color=colour)
    published = [futhark.get(r.name, np.nan) for r in rows]
    overheads.scatter(x, published, marker="_", s=900, color="black", zorder=3, label="Futhark, sequential (SC22)")
    overheads.set(yscale="log", ylabel="gradient time / primal time")
    times.set(yscale="log", ylabel="value and gradient (ms)")
    times.set_xticks(x, labels)
    overheads.legend(ncol=5, fontsize=8)
    overheads.set_title("ADBench objectives, float64, one thread unless marked (bench/adbench/run.py)")
    figure.tight_layout()
    figure.savefig(CHART, dpi=110)
    plt.close(figure)
    print(f"wrote {CHART.relative_to(ROOT)}")
