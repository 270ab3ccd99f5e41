"""Every Fair class against its SB3 / sb3-contrib parent: one row per pair, every test runs on every row.

At zero fairness weight a Fair class is its parent (same seed, same weights), on envs with and
without the stakeholder contract; save -> load keeps predictions and configuration; ``learn``
goes on after load and after ``set_env``; ``learn`` has the parent's signature; bad fairness
input fails at construction. A new algorithm adds one row to ``ROWS``.
"""

from __future__ import annotations

import inspect
import logging
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
import torch as th
from sb3_contrib import MaskablePPO, RecurrentPPO
from sb3_contrib.common.envs import InvalidActionEnvDiscrete
from stable_baselines3 import DDPG, DQN, PPO, TD3
from stable_baselines3.common.base_class import BaseAlgorithm

from sb3_fair import FairDDPG, FairDQN, FairMaskablePPO, FairPPO, FairRecurrentPPO, FairTD3
from sb3_fair.envs import AllelopathicHarvestEnv, DisparityGame, make_donut_allocation
from sb3_fair.wrappers import make_multiagent_vec_env


def disparity_vec() -> Any:
    return make_multiagent_vec_env(DisparityGame(n_agents=4), n_instances=2)


def harvest_vec() -> Any:
    return make_multiagent_vec_env(AllelopathicHarvestEnv.from_preset("tiny"), n_instances=1)


def pursuit() -> gym.Env:
    return gym.make("sb3_fair/PursuitEvasion-v0", max_steps=40)


@dataclass
class Row:
    fair: type[BaseAlgorithm]
    parent: type[BaseAlgorithm]
    #: a fairness-contract env and a plain env the parent accepts
    envs: dict[str, Callable[[], Any]]
    kwargs: dict[str, Any]
    #: the Fair class's arguments at zero fairness weight
    zero: dict[str, Any] = field(default_factory=dict)
    #: bad fairness arguments and the text the error must contain
    bad: tuple[dict[str, Any], str] = ({}, "")
    policy: str = "MlpPolicy"
    steps: int = 128

    @property
    def id(self) -> str:
        return self.fair.__name__


OFF_POLICY = dict(learning_starts=32, buffer_size=2_000, batch_size=32, train_freq=4, seed=0)
ON_POLICY = dict(n_steps=16, batch_size=32, n_epochs=2, seed=0)
ROWS = [
    Row(FairDQN, DQN, {"contract": make_donut_allocation, "plain": lambda: gym.make("CartPole-v1")}, OFF_POLICY,
        bad=(dict(loss="l1"), "loss")),
    Row(FairTD3, TD3, {"contract": pursuit, "plain": lambda: gym.make("Pendulum-v1")}, OFF_POLICY,
        bad=(dict(equivariance_coef=-1), "equivariance_coef")),
    Row(FairDDPG, DDPG, {"contract": pursuit, "plain": lambda: gym.make("Pendulum-v1")}, OFF_POLICY,
        bad=(dict(equivariance_distance="l1"), "equivariance_distance")),
    Row(FairPPO, PPO, {"contract": disparity_vec, "plain": lambda: gym.make("CartPole-v1")}, ON_POLICY,
        zero=dict(fairness_coef=0.0), bad=(dict(fairness="eo"), "fairness must be one of")),
    Row(FairMaskablePPO, MaskablePPO, {"contract": harvest_vec, "plain": lambda: InvalidActionEnvDiscrete(dim=20, n_invalid_actions=10)},
        ON_POLICY, zero=dict(fairness_coef=0.0), bad=(dict(alpha=-1), "alpha")),
    Row(FairRecurrentPPO, RecurrentPPO, {"contract": disparity_vec, "plain": lambda: gym.make("CartPole-v1")}, ON_POLICY,
        zero=dict(fairness_coef=0.0), bad=(dict(beta=float("nan")), "beta"), policy="MlpLstmPolicy", steps=64),
]
ON_POLICY_ROWS = [r for r in ROWS if "fairness_coef" in r.zero]


def rows(which: list[Row] = ROWS) -> Any:
    return pytest.mark.parametrize("row", which, ids=[r.id for r in which])


def params(model: BaseAlgorithm) -> th.Tensor:
    return th.cat([p.detach().flatten() for p in model.policy.parameters()])


