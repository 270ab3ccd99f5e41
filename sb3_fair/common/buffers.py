"""Replay buffer that also takes batches of counterfactual transitions (Alamdari et al. 2024, FairQCM)."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.buffers import ReplayBuffer


class CounterfactualReplayBuffer(ReplayBuffer):
    """An SB3 :class:`~stable_baselines3.common.buffers.ReplayBuffer` whose rows are single transitions.

    Real transitions from ``n_envs`` environments are written one row per env (in env order), and
    :meth:`add_batch` writes any number of extra transitions at once, so that each real step can
    bring its own number of counterfactual transitions. Sampling is SB3's, uniform over rows.
    ``buffer_size`` counts transitions (real and counterfactual).
    """

    def __init__(
        self,
        buffer_size: int,
        observation_space: spaces.Space,
        action_space: spaces.Space,
        device: Any = "auto",
        n_envs: int = 1,
        optimize_memory_usage: bool = False,
        handle_timeout_termination: bool = True,
    ) -> None:
        if optimize_memory_usage:
            raise ValueError("optimize_memory_usage=True is not supported with counterfactual replay; set it to False")
        super().__init__(
            buffer_size,
            observation_space,
            action_space,
            device=device,
            n_envs=1,
            optimize_memory_usage=False,
            handle_timeout_termination=handle_timeout_termination,
        )
        self.n_source_envs = n_envs
        self.n_counterfactual = 0

    def add(self, obs: np.ndarray, next_obs: np.ndarray, action: np.ndarray, reward: np.ndarray, done: np.ndarray, infos: list[dict[str, Any]]) -> None:  # type: ignore[override]
        for i in range(len(infos)):
            super().add(obs[i : i + 1], next_obs[i : i + 1], np.asarray(action)[i : i + 1], reward[i : i + 1], done[i : i + 1], [infos[i]])

    def add_batch(self, obs: np.ndarray, next_obs: np.ndarray, action: np.ndarray, reward: np.ndarray, done: np.ndarray) -> None:
        """Write ``k`` transitions (``done`` already excludes time-outs); the oldest rows are overwritten."""
        k = len(obs)
        if k == 0:
            return
        if k > self.buffer_size:
            obs, next_obs, action, reward, done = (x[-self.buffer_size :] for x in (obs, next_obs, action, reward, done))
            k = self.buffer_size
        idx = (self.pos + np.arange(k)) % self.buffer_size
        self.observations[idx, 0] = np.asarray(obs).reshape((k, *self.obs_shape))
        self.next_observations[idx, 0] = np.asarray(next_obs).reshape((k, *self.obs_shape))
        self.actions[idx, 0] = np.asarray(action).reshape((k, self.action_dim))
        self.rewards[idx, 0] = np.asarray(reward).reshape(k)
        self.dones[idx, 0] = np.asarray(done).reshape(k)
        if self.handle_timeout_termination:
            self.timeouts[idx, 0] = 0.0
        if self.pos + k >= self.buffer_size:
            self.full = True
        self.pos = int((self.pos + k) % self.buffer_size)
        self.n_counterfactual += k
