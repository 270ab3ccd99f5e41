"""Fairness-scheme reward wrapper (Alamdari et al. 2024, Defs. 5.6 and 5.8)."""

from __future__ import annotations

from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np

from sb3_fair.common.fairqcm.reward import FilterFn, RewardSpec, assessed, fairness_reward
from sb3_fair.common.protocol import FAIRNESS_TERMS, get_benefits, get_stakeholders
from sb3_fair.wrappers._stacking import refuse_second


class FairnessReward(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Replace the reward by ``fairness_coef * W(U_t) * B_t + task_coef * r_env`` (Alamdari et al. 2024, Defs. 5.6, 5.8).

    ``U_t`` is each stakeholder's cumulative benefit since the episode started (the stakeholder
    status of Alamdari et al. 2024 §4), ``W`` a welfare function and ``B_t`` the scheme's filter. With the
    scheme's sum over time this makes a reward-like (or bounded reward-like) fairness scheme: the
    episode's undiscounted return is the fairness score of the trace (Def. 4.7).
    The pieces of the reward are put in ``info["fairness_terms"]`` (``status``, ``active``,
    ``task_reward``) so that counterfactual replay can recompute the reward for
    another memory with the same function.

    A ``gym.Wrapper`` rather than a ``gym.RewardWrapper``: the reward depends on the step's ``info``
    (the benefits) and on the status kept across steps, which ``RewardWrapper.reward(reward)`` does
    not see. Its arguments are recorded in ``env.spec`` (``gymnasium.utils.RecordConstructorArgs``).

    Example (Alamdari et al.'s (2024) doughnut reward: log-Nash welfare of U + 1, 0 when the doughnut is wasted)::

        from sb3_fair.envs import DonutAllocationEnv
        from sb3_fair.wrappers import FairnessReward

        env = FairnessReward(DonutAllocationEnv(), welfare="log_nash", scheme="bounded", filter="benefit")

    :param env: an env honouring the stakeholder contract.
    :param welfare: per-timepoint welfare W (see :data:`sb3_fair.metrics.WELFARE_FUNCTIONS`).
    :param scheme: ``"anytime"``, ``"long_term"``, ``"periodic"`` or ``"bounded"``.
    :param period: the period of ``"periodic"``.
    :param filter: the filter B of ``"bounded"`` (``"benefit"`` or a callable ``(t, benefits, info) -> bool``);
        optional with the other schemes, where it further restricts them.
    :param aggregate: ``"individual"`` or ``"group"`` (W on per-group totals).
    :param fairness_coef: weight of the fairness term.
    :param task_coef: weight of the env's own reward.
    :param welfare_kwargs: extra arguments of the welfare function.

    An env takes one fairness reward: an env that already has a ``FairnessReward`` anywhere in its wrapper chain
    (e.g. ``gym.make("sb3_fair/DonutAllocation-v0")``) is refused with a ``ValueError``; a second would count the
    fairness term twice.
    """

    def __init__(
        self,
        env: gym.Env,
        welfare: str = "log_nash",
        scheme: str = "anytime",
        period: int = 1,
        filter: str | FilterFn | None = None,
        aggregate: str = "individual",
        fairness_coef: float = 1.0,
        task_coef: float = 0.0,
        welfare_kwargs: dict[str, Any] | None = None,
    ) -> None:
        gym.utils.RecordConstructorArgs.__init__(
            self,
            welfare=welfare,
            scheme=scheme,
            period=period,
            filter=filter,
            aggregate=aggregate,
            fairness_coef=fairness_coef,
            task_coef=task_coef,
            welfare_kwargs=welfare_kwargs,
        )
        refuse_second(
            env,
            FairnessReward,
            "wrap the env in one FairnessReward and set its welfare, fairness_coef and task_coef (for the registered "
            "sb3_fair ids, whose reward is fixed, wrap the bare env, e.g. sb3_fair.envs.DonutAllocationEnv, yourself)",
        )
        gym.Wrapper.__init__(self, env)
        if welfare_kwargs is not None and not isinstance(welfare_kwargs, dict):
            raise ValueError(
                f"welfare_kwargs must be a dict of the welfare's arguments or None, got {welfare_kwargs!r}"
            )
        stakeholders = self._stakeholders = get_stakeholders(env)
        self.n_stakeholders = stakeholders.n
        self.reward_spec = RewardSpec(
            welfare=welfare,
            welfare_kwargs=dict(welfare_kwargs or {}),
            aggregate=aggregate,
            groups=tuple(int(g) for g in stakeholders.groups),
            scheme=scheme,
            period=period,
            filter=filter,
            fairness_coef=fairness_coef,
            task_coef=task_coef,
        )
        self._status = np.zeros(self.n_stakeholders)
        self._t = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        self._status = np.zeros(self.n_stakeholders)
        self._t = 0
        return self.env.reset(seed=seed, options=options)

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        obs, task_reward, terminated, truncated, info = self.env.step(action)
        benefits = get_benefits(info, self._stakeholders, self.env)
        self._status = self._status + benefits
        self._t += 1
        active = assessed(self.reward_spec, self._t, benefits, terminated or truncated, info)
        task = float(task_reward)
        reward = fairness_reward(self.reward_spec, self._status, active, task)
        info[FAIRNESS_TERMS] = {
            "status": self._status.copy(),
            "active": active,
            "task_reward": task,
        }
        return obs, float(reward), terminated, truncated, info
