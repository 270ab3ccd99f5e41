"""Doughnut allocation (Alamdari et al. 2024, §6.1 and A.4.1; tabular variant A.2)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from sb3_fair.common.protocol import BENEFITS
from sb3_fair.common.stakeholders import Stakeholders
from sb3_fair.common.validation import as_float_array
from sb3_fair.envs.horizon import check_count, check_horizon
from sb3_fair.envs.rendering import RENDER_MODES, bars_rgb, check_render_mode


class DonutAllocationEnv(gym.Env):
    """A doughnut shop bakes one doughnut per step and a server hands it to one customer.

    Alamdari et al. 2024 §6.1 / A.4.1: ``n_customers`` customers are each at the counter independently with
    probability ``p`` at every step; the observation is the presence bit of each customer; action
    ``i`` gives the doughnut to customer i, and it is wasted if i is absent. The episode ends after
    ``horizon`` steps with ``truncated=True`` (and ``terminated=False``): the horizon is a time
    limit, not a terminal state. The observation carries no clock, so a learner that treated step T
    as terminal would be asked to value the same observation as "ends here" and "goes on"; the
    authors' code bootstraps the last transition like every other (no done flag in its replay
    memory), which is what SB3 does for a truncated episode. Every customer is a stakeholder (a
    group of their own); ``info["benefits"]`` is 1 for the customer who got the doughnut.

    This is the *bare* environment: its own reward is the task reward, 1 per doughnut not wasted.
    Alamdari et al.'s (2024) fairness reward (log-Nash welfare of the counts + 1, 0 when the doughnut is wasted)
    and memory come from :class:`~sb3_fair.wrappers.FairnessReward` and
    :class:`~sb3_fair.wrappers.MemoryAugmentation`, composed by ``gym.make("sb3_fair/DonutAllocation-v0")``.

    Deviation from the authors' code: none in the dynamics; their reward adds 1e-4 inside the log,
    which sb3-fair's reward does not (it does not change the optimal policy).

    :param n_customers: number of customers n (paper: 5; tabular variant: 3), at most
        :data:`~sb3_fair.envs.horizon.MAX_STAKEHOLDERS`.
    :param p: presence probability, one float or one per customer (paper: 0.8).
    :param horizon: episode length T (paper: 100; tabular variant: 12), at most
        :data:`~sb3_fair.envs.horizon.MAX_HORIZON`.
    """

    metadata = {"render_modes": RENDER_MODES, "render_fps": 4}

    def __init__(
        self, n_customers: int = 5, p: float | list[float] = 0.8, horizon: int = 100, render_mode: str | None = None
    ) -> None:
        self.n = check_count(n_customers, "n_customers", 2)
        accepted = f"one probability or one per customer ({self.n})"
        try:
            probs = np.broadcast_to(as_float_array(p, "p", accepted), (self.n,)).copy()
        except ValueError as exc:
            raise ValueError(f"p must be {accepted}, got {p!r}") from exc
        if np.any(~np.isfinite(probs)) or np.any(probs < 0) or np.any(probs > 1):
            raise ValueError(f"p must be probabilities in [0, 1], got {p!r}")
        self.p = probs
        self.horizon = check_horizon(horizon)
        self.render_mode = check_render_mode(render_mode)
        self.gamma = 0.95
        self.stakeholders = Stakeholders.individuals(self.n, prefix="customer")
        self.observation_space = spaces.MultiBinary(self.n)
        self.action_space = spaces.Discrete(self.n)
        self.counts = np.zeros(self.n, dtype=np.int64)
        self.present = np.zeros(self.n, dtype=np.int8)
        self.t = 0

    def _sample_presence(self) -> np.ndarray:
        return (self.np_random.random(self.n) < self.p).astype(np.int8)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.counts = np.zeros(self.n, dtype=np.int64)
        self.t = 0
        self.present = self._sample_presence()
        return self.present.copy(), {"counts": self.counts.copy()}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        a = int(action)
        if not 0 <= a < self.n:
            raise ValueError(f"action must be in [0, {self.n}), got {action!r}")
        benefits = np.zeros(self.n, dtype=np.float64)
        delivered = bool(self.present[a])
        if delivered:
            benefits[a] = 1.0
            self.counts[a] += 1
        self.t += 1
        self.present = self._sample_presence()
        info = {BENEFITS: benefits, "wasted": not delivered, "counts": self.counts.copy()}
        return self.present.copy(), float(delivered), False, self.t >= self.horizon, info

    def render(self) -> str | np.ndarray | None:
        if self.render_mode == "ansi":
            return f"t={self.t} present={self.present.tolist()} counts={self.counts.tolist()}"
        if self.render_mode == "rgb_array":
            return bars_rgb(self.counts, max(self.horizon / self.n * 2, 1), self.stakeholders.groups, self.present)
        return None


def greedy_allocation(present: np.ndarray, counts: np.ndarray) -> int:
    """Reference policy: give the doughnut to the present customer who has had the fewest so far.

    Ties go to the lowest index; if nobody is present the doughnut goes to the customer with the
    fewest (it is wasted either way). This is the "fewest-so-far among present customers" baseline
    of sb3-fair's benchmark.
    """
    present = np.asarray(present).astype(bool)
    c = np.asarray(counts, dtype=np.float64)
    if not present.any():
        return int(np.argmin(c))
    return int(np.argmin(np.where(present, c, np.inf)))
