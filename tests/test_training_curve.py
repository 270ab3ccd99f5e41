"""The training curve and the evaluation's per-stakeholder returns, and the compare plot drawn from them: what a
``TrainingCurve`` keeps, that it changes nothing in the training, and the plot each task asks for."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch as th
from stable_baselines3 import DQN

import sb3_fair  # noqa: F401  (registers the envs)
from sb3_fair.common.callbacks import TrainingCurve
from sb3_fair.common.evaluation import evaluate_fairness
from sb3_fair.experiment import ExperimentConfig, train
from sb3_fair.experiment.compare import load_tasks, parse_task, plot_comparison
from sb3_fair.wrappers import FairnessMonitor


def _dqn(seed: int = 0) -> DQN:
    env = FairnessMonitor(gym.make("sb3_fair/DonutAllocationTabular-v0"))  # episodes of 12 steps
    return DQN("MlpPolicy", env, learning_starts=20, train_freq=1, seed=seed)


def test_the_curve_holds_one_point_per_training_episode_and_changes_nothing() -> None:
    curve = TrainingCurve()
    model = _dqn().learn(120, callback=curve)
    steps = [s for s, _ in curve.points]
    assert steps == list(range(12, 121, 12))  # 10 episodes of 12 steps, at the step each ended
    first = curve.points[0][1]
    assert {"episode_reward", "utilitarian", "log_nash", "gini", "egalitarian"} <= set(first)
    s, v = curve.series("utilitarian")
    assert s.tolist() == steps and np.all((v >= 0) & (v <= 12) & (v == np.round(v)))  # at most one doughnut a step
    assert curve.series("no such figure")[0].size == 0
    plain = _dqn().learn(120)  # the same seed without the callback: the same weights, bit for bit
    for a, b in zip(model.policy.state_dict().values(), plain.policy.state_dict().values()):
        assert th.equal(a, b)


def test_evaluation_returns_each_episodes_split_and_train_keeps_it_with_the_curve(tmp_path) -> None:
    res = evaluate_fairness(_dqn().learn(30), gym.make("sb3_fair/DonutAllocationTabular-v0"), n_episodes=3)
    assert res["returns"].shape == (3, 3)
    assert np.isclose(res["returns"].sum(axis=1).mean(), res["utilitarian"])
    config = ExperimentConfig(algo="dqn", env="sb3_fair/DonutAllocationTabular-v0", n_timesteps=48, eval_episodes=2,
                              hyperparams={"learning_starts": 10})
    result = train(config)
    assert [s for s, _ in result.curve] == [12, 24, 36, 48]
    assert result.returns is not None and result.returns.shape == (2, 3)
    plain = result.to_dict()
    assert plain["curve"][0][0] == 12 and len(plain["returns"]) == 2


def test_each_task_gets_the_plot_it_asks_for(tmp_path) -> None:
    donut = load_tasks()["donut"]
    assert (donut.plot_curve, donut.plot_split) == ("episode_reward", "doughnuts")
    rng = np.random.default_rng(0)
    per_seed = {"A": [{"utilitarian": 1.0, "gini": 0.1}] * 2, "B": [{"utilitarian": 1.0, "gini": 0.2}] * 2}
    curves = {name: [[(100 * k, {"episode_reward": float(k)}) for k in range(1, 9)] for _ in range(2)] for name in per_seed}
    returns = {name: [rng.integers(0, 30, (4, 5)).astype(float) for _ in range(2)] for name in per_seed}
    harvest = load_tasks()["harvest"]  # its curve beside the trade-off; games of a VecEnv end at the same step
    assert (harvest.plot_curve, harvest.plot_split, harvest.plot_tradeoff) == ("dp_abs", None, True)
    games = {name: [[(960 * (k // 4 + 1), {"dp_abs": float(k)}) for k in range(12)]] for name in per_seed}
    for task, kwargs in [(donut, {"curves": curves, "returns": returns}), (donut, {}), (harvest, {}),
                         (harvest, {"curves": games})]:
        path = plot_comparison(task, per_seed, tmp_path / "sub" / f"{task.name}-{len(kwargs)}.png", **kwargs)
        assert path.stat().st_size > 1000


@pytest.mark.parametrize("plot, message", [({"curve": 3}, "plot.curve must be a non-empty string"),
                                           ({"split": ""}, "plot.split must be a non-empty string"),
                                           ({"bars": "x"}, r"unknown key\(s\) \['bars'\]")])
def test_a_bad_plot_is_refused(plot, message) -> None:
    entry = {"algo": "fair_dqn", "env": "x", "figures": ["gini"], "runs": {"a": {}}, "plot": plot}
    with pytest.raises(ValueError, match=message):
        parse_task("mine", entry, "tasks.yml")
