"""A wrapper that turns an env's observations or rewards into NaN from some step on (bad input for the tests)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np


class NanAfter(gym.Wrapper):
    """The wrapped env, except that from step ``after`` on its observation (``what="obs"``) or reward
    (``what="reward"``) is NaN."""

    def __init__(self, env: gym.Env, after: int, what: str = "obs") -> None:
        super().__init__(env)
        self.after, self.what, self.t = after, what, 0

    def step(self, action: Any) -> Any:
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.t += 1
        if self.t >= self.after:
            if self.what == "obs":
                obs = np.full_like(obs, np.nan)
            else:
                reward = float("nan")
        return obs, reward, terminated, truncated, info
