"""FairRecurrentPPO: sb3-contrib's RecurrentPPO with fair-PPO's group penalties."""

from __future__ import annotations

from sb3_contrib import RecurrentPPO

from sb3_fair.common.fair_algorithm import FairAlgorithmMixin
from sb3_fair.common.fairness_terms.mixin import OnPolicyFairnessMixin
from sb3_fair.common.long_term.massaging import ActionMassagingMixin


class FairRecurrentPPO(ActionMassagingMixin, OnPolicyFairnessMixin, FairAlgorithmMixin, RecurrentPPO):
    """RecurrentPPO (an LSTM policy) with the group penalties of fair-PPO (La Malfa, Zhang, Luck and
    Black, "Fairness Aware Reinforcement Learning via Proximal Policy Optimization", 2025, arXiv:2502.03953, Eqs. 5-7).

    Constructed exactly like sb3-contrib's :class:`~sb3_contrib.RecurrentPPO` (``"MlpLstmPolicy"``,
    ...), plus the keyword arguments of :class:`~sb3_fair.common.group_penalty.GroupPenaltyMixin`
    (``fairness``, ``alpha``, ``beta``, ``fairness_coef``, ``protected_group``,
    ``agents_per_instance``; or a term of one's own, :mod:`sb3_fair.common.fairness_terms`) and :class:`~sb3_fair.common.fair_algorithm.FairAlgorithmMixin`
    (``fairness_window``, ``wandb``). The penalty reweights the advantages of the recurrent rollout
    buffer before RecurrentPPO's update; the prospective part uses the LSTM critic's values. With
    ``fairness_coef=0`` it is RecurrentPPO.
    ``fairness="long_term"`` / ``"a_ppo"`` regularise the advantages of every minibatch by the env's
    fairness signals instead (:class:`~sb3_fair.common.long_term.LongTermTerm`, as in
    :class:`~sb3_fair.FairPPO`).

    Example::

        from sb3_fair import FairRecurrentPPO
        from sb3_fair.envs import DisparityGame
        from sb3_fair.wrappers import make_multiagent_vec_env

        vec_env = make_multiagent_vec_env(DisparityGame(n_agents=8), n_instances=2)
        model = FairRecurrentPPO("MlpLstmPolicy", vec_env, n_steps=40, fairness="dp").learn(20_000)
    """

    # RecurrentPPO's rollout clips a Box action to the bounds, even a squashed (gSDE) one: massaging asks
    # the env about the action that this rollout executes
    _rollout_unscales_squashed_actions = False


__all__ = ["FairRecurrentPPO"]
