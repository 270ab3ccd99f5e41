"""Welfare functions, unfairness and fairness schemes over time (Alamdari et al. 2024, arXiv:2312.04772, §2, §4)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from sb3_fair._exact import SHORT
from sb3_fair.metrics._checks import _as_array, _as_vector, _finite, _nonnegative_number, _smallest, _sum


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


#: welfare name -> function, for :func:`welfare` and the wrappers' ``welfare=`` argument
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


#: how :func:`temporal_aggregate` combines per-timepoint welfare over a trace
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
