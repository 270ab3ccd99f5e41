"""FairDQN: DQN with counterfactual memory replay (FairQCM, Alamdari et al. 2024 §5.2, Eq. 2, Alg. 1)."""

from __future__ import annotations

import warnings
from typing import Any, ClassVar, TypeVar

import torch as th
from stable_baselines3 import DQN
from stable_baselines3.common.policies import BasePolicy
from stable_baselines3.common.type_aliases import GymEnv
from torch.nn import functional as F

from sb3_fair.common.fair_algorithm import FairAlgorithmMixin
from sb3_fair.common.fairqcm.mixin import FairQCMMixin
from sb3_fair.common.loss_hooks import TDLossHook
from sb3_fair.common.validation import check_choice, check_weights
from sb3_fair.dqn.policies import CnnPolicy, DQNPolicy, MlpPolicy, MultiInputPolicy
from sb3_fair.dqn.presets import check_env, preset_kwargs

SelfFairDQN = TypeVar("SelfFairDQN", bound="FairDQN")

LOSSES = ("huber", "mse")


class FairDQN(FairQCMMixin, FairAlgorithmMixin, TDLossHook, DQN):
    """Deep Q-Network with FairQCM counterfactual memory replay (Alamdari et al. 2024, §5.2, Eq. 2, Alg. 1).

    Constructed exactly like SB3's :class:`~stable_baselines3.DQN`, plus fairness keyword
    arguments. The env must honour the stakeholder contract (``stakeholders`` on the env or a wrapper, and
    ``info["benefits"]``); a gym env is wrapped in :class:`~sb3_fair.wrappers.FairnessMonitor`
    automatically, and ``fairness/<metric>`` is logged next to ``rollout/ep_rew_mean``.

    With ``counterfactual=True`` the env must carry a :class:`~sb3_fair.wrappers.MemoryAugmentation`
    and a :class:`~sb3_fair.wrappers.FairnessReward`. For each real transition
    ``(<s,m>, a, <s',m'>, r)`` FairDQN also stores, for every memory ``m~`` in a set ``M'_t`` chosen
    before the step's outcome is seen (Thm. 5.7) and excluding ``m_t``, the counterfactual transition
    ``(<s,m~>, a, <s', mu(m~, a, s')>, R(<s', mu(m~, a, s')>))`` (Eq. 2). The memory update ``mu`` and
    the reward ``R`` are :func:`~sb3_fair.common.fairqcm.memory.update_memory` and
    :func:`~sb3_fair.common.fairqcm.reward.fairness_reward`, the very functions the wrappers apply
    to real transitions; the filter B and task penalties that do not depend on memory carry over
    from the real step. The default ``M'_t`` is the paper's ``{m_i + 1, m_i + 2}^n`` (A.4.1; 32
    memories for n = 5); with more than ``max_counterfactuals`` members, that many are drawn at
    random before the step.

    With ``counterfactual=False``, ``potential_shaping=False``, ``loss="huber"`` and the policy's
    ``ortho_init=False`` (the defaults; the paper presets change the last two) FairDQN behaves exactly
    like DQN: same seed, same actions, same losses.

    :param policy: as in DQN (``"MlpPolicy"``, ...).
    :param env: as in DQN.
    :param counterfactual: add FairQCM counterfactual transitions to the replay buffer.
    :param counterfactual_offsets: the per-entry offsets of the counterfactual set
        (paper: ``(1, 2)``; the lending preset uses ``(0, 1, 2, 3, 4, 5)`` with min-memory, which gives
        the paper's ``<0, x +- k>``, k = 1..5). Finite numbers. With ``counterfactual=True`` offsets that can
        never give a counterfactual memory are refused when the env is set: all 0, none inside the memory's
        range (``|o| < max_value`` for a scaled or binary memory, ``o < max_value`` for a raw one), a single
        usable value with memory kind ``"min"``, or non-integer ones with a binary memory. Not used with
        ``counterfactual=False``, where they are still accepted (one config can toggle ``counterfactual``).
    :param max_counterfactuals: cap on the counterfactual memories per real step: when the set has
        more members, this many are drawn at random (with replacement, duplicates dropped) before the
        step. The default 32 keeps the paper's whole set for n <= 5 and samples for larger n;
        ``None`` always enumerates the whole set.
    :param loss: TD loss, ``"huber"`` (SB3's default) or ``"mse"`` (Alamdari et al.'s (2024) choice).
    :param potential_shaping: add ``gamma * Phi(m') - Phi(m)`` with ``Phi(m) = fairness_coef * W(m) / (1 - gamma)`` (W and
        ``fairness_coef`` are the env's :class:`~sb3_fair.wrappers.FairnessReward`'s) to the reward of
        every stored transition, real and counterfactual (:func:`~sb3_fair.common.fairqcm.reward.potential_shaping`;
        Ng, Harada & Russell 1999). The optimal policy is unchanged, but the network no longer has to fit the
        large value of the welfare already reached, only what each action adds to it: on the doughnut task this
        is what lets DQN and FairQCM learn to serve the customer who has had the fewest (sb3-fair's addition to
        the paper; ``benchmarks/RESULTS.md``). Needs the same env as ``counterfactual=True`` (a
        :class:`~sb3_fair.wrappers.MemoryAugmentation` and a :class:`~sb3_fair.wrappers.FairnessReward`) and
        ``gamma < 1``. The logged episode rewards stay the env's own. On the lending task, whose reward is mostly
        the task's penalties (which ``Phi`` does not see), it made FairQCM worse; it is off by default.
    :param exploration_decay: ``None`` (default) keeps SB3's linear exploration schedule
        (``exploration_fraction``). A number in (0, 1] decays epsilon per finished episode instead:
        ``max(exploration_final_eps, exploration_initial_eps * exploration_decay ** episodes)``, as
        Alamdari et al.'s (2024) code does with 0.999 (its presets use this).
    :param fairness_window: episodes averaged in ``fairness/*`` (default: ``stats_window_size``).
    :param wandb: stream the logs to Weights & Biases: ``True`` or a dict of :func:`wandb.init`
        arguments (offline without credentials; a W&B failure never stops training).
    :param kwargs: every other DQN argument.

    FairQCM and the shaping are :class:`~sb3_fair.common.fairqcm.mixin.FairQCMMixin`'s; the MSE loss enters DQN's
    update through :class:`~sb3_fair.common.loss_hooks.TDLossHook`, below the fairness mixins (so the
    non-finite parameter check wraps it as it wraps SB3's own update).
    """

    policy_aliases: ClassVar[dict[str, type[BasePolicy]]] = {
        "MlpPolicy": MlpPolicy,
        "CnnPolicy": CnnPolicy,
        "MultiInputPolicy": MultiInputPolicy,
    }

    def __init__(
        self,
        policy: str | type[DQNPolicy],
        env: GymEnv | str,
        *args: Any,
        loss: str = "huber",
        exploration_decay: float | None = None,
        **kwargs: Any,
    ) -> None:
        check_choice(loss, "loss", LOSSES)
        if exploration_decay is not None:
            try:
                decay = check_weights(exploration_decay, "exploration_decay", allow_zero=False)
            except ValueError:
                decay = 2.0  # reported below, with the accepted range
            if decay > 1.0:
                raise ValueError(f"exploration_decay must be None or a number in (0, 1], got {exploration_decay!r}")
            if (
                "exploration_fraction" in kwargs
            ):  # warned, not refused: the FairQCM paper's ablation adds the decay to presets
                warnings.warn(
                    f"FairDQN does not use exploration_fraction={kwargs['exploration_fraction']!r} (exploration_decay "
                    "replaces SB3's linear schedule)",
                    UserWarning,
                    stacklevel=2,
                )
        self.loss = loss
        self.exploration_decay = None if exploration_decay is None else float(exploration_decay)
        super().__init__(policy, env, *args, **kwargs)

    @classmethod
    def from_preset(
        cls: type[SelfFairDQN], name: str, env: GymEnv | str, counterfactual: bool = True, **overrides: Any
    ) -> SelfFairDQN:
        """A FairDQN with Alamdari et al.'s (2024) hyperparameters (Tables 1-2) for ``"donut"`` or ``"loan_applicants"``.

        ``counterfactual=False`` gives the paper's DQN baselines (Full, Min, Reset differ only in the
        env's memory). See :func:`sb3_fair.dqn.presets.preset_kwargs`; ``overrides`` win.

        :param name: ``"donut"`` (``sb3_fair/DonutAllocation-v0``) or ``"loan_applicants"`` (``sb3_fair/LoanApplicants-v0``).
        :param env: that experiment's env (or its id, or a VecEnv of it; memory and reward wrappers as the task
            needs). An env that is clearly another sb3-fair env is refused: the preset's network and buffer
            settings are its own task's.
        :param counterfactual: FairQCM (``True``) or the paper's DQN baselines (``False``).
        :param overrides: any FairDQN keyword argument; they win over the preset's.
        """
        kwargs = preset_kwargs(name, counterfactual)
        check_env(name, env)
        kwargs.update(overrides)
        return cls("MlpPolicy", env, counterfactual=counterfactual, **kwargs)

    def fairness_config(self) -> dict[str, Any]:
        """The fairness hyperparameters (stored in the W&B run config)."""
        return {**super().fairness_config(), "loss": self.loss, "exploration_decay": self.exploration_decay}

    # ------------------------------------------------------------------ training
    def _on_step(self) -> None:
        """DQN's target sync and exploration schedule; with ``exploration_decay``, epsilon per episode."""
        super()._on_step()
        if self.exploration_decay is not None:
            decayed = self.exploration_initial_eps * self.exploration_decay**self._episode_num
            self.exploration_rate = max(self.exploration_final_eps, decayed)
            self.logger.record("rollout/exploration_rate", self.exploration_rate)

    def uses_td_loss_hook(self) -> bool:
        """``loss="mse"`` changes DQN's TD loss (Huber, the default, is SB3's update itself)."""
        return self.loss != "huber"

    def td_loss(self, current_q_values: th.Tensor, target_q_values: th.Tensor) -> th.Tensor:
        """The squared TD error for ``loss="mse"`` (Alamdari et al.'s (2024) choice), else SB3's Huber loss."""
        if self.loss == "mse":
            return F.mse_loss(current_q_values, target_q_values)
        return super().td_loss(current_q_values, target_q_values)


__all__ = ["FairDQN"]
