"""NumPy's float64 summation in plain Python (:func:`pairwise_sum`), for the envs' per-step arithmetic.

The implementation lives in :mod:`sb3_fair._exact`, which :mod:`sb3_fair.metrics` shares; this module keeps the
envs' import path.
"""

from __future__ import annotations

from sb3_fair._exact import pairwise_sum

__all__ = ["pairwise_sum"]
