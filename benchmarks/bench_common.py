"""What the benchmark scripts share: timing models against each other and writing RESULTS.md."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np


def median_steps_per_s(makers: dict[str, Callable[[], Any]], steps: int, repeats: int = 3) -> dict[str, float]:
    """Median ``learn(steps)`` steps/s of each model built by ``makers``, the repeats interleaved so
    that every model sees the same machine noise."""
    runs: dict[str, list[float]] = {name: [] for name in makers}
    for _ in range(repeats):
        for name, make in makers.items():
            model = make()
            t0 = time.perf_counter()
            model.learn(steps)
            runs[name].append(steps / (time.perf_counter() - t0))
    return {name: float(np.median(v)) for name, v in runs.items()}


def write_section(path: Path, key: str, text: str) -> None:
    """Replace the section whose heading contains ``key`` in RESULTS.md, where it stands (or append it).

    A hand-written section (its heading says "written by hand") is never replaced, even when it
    names the generated section it reads.
    """
    head = "# Benchmark results\n\nEvery figure below was measured by the command in its heading.\n\n"
    old = path.read_text() if path.exists() else head
    parts = [p.rstrip() + "\n" for p in old.split("\n## ")]
    body = text.strip().removeprefix("## ") + "\n"
    headings = [p.splitlines()[0] for p in parts]
    hits = [i for i, h in enumerate(headings) if i > 0 and key in h and "written by hand" not in h]
    if hits:
        parts[hits[0]] = body
        parts = [p for i, p in enumerate(parts) if i not in hits[1:]]
    else:
        parts.append(body)
    path.write_text("\n## ".join(parts))
