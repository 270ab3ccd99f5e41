"""The short- and long-term fairness gaps of Hu et al.'s (2024, arXiv:2401.06318) three case studies: equal
opportunity in lending (Eq. 8), allocation shares in attention allocation (Eq. 9), vaccination and health states in
epidemic control (Eq. 10, §VI-C). The envs report them through :mod:`sb3_fair.common.protocol`."""

from __future__ import annotations

from typing import Any

import numpy as np

from sb3_fair.metrics._checks import _as_array, _as_groups, _as_vector


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
