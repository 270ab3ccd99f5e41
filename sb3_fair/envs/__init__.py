"""Environments of sb3-fair; importing this module registers them with Gymnasium.

====================================== ===========================================================
id                                     what ``gym.make`` returns
====================================== ===========================================================
``sb3_fair/DonutAllocation-v0``        Alamdari et al.'s (2024) deep-RL doughnut task: 5 customers, p = 0.8,
                                       T = 100, full memory (binary) in the observation, reward
                                       log-Nash(U + 1), 0 when the doughnut is wasted
``sb3_fair/DonutAllocationTabular-v0`` the same with n = 3, T = 12 (Alamdari et al. 2024, A.2)
``sb3_fair/LoanApplicants-v0``         Alamdari et al.'s (2024) simulated lending: per-group loan counts
                                       (binary) in the observation, reward ``-|U_A - U_B|`` for a valid
                                       loan, -T for a loan to a non-applicant, -10T at the end
                                       without the 10 % margin
``sb3_fair/LoanApplicantsGaussian-v0`` the same with Gaussian credit changes (Alamdari et al. 2024, A.3)
``sb3_fair/PursuitEvasion-v0``         Grupen et al.'s (2022) toroidal pursuit-evasion: 3 pursuers (one joint
                                       env), capture credit per pursuer as benefits
``sb3_fair/DelayedImpactLending-v0``   Hu et al.'s (2024) bank loans (Liu et al.'s 2018 delayed-impact dynamics):
                                       2 groups, 7 credit clusters, 2000 steps; windowed TPR gap (Δs, Eq. 8)
                                       and credit-score W1 gap (Δl) in every info; what-if query
``sb3_fair/AttentionAllocation-v0``    Hu et al.'s (2024) attention allocation: 6 units over 5 sites, Poisson
                                       incidents, 1000 steps; allocation-share gap (Δs, Eq. 9) and spread of
                                       the incident rates (Δl) in every info; what-if query
``sb3_fair/EpidemicControl-v0``        Hu et al.'s (2024) epidemic control: SIR on the karate club, vaccinate
                                       one of 34 people or nobody per step, 20 steps; vaccination gap (Δs,
                                       Eq. 10) and S/I/R-fraction gap of the two communities (Δl); what-if query
====================================== ===========================================================

PettingZoo parallel games (not in Gymnasium's registry; turn them into an SB3 VecEnv with
:func:`sb3_fair.wrappers.make_multiagent_vec_env`): :class:`AllelopathicHarvestEnv` (La Malfa et al.'s (2025)
Allelopathic Harvest; ``AllelopathicHarvestEnv.from_preset("paper" | "medium" | "small" | "tiny")``)
and :class:`DisparityGame` (two groups, disparity set by one number; for tests and demos).

The three envs of Hu, Lear, Zhang (2024, arXiv:2401.06318) report the long-term fairness signals of
:mod:`sb3_fair.common.protocol` (``info["short_term_fairness"]``, ``info["long_term_fairness"]``)
and answer its what-if query (``fairness_what_if``); each comes with its paper's reference policy
(:class:`EqualOpportunityPolicy`, :class:`ProportionalAllocationPolicy`, :class:`MaxDegreePolicy`).
Their episode length is ``horizon`` (``gym.make(id, horizon=...)``).

Each factory takes ``memory`` (``"full"``, ``"min"``, ``"reset"`` or ``None`` for no memory),
``encoding`` and the bare env's keyword arguments, e.g.
``gym.make("sb3_fair/DonutAllocation-v0", memory="min", encoding="scaled")``.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from sb3_fair.common.registration import register_env_factory, registered_wrapper
from sb3_fair.envs.attention import AttentionAllocationEnv, ProportionalAllocationPolicy
from sb3_fair.envs.delayed_impact import DelayedImpactLendingEnv, EqualOpportunityPolicy
from sb3_fair.envs.disparity import DisparityGame
from sb3_fair.envs.donut import DonutAllocationEnv, greedy_allocation
from sb3_fair.envs.epidemic import EpidemicControlEnv, MaxDegreePolicy
from sb3_fair.envs.harvest import AllelopathicHarvestEnv
from sb3_fair.envs.lending import LoanApplicantsEnv
from sb3_fair.envs.pursuit import GreedyPursuitPolicy, PursuitEvasionEnv, SpeedCurriculum


def make_donut_allocation(
    memory: str | None = "full", encoding: str = "binary", period: int | None = None, **env_kwargs: Any
) -> gym.Env:
    """Alamdari et al.'s (2024) doughnut task (§6.1): bare env + memory + log-Nash reward, 0 when wasted."""
    env: gym.Env = DonutAllocationEnv(**env_kwargs)
    if memory is not None:
        env = registered_wrapper("MemoryAugmentation")(env, kind=memory, encoding=encoding, period=period)
    return registered_wrapper("FairnessReward")(env, welfare="log_nash", scheme="bounded", filter="benefit")


