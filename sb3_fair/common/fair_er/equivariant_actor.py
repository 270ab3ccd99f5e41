"""Fair-E (Grupen, Selman and Lee 2022, arXiv:2106.05727, Eq. 8): an actor that is permutation-equivariant by construction.

Shared by FairTD3 and FairDDPG (and usable with SB3's TD3 and DDPG), as sb3-contrib keeps its maskable
policies in ``common/maskable``; :mod:`sb3_fair.td3.policies` and :mod:`sb3_fair.ddpg.policies` re-export it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch as th
from gymnasium import spaces
from stable_baselines3.common.preprocessing import get_action_dim
from stable_baselines3.common.torch_layers import create_mlp
from stable_baselines3.td3.policies import Actor, TD3Policy
from torch import nn


class EquivariantActor(Actor):
    """One shared network applied to each agent's own view (Grupen et al.'s (2022) Fair-E, Eq. 8).

    Agent i's action block is ``f(obs[agent_obs[i]])`` with the same ``f`` for every agent, so
    ``mu(sigma . s) = sigma . mu(s)`` holds exactly whenever the env's symmetry maps agent i's view
    of ``sigma . s`` to agent ``sigma(i)``'s view of ``s`` (which :class:`~sb3_fair.common.symmetry.AgentSymmetry`
    guarantees for egocentric observations).

    :param agent_obs: ``(n_agents, view_dim)`` indices of each agent's view in the flat observation.
    :param kwargs: as SB3's TD3 :class:`~stable_baselines3.td3.policies.Actor`.
    """

    _agent_index: th.Tensor  # a buffer (register_buffer): nn.Module's __getattr__ would type it Tensor | Module

    def __init__(
        self,
        observation_space: spaces.Space,
        action_space: spaces.Box,
        net_arch: list[int],
        features_extractor: nn.Module,
        features_dim: int,
        agent_obs: Any,
        activation_fn: type[nn.Module] = nn.ReLU,
        normalize_images: bool = True,
    ) -> None:
        super().__init__(
            observation_space, action_space, net_arch, features_extractor, features_dim, activation_fn, normalize_images
        )
        idx = np.asarray(agent_obs, dtype=np.int64)
        action_dim = get_action_dim(self.action_space)
        if idx.ndim != 2 or action_dim % idx.shape[0] != 0:
            raise ValueError(
                f"agent_obs must be an (n_agents, view_dim) index array whose n_agents divides the action size {action_dim}"
            )
        if idx.min() < 0 or idx.max() >= features_dim:
            raise ValueError(f"agent_obs indices must lie in [0, {features_dim})")
        self.agent_obs = idx
        self.n_agents = idx.shape[0]
        self.register_buffer("_agent_index", th.as_tensor(idx), persistent=False)
        # replace SB3's joint network by one shared per-agent network
        self.mu = nn.Sequential(
            *create_mlp(idx.shape[1], action_dim // self.n_agents, net_arch, activation_fn, squash_output=True)
        )

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        data["agent_obs"] = self.agent_obs.tolist()
        return data

    def forward(self, obs: th.Tensor) -> th.Tensor:
        features = self.extract_features(obs, self.features_extractor)
        views = features[:, self._agent_index]  # (batch, n_agents, view_dim)
        return self.mu(views).reshape(features.shape[0], -1)


class FairEPolicy(TD3Policy):
    """TD3/DDPG policy whose actor is an :class:`EquivariantActor` (Fair-E); the critic is SB3's.

    Usable with SB3's ``TD3``/``DDPG`` (pass ``policy_kwargs={"agent_obs": env.unwrapped.symmetry.agent_obs}``)
    and with :class:`~sb3_fair.FairTD3` / :class:`~sb3_fair.FairDDPG` (as ``"FairEPolicy"``; they
    read ``agent_obs`` from the env's symmetry).

    :param agent_obs: ``(n_agents, view_dim)`` indices of each agent's view in the observation.
    """

    def __init__(self, *args: Any, agent_obs: Any = None, **kwargs: Any) -> None:
        if agent_obs is None:
            raise ValueError(
                "FairEPolicy needs agent_obs: which observation entries form each agent's view "
                "(env.unwrapped.symmetry.agent_obs; PursuitEvasion has it with observation='relative')"
            )
        self.agent_obs = np.asarray(agent_obs, dtype=np.int64)
        super().__init__(*args, **kwargs)

    def make_actor(self, features_extractor: Any = None) -> EquivariantActor:
        actor_kwargs = self._update_features_extractor(self.actor_kwargs, features_extractor)
        return EquivariantActor(agent_obs=self.agent_obs, **actor_kwargs).to(self.device)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        data["agent_obs"] = self.agent_obs.tolist()
        return data


__all__ = ["EquivariantActor", "FairEPolicy"]
