"""fair-PPO's group penalties (La Malfa et al. 2025, arXiv:2502.03953, Eqs. 5-7) as a fairness term of any on-policy
parent (:mod:`sb3_fair.common.fairness_terms`): demographic parity, conditional statistical parity and counterfactual
fairness."""

from sb3_fair.common.group_penalty.term import (
    GROUP_PENALTY_DEFAULTS,
    METRICS,
    GroupPenaltyTerm,
    GroupTracker,
    advantage_weights,
    check_metric,
)

__all__ = [
    "GROUP_PENALTY_DEFAULTS",
    "METRICS",
    "GroupPenaltyTerm",
    "GroupTracker",
    "advantage_weights",
    "check_metric",
]
