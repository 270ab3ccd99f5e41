"""Paper 002's toroidal pursuit-evasion env, its symmetry, greedy baseline and speed curriculum."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env

import sb3_fair  # noqa: F401
from sb3_fair.common.symmetry import AgentSymmetry
from sb3_fair.envs import GreedyPursuitPolicy, PursuitEvasionEnv, SpeedCurriculum
from sb3_fair.envs.pursuit import evader_heading, torus_delta


@pytest.mark.parametrize("observation", ["relative", "absolute"])
def test_checkers_and_determinism(observation):
    env = PursuitEvasionEnv(observation=observation)
    check_env(env, skip_render_check=True)
    sb3_check_env(PursuitEvasionEnv(observation=observation))

    def rollout(seed):
        e = gym.make("sb3_fair/PursuitEvasion-v0", observation=observation, max_steps=60)
        e.action_space.seed(seed)
        obs, _ = e.reset(seed=seed)
        trace = [obs]
        for _ in range(60):
            obs, r, term, trunc, info = e.step(e.action_space.sample())
            trace.append(obs)
            if term or trunc:
                break
        return np.concatenate(trace)

    np.testing.assert_array_equal(rollout(3), rollout(3))
    assert not np.array_equal(rollout(3), rollout(4))


def permuted_env(env: PursuitEvasionEnv, perm) -> PursuitEvasionEnv:
    other = PursuitEvasionEnv(n_pursuers=env.n, observation=env.observation)
    other.reset(seed=0)
    other.pursuers = env.pursuers[list(perm)].copy()  # new pursuer i stands where old perm[i] stood
    other.evader = env.evader.copy()
    return other


@pytest.mark.parametrize("observation", ["relative", "absolute"])
@pytest.mark.parametrize("n", [3, 4])
def test_symmetry_matches_permuted_states(observation, n):
    env = PursuitEvasionEnv(n_pursuers=n, observation=observation)
    rng = np.random.default_rng(0)
    for trial in range(5):
        env.reset(seed=trial)
        env.pursuers = rng.uniform(0, 6, (n, 2))
        obs = env._obs()
        for perm in env.symmetry.permutations():
            expected = permuted_env(env, perm)._obs()
            np.testing.assert_allclose(env.symmetry.permute_obs(obs, perm), expected, atol=1e-6)


def test_greedy_policy_is_equivariant_and_captures_when_faster():
    env = PursuitEvasionEnv()
    policy = GreedyPursuitPolicy(env)
    env.reset(seed=1)
    obs = env._obs()
    act = policy.predict(obs)[0]
    for perm in env.symmetry.permutations():
        np.testing.assert_allclose(policy.predict(env.symmetry.permute_obs(obs, perm))[0],
                                   env.symmetry.permute_action(act, perm), atol=1e-6)
    captured = 0
    for seed in range(5):
        e = gym.make("sb3_fair/PursuitEvasion-v0", pursuer_speed=1.2)
        o, _ = e.reset(seed=seed)
        done = False
        while not done:
            o, r, term, trunc, info = e.step(GreedyPursuitPolicy(e).predict(o)[0])
            done = term or trunc
        captured += term
        if term:
            assert r == pytest.approx(49.9) and info["benefits"].sum() >= 1
    assert captured == 5


def test_evader_flees_along_eq7_minimiser():
    evader = np.array([3.0, 3.0])
    pursuers = np.array([[4.0, 3.0], [3.0, 4.0]])  # east and north at distance 1
    h = evader_heading(evader, pursuers, 6.0)
    np.testing.assert_allclose(h, -np.array([1.0, 1.0]) / np.sqrt(2))
    # the minimiser of U(theta) = sum_i cos(theta - theta_i) / r_i over a fine grid of headings
    d = torus_delta(evader[None], pursuers, 6.0)
    theta_i, r_i = np.arctan2(d[:, 1], d[:, 0]), np.linalg.norm(d, axis=1)
    grid = np.linspace(-np.pi, np.pi, 3601)
    u = np.sum(np.cos(grid[:, None] - theta_i[None]) / r_i[None], axis=1)
    best = grid[np.argmin(u)]
    np.testing.assert_allclose(h, [np.cos(best), np.sin(best)], atol=2e-3)
    # across the seam: a pursuer just west across the boundary pushes the evader east
    h2 = evader_heading(np.array([0.1, 3.0]), np.array([[5.9, 3.0]]), 6.0)
    np.testing.assert_allclose(h2, [1.0, 0.0], atol=1e-9)


def test_capture_credit_and_rewards():
    env = PursuitEvasionEnv(evader_speed=0.0)
    env.reset(seed=0)
    env.evader = np.array([3.0, 3.0])
    env.pursuers = np.array([[3.2, 3.0], [1.0, 1.0], [5.0, 5.0]])
    obs, r, term, trunc, info = env.step(np.array([-1, 0, 0, 0, 0, 0], dtype=np.float32))
    assert term and not trunc and r == pytest.approx(49.9)
    np.testing.assert_array_equal(info["benefits"], [1, 0, 0])
    env.reset(seed=0)
    _, r, term, _, info = env.step(np.zeros(6, np.float32))
    assert r == pytest.approx(-0.1) and not term and info["benefits"].sum() == 0
    short = PursuitEvasionEnv(max_steps=2)
    short.reset(seed=0)
    short.step(np.zeros(6, np.float32))
    *_x, term, trunc, _ = short.step(np.zeros(6, np.float32))
    assert trunc and not term


def test_speed_curriculum_lowers_speed():
    from stable_baselines3 import TD3

    env = gym.make("sb3_fair/PursuitEvasion-v0", max_steps=50)
    model = TD3("MlpPolicy", env, learning_starts=1000, seed=0)
    cb = SpeedCurriculum(start=1.2, end=0.4)
    model.learn(200, callback=cb)
    assert model.env.get_attr("pursuer_speed")[0] == pytest.approx(0.4, abs=1e-2)
    with pytest.raises(ValueError, match="start"):
        SpeedCurriculum(start=-1)


def test_bad_input():
    with pytest.raises(ValueError, match="observation"):
        PursuitEvasionEnv(observation="polar")
    with pytest.raises(ValueError, match="pursuer_speed"):
        PursuitEvasionEnv(pursuer_speed=float("nan"))
    with pytest.raises(ValueError, match="multiple"):
        AgentSymmetry(n_agents=3, obs_dim=2, action_dim=4, obs_index=lambda p: np.arange(2))
    with pytest.raises(ValueError, match="size"):
        PursuitEvasionEnv().symmetry.check_action_space(4)
    with pytest.raises(ValueError, match="PursuitEvasionEnv"):
        GreedyPursuitPolicy(gym.make("CartPole-v1"))


def test_rgb_render():
    env = PursuitEvasionEnv(render_mode="rgb_array")
    env.reset(seed=0)
    frame = env.render()
    assert frame.shape == (120, 120, 3) and frame.dtype == np.uint8


def test_evaluate_team_fairness_with_greedy_baseline():
    from sb3_fair.common.evaluation import evaluate_team_fairness

    env = PursuitEvasionEnv(pursuer_speed=1.2, max_steps=200)
    out = evaluate_team_fairness(GreedyPursuitPolicy(env), env, n_episodes=12)
    assert out["capture_success"] == 1.0
    assert out["credit"].shape == (12, 3) and np.all(out["credit"].sum(axis=1) >= 1)
    assert 0.0 <= out["team_fairness"] <= np.log2(3) + 1e-9
    slow = PursuitEvasionEnv(pursuer_speed=0.6, max_steps=50)
    out_slow = evaluate_team_fairness(GreedyPursuitPolicy(slow), slow, n_episodes=3)
    assert out_slow["capture_success"] == 0.0 and out_slow["team_fairness"] == 0.0
