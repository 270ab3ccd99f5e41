"""FairTD3: SB3's TD3 with the Fair-ER equivariance regulariser."""

from __future__ import annotations

from typing import ClassVar

from stable_baselines3 import TD3
from stable_baselines3.common.policies import BasePolicy

from sb3_fair.common.fair_algorithm import FairAlgorithmMixin
from sb3_fair.common.fair_er.regularizer import FairERMixin
from sb3_fair.common.loss_hooks import ActorLossHook
from sb3_fair.td3.policies import FairEPolicy


class FairTD3(FairERMixin, FairAlgorithmMixin, ActorLossHook, TD3):
    """TD3 with the Fair-ER equivariance regulariser of Grupen, Selman and Lee, "Cooperative Multi-Agent
    Fairness and Equivariant Policies" (AAAI 2022, arXiv:2106.05727), Eqs. 9-11.

    Constructed exactly like SB3's :class:`~stable_baselines3.TD3`, plus ``equivariance_coef`` and
    ``equivariance_distance`` (:class:`~sb3_fair.common.fair_er.FairERMixin`, where the regulariser
    is described) and ``fairness_window`` and ``wandb``
    (:class:`~sb3_fair.common.fair_algorithm.FairAlgorithmMixin`). The regulariser enters TD3's update through
    :class:`~sb3_fair.common.loss_hooks.ActorLossHook`, below the fairness mixins. ``equivariance_coef=0`` is TD3;
    ``policy="FairEPolicy"`` gives Fair-E.
    """

    policy_aliases: ClassVar[dict[str, type[BasePolicy]]] = {**TD3.policy_aliases, "FairEPolicy": FairEPolicy}


__all__ = ["FairTD3"]
