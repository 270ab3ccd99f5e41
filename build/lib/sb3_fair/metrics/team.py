"""Team fairness ``I(R;Z)`` and capture success (Grupen et al. 2022, arXiv:2106.05727, Defs. 1-2, §5)."""

from __future__ import annotations

from typing import Any

import numpy as np

from sb3_fair.metrics._checks import _as_array, _finite


def _as_credit(credit: Any) -> np.ndarray:
    """``credit`` as an ``(episodes, agents)`` array of finite numbers, with at least one of each."""
    c = np.asarray(credit)
    if c.ndim != 2:
        raise ValueError(f"credit must be an (episodes, agents) array, got shape {c.shape}")
    if c.shape[0] == 0 or c.shape[1] == 0:
        raise ValueError(f"credit must hold at least one episode and one agent, got shape {c.shape}")
    _finite(_as_array(c, "credit"), "credit")
    return c


def team_fairness(credit: Any) -> float:
    """Team unfairness ``I(R;Z)`` in bits from per-episode credit vectors (Grupen et al. 2022, Defs. 1-2).

    ``credit`` is an ``(E, n)`` 0/1 array: which of the n agents was credited (e.g. captured the
    evader) in each of E episodes. Z is the agent identity and R the reward; with A the number of
    credited agents in an episode, ``I(R;Z) = H_uniform(V|A) - H(V|A)`` where V is the credit
    vector, ``H_uniform(V|A=a) = log2 C(n, a)`` is the entropy if every set of a agents were equally
    likely, and ``H(V|A=a)`` the empirical entropy. 0 means credit is independent of identity;
    ``log2(n)`` means one agent is always the one credited.
    """
    c = _as_credit(credit)
    c = (c > 0).astype(np.int64)
    E, n = c.shape
    from math import comb, log2

    from scipy.stats import entropy

    counts = c.sum(axis=1)
    total = 0.0
    for a in np.unique(counts):
        rows = c[counts == a]
        p_a = rows.shape[0] / E
        _, freq = np.unique(rows, axis=0, return_counts=True)
        h_emp = float(entropy(freq, base=2))
        h_uni = log2(comb(n, int(a)))
        total += p_a * (h_uni - h_emp)
    return float(max(total, 0.0))


def capture_success(credit: Any) -> float:
    """Fraction of episodes in which at least one agent was credited (capture success, Grupen et al. 2022 §5)."""
    c = _as_credit(credit)
    return float(np.mean(np.any(c > 0, axis=1)))
