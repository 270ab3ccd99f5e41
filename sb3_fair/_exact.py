"""NumPy's float64 summation in plain Python, for per-step arithmetic on a handful of numbers.

A NumPy call on a 5-element array costs about a microsecond, most of it overhead; the envs' fairness signals
take a dozen such calls per step, and the wrappers' welfare (:mod:`sb3_fair.metrics`) a few more. They compute
them on Python floats instead, and must get the very same bits (``tests/test_env_trajectories.py``,
``tests/test_fairness_goldens.py``): elementwise arithmetic (+, -, *, /, abs, comparisons) is IEEE double
arithmetic in both, so only the order of a sum's additions needs care. :func:`pairwise_sum` adds in NumPy's
order.

:func:`all_finite` is ``np.all(np.isfinite(a))``, on Python floats for a short array.

This module imports nothing of sb3-fair, so that :mod:`sb3_fair.metrics` (which imports neither the envs nor
SB3) can use it: it is the lowest of the package's layers (``docs/development.md``), below the metrics, and every
layer (the envs included) imports it from here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

#: the most entries of a vector that sb3-fair's per-step code handles on Python floats instead of NumPy (a step's
#: stakeholders, groups, memory entries or massaging candidates): beyond it, NumPy's fixed cost of about a
#: microsecond per call is small next to the work
SHORT = 16

#: NumPy's ``PW_BLOCKSIZE``: the longest run summed with eight accumulators before the pairwise split
_BLOCK = 128


def pairwise_sum(values: Sequence[float]) -> float:
    """``float(np.sum(np.array(values, dtype=np.float64)))``, bit for bit, for a 1-D contiguous array.

    NumPy's ``add.reduce`` on float64 starts from the identity and adds the pairwise sum of all the elements
    (``pairwise_sum`` in NumPy's ``loops_utils.h.src``): fewer than 8 elements left to right; up to 128 with
    eight interleaved accumulators, combined as ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7)), then the
    remainder left to right; more, split in two halves (the first a multiple of 8 long) summed recursively.
    ``values`` must be Python floats (or ints exactly representable as floats).
    """
    n = len(values)
    if n < 8:  # the common case, inline
        res = -0.0
        for v in values:
            res += v
        return 0.0 + res
    return 0.0 + _pairwise(values, 0, n)


def _pairwise(a: Sequence[float], start: int, n: int) -> float:
    if n < 8:
        res = -0.0
        for i in range(start, start + n):
            res += a[i]
        return res
    if n <= _BLOCK:
        r0, r1, r2, r3, r4, r5, r6, r7 = a[start : start + 8]
        i = 8
        end = n - n % 8
        while i < end:
            j = start + i
            r0 += a[j]
            r1 += a[j + 1]
            r2 += a[j + 2]
            r3 += a[j + 3]
            r4 += a[j + 4]
            r5 += a[j + 5]
            r6 += a[j + 6]
            r7 += a[j + 7]
            i += 8
        res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
        while i < n:
            res += a[start + i]
            i += 1
        return res
    n2 = n // 2
    n2 -= n2 % 8
    return _pairwise(a, start, n2) + _pairwise(a, start + n2, n - n2)


def all_finite(arr: np.ndarray) -> bool:
    """``bool(np.all(np.isfinite(arr)))`` of a float array: on Python floats for at most :data:`SHORT` entries."""
    if arr.size <= SHORT:
        return all(map(math.isfinite, arr.ravel().tolist()))
    return bool(np.all(np.isfinite(arr)))
