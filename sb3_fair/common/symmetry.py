"""Agent-permutation symmetry of a team env (Grupen et al. 2022, Eq. 8).

A team env with n interchangeable agents describes how a permutation ``sigma`` of the agents acts
on a (flat) observation and on a (flat) joint action, both as index maps: ``(sigma . obs) =
obs[..., obs_index(sigma)]`` and ``(sigma . action) = action[..., action_index(sigma)]``. With
``agent_obs`` it also says which observation entries make up each agent's own view (for Fair-E).

Part of the protocol between an env and sb3-fair (:data:`sb3_fair.common.protocol.SYMMETRY`): an env describes
its symmetry with it (:class:`~sb3_fair.envs.PursuitEvasionEnv`), Fair-ER and Fair-E (:mod:`sb3_fair.common.fair_er`)
read it. It lived in ``sb3_fair.common.fair_er.symmetry`` in 0.4, a path that still imports it.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike


@dataclass(frozen=True)
class AgentSymmetry:
    """How agent permutations act on observations and joint actions.

    :param n_agents: number of interchangeable agents.
    :param obs_dim: length of the flat observation.
    :param action_dim: length of the flat joint action (``n_agents * per_agent_action_dim``).
    :param obs_index: ``fn(perm) -> index array`` of length ``obs_dim`` with
        ``(perm . obs) = obs[index]``, where ``perm[i]`` is the agent that takes agent i's place.
    :param agent_obs: optional ``(n_agents, view_dim)`` index array: agent i's own view is
        ``obs[agent_obs[i]]`` (used by the Fair-E actor).
    """

    n_agents: int
    obs_dim: int
    action_dim: int
    obs_index: Callable[[tuple[int, ...]], ArrayLike] = field(repr=False)
    agent_obs: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.n_agents < 2:
            raise ValueError(f"symmetry: n_agents must be >= 2, got {self.n_agents}")
        if self.action_dim % self.n_agents != 0:
            raise ValueError(
                f"symmetry: the joint action size {self.action_dim} is not a multiple of n_agents={self.n_agents}"
            )
        for perm in self.permutations():
            idx = np.asarray(self.obs_index(perm))
            if idx.shape != (self.obs_dim,) or sorted(idx.tolist()) != list(range(self.obs_dim)):
                raise ValueError(f"symmetry: obs_index({perm}) must be a permutation of range({self.obs_dim})")

    @property
    def agent_action_dim(self) -> int:
        return self.action_dim // self.n_agents

    def permutations(self) -> list[tuple[int, ...]]:
        """Every permutation of the agents (identity first)."""
        return list(itertools.permutations(range(self.n_agents)))

    def action_index(self, perm: tuple[int, ...]) -> np.ndarray:
        """``(perm . action) = action[index]``: agent i's block becomes agent perm[i]'s."""
        k = self.agent_action_dim
        return np.concatenate([np.arange(p * k, (p + 1) * k) for p in perm])

    def permute_obs(self, obs: np.ndarray, perm: tuple[int, ...]) -> np.ndarray:
        return np.asarray(obs)[..., np.asarray(self.obs_index(perm))]

    def permute_action(self, action: np.ndarray, perm: tuple[int, ...]) -> np.ndarray:
        return np.asarray(action)[..., self.action_index(perm)]

    def check_action_space(self, action_dim: int) -> None:
        """Raise a clear error when the algorithm's action size does not match the symmetry."""
        if action_dim != self.action_dim:
            raise ValueError(
                f"symmetry: the permutation acts on joint actions of size {self.action_dim}, "
                f"but the env's action has size {action_dim}"
            )
