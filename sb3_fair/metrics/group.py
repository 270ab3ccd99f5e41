"""Group fairness of returns: demographic parity, conditional statistical parity, counterfactual fairness and their
normalised forms (La Malfa et al. 2024, arXiv:2410.12889; La Malfa et al. 2025, arXiv:2502.03953), and the price of
fairness (La Malfa et al. 2025, §6.2)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from sb3_fair.metrics._checks import _as_array, _as_groups, _as_vector, _finite


def _mean(v: np.ndarray) -> float:
    """``float(v.mean())`` of a finite, non-empty float64 array; when the sum behind it overflows float64 (entries near
    1e308), the mean of ``v / max|v|`` times ``max|v|``, which is finite (a mean lies between the entries)."""
    with np.errstate(over="ignore", invalid="ignore"):
        m = float(v.mean())
    if math.isfinite(m):
        return m
    scale = float(np.max(np.abs(v)))
    return float(np.clip((v / scale).mean(), -1.0, 1.0)) * scale


def _beyond_float64(what: str, shown: str) -> ValueError:
    """The error of a gap whose true value exceeds float64 (the data's scale; never returned as inf or NaN)."""
    return ValueError(
        f"{what} is {shown}, beyond float64's range (about 1.8e308): rescale the returns (e.g. divide them by their "
        "largest magnitude), or use the normalised form, which stays in [-1, 1]"
    )


def _difference(first: float, second: float, what: str) -> float:
    """``first - second``, or a ValueError naming ``what`` when it exceeds float64."""
    out = first - second
    if not math.isfinite(out):
        raise _beyond_float64(what, f"{first!r} - {second!r}")
    return out


def group_means(returns: Any, groups: Any) -> dict[int, float]:
    """Mean return of each group: ``{group: mean of returns[groups == group]}``."""
    r = _as_vector(returns, "returns")
    g = _as_groups(groups, r.size)
    return {int(k): _mean(r[g == k]) for k in np.unique(g)}


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
    return _difference(_mean(r[g == protected]), _mean(r[g != protected]), "the demographic-parity gap")


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
    with np.errstate(over="ignore"):
        diffs = r[p_idx][:, None] - r[u_idx][None, :]
    scale = 1.0
    if not np.isfinite(diffs).all():  # returns near 1e308: the differences of the returns / max|r|, scaled back
        scale = float(np.max(np.abs(r)))
        diffs = (r[p_idx] / scale)[:, None] - (r[u_idx] / scale)[None, :]
    if attributes is not None:
        a = np.asarray(attributes)
        if a.shape[:1] != (r.size,):
            raise ValueError(f"attributes must have one row per agent ({r.size}), got shape {a.shape}")
        a = a.reshape(r.size, -1)
        same = np.all(a[p_idx][:, None, :] == a[u_idx][None, :, :], axis=-1)
        if not np.any(same):
            raise ValueError("no protected/unprotected pair is equal on the other attributes")
        mean = float(diffs[same].mean())
    else:
        mean = float(diffs.mean())
    if scale == 1.0:
        return mean
    if not math.isfinite(mean * scale):
        raise _beyond_float64("the pairwise demographic-parity gap", f"{mean!r} * {scale!r}")
    return mean * scale


def demographic_parity_norm(returns: Any, groups: Any, protected: int = 1) -> float:
    """Normalised demographic parity of fair-PPO's Table 1 (La Malfa et al. 2025): ``(R_s - R_ns) / max(|R_s| + |R_ns|, 1)``.

    ``R_s`` is the *total* return of the protected (sensitive) group, ``R_ns`` that of the others.
    Positive means the protected group is ahead, as :func:`demographic_parity` (sb3-fair's one sign
    convention for signed gaps). The paper prints the opposite sign, ``(R_ns - R_s)``, with the same
    magnitude: its Table 1 figure is minus this one (sb3-fair < 0.5.0 called that form
    ``normalized_demographic_parity``). The paper divides by ``max(R_ns + R_s, 1)`` for its
    non-negative returns (apples); dividing by the absolute totals gives the same magnitude there and
    keeps the figure in [-1, 1] when returns can be negative (the paper's form would give 200 for
    returns ``[-100, -100, -200, -200]``).
    """
    r = _as_vector(returns, "returns")
    g = _as_groups(groups, r.size)
    _two_groups(g, protected)
    return _normalized_totals(r[g == protected], r[g != protected])


def _normalized_gap(first: float, second: float) -> float:
    """``(first - second) / max(|first| + |second|, 1)``, in [-1, 1]."""
    return (first - second) / max(abs(first) + abs(second), 1.0)


def _normalized_totals(first: np.ndarray, second: np.ndarray) -> float:
    """:func:`_normalized_gap` of the totals of two finite float64 arrays. Where a total or the difference overflows
    float64 (returns near 1e308) it is computed on the returns divided by their largest magnitude ``s``:
    ``(A - B) / max(|A| + |B|, 1) = (A/s - B/s) / max(|A/s| + |B/s|, 1/s)``, finite and in [-1, 1], never NaN."""
    with np.errstate(over="ignore", invalid="ignore"):
        out = _normalized_gap(float(first.sum()), float(second.sum()))
    if math.isfinite(out):
        return out
    scale = max(float(np.max(np.abs(first))), float(np.max(np.abs(second))))
    a, b = float((first / scale).sum()), float((second / scale).sum())
    return float(np.clip((a - b) / max(abs(a) + abs(b), 1.0 / scale), -1.0, 1.0))


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


def _mean_difference(a: np.ndarray, b: np.ndarray, what: str) -> float:
    """``mean(a - b)`` of two finite float64 arrays of one shape; scaled where an entry's difference overflows
    float64, and a ValueError naming ``what`` when the mean itself exceeds it."""
    with np.errstate(over="ignore", invalid="ignore"):
        out = float(np.mean(a - b))
    if math.isfinite(out):
        return out
    scale = max(float(np.max(np.abs(a))), float(np.max(np.abs(b))))  # an entry's difference overflowed: scaled
    scaled = float(np.mean(a / scale - b / scale))
    out = scaled * scale
    if not math.isfinite(out):
        raise _beyond_float64(what, f"{scaled!r} * {scale!r}")
    return out


def counterfactual_fairness(factual: Any, counterfactual: Any) -> float:
    """Counterfactual fairness gap (La Malfa et al. 2024 Eq. 2, La Malfa et al. 2025 Eq. 3), run against run.

    Mean over matched agents of ``R_i(factual) - R_i(counterfactual)`` where the counterfactual run
    flips the protected attribute with everything else (seed, positions) equal; 0 is fair. Its sign
    is that of the runs' order, not of the groups: the figures ``cf_gap`` and ``cf_norm`` use
    :func:`counterfactual_gap` and :func:`counterfactual_gap_norm`, oriented by group.
    """
    a = _as_vector(factual, "factual")
    b = _as_vector(counterfactual, "counterfactual")
    if a.shape != b.shape:
        raise ValueError(f"factual and counterfactual must match agent for agent, got {a.shape} and {b.shape}")
    return _mean_difference(a, b, "the counterfactual-fairness gap (the mean of factual - counterfactual)")


def normalized_counterfactual_fairness(factual: Any, counterfactual: Any) -> float:
    """Normalised counterfactual unfairness of fair-PPO's Table 1 (La Malfa et al. 2025 §5.1, §6), run against run.

    ``(R_f - R_cf) / max(|R_f| + |R_cf|, 1)`` with ``R_f`` and ``R_cf`` the total returns of the factual
    and the counterfactual run (in La Malfa et al.'s (2025) evaluation nobody is impaired in the factual run and
    everybody in the counterfactual one, so this is the normalised DP form across the two runs, with the
    paper's sign; the absolute totals keep it in [-1, 1] for negative returns). The figure ``cf_norm`` is
    :func:`counterfactual_gap_norm`, oriented by group (protected minus unprotected): minus this one there.
    """
    a = _as_vector(factual, "factual")
    b = _as_vector(counterfactual, "counterfactual")
    if a.shape != b.shape:
        raise ValueError(f"factual and counterfactual must match agent for agent, got {a.shape} and {b.shape}")
    return _normalized_totals(a, b)


def _as_twins(twins: Any, n: int) -> np.ndarray:
    """``twins`` checked as a pairing of ``n`` stakeholders (``twins[twins[x]] == x != twins[x]``)."""
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
    return tw


def counterfactual_pairs(groups: Any, twins: Any, protected: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """The twin pairs that counterfactual fairness compares, each oriented by group: protected member, unprotected one.

    A pair whose two members are both in the protected group or both outside it is left out (it says
    nothing about the protected attribute). With :class:`~sb3_fair.wrappers.CounterfactualPair`'s
    ``mode="flip"`` the protected member is in the factual world for some pairs and in the
    counterfactual one for others; with ``mode="extreme"`` always in the counterfactual one.

    :param groups: protected attribute per stakeholder (both worlds' agents).
    :param twins: index of each stakeholder's twin, a pairing (``twins[twins[x]] == x != twins[x]``).
    :param protected: the group value of the protected stakeholders.
    :return: ``(protected_members, unprotected_members)``, two index arrays of one length (0 when no pair
        has one member in each group).
    """
    g = _as_groups(groups, np.asarray(groups).size)
    tw = _as_twins(twins, g.size)
    first = np.flatnonzero(tw > np.arange(g.size))
    second = tw[first]
    first_protected, second_protected = g[first] == protected, g[second] == protected
    keep = first_protected != second_protected
    prot = np.where(first_protected, first, second)[keep]
    unprot = np.where(first_protected, second, first)[keep]
    return prot, unprot


def _oriented(returns: Any, groups: Any, twins: Any, protected: int) -> tuple[np.ndarray, np.ndarray]:
    r = _as_vector(returns, "returns")
    if isinstance(protected, bool) or not isinstance(protected, (int, np.integer)):
        raise ValueError(f"protected must be an int (the protected group's id), got {protected!r}")
    prot, unprot = counterfactual_pairs(_as_groups(groups, r.size), twins, protected)
    if prot.size == 0:
        raise ValueError(
            f"counterfactual fairness needs a twin pair with one member in the protected group ({protected}) and "
            f"one outside it; got groups {np.asarray(groups).tolist()} and twins {np.asarray(twins).tolist()}"
        )
    return r[prot], r[unprot]


def counterfactual_gap(returns: Any, groups: Any, twins: Any, protected: int = 1) -> float:
    """Counterfactual fairness gap oriented by group (La Malfa et al. 2024 Eq. 2, La Malfa et al. 2025 Eq. 3).

    Mean over the twin pairs of :func:`counterfactual_pairs` of the protected member's return minus
    its unprotected twin's: positive means the protected group is ahead, as :func:`demographic_parity`;
    0 is fair. With ``CounterfactualPair(mode="extreme")`` it is minus :func:`counterfactual_fairness`
    of the factual and the counterfactual run (sb3-fair < 0.5.0 logged that as ``cf``); with
    ``mode="flip"`` the pairs no longer cancel each other.

    :param returns: each stakeholder's return (both worlds' agents).
    :param groups: protected attribute per stakeholder.
    :param twins: index of each stakeholder's twin.
    :param protected: the group value of the protected stakeholders.
    """
    prot, unprot = _oriented(returns, groups, twins, protected)
    return _mean_difference(prot, unprot, "the counterfactual-fairness gap (protected minus unprotected twin)")


def counterfactual_gap_norm(returns: Any, groups: Any, twins: Any, protected: int = 1) -> float:
    """Normalised counterfactual fairness of fair-PPO's Table 1 oriented by group (La Malfa et al. 2025 §5.1, §6).

    ``(R_p - R_u) / max(|R_p| + |R_u|, 1)`` with ``R_p`` the total return of the protected members of
    the twin pairs of :func:`counterfactual_pairs` and ``R_u`` that of their unprotected twins: positive
    means the protected group is ahead, in [-1, 1]. The paper prints the opposite sign (factual,
    unimpaired, minus counterfactual, impaired) with the same magnitude: with
    ``CounterfactualPair(mode="extreme")`` this is minus :func:`normalized_counterfactual_fairness`
    (sb3-fair < 0.5.0 logged that as ``cf_normalized``).

    :param returns: each stakeholder's return (both worlds' agents).
    :param groups: protected attribute per stakeholder.
    :param twins: index of each stakeholder's twin.
    :param protected: the group value of the protected stakeholders.
    """
    prot, unprot = _oriented(returns, groups, twins, protected)
    return _normalized_totals(prot, unprot)


def conditional_statistical_parity_norm(
    returns: Any, groups: Any, factors: Any, protected: int = 1
) -> dict[int, float]:
    """The normalised DP form of fair-PPO's Table 1 within each stratum of the legitimate factor.

    La Malfa et al. 2025 reports CSP unfairness per berry preference ("G1/G2"):
    ``{factor: demographic_parity_norm(returns[stratum], groups[stratum])}`` for every stratum
    that contains both groups; positive means the protected group is ahead within the stratum (the
    paper prints the opposite sign, with the same magnitude; sb3-fair < 0.5.0 called that form
    ``normalized_conditional_statistical_parity``).
    """
    r = _as_vector(returns, "returns")
    g = _as_groups(groups, r.size)
    f = _as_groups(factors, r.size, "factors")
    out = {}
    for k in np.unique(f):
        sel = f == k
        if np.any(g[sel] == protected) and np.any(g[sel] != protected):
            out[int(k)] = demographic_parity_norm(r[sel], g[sel], protected)
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
    groups, scaled by the stratum's share of all the stakeholders, so that ``sum |C @ r|`` is the
    ``mean_abs`` figure when every stratum holds both groups, and that figure times the share of the stakeholders in
    the strata that do otherwise, since ``mean_abs`` weighs those strata only; Eq. 4) and :func:`counterfactual_fairness` (one row per agent ``x`` and its
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
        tw = _as_twins(twins, n)
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
