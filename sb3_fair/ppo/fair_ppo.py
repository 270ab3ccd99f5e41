"""FairPPO: SB3's PPO with fair-PPO's group penalties for parameter-shared multi-agent training."""

from __future__ import annotations

from typing import Any, TypeVar

from stable_baselines3 import PPO
from stable_baselines3.common.type_aliases import GymEnv

from sb3_fair.common.fair_algorithm import FairAlgorithmMixin
from sb3_fair.common.fairness_terms.mixin import OnPolicyFairnessMixin
from sb3_fair.common.long_term.massaging import ActionMassagingMixin
from sb3_fair.ppo.presets import check_env, check_env_kwargs, preset_kwargs

SelfFairPPO = TypeVar("SelfFairPPO", bound="FairPPO")


class FairPPO(ActionMassagingMixin, OnPolicyFairnessMixin, FairAlgorithmMixin, PPO):
    """PPO with the retrospective and prospective group penalties of fair-PPO (La Malfa, Zhang, Luck and
    Black, "Fairness Aware Reinforcement Learning via Proximal Policy Optimization", 2025, arXiv:2502.03953, §4.2, Eqs. 5-7).

    Constructed exactly like SB3's :class:`~stable_baselines3.PPO`, plus ``fairness`` and the arguments of its fairness
    term (:mod:`sb3_fair.common.fairness_terms`; here :class:`~sb3_fair.common.group_penalty.GroupPenaltyTerm`'s
    ``alpha``, ``beta``, ``fairness_coef``, ``protected_group``, ``agents_per_instance``) and of
    :class:`~sb3_fair.common.fair_algorithm.FairAlgorithmMixin` (``fairness_window``, ``wandb``).
    The env is a multi-agent VecEnv with one slot per agent and parameter sharing, e.g.
    :func:`sb3_fair.wrappers.make_multiagent_vec_env` of a PettingZoo parallel game whose infos
    carry each agent's ``"group"`` (the protected attribute; also ``"factor"`` for CSP and
    ``"twin"`` for CF, as :class:`~sb3_fair.wrappers.CounterfactualPair` provides). Groups are read
    from the infos at every step, because games redraw them between episodes.

    FairPPO maximises ``(1/n) sum_x J_x - fairness_coef * (alpha * D_retro + beta * D_pro)`` per game
    instance, with ``D`` the DP, CSP or CF gap of the returns realised so far in the episode
    (retrospective) or of the critic's values (prospective). The penalty changes the actor's
    gradient by reweighting each agent's advantage, ``A'_x = w_x A_x`` (derivation and formula:
    :mod:`sb3_fair.common.group_penalty`); the critic's target is left unbiased. (The authors' code
    detaches the penalty from the graph, so there it never reaches a gradient.)

    With ``fairness_coef=0`` or ``alpha = beta = 0`` FairPPO is PPO: it accepts every env PPO
    accepts and trains exactly like it (same seed, same actions and losses).

    Logged under ``fairness/``: the episode figures of the games'
    :class:`~sb3_fair.wrappers.ParallelFairnessMonitor` averaged over recent episodes (``group_<g>_mean``,
    ``dp``, ``dp_abs``, ``dp_norm``, ``csp_norm_<k>``, ``csp_mean_abs``, ``cf_gap``, ``cf_norm``, ...:
    the table of :mod:`sb3_fair.common.figure_table`; every signed gap positive when the protected group is ahead), the two penalty parts ``penalty_retro`` and
    ``penalty_pro`` of the last rollout, and the spread of the advantage weights
    (``adv_weight_std``, ``adv_weight_min``, ``adv_weight_max``).

    ``fairness="long_term"`` (F-PPO's advantage regularisation: Hu, Lear, Zhang 2024, arXiv:2401.06318,
    Eqs. 4 and 7) or ``"a_ppo"`` (Yu, Qin, Lee, Gao 2022, arXiv:2210.12546) instead regularise the
    advantages of a single-agent env that reports the short- and long-term fairness gaps in its infos,
    with the keyword arguments of :class:`~sb3_fair.common.long_term.LongTermTerm`
    (``fairness_coef`` a weight or a pair, ``delta``, ``omega``, ``regularization``); the group
    penalty is then off. An argument that the chosen ``fairness`` does not use is refused (``ValueError``)
    unless left at its default: ``alpha``, ``beta``, ``protected_group`` and ``agents_per_instance`` with
    ``"long_term"`` / ``"a_ppo"``, ``delta`` with anything but ``"long_term"``, ``omega`` with anything
    but ``"a_ppo"``, ``regularization`` with ``"dp"`` / ``"csp"`` / ``"cf"``. Logged: each term's rollout
    mean; ``fairness/short_term`` and ``fairness/long_term`` (the rollout's mean gaps) for every env that
    reports them, with or without the regularisation. ``fairness=`` also takes your own
    :class:`~sb3_fair.common.fairness_terms.FairnessTerm` object (or a name given by its ``register_term``).

    Example::

        from sb3_fair import FairPPO
        from sb3_fair.envs import AllelopathicHarvestEnv
        from sb3_fair.wrappers import make_multiagent_vec_env

        vec_env = make_multiagent_vec_env(AllelopathicHarvestEnv.from_preset("small"), n_instances=4)
        model = FairPPO("MlpPolicy", vec_env, fairness="dp", alpha=0.5, beta=0.5, verbose=1)
        model.learn(1_000_000)
    """

    @classmethod
    def from_preset(
        cls: type[SelfFairPPO], name: str, env: GymEnv | str, variant: str = "f_ppo", **overrides: Any
    ) -> SelfFairPPO:
        """A FairPPO with Hu, Lear, Zhang's (2024, arXiv:2401.06318) settings for one of their case studies.

        :param name: ``"delayed_impact_lending"``, ``"attention"`` or ``"epidemic"`` (the envs
            ``sb3_fair/DelayedImpactLending-v0``, ``AttentionAllocation-v0``, ``EpidemicControl-v0``).
        :param env: the env (or its id), the case study's: an env that is clearly another sb3-fair env (an id, or
            an env or VecEnv whose unwrapped class is another case study's) is refused, since the preset's network,
            rollout length and τ schedule are its own case study's.
        :param variant: ``"f_ppo"`` (long-term regularisation and action massaging), ``"f_ppo_l"``
            (without massaging), ``"a_ppo"`` (Yu et al.'s 2022 baseline), ``"ppo"`` (all fairness off), or for
            lending ``"f_ppo_authors"`` (F-PPO with the authors' code's tie rule, training Δl and terminal horizon;
            an id is made with those env arguments, an env must have them).
        :param overrides: any FairPPO keyword argument; they win over the preset's.

        See :mod:`sb3_fair.ppo.presets` for the values and where they come from; train for
        ``sb3_fair.ppo.presets.PAPER_TIMESTEPS[name]`` steps for the paper's budget.

        Example::

            model = FairPPO.from_preset("delayed_impact_lending", "sb3_fair/DelayedImpactLending-v0", variant="f_ppo", seed=0)
            model.learn(700_000)
        """
        kwargs = preset_kwargs(name, variant)
        check_env(name, env)
        env = check_env_kwargs(name, variant, env)
        kwargs.update(overrides)
        return cls("MlpPolicy", env, **kwargs)


__all__ = ["FairPPO"]
