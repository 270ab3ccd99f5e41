"""FairPPO uses SB3's PPO policies unchanged (the penalties enter through the advantages, not the network),
plus :class:`MlpTrunk`, a features extractor that gives actor and critic a shared hidden trunk."""

from __future__ import annotations

from collections.abc import Sequence

import gymnasium as gym
import torch as th
from stable_baselines3.common.policies import ActorCriticCnnPolicy, ActorCriticPolicy, MultiInputActorCriticPolicy
from stable_baselines3.common.preprocessing import get_flattened_obs_dim
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn

from sb3_fair.common.validation import check_int

MlpPolicy = ActorCriticPolicy
CnnPolicy = ActorCriticCnnPolicy
MultiInputPolicy = MultiInputActorCriticPolicy


class MlpTrunk(BaseFeaturesExtractor):
    """Flatten, then fully connected layers: hidden layers shared by the actor and the critic.

    SB3 2.x's ``net_arch`` no longer takes SB3 1.x's shared layers (``[256, dict(pi=..., vf=...)]``).
    Its features extractor is shared between actor and critic by default
    (``share_features_extractor=True``), so this extractor is that shared trunk again, and
    ``net_arch=dict(pi=..., vf=...)`` the separate heads on top of it. With ``ortho_init`` (PPO's
    default) SB3 initialises it as it initialised the old shared layers (orthogonal, gain √2)::

        policy_kwargs = dict(features_extractor_class=MlpTrunk, features_extractor_kwargs=dict(layers=[256, 256]),
                             net_arch=dict(pi=[256, 128], vf=[256, 128]), activation_fn=nn.ReLU)

    :param observation_space: the (flattened) observation space.
    :param layers: the width of each shared layer (at least one).
    :param activation_fn: the activation after each layer.
    """

    def __init__(
        self, observation_space: gym.Space, layers: Sequence[int] = (64,), activation_fn: type[nn.Module] = nn.ReLU
    ) -> None:
        if len(layers) == 0:
            raise ValueError("layers must list at least one layer width")
        widths = [check_int(w, "layers", 1) for w in layers]
        super().__init__(observation_space, features_dim=widths[-1])
        modules: list[nn.Module] = [nn.Flatten()]
        previous = get_flattened_obs_dim(observation_space)
        for width in widths:
            modules += [nn.Linear(previous, width), activation_fn()]
            previous = width
        self.trunk = nn.Sequential(*modules)

    def forward(self, observations: th.Tensor) -> th.Tensor:
        return self.trunk(observations)


__all__ = ["CnnPolicy", "MlpPolicy", "MlpTrunk", "MultiInputPolicy"]
