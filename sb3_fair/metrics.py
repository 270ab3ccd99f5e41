"""Fairness metrics and welfare functions: pure NumPy, the single source of truth.

Every wrapper, algorithm, logger and the CLI calls these functions; none re-derives them.
Nothing here imports torch or Stable-Baselines3.

Conventions
-----------
* ``returns`` (or ``u``) is a 1-D array with one entry per stakeholder: the undiscounted sum of
  the stakeholder's benefits over an episode (``info["benefits"]``), unless stated otherwise.
* ``groups`` is an int array of the same length: each stakeholder's protected attribute.
  By default group ``1`` is the *protected* group and ``0`` the unprotected one.
* ``factors`` is an int array of the same length: each stakeholder's legitimate factor
  (the stratum of conditional statistical parity).

Domains and edge cases (the same rules for every function)
-----------------------------------------------------------
* **Non-finite input is an error.** NaN or ±inf anywhere in an input raises ``ValueError`` naming
  the argument; nothing returns NaN because an input held one.
* **No stakeholder is an error.** A statistic over stakeholders, groups, sites or bins raises
  ``ValueError`` naming the argument when that axis is empty. So does a statistic over episodes
  (:func:`team_fairness`, :func:`capture_success`) given no episode. Only a *sum* over an empty
  trace has a value, the empty sum 0 (:func:`temporal_aggregate` with ``"sum"`` or
  ``"discounted"``, :func:`overall_unfairness` of a ``(0, n)`` trace); a mean, a minimum or a last
  value of nothing raises.
* **Each function states its value domain** and raises outside it: :func:`nash` and :func:`gini`
  need ``u_i >= 0`` (a product of negative utilities is not a welfare: ``nash([-1, -1])`` would
  exceed ``nash([0, 0])``), :func:`log_nash` ``u_i > -1``, :func:`alpha_fair` ``u_i > 0``
  (``>= 0`` for ``alpha < 1``), :func:`max_mean_deviation` with ``normalize=True`` ``v_k >= 0``.
  The differences (parity, DP, CF, unfairness) take any real values; their normalised forms divide
  by the total *absolute* return, so they stay in [-1, 1] whatever the signs.
* **All-zero input has a value** where the quantity is defined: everybody is equal, so the gaps
  are 0 (:func:`gini`, :func:`parity`, the DP and CF gaps and their normalised forms,
  :func:`allocation_share_gap` when nothing was allocated, :func:`max_mean_deviation`), and
  :func:`nash` is 0.

Speed: the wrappers call a welfare function at every env step on a handful of numbers, where a NumPy
reduction costs about a microsecond of fixed overhead. So a short vector (at most :data:`sb3_fair._exact.SHORT` entries) is
checked, reduced to its minimum and maximum and summed on Python floats, which give NumPy's bits exactly
(comparisons and minima are exact, and :func:`sb3_fair._exact.pairwise_sum` adds in NumPy's order); a longer
one goes to NumPy. The formula is the same either way; only where the arithmetic runs changes.

References (cited in the docstrings by authors and year; the list is also in :mod:`sb3_fair`'s docstring):

* La Malfa, Zhang, Luck, Black (2024), *Using Protected Attributes to Consider Fairness in Multi-Agent
  Systems*, AEQUITAS workshop at ECAI 2024, arXiv:2410.12889.
* La Malfa, Zhang, Luck, Black (2025), *Fairness Aware Reinforcement Learning via Proximal Policy
  Optimization* (fair-PPO), arXiv:2502.03953.
* Grupen, Selman, Lee (2022), *Cooperative Multi-Agent Fairness and Equivariant Policies*, AAAI 2022,
  arXiv:2106.05727.
* Alamdari, Klassen, Creager, McIlraith (2024), *Remembering to Be Fair: Non-Markovian Fairness in
  Sequential Decision Making*, ICML 2024, arXiv:2312.04772.
* Hu, Lear, Zhang (2024), *Striking a Balance in Fairness for Dynamic Systems Through Reinforcement
  Learning*, arXiv:2401.06318.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from sb3_fair._exact import SHORT, all_finite, pairwise_sum

__all__ = [
    "TEMPORAL_AGGREGATIONS",
    "WELFARE_FUNCTIONS",
    "allocation_share_gap",
    "alpha_fair",
    "capture_success",
    "conditional_statistical_parity",
    "count_vector_distance",
    "counterfactual_fairness",
    "demographic_parity",
    "demographic_parity_pairwise",
    "egalitarian",
    "equal_opportunity_gap",
    "fairness_score",
    "generalized_gini",
    "gini",
    "group_contrasts",
    "group_means",
    "health_state_gap",
    "l2_distribution_gap",
    "log_nash",
    "max_mean_deviation",
    "nash",
    "normalized_conditional_statistical_parity",
    "normalized_counterfactual_fairness",
    "normalized_demographic_parity",
    "overall_unfairness",
    "parity",
    "point_cloud_wasserstein",
    "price_of_fairness",
    "smoothed_distribution",
    "team_fairness",
    "temporal_aggregate",
    "true_positive_rates",
    "unfairness",
    "utilitarian",
    "vaccination_gap",
    "wasserstein_1",
    "welfare",
    "welfare_rows",
]


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
        if not np.all(np.equal(np.mod(g, 1), 0)):
            raise ValueError(f"{name} must hold integers, got {g!r}")
        g = g.astype(np.int64)
    return g


# --------------------------------------------------------------------------------------------
# Welfare (social welfare / aggregation functions W: R^n -> R), Alamdari et al. 2024 §2 and §4
# --------------------------------------------------------------------------------------------


def utilitarian(u: Any) -> float:
    """Utilitarian welfare ``Util(u) = sum_i u_i`` (Alamdari et al. 2024, §2)."""
    return float(np.sum(_as_vector(u)))


def egalitarian(u: Any) -> float:
    """Rawlsian (egalitarian) welfare ``Rawls(u) = min_i u_i`` (Alamdari et al. 2024, §2)."""
    return float(np.min(_as_vector(u)))


def nash(u: Any) -> float:
    """Nash welfare ``Nash(u) = prod_i u_i`` (Alamdari et al. 2024, §2). Requires ``u_i >= 0``.

    Outside that domain the product is not a welfare ordering (``nash([-1, -1]) = 1`` would exceed
    ``nash([0, 0]) = 0``); use :func:`log_nash` (``u_i > -1``) for utilities that can be negative.
    """
    v = _as_vector(u)
    if np.any(v < 0):
        raise ValueError(f"nash needs every u_i >= 0 (use log_nash for u_i > -1), got {v.tolist()}")
    return float(np.prod(v))


def log_nash(u: Any) -> float:
    """Log-Nash welfare of ``u + 1``: ``log Nash(u + 1) = sum_i log(u_i + 1)``.

    This is the per-timepoint aggregation of Alamdari et al.'s (2024) doughnut experiment (§6.1, A.4.1).
    Requires ``u_i > -1``: at ``u_i = -1`` the term is ``log 0`` and below it the log of a negative
    number, so the welfare is undefined there and a ``ValueError`` is raised (never NaN or -inf).
    :class:`~sb3_fair.common.monitor.FairnessMonitor` leaves the ``log_nash`` figure out of such an
    episode (:data:`sb3_fair.common.figure_table.DOMAINS`).
    """
    v = _as_vector(u)
    if _smallest(v) <= -1:
        raise ValueError(f"log_nash needs every u_i > -1 (log(1 + u_i) is undefined at u_i <= -1), got {v.tolist()}")
    return _sum(np.log1p(v))


def alpha_fair(u: Any, alpha: float = 1.0) -> float:
    """Alpha-fair welfare (Mo & Walrand 2000), a standard extension of Alamdari et al.'s (2024) §2 list.

    ``W_alpha(u) = sum_i u_i^(1-alpha) / (1-alpha)`` for ``alpha != 1`` and ``sum_i log u_i``
    for ``alpha = 1``. ``alpha = 0`` is utilitarian; ``alpha -> inf`` approaches egalitarian.
    Requires ``u_i > 0`` (``u_i >= 0`` when ``alpha < 1``).
    """
    alpha = _nonnegative_number(alpha, "alpha")
    v = _as_vector(u)
    if alpha == 1.0:
        if np.any(v <= 0):
            raise ValueError("alpha_fair with alpha=1 needs every u_i > 0")
        return float(np.sum(np.log(v)))
    if np.any(v < 0) or (alpha > 1 and np.any(v == 0)):
        raise ValueError(f"alpha_fair with alpha={alpha} needs positive utilities, got {v}")
    return float(np.sum(v ** (1.0 - alpha) / (1.0 - alpha)))


def generalized_gini(u: Any, weights: Sequence[float] | None = None) -> float:
    """Generalised Gini social welfare (GGF, Weymark 1981; used by Siddique et al. 2020, cited in 003 §2).

    ``GGF_w(u) = sum_i w_i * u_(i)`` where ``u_(1) <= ... <= u_(n)`` is ``u`` sorted increasingly and
    ``w_1 >= ... >= w_n >= 0`` puts more weight on the worse-off. Default weights ``w_i = 2^-(i-1)``.
    """
    v = np.sort(_as_vector(u))
    n = v.size
    w = 0.5 ** np.arange(n) if weights is None else _as_array(weights, "weights")
    if w.shape != (n,):
        raise ValueError(f"weights must have one entry per stakeholder ({n}), got shape {w.shape}")
    if np.any(~np.isfinite(w)) or np.any(w < 0):
        raise ValueError(f"weights must be finite and >= 0, got {w}")
    if np.any(np.diff(w) > 0):
        raise ValueError("weights must be non-increasing (more weight on the worse-off)")
    return float(np.dot(w, v))


def parity(u: Any) -> float:
    """Negative spread ``-(max_i u_i - min_i u_i)``; 0 when everyone is equal.

    With two entries (e.g. the loan totals of groups A and B) this is Alamdari et al.'s (2024) *relaxed
    demographic parity score* ``W(U) = -|sum_{i in A} U_i - sum_{i in B} U_i|`` (§6.2, A.4.2).
    It is shift-invariant, so it can be computed from a min-normalised memory.
    """
    v = _as_vector(u)
    if v.size <= SHORT:
        values = v.tolist()
        lo, hi = min(values), max(values)
        # when both are zeros, NumPy's reductions pick 0.0 or -0.0 by position, and the sign of lo - hi follows:
        # that case is left to NumPy; any other lo - hi has the same bits whichever of equal entries is picked
        if lo != 0.0 or hi != 0.0:
            return lo - hi
    return float(np.min(v) - np.max(v))


def gini(u: Any) -> float:
    """Gini coefficient ``sum_i sum_j |u_i - u_j| / (2 n^2 mean(u))`` in [0, 1 - 1/n]; 0 = equal.

    Returns 0 for an all-zero vector. Requires ``u_i >= 0``: the index measures each one's share of
    a non-negative total, and with negative values it leaves [0, 1] or divides by a total of 0
    (``gini([-1, 1])``), so a ``ValueError`` is raised. :class:`~sb3_fair.common.monitor.FairnessMonitor`
    leaves the ``gini`` figure out of an episode with a negative return
    (:data:`sb3_fair.common.figure_table.DOMAINS`).
    """
    v = _as_vector(u)
    if np.any(v < 0):
        raise ValueError(f"gini needs non-negative utilities (every u_i >= 0), got {v.tolist()}")
    n = v.size
    total = v.sum()
    if total == 0:
        return 0.0
    s = np.sort(v)
    # sum_{i<j} (s_j - s_i) computed in O(n log n)
    idx = np.arange(1, n + 1)
    abs_diff_sum = 2.0 * np.sum((2 * idx - n - 1) * s)
    return float(abs_diff_sum / (2.0 * n * total))


WELFARE_FUNCTIONS: dict[str, Callable[..., float]] = {
    "utilitarian": utilitarian,
    "egalitarian": egalitarian,
    "rawls": egalitarian,
    "nash": nash,
    "log_nash": log_nash,
    "alpha_fair": alpha_fair,
    "ggf": generalized_gini,
    "parity": parity,
    "neg_gini": lambda u: -gini(u),
}


def _check_welfare_name(name: Any) -> None:
    if not isinstance(name, str) or name not in WELFARE_FUNCTIONS:
        raise ValueError(f"unknown welfare {name!r}; accepted values: {sorted(WELFARE_FUNCTIONS)}")


def welfare(u: Any, name: str = "log_nash", **kwargs: Any) -> float:
    """Apply the welfare function called ``name`` (a key of :data:`WELFARE_FUNCTIONS`) to ``u``."""
    _check_welfare_name(name)
    try:
        return WELFARE_FUNCTIONS[name](u, **kwargs)
    except TypeError as exc:
        raise ValueError(f"welfare {name!r} does not take the arguments {sorted(kwargs)}: {exc}") from None


def _log_nash_rows(a: np.ndarray) -> np.ndarray | None:
    if not (np.isfinite(a).all() and (a > -1).all()):
        return None
    return np.log1p(a).sum(axis=1)


def _utilitarian_rows(a: np.ndarray) -> np.ndarray | None:
    return a.sum(axis=1) if np.isfinite(a).all() else None


def _parity_rows(a: np.ndarray) -> np.ndarray | None:
    if not np.isfinite(a).all():
        return None
    lo, hi = a.min(axis=1), a.max(axis=1)
    out = lo - hi
    # where both are zeros the sign of the result depends on which zero each reduction picks: row by row, as parity does
    for i in np.flatnonzero((lo == 0.0) & (hi == 0.0)).tolist():
        out[i] = parity(a[i])
    return out


#: welfare functions with a whole-batch form for :func:`welfare_rows`: each returns the row values, or ``None`` when a
#: row is outside the function's domain (then the rows are computed one by one, and the first bad one raises its error)
_ROW_WELFARE: dict[str, Callable[[np.ndarray], np.ndarray | None]] = {
    "log_nash": _log_nash_rows,
    "utilitarian": _utilitarian_rows,
    "parity": _parity_rows,
}


def welfare_rows(u: Any, name: str = "log_nash", **kwargs: Any) -> np.ndarray:
    """:func:`welfare` of each row of a batch ``u`` of shape ``(k, n)``, as a float64 array of ``k`` values.

    For a 2-D batch of numbers, the same values, bit for bit, and the same errors as
    ``np.array([welfare(row, name, **kwargs) for row in u])``; anything else (another shape, an unknown ``name``) is
    refused with an error naming it. FairQCM weighs every counterfactual memory of every step (Alamdari et al. 2024,
    Eq. 2: 32 memories a step for five stakeholders), so ``log_nash``, ``utilitarian`` and ``parity`` are computed for
    the whole batch at once: elementwise functions give the same bits on a batch as on each row, and NumPy sums each
    row of a C-contiguous batch in the order it sums that row alone (``tests/test_batch_shortcuts.py`` checks the
    results against row by row). Any other welfare, and a batch with a row outside the welfare's domain, goes row by
    row.

    :param u: one status vector per row.
    :param name: a key of :data:`WELFARE_FUNCTIONS`.
    :param kwargs: the welfare's extra arguments (``alpha`` of ``alpha_fair``, ...).
    """
    _check_welfare_name(name)
    a = _as_array(u, "u")
    if a.ndim != 2:
        raise ValueError(f"u must be a 2-D array with one status vector per row, got shape {a.shape}")
    rows = _ROW_WELFARE.get(name)
    if rows is not None and not kwargs and a.size:
        out = rows(np.ascontiguousarray(a))
        if out is not None:
            return out
    return np.array([welfare(row, name, **kwargs) for row in a], dtype=np.float64)


# --------------------------------------------------------------------------------------------
# Individual unfairness and temporal aggregation, Alamdari et al. 2024 §4
# --------------------------------------------------------------------------------------------


def unfairness(u: Any) -> np.ndarray:
    """Unfairness to each stakeholder at one timepoint (Alamdari et al. 2024, Defs. 4.10-4.11).

    ``unfairness_i = U_i - mean(U)``: negative means the trace is unfair *to* stakeholder i,
    positive means it is unfair *in favour of* i. Alamdari et al.'s (2024) example: (6, 8, 10) gives
    (-2, 0, +2), unfair to A by -2 and in favour of C by +2.
    """
    v = _as_vector(u)
    return v - v.mean()


def overall_unfairness(statuses: Any) -> np.ndarray:
    """Overall unfairness to each stakeholder over a trace (Alamdari et al. 2024, Def. 4.11).

    ``statuses`` is a ``(T, n)`` array of status vectors ``U(tau_t)``; the result is
    ``sum_t (U(tau_t)_i - mean(U(tau_t)))`` for each i.
    """
    s = _as_array(statuses, "statuses")
    if s.ndim != 2 or s.shape[1] == 0:
        raise ValueError(f"statuses must be a (T, n) array with n >= 1 stakeholders, got shape {s.shape}")
    _finite(s, "statuses")
    return np.sum(s - s.mean(axis=1, keepdims=True), axis=0)


TEMPORAL_AGGREGATIONS = ("long_term", "sum", "mean", "discounted", "min")


def temporal_aggregate(values: Any, how: str = "sum", gamma: float = 1.0) -> float:
    """Temporal aggregation ``W_temporal(w_1..w_k)`` of per-timepoint welfare (Alamdari et al. 2024, Def. 4.9).

    :param values: the per-timepoint welfare values ``w_1..w_k`` (already filtered).
    :param how: ``"long_term"`` (last value, Def. 4.1), ``"sum"``, ``"mean"``,
        ``"discounted"`` (``sum_t gamma^(t-1) w_t``) or ``"min"`` (Rawlsian with respect to time).
    :param gamma: discount factor for ``"discounted"`` (finite, >= 0).
    :return: the aggregate; 0.0 for ``"sum"`` and ``"discounted"`` of no timepoint (the empty sum).
    :raises ValueError: for non-finite values, or ``"long_term"``, ``"mean"`` or ``"min"`` of no timepoint.
    """
    w = _finite(_as_array(values, "values").reshape(-1), "values")
    if how not in TEMPORAL_AGGREGATIONS:
        raise ValueError(f"unknown temporal aggregation {how!r}; accepted values: {list(TEMPORAL_AGGREGATIONS)}")
    gamma = _nonnegative_number(gamma, "gamma")
    if w.size == 0:
        if how in ("sum", "discounted"):
            return 0.0  # the empty sum
        raise ValueError(f"temporal aggregation {how!r} of no timepoint is undefined: values is empty")
    if how == "long_term":
        return float(w[-1])
    if how == "sum":
        return float(w.sum())
    if how == "mean":
        return float(w.mean())
    if how == "discounted":
        return float(np.sum(gamma ** np.arange(w.size) * w))
    return float(w.min())


def fairness_score(
    statuses: Any,
    welfare_fn: str | Callable[[np.ndarray], float] = "log_nash",
    scheme: str = "anytime",
    period: int = 1,
    mask: Any | None = None,
    how: str = "sum",
    gamma: float = 1.0,
) -> float:
    """Fairness score of a trace under a timepoint-first scheme (Alamdari et al. 2024, Defs. 4.1-4.4, 4.7, 4.9).

    :param statuses: ``(T, n)`` status vectors ``U(tau_1) .. U(tau_T)``.
    :param welfare_fn: per-timepoint aggregation W (name from :data:`WELFARE_FUNCTIONS` or callable).
    :param scheme: ``"long_term"`` (only ``U(tau_T)``, Def. 4.1), ``"anytime"`` (every timepoint,
        Def. 4.3), ``"periodic"`` (timepoints ``p, 2p, ...``, Def. 4.2) or ``"bounded"`` (the
        timepoints where ``mask`` is true, Def. 4.4).
    :param period: the period ``p`` of ``"periodic"``.
    :param mask: the filter ``B(tau_t)`` for ``"bounded"``, one boolean per timepoint.
    :param how: temporal aggregation (see :func:`temporal_aggregate`).
    """
    s = _as_array(statuses, "statuses")
    if s.ndim != 2 or s.shape[0] == 0 or s.shape[1] == 0:
        raise ValueError(f"statuses must be a non-empty (T, n) array, got shape {s.shape}")
    _finite(s, "statuses")
    T = s.shape[0]
    if scheme == "long_term":
        keep = np.zeros(T, dtype=bool)
        keep[-1] = True
    elif scheme == "anytime":
        keep = np.ones(T, dtype=bool)
    elif scheme == "periodic":
        if isinstance(period, bool) or not isinstance(period, (int, np.integer)) or period < 1:
            raise ValueError(f"period must be an int >= 1, got {period!r}")
        keep = (np.arange(1, T + 1) % int(period)) == 0
    elif scheme == "bounded":
        if mask is None:
            raise ValueError("scheme='bounded' needs a mask (the filter B)")
        raw = np.asarray(mask)
        if raw.dtype.kind not in "biuf" or (raw.dtype.kind == "f" and not np.all(np.isfinite(raw))):
            raise ValueError(f"mask must be booleans (or 0/1), one per timepoint, got {mask!r}")
        keep = raw.astype(bool)
        if keep.shape != (T,):
            raise ValueError(f"mask must have one entry per timepoint ({T}), got shape {keep.shape}")
    else:
        raise ValueError(f"unknown scheme {scheme!r}; accepted values: ['anytime', 'bounded', 'long_term', 'periodic']")
    fn = (lambda u: welfare(u, welfare_fn)) if isinstance(welfare_fn, str) else welfare_fn
    values = [fn(s[t]) for t in np.flatnonzero(keep)]
    return temporal_aggregate(values, how=how, gamma=gamma)


# --------------------------------------------------------------------------------------------
# Group fairness: La Malfa et al. 2024 and La Malfa et al. 2025
# --------------------------------------------------------------------------------------------


def group_means(returns: Any, groups: Any) -> dict[int, float]:
    """Mean return of each group: ``{group: mean of returns[groups == group]}``."""
    r = _as_vector(returns, "returns")
    g = _as_groups(groups, r.size)
    return {int(k): float(r[g == k].mean()) for k in np.unique(g)}


def _two_groups(g: np.ndarray, protected: int) -> None:
    if isinstance(protected, bool) or not isinstance(protected, (int, np.integer)):
        raise ValueError(f"protected must be an int (the protected group's id), got {protected!r}")
    if not np.any(g == protected) or not np.any(g != protected):
        raise ValueError(
            f"demographic parity needs stakeholders in the protected group ({protected}) and outside it; "
            f"got groups {np.unique(g).tolist()}"
        )


def demographic_parity(returns: Any, groups: Any, protected: int = 1) -> float:
    """Signed demographic-parity gap: mean return of the protected group minus that of the others.

    La Malfa et al. 2024 Eq. 1 and La Malfa et al. 2025 Eq. 2 compare the expected reward of agents with and without the
    protected attribute; ``0`` is parity and a negative value means the protected group is worse
    off. Use ``abs()`` of it for the unfairness figure.
    """
    r = _as_vector(returns, "returns")
    g = _as_groups(groups, r.size)
    _two_groups(g, protected)
    return float(r[g == protected].mean() - r[g != protected].mean())


def demographic_parity_pairwise(returns: Any, groups: Any, attributes: Any | None = None, protected: int = 1) -> float:
    """Pairwise form of demographic parity (La Malfa et al. 2024, Eq. 1).

    Mean of ``R_i - R_j`` over pairs (i, j) with i protected, j unprotected, and equal on every
    other attribute (the columns of ``attributes``, shape ``(n, k)``; ``None`` = all pairs).
    With ``attributes=None`` it equals :func:`demographic_parity`.
    """
    r = _as_vector(returns, "returns")
    g = _as_groups(groups, r.size)
    _two_groups(g, protected)
    p_idx = np.flatnonzero(g == protected)
    u_idx = np.flatnonzero(g != protected)
    diffs = r[p_idx][:, None] - r[u_idx][None, :]
    if attributes is not None:
        a = np.asarray(attributes)
        if a.shape[:1] != (r.size,):
            raise ValueError(f"attributes must have one row per agent ({r.size}), got shape {a.shape}")
        a = a.reshape(r.size, -1)
        same = np.all(a[p_idx][:, None, :] == a[u_idx][None, :, :], axis=-1)
        if not np.any(same):
            raise ValueError("no protected/unprotected pair is equal on the other attributes")
        return float(diffs[same].mean())
    return float(diffs.mean())


def normalized_demographic_parity(returns: Any, groups: Any, protected: int = 1) -> float:
    """Normalised unfairness of fair-PPO's Table 1 (La Malfa et al. 2025): ``(R_ns - R_s) / max(|R_ns| + |R_s|, 1)``.

    ``R_s`` is the *total* return of the protected (sensitive) group, ``R_ns`` that of the others.
    Positive means the protected group receives less. The paper divides by ``max(R_ns + R_s, 1)``
    for its non-negative returns (apples); dividing by the absolute totals gives the same value
    there and keeps the figure in [-1, 1] when returns can be negative (the paper's form would give
    200 for returns ``[-100, -100, -200, -200]``).
    """
    r = _as_vector(returns, "returns")
    g = _as_groups(groups, r.size)
    _two_groups(g, protected)
    return _normalized_gap(float(r[g != protected].sum()), float(r[g == protected].sum()))


def _normalized_gap(first: float, second: float) -> float:
    """``(first - second) / max(|first| + |second|, 1)``, in [-1, 1]."""
    return (first - second) / max(abs(first) + abs(second), 1.0)


def conditional_statistical_parity(returns: Any, groups: Any, factors: Any, protected: int = 1) -> dict[str, Any]:
    """Conditional statistical parity (La Malfa et al. 2024 Eq. 3, La Malfa et al. 2025 Eq. 4).

    The demographic-parity gap within each stratum of the legitimate factor. Strata that do not
    contain both groups are skipped. Returns ``{"per_stratum": {factor: gap}, "mean": mean gap,
    "mean_abs": mean |gap|}`` where the means are weighted by stratum size.
    """
    r = _as_vector(returns, "returns")
    g = _as_groups(groups, r.size)
    f = _as_groups(factors, r.size, "factors")
    per: dict[int, float] = {}
    sizes: list[int] = []
    for k in np.unique(f):
        sel = f == k
        if np.any(g[sel] == protected) and np.any(g[sel] != protected):
            per[int(k)] = demographic_parity(r[sel], g[sel], protected)
            sizes.append(int(sel.sum()))
    if not per:
        raise ValueError("no stratum of the legitimate factor contains both groups")
    gaps = np.array(list(per.values()))
    w = np.array(sizes, dtype=np.float64) / np.sum(sizes)
    return {"per_stratum": per, "mean": float(np.dot(w, gaps)), "mean_abs": float(np.dot(w, np.abs(gaps)))}


def counterfactual_fairness(factual: Any, counterfactual: Any) -> float:
    """Counterfactual fairness gap (La Malfa et al. 2024 Eq. 2, La Malfa et al. 2025 Eq. 3).

    Mean over matched agents of ``R_i(factual) - R_i(counterfactual)`` where the counterfactual run
    flips the protected attribute with everything else (seed, positions) equal; 0 is fair.
    """
    a = _as_vector(factual, "factual")
    b = _as_vector(counterfactual, "counterfactual")
    if a.shape != b.shape:
        raise ValueError(f"factual and counterfactual must match agent for agent, got {a.shape} and {b.shape}")
    return float(np.mean(a - b))


def normalized_counterfactual_fairness(factual: Any, counterfactual: Any) -> float:
    """Normalised counterfactual unfairness of fair-PPO's Table 1 (La Malfa et al. 2025 §5.1, §6).

    ``(R_f - R_cf) / max(|R_f| + |R_cf|, 1)`` with ``R_f`` and ``R_cf`` the total returns of the factual
    and the counterfactual run (in La Malfa et al.'s (2025) evaluation nobody is impaired in the factual run and
    everybody in the counterfactual one, so this is the normalised DP form across the two runs; the
    absolute totals keep it in [-1, 1] for negative returns, as in :func:`normalized_demographic_parity`).
    """
    a = _as_vector(factual, "factual")
    b = _as_vector(counterfactual, "counterfactual")
    if a.shape != b.shape:
        raise ValueError(f"factual and counterfactual must match agent for agent, got {a.shape} and {b.shape}")
    return _normalized_gap(float(a.sum()), float(b.sum()))


def normalized_conditional_statistical_parity(
    returns: Any, groups: Any, factors: Any, protected: int = 1
) -> dict[int, float]:
    """The normalised DP form of fair-PPO's Table 1 within each stratum of the legitimate factor.

    La Malfa et al. 2025 reports CSP unfairness per berry preference ("G1/G2"):
    ``{factor: normalized_demographic_parity(returns[stratum], groups[stratum])}`` for every stratum
    that contains both groups.
    """
    r = _as_vector(returns, "returns")
    g = _as_groups(groups, r.size)
    f = _as_groups(factors, r.size, "factors")
    out = {}
    for k in np.unique(f):
        sel = f == k
        if np.any(g[sel] == protected) and np.any(g[sel] != protected):
            out[int(k)] = normalized_demographic_parity(r[sel], g[sel], protected)
    if not out:
        raise ValueError("no stratum of the legitimate factor contains both groups")
    return out


def group_contrasts(
    groups: Any, metric: str = "dp", factors: Any | None = None, twins: Any | None = None, protected: int = 1
) -> np.ndarray:
    """The signed gaps of DP, CSP or CF as rows of a matrix ``C``: ``C @ returns`` gives the gaps.

    This is the linear form behind :func:`demographic_parity` (one row: ``+1/|G_1|`` on the
    protected group, ``-1/|G_0|`` on the others; La Malfa et al. 2025 Eq. 2 in group-mean form),
    :func:`conditional_statistical_parity` (one such row per stratum of ``factors`` that holds both
    groups, scaled by the stratum's share of the stakeholders, so that ``sum |C @ r|`` is the
    ``mean_abs`` figure; Eq. 4) and :func:`counterfactual_fairness` (one row per agent ``x`` and its
    twin ``twins[x]``, ``+1`` on the factual agent and ``-1`` on its twin, scaled by ``1 / pairs``;
    Eq. 3). ``sum_k |C_k @ r|`` is the group penalty of La Malfa et al. 2025 (Eqs. 5-7) in these forms, and
    ``sign(C @ r) @ C`` its gradient with respect to ``r`` (used by :class:`sb3_fair.FairPPO`).

    :param groups: protected attribute per stakeholder.
    :param metric: ``"dp"``, ``"csp"`` or ``"cf"``.
    :param factors: legitimate factor per stakeholder (``"csp"``).
    :param twins: index of each stakeholder's counterfactual twin (``"cf"``), in ``[0, n - 1]``, a pairing
        (``twins[twins[x]] == x != twins[x]``); stakeholders whose twin index is greater than their own are the
        factual side of the pair.
    :return: ``(K, n)`` float array; ``K = 0`` when no row can be formed (e.g. one group only).
    """
    g = _as_groups(groups, np.asarray(groups).size)
    n = g.size
    if metric == "dp":
        return _dp_row(g, protected)[None, :] if _has_both(g, protected) else np.zeros((0, n))
    if metric == "csp":
        if factors is None:
            raise ValueError("metric 'csp' needs factors")
        f = _as_groups(factors, n, "factors")
        rows = []
        for k in np.unique(f):
            sel = f == k
            if _has_both(g[sel], protected):
                row = np.zeros(n)
                row[sel] = _dp_row(g[sel], protected) * (sel.sum() / n)
                rows.append(row)
        return np.array(rows) if rows else np.zeros((0, n))
    if metric == "cf":
        if twins is None:
            raise ValueError("metric 'cf' needs twins")
        tw = _as_groups(twins, n, "twins")
        if np.any((tw < 0) | (tw >= n)):
            bad = int(np.flatnonzero((tw < 0) | (tw >= n))[0])
            raise ValueError(
                f"twins must be indices of stakeholders in [0, {n - 1}] (one per stakeholder), got {tw.tolist()}: "
                f"stakeholder {bad} has twin {int(tw[bad])}"
            )
        unpaired = np.flatnonzero((tw[tw] != np.arange(n)) | (tw == np.arange(n)))
        if unpaired.size:  # each agent and its twin name each other: a factual run and its counterfactual, slot to slot
            bad = int(unpaired[0])
            raise ValueError(
                f"twins must pair the stakeholders (x's twin is y and y's twin is x, never x itself), got "
                f"{tw.tolist()}: stakeholder {bad} has twin {int(tw[bad])}, whose twin is {int(tw[tw[bad]])}"
            )
        factual = np.flatnonzero(tw > np.arange(n))
        c = np.zeros((factual.size, n))
        c[np.arange(factual.size), factual] = 1.0
        c[np.arange(factual.size), tw[factual]] = -1.0
        return c / max(factual.size, 1)
    raise ValueError(f"metric must be one of ['dp', 'csp', 'cf'], got {metric!r}")


def _has_both(g: np.ndarray, protected: int) -> bool:
    return bool(np.any(g == protected) and np.any(g != protected))


def _dp_row(g: np.ndarray, protected: int) -> np.ndarray:
    prot = g == protected
    return np.where(prot, 1.0 / max(prot.sum(), 1), -1.0 / max((~prot).sum(), 1))


# --------------------------------------------------------------------------------------------
# Team fairness: Grupen et al. 2022
# --------------------------------------------------------------------------------------------


def team_fairness(credit: Any) -> float:
    """Team unfairness ``I(R;Z)`` in bits from per-episode credit vectors (Grupen et al. 2022, Defs. 1-2).

    ``credit`` is an ``(E, n)`` 0/1 array: which of the n agents was credited (e.g. captured the
    evader) in each of E episodes. Z is the agent identity and R the reward; with A the number of
    credited agents in an episode, ``I(R;Z) = H_uniform(V|A) - H(V|A)`` where V is the credit
    vector, ``H_uniform(V|A=a) = log2 C(n, a)`` is the entropy if every set of a agents were equally
    likely, and ``H(V|A=a)`` the empirical entropy. 0 means credit is independent of identity;
    ``log2(n)`` means one agent is always the one credited.
    """
    c = np.asarray(credit)
    if c.ndim != 2:
        raise ValueError(f"credit must be an (episodes, agents) array, got shape {c.shape}")
    if c.shape[0] == 0 or c.shape[1] == 0:
        raise ValueError(f"credit must hold at least one episode and one agent, got shape {c.shape}")
    _finite(_as_array(c, "credit"), "credit")
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
    c = np.asarray(credit)
    if c.ndim != 2:
        raise ValueError(f"credit must be an (episodes, agents) array, got shape {c.shape}")
    if c.shape[0] == 0 or c.shape[1] == 0:
        raise ValueError(f"credit must hold at least one episode and one agent, got shape {c.shape}")
    _finite(_as_array(c, "credit"), "credit")
    return float(np.mean(np.any(c > 0, axis=1)))


# --------------------------------------------------------------------------------------------
# Price of fairness: La Malfa et al. 2025 §6.2
# --------------------------------------------------------------------------------------------


def price_of_fairness(fair_return: Any, base_return: Any) -> Any:
    """Price of fairness in percent (La Malfa et al. 2025, §6.2): ``100 * (R_fair - R_base) / |R_base|``.

    Negative values are a loss of return caused by the fairness constraint. Works elementwise
    (e.g. per group). ``R_base = 0`` gives ``nan`` (a relative change from 0 is undefined); the
    inputs must be finite.
    """
    f = _finite(_as_array(fair_return, "fair_return"), "fair_return")
    b = _finite(_as_array(base_return, "base_return"), "base_return")
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(b != 0, 100.0 * (f - b) / np.abs(np.where(b != 0, b, 1.0)), np.nan)
    return float(out) if out.ndim == 0 else out


# --------------------------------------------------------------------------------------------
# Long-term distribution gap and equal opportunity: Hu et al. 2024
# --------------------------------------------------------------------------------------------


def wasserstein_1(support: Any, p: Any, q: Any) -> float:
    """Exact 1-D Wasserstein-1 distance between two weighted distributions on one ordered support.

    Hu et al. 2024, Def. 2 (the long-term fairness gap between the groups' credit distributions).
    Computed with :func:`scipy.stats.wasserstein_distance`; weights need not be normalised.
    """
    from scipy.stats import wasserstein_distance

    x = _as_vector(support, "support")
    a = _as_vector(p, "p")
    b = _as_vector(q, "q")
    if a.shape != x.shape or b.shape != x.shape:
        raise ValueError("support, p and q must have the same length")
    if np.any(a < 0) or np.any(b < 0) or a.sum() <= 0 or b.sum() <= 0:
        raise ValueError("p and q must be non-negative with positive mass")
    return float(wasserstein_distance(x, x, u_weights=a, v_weights=b))


def point_cloud_wasserstein(x: Any, y: Any) -> float:
    """Exact Wasserstein-1 between two equal-size clouds of points with uniform weights, Euclidean cost.

    The optimal plan between two uniform clouds of n points is a matching (Birkhoff), found by
    :func:`scipy.optimize.linear_sum_assignment`; the distance is the mean matched distance. Hu et
    al.'s (2024) figures plot this statistic (with geomloss's Sinkhorn at blur 0.01, which is close
    to exact) between the groups' per-episode vectors at each time step: lending, the two groups'
    credit pmfs over 10 episodes (Fig. 1b); epidemic, the two communities' S/I/R counts over 200
    episodes (Fig. 4b).

    :param x: shape ``(n, d)`` (or ``(n,)`` for points on a line).
    :param y: the same shape as ``x``.
    """
    from scipy.optimize import linear_sum_assignment
    from scipy.spatial.distance import cdist

    a = _as_array(x, "x")
    b = _as_array(y, "y")
    a = a[:, None] if a.ndim == 1 else a
    b = b[:, None] if b.ndim == 1 else b
    if a.ndim != 2 or a.shape != b.shape or a.shape[0] == 0:
        raise ValueError(
            f"x and y must be non-empty clouds of the same shape (n, d), got {np.shape(x)} and {np.shape(y)}"
        )
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise ValueError("x and y must be finite")
    cost = cdist(a, b)
    rows, cols = linear_sum_assignment(cost)
    return float(cost[rows, cols].mean())


def l2_distribution_gap(p: Any, q: Any) -> float:
    """Euclidean distance between two probability mass functions (the distance Hu et al.'s (2024) plots use)."""
    a = _as_vector(p, "p")
    b = _as_vector(q, "q")
    if a.shape != b.shape:
        raise ValueError(f"p and q must have the same length, got {a.size} and {b.size}")
    return float(np.linalg.norm(a - b))


def equal_opportunity_gap(tp_pos: float, pos_pos: float, tp_neg: float, pos_neg: float) -> float:
    """Equal-opportunity gap ``|TPR_+ - TPR_-|`` (Hu et al. 2024, Eq. 8).

    ``TPR_g = tp_g / pos_g``: the fraction of group g's qualified applicants (who would repay) that
    were accepted. A group with no qualified applicant has TPR 0 (see :func:`true_positive_rates`).

    :param tp_pos: accepted qualified applicants of the first group.
    :param pos_pos: qualified applicants of the first group.
    :param tp_neg: accepted qualified applicants of the second group.
    :param pos_neg: qualified applicants of the second group.
    :return: ``|TPR_first - TPR_second|`` in [0, 1].
    """
    rates = true_positive_rates([tp_pos, tp_neg], [pos_pos, pos_neg])
    return float(abs(rates[0] - rates[1]))


def true_positive_rates(tp: Any, pos: Any) -> np.ndarray:
    """Per-group true-positive rates ``tp_g / pos_g``, the terms of Hu et al.'s (2024, arXiv:2401.06318) Eq. 8.

    In the lending setting of Hu et al. 2024 (§VI-A), ``pos_g`` counts group g's applicants in the
    window who would repay and ``tp_g`` those of them who were granted a loan. A group with
    ``pos_g == 0`` gets rate 0 (the authors' convention).

    :param tp: true positives per group (counts >= 0), one entry per group.
    :param pos: positives per group (counts >= ``tp``), same length as ``tp``.
    :return: float64 array of the rates, one per group, each in [0, 1].
    """
    t = _as_array(tp, "tp").reshape(-1)
    p = _as_array(pos, "pos").reshape(-1)
    if t.size == 0:
        raise ValueError("tp and pos must have one entry per group, got none")
    if t.shape != p.shape:
        raise ValueError(f"tp and pos must have one entry per group, got shapes {t.shape} and {p.shape}")
    if not np.all((t >= 0) & (t <= p) & (p < np.inf)):  # also False for NaN
        raise ValueError(f"tp and pos must be finite counts with 0 <= tp <= pos, got tp={tp!r}, pos={pos!r}")
    return np.where(p > 0, t / np.maximum(p, 1e-300), 0.0)


def smoothed_distribution(counts: Any, prior: Any, weight: float) -> np.ndarray:
    """``(counts + weight * prior) / (sum(counts) + weight)``: a histogram smoothed with pseudo-counts.

    Used for the windowed credit distributions whose Wasserstein-1 distance is Hu et al.'s (2024,
    arXiv:2401.06318, §VI-A) long-term gap: ``weight`` pseudo-applicants spread as ``prior`` (the
    group's current true pmf) are added to the group's window counts, so a group with few or no
    applicants in the window gets (nearly) its true pmf instead of a one- or zero-sample histogram.
    With ``weight = 0`` it is the raw empirical distribution.

    :param counts: non-negative counts per bin (e.g. a group's applicants per credit cluster).
    :param prior: non-negative weights per bin, same length, positive total; normalised here.
    :param weight: the number of pseudo-counts k >= 0 given to ``prior``.
    :return: float64 pmf over the bins (sums to 1).
    :raises ValueError: on bad inputs, or when ``counts`` sum to 0 and ``weight`` is 0 (undefined).
    """
    c = _as_vector(counts, "counts")
    q = _as_vector(prior, "prior")
    k = _nonnegative_number(weight, "weight")
    if c.shape != q.shape:
        raise ValueError(f"counts and prior must have the same length, got {c.shape} and {q.shape}")
    if not (np.all(np.isfinite(c)) and np.all(np.isfinite(q))) or np.any(c < 0) or np.any(q < 0) or q.sum() <= 0:
        raise ValueError("counts must be finite and >= 0, prior finite and >= 0 with positive mass")
    total = c.sum() + k
    if total <= 0:
        raise ValueError("smoothed_distribution is undefined for empty counts with weight 0")
    return (c + k * q / q.sum()) / total


def vaccination_gap(vaccinated: Any, newly_infected: Any) -> float:
    """Equal-opportunity gap of vaccine allocation between communities (Hu et al. 2024, Eq. 10).

    Each community c gets the ratio ``vaccinated[c] / (newly_infected[c] + 1)``; the gap is the
    largest ratio minus the smallest, i.e. ``|r_0 - r_1|`` for two communities (the maximum over
    ordered pairs of communities, as the authors' code takes it).

    :param vaccinated: vaccinations given to each community (one entry per community).
    :param newly_infected: new infections in each community over the same period.
    """
    v = _as_vector(vaccinated, "vaccinated")
    n = _as_vector(newly_infected, "newly_infected")
    if v.shape != n.shape or v.size < 2:
        raise ValueError(
            f"vaccinated and newly_infected must have one entry per community (>= 2), got {v.shape} and {n.shape}"
        )
    if np.any(v < 0) or np.any(n < 0):
        raise ValueError("vaccinated and newly_infected must be counts >= 0")
    ratios = v / (n + 1.0)
    return float(ratios.max() - ratios.min())


def health_state_gap(states: Any, groups: Any, kind: str = "fractions", n_states: int = 3) -> float:
    """Euclidean distance between two groups' health-state vectors (Hu et al. 2024, §VI-C long-term gap).

    For each of the two groups, the number of its members in each state ``0..n_states-1`` (S, I, R in
    an SIR epidemic): with ``kind="fractions"`` divided by the group's size (a distribution over
    states; 0 when the groups are in the same proportions), with ``kind="counts"`` as raw counts (the
    authors' code). Raw counts cannot reach 0 when the groups differ in size: the distance is at least
    ``|size_0 - size_1| / sqrt(n_states)`` (4 / sqrt(3) for communities of 15 and 19 people).

    :param states: each member's state (int in ``[0, n_states)``; whole floats such as 2.0 are accepted,
        fractional ones such as 1.5 are rejected).
    :param groups: each member's group; exactly two distinct values.
    :param kind: ``"fractions"`` or ``"counts"``.
    :param n_states: number of states.
    :raises ValueError: for a state that is not an int in ``[0, n_states)``, or not exactly two groups.
    """
    if kind not in ("fractions", "counts"):
        raise ValueError(f"kind must be one of ['fractions', 'counts'], got {kind!r}")
    if isinstance(n_states, bool) or not isinstance(n_states, (int, np.integer)) or n_states < 1:
        raise ValueError(f"n_states must be an int >= 1, got {n_states!r}")
    s = np.asarray(states)
    g = _as_groups(groups, s.size)
    ids = np.unique(g)
    if s.ndim != 1 or ids.size != 2:
        raise ValueError(f"health_state_gap needs a 1-D states array and exactly two groups, got groups {ids.tolist()}")
    integral = np.issubdtype(s.dtype, np.integer) or (
        np.issubdtype(s.dtype, np.floating) and bool(np.all(np.isfinite(s))) and bool(np.all(s == np.round(s)))
    )
    if not integral or np.any(s < 0) or np.any(s >= n_states):
        shown = np.unique(s).tolist() if s.dtype.kind in "biuf" else repr(states)
        raise ValueError(f"states must be ints in [0, {n_states}), got {shown}")
    vectors = []
    for gid in ids:
        counts = np.bincount(s[g == gid].astype(np.int64), minlength=n_states).astype(np.float64)
        vectors.append(counts / counts.sum() if kind == "fractions" else counts)
    return float(np.linalg.norm(vectors[0] - vectors[1]))


def count_vector_distance(u: Any, v: Any) -> float:
    """1-D Wasserstein-1 between the *entries* of two count vectors, read as two samples of values.

    The long-term gap of Hu et al.'s (2024) lending code (§VI-A, training signal): the groups'
    windowed credit-cluster count vectors are handed to a 1-D optimal-transport loss as clouds of
    points whose positions are the counts. The result equals the mean absolute difference of the
    sorted vectors. It is invariant to permuting the entries, so it does **not** measure a shift
    along the credit axis (two pmfs one cluster apart give 0); use :func:`wasserstein_1` for that.
    Provided to reproduce the authors' signal. Computed with :func:`scipy.stats.wasserstein_distance`.

    :param u: the first count vector (e.g. group 0's windowed applicants per credit cluster).
    :param v: the second count vector (any non-zero length; the same length in the lending env).
    :return: the 1-D Wasserstein-1 distance between the entries of ``u`` and of ``v``, in count units.
    """
    from scipy.stats import wasserstein_distance

    return float(wasserstein_distance(_as_vector(u, "u"), _as_vector(v, "v")))


def allocation_share_gap(allocations: Any) -> float:
    """Demographic-parity gap of an allocation, ``max_k |share_k - 1/K|`` (Hu et al. 2024, Eq. 9).

    ``share_k = Σ_t a_{k,t} / Σ_{t,k} a_{k,t}``: site k's share of all the units allocated over a
    window. Eq. 9 divides by ``N · w``; dividing by the units actually allocated (as the authors'
    code does) gives the same value once the window is full, and a meaningful one before. 0 when
    nothing was allocated.

    :param allocations: the units per site, one row per step (shape ``(T, K)``) or already summed
        over the window (shape ``(K,)``); K >= 1.
    """
    a = _as_array(allocations, "allocations")
    if a.ndim not in (1, 2) or a.shape[-1] < 1:
        raise ValueError(f"allocations must have shape (K,) or (T, K), got {a.shape}")
    if np.any(~np.isfinite(a)) or np.any(a < 0):
        raise ValueError("allocations must be finite counts >= 0")
    totals = a.reshape(-1, a.shape[-1]).sum(axis=0)
    total = totals.sum()
    if total <= 0:
        return 0.0
    return float(np.max(np.abs(totals / total - 1.0 / totals.size)))


def max_mean_deviation(values: Any, normalize: bool = False) -> float:
    """Largest deviation from the mean, ``max_k |v_k - mean(v)|``, optionally divided by ``max(v)``.

    Hu et al.'s (2024) long-term gap of attention allocation (§VI-B): on the sites' true incident
    rates, unnormalised (their evaluation), or on the incidents counted per site over a window,
    divided by the largest count (their training signal; ``normalize=True``, counts >= 0, 0 when they are all 0).

    :param values: a non-empty 1-D array, one number per site: e.g. the rates Λ or the incident counts h.
    :param normalize: divide by ``max(v)``; the values must then be >= 0, and all zeros give 0.
    :return: ``max_k |v_k - mean(v)|``, or that divided by ``max(v)`` when ``normalize``.
    """
    v = _as_vector(values, "values")
    if not isinstance(normalize, (bool, np.bool_)):
        raise ValueError(f"normalize must be True or False, got {normalize!r}")
    dev = float(np.max(np.abs(unfairness(v))))
    if not normalize:
        return dev
    if np.any(v < 0):
        raise ValueError(f"max_mean_deviation with normalize=True needs values >= 0 (counts), got {v.tolist()}")
    top = float(v.max())
    return dev / top if top > 0 else 0.0
