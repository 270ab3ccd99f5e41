"""F-PPO (Hu, Lear, Zhang 2024, arXiv:2401.06318) and its A-PPO baseline: the long-term advantage regularisation
(Eqs. 4, 7; pure NumPy in :mod:`.advantages`), its fairness term for any on-policy parent (:mod:`.term`) and action
massaging (Eq. 6, :mod:`.massaging`)."""

from sb3_fair.common.long_term.advantages import (
    MASSAGING_TIES,
    MODES,
    a_ppo_terms,
    attention_massaging_threshold,
    check_massaging_ties,
    epidemic_massaging_threshold,
    lending_massaging_threshold,
    long_term_terms,
    massaging_choice,
    min_max_scale,
    regularized_advantages,
    weighted_rows,
)
from sb3_fair.common.long_term.term import LONG_TERM_METRICS, SIGNALS, LongTermTerm, LongTermTracker

__all__ = [
    "LONG_TERM_METRICS",
    "MASSAGING_TIES",
    "MODES",
    "SIGNALS",
    "LongTermTerm",
    "LongTermTracker",
    "a_ppo_terms",
    "attention_massaging_threshold",
    "check_massaging_ties",
    "epidemic_massaging_threshold",
    "lending_massaging_threshold",
    "long_term_terms",
    "massaging_choice",
    "min_max_scale",
    "regularized_advantages",
    "weighted_rows",
]
