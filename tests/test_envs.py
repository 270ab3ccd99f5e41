"""Paper 003's environments: checkers, determinism, dynamics."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env

import sb3_fair  # noqa: F401
from sb3_fair.envs import DonutAllocationEnv, LoanApplicantsEnv, greedy_allocation

IDS = [
    "sb3_fair/DonutAllocation-v0",
    "sb3_fair/DonutAllocationTabular-v0",
    "sb3_fair/LoanApplicants-v0",
    "sb3_fair/LoanApplicantsGaussian-v0",
]


@pytest.mark.parametrize("env_id", IDS)
def test_registered_env_passes_checkers(env_id):
    env = gym.make(env_id)
    check_env(env.unwrapped, skip_render_check=True)
    sb3_check_env(gym.make(env_id).unwrapped)
    sb3_check_env(gym.make(env_id))


@pytest.mark.parametrize("env_id", IDS)
def test_deterministic_under_seed(env_id):
    def rollout(seed):
        env = gym.make(env_id)
        env.action_space.seed(seed)
        obs, _ = env.reset(seed=seed)
        trace = [obs]
        done = False
        while not done:
            obs, r, term, trunc, info = env.step(env.action_space.sample())
            trace += [obs, np.array([r]), info["benefits"]]
            done = term or trunc
        return np.concatenate([np.ravel(x) for x in trace])

    np.testing.assert_array_equal(rollout(4), rollout(4))
    assert not np.array_equal(rollout(4), rollout(5))


def test_donut_paper_setting():
    env = gym.make("sb3_fair/DonutAllocation-v0")
    base = env.unwrapped
    assert (base.n, base.horizon) == (5, 100) and np.allclose(base.p, 0.8)
    obs, _ = env.reset(seed=0)
    assert obs.shape == (5 + 5 * 7,)  # presence bits + full memory, 7 bits per count
    tab = gym.make("sb3_fair/DonutAllocationTabular-v0").unwrapped
    assert (tab.n, tab.horizon) == (3, 12)
    # presence frequency close to p
    base_env = DonutAllocationEnv()
    base_env.reset(seed=1)
    present = [base_env.step(0)[0] for _ in range(100)]
    assert 0.7 < np.mean(present) < 0.9


def test_donut_wasted_doughnut():
    env = DonutAllocationEnv(n_customers=3, p=[1.0, 0.0, 1.0], horizon=3)
    env.reset(seed=0)
    _, r, term, _, info = env.step(1)
    assert r == 0.0 and info["wasted"] and not info["benefits"].any()
    _, r, _, _, info = env.step(2)
    assert r == 1.0 and info["benefits"].tolist() == [0, 0, 1]
    *_x, term, trunc, _ = env.step(0)
    assert trunc and not term  # the horizon is a time limit: SB3 bootstraps the last step


def test_greedy_allocation():
    assert greedy_allocation([1, 1, 0], [3, 2, 0]) == 1
    assert greedy_allocation([0, 0, 0], [3, 2, 5]) == 1
    assert greedy_allocation([1, 0, 1], [1, 0, 1]) == 0


def test_lending_dynamics():
    env = LoanApplicantsEnv(apply_prob=1.0)
    env.reset(seed=0)
    assert env.stakeholders.groups.tolist() == [1, 1, 0, 0]
    np.testing.assert_allclose(env.credit, [0.5, 0.5, 0.9, 0.9])
    _, r, _, _, info = env.step(2)
    assert r == 0.0 and info["benefits"].tolist() == [0, 0, 1, 0]
    assert env.credit[2] == pytest.approx(0.9 if info["repaid"] else 0.8)
    env2 = LoanApplicantsEnv(apply_prob=0.0)
    env2.reset(seed=0)
    _, r, *_rest = env2.step(0)
    assert r == -40.0  # loan to someone who did not apply
    # the end penalty: no valid loan, so the margin is missed
    for _ in range(38):
        env2.step(0)
    _, r, term, trunc, info = env2.step(0)
    assert trunc and not term and r == -40.0 - 400.0 and not info["margin_met"]


def test_lending_credit_stays_in_range():
    env = LoanApplicantsEnv(apply_prob=1.0, credit_change="gaussian")
    env.reset(seed=3)
    for t in range(40):
        env.step(t % 4)
        assert np.all(env.credit >= 0.2) and np.all(env.credit <= 0.9)


def test_env_bad_input():
    with pytest.raises(ValueError, match="p must"):
        DonutAllocationEnv(p=1.5)
    with pytest.raises(ValueError, match="n_customers"):
        DonutAllocationEnv(n_customers=1)
    with pytest.raises(ValueError, match="credit_change"):
        LoanApplicantsEnv(credit_change="random")
    with pytest.raises(ValueError, match="initial_credit"):
        LoanApplicantsEnv(initial_credit=(0.1, 0.5, 0.9, 0.9))


@pytest.mark.parametrize("env_id", IDS)
def test_rgb_array_render(env_id):
    env = gym.make(env_id, render_mode="rgb_array")
    env.reset(seed=0)
    env.step(0)
    frame = env.render()
    assert frame.ndim == 3 and frame.shape[2] == 3 and frame.dtype == np.uint8 and frame.max() > 30
    with pytest.raises(ValueError, match="render_mode"):
        DonutAllocationEnv(render_mode="human")
