"""FairMaskablePPO: sb3-contrib's MaskablePPO with fair-PPO's group penalties."""

from __future__ import annotations

from sb3_contrib import MaskablePPO

from sb3_fair.common.fair_algorithm import FairAlgorithmMixin
from sb3_fair.common.fairness_terms.mixin import OnPolicyFairnessMixin
from sb3_fair.common.long_term.massaging import ActionMassagingMixin


class FairMaskablePPO(ActionMassagingMixin, OnPolicyFairnessMixin, FairAlgorithmMixin, MaskablePPO):
    """MaskablePPO (invalid action masking, Huang and Ontañón 2020, arXiv:2006.14171) with the group
    penalties of fair-PPO (La Malfa, Zhang, Luck and Black, "Fairness Aware Reinforcement Learning via
    Proximal Policy Optimization", 2025, arXiv:2502.03953, Eqs. 5-7).

    Constructed exactly like sb3-contrib's :class:`~sb3_contrib.MaskablePPO` (its policies, its
    ``learn(..., use_masking=True)``), plus the keyword arguments of
    :class:`~sb3_fair.common.group_penalty.GroupPenaltyTerm` (``fairness``, ``alpha``, ``beta``,
    ``fairness_coef``, ``protected_group``, ``agents_per_instance``) and
    :class:`~sb3_fair.common.fair_algorithm.FairAlgorithmMixin` (``fairness_window``, ``wandb``).
    The penalty reweights the advantages before MaskablePPO's update, as in
    :class:`~sb3_fair.FairPPO`; masking is untouched. With ``fairness_coef=0`` it is MaskablePPO.
    ``fairness="long_term"`` / ``"a_ppo"`` regularise the advantages of every minibatch by the env's
    fairness signals instead (:class:`~sb3_fair.common.long_term.LongTermTerm`, as in
    :class:`~sb3_fair.FairPPO`).

    Example::

        from sb3_fair import FairMaskablePPO
        from sb3_fair.envs import AllelopathicHarvestEnv
        from sb3_fair.wrappers import make_multiagent_vec_env

        vec_env = make_multiagent_vec_env(AllelopathicHarvestEnv.from_preset("small"), n_instances=4)
        model = FairMaskablePPO("MlpPolicy", vec_env, fairness="dp", alpha=0.5, beta=0.5).learn(100_000)
    """


__all__ = ["FairMaskablePPO"]
