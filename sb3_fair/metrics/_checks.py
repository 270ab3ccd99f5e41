"""Input checks shared by the metrics: every error names the argument (the rules are in :mod:`sb3_fair.metrics`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from sb3_fair._exact import SHORT, all_finite, pairwise_sum


def _smallest(v: np.ndarray) -> float:
    """The smallest entry of a finite, non-empty 1-D float array, for comparisons (of 0.0 and -0.0, either comes back)."""
    return min(v.tolist()) if v.size <= SHORT else float(np.min(v))


def _sum(v: np.ndarray) -> float:
    """``float(np.sum(v))`` of a 1-D float64 array, bit for bit."""
    return pairwise_sum(v.tolist()) if v.size <= SHORT else float(np.sum(v))


def _finite(arr: np.ndarray, name: str) -> np.ndarray:
    if not all_finite(arr):
        shown = (
            arr.tolist() if arr.size <= 12 else f"{int(np.count_nonzero(~np.isfinite(arr)))} non-finite of {arr.size}"
        )
        raise ValueError(f"{name} must be finite (no NaN or inf), got {shown}")
    return arr


def _as_array(x: Any, name: str) -> np.ndarray:
    """``x`` as a float64 array, with a message naming ``name`` when it is not numeric."""
    try:
        return np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an array of numbers, got {x!r}") from None


def _nonnegative_number(x: Any, name: str) -> float:
    """``x`` (a Python or NumPy number, or a 0-d array) as a finite float >= 0; errors name ``name``."""
    arr = np.asarray(x) if not isinstance(x, (str, bytes)) else None
    if arr is None or arr.ndim != 0 or arr.dtype.kind not in "iuf" or not np.isfinite(arr) or arr < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {x!r}")
    return float(arr)


def _as_vector(u: Any, name: str = "u", allow_empty: bool = False) -> np.ndarray:
    """``u`` as a finite, non-empty (unless ``allow_empty``) 1-D float64 array; errors name ``name``."""
    arr = _as_array(u, name)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array with one entry per stakeholder, got shape {arr.shape}")
    if arr.size == 0 and not allow_empty:
        raise ValueError(f"{name} must not be empty (it has one entry per stakeholder)")
    return _finite(arr, name)


def _as_groups(groups: Any, n: int, name: str = "groups") -> np.ndarray:
    g = np.asarray(groups)
    if g.shape != (n,):
        raise ValueError(f"{name} must have one entry per stakeholder ({n}), got shape {g.shape}")
    if not np.issubdtype(g.dtype, np.integer):
        labels = g.dtype.kind in "USO" and not all(
            isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, (bool, np.bool_))
            for x in g.tolist()
        )
        if labels:  # strings (or other labels): an id per group is what the metrics compare
            shown = g.tolist() if g.size <= 12 else f"{g[:12].tolist()} ..."
            raise ValueError(
                f"{name} must hold integer ids (one int >= 0 per stakeholder, 1 the protected group by default), got "
                f"labels {shown}: map them to ids first, e.g. np.unique(labels, return_inverse=True)[1]"
            )
        try:
            whole = bool(np.all(np.equal(np.mod(g, 1), 0)))
        except TypeError:
            whole = False
        if not whole:
            raise ValueError(f"{name} must hold integers, got {g!r}")
        g = g.astype(np.int64)
    return g
