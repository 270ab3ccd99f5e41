"""Spaces the parents take stay accepted at zero fairness weight, and a fairness method that cannot act on a space
says so at construction: Fair-ER / Fair-E on the observation spaces, the multi-agent VecEnv on integer action spaces."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces
from stable_baselines3 import PPO

from sb3_fair import FairPPO, FairTD3, Stakeholders
from sb3_fair.common.symmetry import AgentSymmetry
from sb3_fair.envs import DisparityGame
from sb3_fair.wrappers import make_multiagent_vec_env

OBS = {
    "Box": spaces.Box(0.0, 1.0, (4,), dtype=np.float32),
    "MultiBinary": spaces.MultiBinary(4),
    "MultiDiscrete": spaces.MultiDiscrete([3, 3, 3, 3]),
    "Discrete": spaces.Discrete(4),
    "Dict": spaces.Dict({"a": spaces.Box(0.0, 1.0, (4,), dtype=np.float32)}),
}


class TwoAgents(gym.Env):
    """Two agents, one 2-d heading each, with an agent symmetry over a 4-entry observation of any space."""

    def __init__(self, obs: str) -> None:
        self.observation_space = OBS[obs]
        self.action_space = spaces.Box(-1.0, 1.0, (4,), dtype=np.float32)
        self.stakeholders = Stakeholders(names=("p0", "p1"), groups=[0, 1])
        index = lambda perm: np.concatenate([np.arange(2 * p, 2 * p + 2) for p in perm])  # noqa: E731
        self.symmetry = AgentSymmetry(n_agents=2, obs_dim=4, action_dim=4, obs_index=index,
                                      agent_obs=np.array([[0, 1], [2, 3]]))

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return self.observation_space.sample(), {}

    def step(self, action):
        self.t += 1
        return self.observation_space.sample(), -float(np.abs(action).sum()), False, self.t >= 10, {
            "benefits": np.array([0.5, 0.5])}


KW = dict(learning_starts=10, buffer_size=200, batch_size=8, seed=0)


@pytest.mark.parametrize("obs", list(OBS))
def test_fair_td3_at_zero_weight_takes_every_observation_td3_takes(obs) -> None:
    policy = "MultiInputPolicy" if obs == "Dict" else "MlpPolicy"
    assert FairTD3(policy, TwoAgents(obs), **KW).learn(30).num_timesteps == 30


@pytest.mark.parametrize("obs, fair_er, fair_e", [("Box", True, True), ("MultiBinary", True, True),
                                                  ("MultiDiscrete", True, False), ("Discrete", False, False),
                                                  ("Dict", False, False)])
def test_fair_er_and_fair_e_say_which_observations_they_act_on(obs, fair_er, fair_e) -> None:
    policy = "MultiInputPolicy" if obs == "Dict" else "MlpPolicy"
    if fair_er:
        FairTD3(policy, TwoAgents(obs), equivariance_coef=0.5, **KW).learn(20)
    else:
        with pytest.raises(ValueError, match=f"equivariance_coef > 0 needs an array observation .* got {obs}"):
            FairTD3(policy, TwoAgents(obs), equivariance_coef=0.5, **KW)
    if fair_e:
        FairTD3("FairEPolicy", TwoAgents(obs), **KW).learn(20)
    else:
        with pytest.raises(ValueError, match=f"policy='FairEPolicy' needs a Box or MultiBinary observation .* got {obs}"):
            FairTD3("FairEPolicy", TwoAgents(obs), **KW)


class BinaryDisparity(DisparityGame):
    """DisparityGame whose agents choose with one bit of a MultiBinary(2) action (the first: rest)."""

    def action_space(self, agent: str) -> spaces.MultiBinary:
        return spaces.MultiBinary(2)

    def step(self, actions):
        return super().step({agent: int(np.asarray(a)[0]) for agent, a in actions.items()})


@pytest.mark.parametrize("cls, kwargs", [(PPO, {}), (FairPPO, {"fairness": "dp"})])
def test_a_game_with_multibinary_actions_trains_through_the_multiagent_vec_env(cls, kwargs) -> None:
    vec_env = make_multiagent_vec_env(BinaryDisparity(n_agents=4, max_steps=8), n_instances=2)
    model = cls("MlpPolicy", vec_env, n_steps=16, batch_size=32, n_epochs=1, seed=0, **kwargs).learn(128)
    assert model.num_timesteps == 128
