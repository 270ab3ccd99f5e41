"""FairDDPG: SB3's DDPG with the Fair-ER equivariance regulariser (the algorithm of the Fair-ER paper)."""

from __future__ import annotations

from typing import ClassVar

from stable_baselines3 import DDPG
from stable_baselines3.common.policies import BasePolicy

from sb3_fair.common.fair_algorithm import FairAlgorithmMixin
from sb3_fair.common.fair_er.regularizer import FairERMixin
from sb3_fair.common.loss_hooks import ActorLossHook
from sb3_fair.ddpg.policies import FairEPolicy


class FairDDPG(FairERMixin, FairAlgorithmMixin, ActorLossHook, DDPG):
    """DDPG with the Fair-ER equivariance regulariser of Grupen, Selman and Lee, "Cooperative Multi-Agent
    Fairness and Equivariant Policies" (AAAI 2022, arXiv:2106.05727), Eqs. 9-11: the paper trains
    Fair-ER with DDPG.

    A subclass of SB3's :class:`~stable_baselines3.DDPG` (``isinstance(model, DDPG)`` holds),
    constructed exactly like it, plus ``equivariance_coef`` and ``equivariance_distance``
    (:class:`~sb3_fair.common.fair_er.FairERMixin`) and ``fairness_window`` and ``wandb``
    (:class:`~sb3_fair.common.fair_algorithm.FairAlgorithmMixin`). The regulariser enters TD3's update through
    :class:`~sb3_fair.common.loss_hooks.ActorLossHook`, below the fairness mixins. ``equivariance_coef=0`` is DDPG;
    ``policy="FairEPolicy"`` gives Fair-E.
    """

    policy_aliases: ClassVar[dict[str, type[BasePolicy]]] = {**DDPG.policy_aliases, "FairEPolicy": FairEPolicy}


__all__ = ["FairDDPG"]
