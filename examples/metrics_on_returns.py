"""Fairness metrics on returns you already have: pure NumPy, no training needed.

    python examples/metrics_on_returns.py
"""

import numpy as np

from sb3_fair import metrics

# Per-stakeholder episode returns, their protected attribute (1 = protected) and a legitimate factor.
returns = np.array([4.0, 6.0, 9.0, 11.0, 5.0, 10.0])
groups = np.array([1, 1, 0, 0, 1, 0])
factors = np.array([0, 1, 0, 1, 1, 1])

print("demographic parity gap (protected - others):", metrics.demographic_parity(returns, groups))
print("normalised DP (fair-PPO Table 1 magnitude):  ", round(metrics.demographic_parity_norm(returns, groups), 3))
print("conditional statistical parity:             ", metrics.conditional_statistical_parity(returns, groups, factors))
print("welfare: utilitarian", metrics.utilitarian(returns), "egalitarian", metrics.egalitarian(returns),
      "log-Nash", round(metrics.log_nash(returns), 3), "Gini", round(metrics.gini(returns), 3))

# The FairQCM paper's doughnuts: (6, 8, 10) is unfair to A by -2 and in favour of C by +2.
print("unfairness of (6, 8, 10):", metrics.unfairness([6, 8, 10]))

# Fairness over time (Alamdari et al. 2024, Fig. 1): two vaccine plans, equal at the end, not month by month.
plan_1 = np.cumsum([[20, 0], [20, 0], [0, 20], [0, 20]], axis=0)
plan_2 = np.cumsum([[10, 10]] * 4, axis=0)
for name, plan in [("plan 1", plan_1), ("plan 2", plan_2)]:
    print(name, "long-term:", metrics.fairness_score(plan, "parity", "long_term"),
          "worst month:", metrics.fairness_score(plan, "parity", "anytime", how="min"))

# Team fairness (Grupen et al. 2022): one of three pursuers always captures -> log2(3) bits.
print("I(R;Z) one agent always credited:", round(metrics.team_fairness(np.tile([0, 0, 1], (20, 1))), 3))
print("price of fairness, returns 44 vs 100:", metrics.price_of_fairness(44, 100), "%")
