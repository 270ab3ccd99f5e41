"""What ``load`` of a Fair class checks: settings given beside the zip follow the constructor's rules, the fairness
method stays the one trained, and a zip of the SB3 parent loads as the parent (fairness weights at zero)."""

from __future__ import annotations

import gymnasium as gym
import pytest
import torch as th
from sb3_contrib import RecurrentPPO
from stable_baselines3 import PPO

from sb3_fair import FairDQN, FairPPO, FairRecurrentPPO, FairTD3
from sb3_fair.common.fair_algorithm import fairness_parameters


def test_the_fairness_parameters_are_the_mixins_own() -> None:
    ppo = fairness_parameters(FairPPO)
    assert {"fairness", "alpha", "beta", "fairness_coef", "delta", "massaging_tau", "fairness_window", "wandb"} <= ppo
    assert not ppo & {"learning_rate", "n_steps", "policy", "env"}
    assert {"counterfactual", "potential_shaping", "loss"} <= fairness_parameters(FairDQN)
    assert "equivariance_coef" in fairness_parameters(FairTD3)


@pytest.mark.parametrize("make, load, message", [
    (lambda: FairPPO("MlpPolicy", "CartPole-v1", n_steps=64, fairness_coef=0.0), {"alpha": -1.0},
     r"FairPPO.load: alpha must be a finite number >= 0, got -1.0"),
    (lambda: FairPPO("MlpPolicy", "CartPole-v1", n_steps=64, fairness_coef=0.0), {"custom_objects": {"beta": float("nan")}},
     r"FairPPO.load: beta must be a finite number >= 0, got nan"),
    (lambda: FairPPO("MlpPolicy", "CartPole-v1", n_steps=64, fairness_coef=0.0), {"fairness": "long_term"},
     r"FairPPO.load: fairness='long_term', but the model was trained with fairness='dp'; a loaded model keeps its fairness method"),
    (lambda: FairDQN("MlpPolicy", "CartPole-v1"), {"max_counterfactuals": 0},
     r"FairDQN.load: max_counterfactuals must be an int >= 1 or None, got 0"),
    (lambda: FairTD3("MlpPolicy", "Pendulum-v1"), {"equivariance_coef": -2},
     r"FairTD3.load: equivariance_coef must be a finite number >= 0, got -2"),
])
def test_a_setting_given_to_load_follows_the_constructors_rules(tmp_path, make, load, message) -> None:
    make().save(tmp_path / "model.zip")
    cls = type(make())
    with pytest.raises(ValueError, match=message):
        cls.load(tmp_path / "model.zip", **load)


def test_good_settings_given_to_load_are_taken(tmp_path) -> None:
    FairPPO("MlpPolicy", "CartPole-v1", n_steps=64, fairness_coef=0.0).save(tmp_path / "fppo.zip")
    model = FairPPO.load(tmp_path / "fppo.zip", alpha=0.7, fairness="dp", learning_rate=1e-4)
    assert (model.alpha, model.fairness, model.fairness_coef, model.learning_rate) == (0.7, "dp", 0.0, 1e-4)


@pytest.mark.parametrize("parent, fair, policy", [(PPO, FairPPO, "MlpPolicy"),
                                                  (RecurrentPPO, FairRecurrentPPO, "MlpLstmPolicy")])
def test_a_zip_of_the_parent_loads_as_the_parent(tmp_path, parent, fair, policy) -> None:
    saved = parent(policy, "CartPole-v1", n_steps=64, seed=0)
    saved.save(tmp_path / "parent.zip")
    # FairPPO's group penalty is on by default and needs a multi-agent VecEnv; the parent's zip loads without it
    model = fair.load(tmp_path / "parent.zip", env=gym.make("CartPole-v1"))
    assert model.fairness_coef == 0.0 and not model.fairness_term.active
    for a, b in zip(model.policy.state_dict().values(), saved.policy.state_dict().values()):
        assert th.equal(a, b)
    model.learn(64)  # trains as the parent
    with pytest.raises(ValueError, match="group penalties need a multi-agent VecEnv"):  # unless told otherwise
        fair.load(tmp_path / "parent.zip", env=gym.make("CartPole-v1"), fairness_coef=1.0)
