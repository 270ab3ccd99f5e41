"""A tiny NumPy renderer shared by the allocation envs: one bar per stakeholder."""

from __future__ import annotations

import numpy as np

RENDER_MODES = ["ansi", "rgb_array"]


def check_render_mode(render_mode: str | None) -> str | None:
    """``render_mode`` if it is one of :data:`RENDER_MODES` or None; a clear error otherwise."""
    if render_mode is not None and render_mode not in RENDER_MODES:
        raise ValueError(f"render_mode must be one of {RENDER_MODES} or None, got {render_mode!r}")
    return render_mode


GROUP_COLOURS = np.array(
    [[66, 135, 245], [245, 130, 48], [60, 180, 75], [145, 30, 180], [240, 50, 230]], dtype=np.uint8
)


def bars_rgb(
    values: np.ndarray,
    max_value: float,
    groups: np.ndarray,
    marked: np.ndarray | None = None,
    height: int = 96,
    bar_width: int = 20,
) -> np.ndarray:
    """An ``(height, n * bar_width, 3)`` uint8 image: stakeholder i's value as a bar coloured by group.

    A white strip at the top marks the stakeholders in ``marked`` (present customers, applicants).
    """
    v = np.clip(np.asarray(values, dtype=np.float64) / max(float(max_value), 1e-9), 0.0, 1.0)
    n = v.size
    img = np.full((height, n * bar_width, 3), 30, dtype=np.uint8)
    top = 8
    for i in range(n):
        x0, x1 = i * bar_width + 2, (i + 1) * bar_width - 2
        h = round(v[i] * (height - top - 2))
        if h > 0:
            img[height - h :, x0:x1] = GROUP_COLOURS[int(groups[i]) % len(GROUP_COLOURS)]
        if marked is not None and marked[i]:
            img[1 : top - 2, x0:x1] = 255
    return img
