"""The one seam for an on-policy fairness method: :class:`FairnessTerm` (what a method adds to PPO, MaskablePPO or
RecurrentPPO), the registry of ``fairness=`` values, and the rollout buffer that stores a term's per-step signals.

:class:`~sb3_fair.common.fairness_terms.mixin.OnPolicyFairnessMixin` puts a term on its parent; ``FairPPO``,
``FairMaskablePPO`` and ``FairRecurrentPPO`` each mix it in once. The shipped terms are fair-PPO's group penalty
(:class:`~sb3_fair.common.group_penalty.GroupPenaltyTerm`: ``"dp"``, ``"csp"``, ``"cf"``) and F-PPO's long-term
regulariser with the A-PPO baseline (:class:`~sb3_fair.common.long_term.LongTermTerm`: ``"long_term"``,
``"a_ppo"``); a user's own term is a :class:`FairnessTerm` subclass, passed as ``fairness=MyTerm(...)`` or
registered by :func:`register_term` under a name.
"""

from sb3_fair.common.fairness_terms.base import (
    FairnessTerm,
    SignalTracker,
    fairness_methods,
    register_term,
    registered_terms,
    term_class,
)
from sb3_fair.common.fairness_terms.buffers import FairnessBufferMixin, fairness_buffer_class

__all__ = [
    "FairnessBufferMixin",
    "FairnessTerm",
    "SignalTracker",
    "fairness_buffer_class",
    "fairness_methods",
    "register_term",
    "registered_terms",
    "term_class",
]
