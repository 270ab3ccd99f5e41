"""Replay buffers that also take batches of counterfactual transitions (Alamdari et al. 2024, FairQCM).

:class:`CounterfactualReplayBuffer` extends SB3's ``ReplayBuffer`` (flat ``Box`` observations) and
:class:`CounterfactualDictReplayBuffer` SB3's ``DictReplayBuffer`` (``Dict`` observations, e.g. an
image beside the memory of :class:`~sb3_fair.wrappers.MemoryAugmentation` with
``dict_observation=True``); both take their rows from :class:`CounterfactualRows`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.buffers import DictReplayBuffer, ReplayBuffer

if TYPE_CHECKING:
    # the type checker sees CounterfactualRows as the SB3 buffer it is mixed into; at run time it is a plain class
    _BufferBase = ReplayBuffer
else:
    _BufferBase = object

#: an observation batch: an array, or a dict of arrays for a Dict observation space
ObsBatch = np.ndarray | dict[str, np.ndarray]


def _rows(x: ObsBatch, rows: slice) -> ObsBatch:
    return {key: np.asarray(value)[rows] for key, value in x.items()} if isinstance(x, dict) else np.asarray(x)[rows]


def _count(idx: slice | np.ndarray) -> int:
    """How many rows ``idx`` (a slice with a start and a stop, or an index array) names."""
    return idx.stop - idx.start if isinstance(idx, slice) else len(idx)


class CounterfactualRows(_BufferBase):
    """What both counterfactual buffers share: one row per transition, and :meth:`add_batch`.

    Real transitions from ``n_envs`` environments are written one row per env (in env order), and
    :meth:`add_batch` writes any number of extra transitions at once, so that each real step can
    bring its own number of counterfactual transitions. Sampling is SB3's, uniform over rows.
    ``buffer_size`` counts transitions (real and counterfactual). Mixed in before the SB3 buffer.
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

    def add(
        self,
        obs: ObsBatch,
        next_obs: ObsBatch,
        action: np.ndarray,
        reward: np.ndarray,
        done: np.ndarray,
        infos: list[dict[str, Any]],
    ) -> None:
        for i in range(len(infos)):
            row = slice(i, i + 1)
            super().add(
                _rows(obs, row),  # type: ignore[arg-type]  # an array for ReplayBuffer.add, a dict of them for DictReplayBuffer's
                _rows(next_obs, row),  # type: ignore[arg-type]  # as obs
                np.asarray(action)[row],
                reward[row],
                done[row],
                [infos[i]],
            )

    def _write_observations(self, idx: slice | np.ndarray, obs: ObsBatch, next_obs: ObsBatch) -> None:
        """Write the rows ``idx`` (a slice or an index array) of the observation arrays."""
        raise NotImplementedError

    def add_batch(
        self, obs: ObsBatch, next_obs: ObsBatch, action: np.ndarray, reward: np.ndarray, done: np.ndarray
    ) -> None:
        """Write ``k`` transitions (``done`` already excludes time-outs); the oldest rows are overwritten."""
        k = len(reward)
        if k == 0:
            return
        if k > self.buffer_size:
            keep = slice(k - self.buffer_size, k)
            obs, next_obs, action, reward, done = (
                _rows(obs, keep),
                _rows(next_obs, keep),
                action[keep],
                reward[keep],
                done[keep],
            )
            k = self.buffer_size
        end = self.pos + k
        # the rows to write: one slice unless they wrap around the end of the buffer
        idx: slice | np.ndarray = (
            slice(self.pos, end) if end <= self.buffer_size else np.arange(self.pos, end) % self.buffer_size
        )
        self._write_observations(idx, obs, next_obs)
        self.actions[idx, 0] = np.asarray(action).reshape((k, self.action_dim))
        self.rewards[idx, 0] = np.asarray(reward).reshape(k)
        self.dones[idx, 0] = np.asarray(done).reshape(k)
        if self.handle_timeout_termination:
            self.timeouts[idx, 0] = 0.0
        if self.pos + k >= self.buffer_size:
            self.full = True
        self.pos = int((self.pos + k) % self.buffer_size)
        self.n_counterfactual += k


class CounterfactualReplayBuffer(CounterfactualRows, ReplayBuffer):
    """SB3's :class:`~stable_baselines3.common.buffers.ReplayBuffer` with :meth:`add_batch` (:class:`CounterfactualRows`)."""

    def _write_observations(self, idx: slice | np.ndarray, obs: ObsBatch, next_obs: ObsBatch) -> None:
        k = _count(idx)
        self.observations[idx, 0] = np.asarray(obs).reshape((k, *self.obs_shape))
        self.next_observations[idx, 0] = np.asarray(next_obs).reshape((k, *self.obs_shape))


class CounterfactualDictReplayBuffer(CounterfactualRows, DictReplayBuffer):
    """SB3's :class:`~stable_baselines3.common.buffers.DictReplayBuffer` with :meth:`add_batch` (:class:`CounterfactualRows`)."""

    def _write_observations(self, idx: slice | np.ndarray, obs: ObsBatch, next_obs: ObsBatch) -> None:
        assert isinstance(obs, dict) and isinstance(next_obs, dict)
        k = _count(idx)
        for key in self.observations:
            self.observations[key][idx, 0] = np.asarray(obs[key]).reshape((k, *self.obs_shape[key]))
            self.next_observations[key][idx, 0] = np.asarray(next_obs[key]).reshape((k, *self.obs_shape[key]))
