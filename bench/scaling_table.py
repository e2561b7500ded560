"""The strong-scaling table (bench/scaling.py here, and the scaling bundle's
runner on another machine: tools/scaling_bundle), with the standard library
alone: which thread counts, which CPU, and the markdown of the results."""

from __future__ import annotations

import os
import platform


def thread_counts(cores: int) -> list[int]:
    """1, 2, 4, ... below ``cores``, then ``cores``."""
    counts = [1]
    while counts[-1] * 2 < cores:
        counts.append(counts[-1] * 2)
    return counts + [cores] if cores > 1 else counts


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.machine()


def markdown(rows: list[tuple[str, dict[int, float]]], counts: list[int], n: int, measured_by: str) -> str:
    """``rows``: each program's seconds per thread count."""
    header = "| program | " + " | ".join(f"{c} thread{'s' if c > 1 else ''} (ms, speedup)" for c in counts) + " |"
    lines = [
        f"Measured by {measured_by} on {cpu_model()} ({platform.machine()}), {os.cpu_count()} cores; "
        f"SOAC benchmarks at n = {n:,}, ADBench gradients at their large size. Medians of calls "
        "at each thread count in turn; the speedup is over one thread.",
        "",
        header,
        "|---|" + "---|" * len(counts),
    ]
    for name, times in rows:
        cells = [f"{times[c] * 1e3:.3f} ({times[1] / times[c]:.2f}×)" if c in times else "–" for c in counts]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