def make_loan_applicants(
    memory: str | None = "full", encoding: str = "binary", period: int | None = None, **env_kwargs: Any
) -> gym.Env:
    """Alamdari et al.'s (2024) simulated lending (§6.2): per-group loan memory, reward ``-|U_A - U_B|`` plus penalties."""
    env: gym.Env = LoanApplicantsEnv(**env_kwargs)
    if memory is not None:
        env = registered_wrapper("MemoryAugmentation")(
            env, kind=memory, per_group=True, encoding=encoding, period=period
        )
    return registered_wrapper("FairnessReward")(
        env, welfare="parity", aggregate="group", scheme="bounded", filter="benefit", task_coef=1.0
    )


# the factories' bare env classes, for sb3_fair.common.validation.env_class (a registration hook: common may not
# import the envs); and the wrappers they compose come from sb3_fair.wrappers the same way (a sibling of this layer)
register_env_factory(make_donut_allocation, DonutAllocationEnv)
register_env_factory(make_loan_applicants, LoanApplicantsEnv)


def _register() -> None:
    ids: dict[str, tuple[str, dict[str, Any]]] = {  # id -> (entry point, kwargs)
        "sb3_fair/DonutAllocation-v0": ("sb3_fair.envs:make_donut_allocation", {}),
        "sb3_fair/DonutAllocationTabular-v0": (
            "sb3_fair.envs:make_donut_allocation",
            {"n_customers": 3, "horizon": 12},
        ),
        "sb3_fair/LoanApplicants-v0": ("sb3_fair.envs:make_loan_applicants", {}),
        "sb3_fair/LoanApplicantsGaussian-v0": ("sb3_fair.envs:make_loan_applicants", {"credit_change": "gaussian"}),
        "sb3_fair/PursuitEvasion-v0": ("sb3_fair.envs.pursuit:PursuitEvasionEnv", {}),
        "sb3_fair/DelayedImpactLending-v0": ("sb3_fair.envs.delayed_impact:DelayedImpactLendingEnv", {}),
        "sb3_fair/AttentionAllocation-v0": ("sb3_fair.envs.attention:AttentionAllocationEnv", {}),
        "sb3_fair/EpidemicControl-v0": ("sb3_fair.envs.epidemic:EpidemicControlEnv", {}),
    }
    for env_id, (entry, kwargs) in ids.items():
        if env_id not in gym.registry:
            gym.register(id=env_id, entry_point=entry, kwargs=kwargs)


_register()

__all__ = [
    "AllelopathicHarvestEnv",
    "AttentionAllocationEnv",
    "DelayedImpactLendingEnv",
    "DisparityGame",
    "DonutAllocationEnv",
    "EpidemicControlEnv",
    "EqualOpportunityPolicy",
    "GreedyPursuitPolicy",
    "LoanApplicantsEnv",
    "MaxDegreePolicy",
    "ProportionalAllocationPolicy",
    "PursuitEvasionEnv",
    "SpeedCurriculum",
    "greedy_allocation",
    "make_donut_allocation",
    "make_loan_applicants",
]