def predictions(model: BaseAlgorithm, env_fn: Callable[[], Any]) -> np.ndarray:
    env = env_fn()
    space = env.observation_space
    space.seed(1)
    obs = np.stack([space.sample() for _ in range(8)])
    if isinstance(model, MaskablePPO):
        masks = np.ones((8, int(model.action_space.n)), dtype=bool)
        return model.predict(obs, deterministic=True, action_masks=masks)[0]
    if isinstance(model, RecurrentPPO):
        return model.predict(obs, episode_start=np.ones(8, dtype=bool), deterministic=True)[0]
    return model.predict(obs, deterministic=True)[0]


def own_warnings(caught: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in caught if not issubclass(w.category, ResourceWarning)]


@rows()
@pytest.mark.parametrize("env_kind", ["contract", "plain"])
def test_zero_weight_is_exactly_the_parent(row: Row, env_kind: str, caplog):
    env_fn = row.envs[env_kind]
    with warnings.catch_warnings(record=True) as parent_warnings:
        warnings.simplefilter("always")
        parent = row.parent(row.policy, env_fn(), **row.kwargs)
    parent.learn(row.steps)
    with warnings.catch_warnings(record=True) as fair_warnings, caplog.at_level(logging.WARNING, logger="sb3_fair"):
        warnings.simplefilter("always")
        fair = row.fair(row.policy, env_fn(), **row.kwargs, **row.zero)
    # the parent's, no more (a ResourceWarning is another test's file being garbage-collected now)
    assert own_warnings(fair_warnings) == own_warnings(parent_warnings)
    # on an env without the contract: said once, through logging
    assert ("no fairness figures" in caplog.text) == (env_kind == "plain")
    assert isinstance(fair, row.parent)
    fair.learn(row.steps)
    assert th.equal(params(parent), params(fair))


@rows()
def test_learn_has_the_parents_signature(row: Row):
    assert inspect.signature(row.fair.learn) == inspect.signature(row.parent.learn)
    assert "learn" not in vars(row.fair)


@rows()
def test_save_load_predictions_configuration_and_continued_learning(row: Row, tmp_path):
    env_fn = row.envs["contract"]
    model = row.fair(row.policy, env_fn(), **row.kwargs, fairness_window=7)
    model.learn(row.steps)
    model.save(tmp_path / "m")
    loaded = row.fair.load(tmp_path / "m", env=env_fn())
    np.testing.assert_array_equal(predictions(model, env_fn), predictions(loaded, env_fn))
    assert loaded.fairness_config() == model.fairness_config()
    assert loaded.fairness_window == 7
    before = loaded.num_timesteps
    loaded.learn(row.steps, reset_num_timesteps=False)
    assert loaded.num_timesteps >= before + row.steps


@rows()
def test_set_env_then_learn(row: Row):
    env_fn = row.envs["contract"]
    model = row.fair(row.policy, env_fn(), **row.kwargs)
    model.learn(row.steps)
    model.set_env(env_fn())
    model.learn(row.steps)
    assert model.fairness_callback is not None


@rows()
def test_bad_fairness_input_fails_at_construction(row: Row):
    bad, match = row.bad
    with pytest.raises(ValueError, match=match):
        row.fair(row.policy, row.envs["contract"](), **row.kwargs, **bad)
    with pytest.raises(ValueError, match="fairness_window"):
        row.fair(row.policy, row.envs["contract"](), **row.kwargs, fairness_window=0)
    with pytest.raises(ValueError, match="wandb"):
        row.fair(row.policy, row.envs["contract"](), **row.kwargs, wandb="yes")


@rows(ON_POLICY_ROWS)
def test_group_penalty_moves_the_actor_and_logs(row: Row, tmp_path):
    import csv

    from stable_baselines3.common.logger import configure

    env_fn = row.envs["contract"]
    parent = row.parent(row.policy, env_fn(), **row.kwargs).learn(3 * row.steps)
    fair = row.fair(row.policy, env_fn(), **row.kwargs, fairness="dp", alpha=1.0, beta=1.0, fairness_coef=0.5)
    fair.set_logger(configure(str(tmp_path), ["csv"]))
    fair.learn(3 * row.steps)  # the last rollout's penalty records reach the CSV with the next dump
    assert not th.equal(params(parent), params(fair))
    with open(tmp_path / "progress.csv") as fh:
        columns = next(csv.reader(fh))
    assert {"fairness/penalty_retro", "fairness/penalty_pro", "fairness/adv_weight_std"} <= set(columns)


@rows(ON_POLICY_ROWS)
def test_group_penalty_needs_a_multiagent_env(row: Row):
    with pytest.raises(ValueError, match="multi-agent VecEnv"):
        row.fair(row.policy, row.envs["plain"](), **row.kwargs)
