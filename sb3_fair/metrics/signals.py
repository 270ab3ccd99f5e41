"""Fairness gaps of the stakeholders' benefits, for an env that reports only the stakeholder contract.

Hu, Lear, Zhang (2024, arXiv:2401.06318) measure short-term fairness Δs on a sliding window of the decisions (§V-B)
and long-term fairness Δl on the states (§V-C); an env that reports no more than its stakeholders' groups and each
step's benefits has neither, but it has the benefits each stakeholder received over a window of steps. Here the gap
of those sums between the groups stands in for both, as :class:`~sb3_fair.wrappers.FairnessSignals` computes them:
Δs over the last ``window`` steps, Δl over the episode so far. Each gap is unsigned (``>= 0``, lower is fairer), as
Δs and Δl are, and each is computed by :mod:`sb3_fair.metrics.group`'s functions.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sb3_fair.metrics._checks import _as_array, _as_groups, _finite
from sb3_fair.metrics.group import _difference, demographic_parity, demographic_parity_norm, group_means

#: the gaps :func:`benefit_gap` computes (``gap=``): ``"dp_abs"``, ``|mean of the protected group 1 - mean of the
#: other|`` (exactly two groups, one of them 1); ``"dp_norm_abs"``, the magnitude of the normalised DP form
#: (:func:`~sb3_fair.metrics.demographic_parity_norm`, in [0, 1]; the same two groups); ``"group_gap"``, the
#: largest group mean minus the smallest (two groups or more)
BENEFIT_GAPS = ("dp_abs", "dp_norm_abs", "group_gap")
#: the protected group of the DP gaps
PROTECTED = 1


def check_benefit_gap(gap: Any, groups: Any, name: str = "gap") -> str:
    """``gap``, checked to be one of :data:`BENEFIT_GAPS` and to be defined for stakeholders in ``groups``.

    :param gap: the gap's name.
    :param groups: each stakeholder's protected attribute (ints).
    :param name: the argument's name in the error messages.
    :raises ValueError: naming ``name`` and the accepted values, for an unknown gap, a DP gap without exactly two
        groups one of which is the protected group 1, or ``"group_gap"`` with one group only.
    """
    if not isinstance(gap, str) or gap not in BENEFIT_GAPS:
        raise ValueError(f"{name} must be one of {list(BENEFIT_GAPS)}, got {gap!r}")
    g = np.asarray(groups)
    ids = np.unique(_as_groups(g, g.size)).tolist()
    if gap in ("dp_abs", "dp_norm_abs") and (len(ids) != 2 or PROTECTED not in ids):
        raise ValueError(
            f"{name}={gap!r} compares the protected group {PROTECTED} with the other group: it needs stakeholders in "
            f"exactly two groups, one of them {PROTECTED}, got groups {ids}; use {name}='group_gap' (the largest group "
            "mean minus the smallest, any two groups or more), or declare the groups 0 and 1"
        )
    if gap == "group_gap" and len(ids) < 2:
        raise ValueError(
            f"{name}='group_gap' compares the group means: it needs stakeholders in two groups or more, got groups "
            f"{ids}; every accepted gap ({list(BENEFIT_GAPS)}) compares groups"
        )
    return gap


def benefit_gap(benefits: Any, groups: Any, gap: str = "dp_abs") -> float:
    """The unsigned group gap of the stakeholders' benefits (``>= 0``; 0 is parity, lower is fairer).

    :param benefits: what each stakeholder received, one entry per stakeholder (shape ``(n,)``), or one row per step
        (shape ``(T, n)``), which are summed over the steps first (an empty ``(0, n)`` sums to zeros: gap 0).
    :param groups: each stakeholder's protected attribute (ints; group 1 is the protected one).
    :param gap: one of :data:`BENEFIT_GAPS`: ``"dp_abs"``, ``abs(demographic_parity(sums, groups))``;
        ``"dp_norm_abs"``, ``abs(demographic_parity_norm(sums, groups))``; ``"group_gap"``,
        ``max - min`` of :func:`~sb3_fair.metrics.group_means`.
    :raises ValueError: as :func:`check_benefit_gap`, and for benefits that are not finite or not of one entry per
        stakeholder.
    """
    b = _as_array(benefits, "benefits")
    if b.ndim == 2:
        b = b.sum(axis=0)
    elif b.ndim != 1:
        raise ValueError(
            f"benefits must have one entry per stakeholder (shape (n,)) or one row per step (shape (T, n)), "
            f"got shape {b.shape}"
        )
    b = _finite(b, "benefits")
    g = _as_groups(groups, b.size)
    check_benefit_gap(gap, g)
    if gap == "dp_abs":
        return abs(demographic_parity(b, g, PROTECTED))
    if gap == "dp_norm_abs":
        return abs(demographic_parity_norm(b, g, PROTECTED))
    means = group_means(b, g).values()
    return _difference(max(means), min(means), "the group gap (the largest group mean minus the smallest)")


__all__ = ["BENEFIT_GAPS", "PROTECTED", "benefit_gap", "check_benefit_gap"]
