"""Fairness metrics and welfare functions: pure NumPy, the single source of truth.

Every wrapper, algorithm, logger and the CLI calls these functions; none re-derives them.
Nothing here imports torch or Stable-Baselines3. One module per family, all exported here
(``from sb3_fair import metrics; metrics.gini(...)``): :mod:`.welfare` (welfare functions and fairness
over time, Alamdari et al. 2024), :mod:`.group` (DP, CSP, CF and the price of fairness, La Malfa et al.),
:mod:`.team` (``I(R;Z)``, Grupen et al. 2022), :mod:`.distances` (Wasserstein and other distribution
distances), :mod:`.env_gaps` (the case studies' gaps of Hu et al. 2024) and :mod:`.signals` (the group gap of the
benefits, Δs and Δl of an env that reports only the stakeholder contract).

Conventions
-----------
* ``returns`` (or ``u``) is a 1-D array with one entry per stakeholder: the undiscounted sum of
  the stakeholder's benefits over an episode (``info["benefits"]``), unless stated otherwise.
* ``groups`` is an int array of the same length: each stakeholder's protected attribute.
  By default group ``1`` is the *protected* group and ``0`` the unprotected one.
* ``factors`` is an int array of the same length: each stakeholder's legitimate factor
  (the stratum of conditional statistical parity).
* **One sign for every signed group gap**: positive when the protected group is ahead
  (:func:`demographic_parity`, :func:`demographic_parity_norm`, :func:`conditional_statistical_parity`
  and its ``_norm`` form, :func:`counterfactual_gap` and its ``_norm`` form). fair-PPO's Table 1
  prints the normalised forms with the opposite sign; they keep its magnitude.

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

from sb3_fair.metrics.distances import (
    count_vector_distance,
    l2_distribution_gap,
    max_mean_deviation,
    point_cloud_wasserstein,
    sinkhorn_count_distance,
    smoothed_distribution,
    wasserstein_1,
)
from sb3_fair.metrics.env_gaps import (
    allocation_share_gap,
    equal_opportunity_gap,
    health_state_gap,
    true_positive_rates,
    vaccination_gap,
)
from sb3_fair.metrics.group import (
    conditional_statistical_parity,
    conditional_statistical_parity_norm,
    counterfactual_fairness,
    counterfactual_gap,
    counterfactual_gap_norm,
    counterfactual_pairs,
    demographic_parity,
    demographic_parity_norm,
    demographic_parity_pairwise,
    group_contrasts,
    group_means,
    normalized_counterfactual_fairness,
    price_of_fairness,
)
from sb3_fair.metrics.signals import BENEFIT_GAPS, benefit_gap, check_benefit_gap
from sb3_fair.metrics.team import capture_success, team_fairness
from sb3_fair.metrics.welfare import (
    TEMPORAL_AGGREGATIONS,
    WELFARE_FUNCTIONS,
    alpha_fair,
    egalitarian,
    fairness_score,
    generalized_gini,
    gini,
    log_nash,
    nash,
    overall_unfairness,
    parity,
    temporal_aggregate,
    unfairness,
    utilitarian,
    welfare,
    welfare_rows,
)

__all__ = [
    "BENEFIT_GAPS",
    "TEMPORAL_AGGREGATIONS",
    "WELFARE_FUNCTIONS",
    "allocation_share_gap",
    "alpha_fair",
    "benefit_gap",
    "capture_success",
    "check_benefit_gap",
    "conditional_statistical_parity",
    "conditional_statistical_parity_norm",
    "count_vector_distance",
    "counterfactual_fairness",
    "counterfactual_gap",
    "counterfactual_gap_norm",
    "counterfactual_pairs",
    "demographic_parity",
    "demographic_parity_norm",
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
    "normalized_counterfactual_fairness",
    "overall_unfairness",
    "parity",
    "point_cloud_wasserstein",
    "price_of_fairness",
    "sinkhorn_count_distance",
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


#: public functions of sb3-fair < 0.5.0 whose sign flipped when they were renamed: ``old name -> new name``
_RENAMED = {
    "normalized_demographic_parity": "demographic_parity_norm",
    "normalized_conditional_statistical_parity": "conditional_statistical_parity_norm",
}


def __getattr__(name: str) -> object:
    if name in _RENAMED:
        raise AttributeError(
            f"sb3_fair.metrics.{name} was renamed to {_RENAMED[name]} in 0.5.0; its sign is now positive = protected "
            "group ahead"
        )
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
