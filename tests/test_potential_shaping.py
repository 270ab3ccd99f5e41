"""Potential-based shaping of the fairness reward (FairDQN's ``potential_shaping``; Ng, Harada & Russell 1999)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

import sb3_fair  # noqa: F401
from sb3_fair import FairDQN
from sb3_fair.common.fairqcm.reward import RewardSpec, potential_shaping, shaping_from_welfare
from sb3_fair.envs import DonutAllocationEnv, make_donut_allocation
from sb3_fair.wrappers import FairnessMonitor, FairnessReward, MemoryAugmentation

SMALL = dict(learning_starts=10_000, buffer_size=10_000, batch_size=32, train_freq=1, target_update_interval=100)


def test_potential_shaping_known_answers():
    spec = RewardSpec(welfare="log_nash")
    # Phi(m) = W(m) / (1 - gamma), W = sum log(m + 1): Phi([0, 0]) = 0, Phi([1, 0]) = 2 log 2 at gamma = 0.5
    assert potential_shaping(spec, [0, 0], [1, 0], 0.5) == pytest.approx(np.log(2))
    # a true end of episode has potential 0: F = -Phi(m)
    assert potential_shaping(spec, [1, 0], [1, 1], 0.5, terminal=True) == pytest.approx(-2 * np.log(2))
    # a batch of memories (counterfactual rows), the weight of the fairness term scales Phi
    batch = potential_shaping(RewardSpec(welfare="log_nash", fairness_coef=2.0), [[0, 0], [1, 0]], [[1, 0], [1, 1]], 0.5)
    np.testing.assert_allclose(batch, [2 * np.log(2), 2 * (0.5 * 4 * np.log(2) - 2 * np.log(2))])
    with pytest.raises(ValueError, match="gamma in \\[0, 1\\)"):
        potential_shaping(spec, [0, 0], [1, 0], 1.0)


def test_shaping_from_welfare_is_potential_shapings_arithmetic_bit_for_bit():
    """FairDQN reuses W across steps through shaping_from_welfare: one row or a batch, it must give the same bits."""
    rng = np.random.default_rng(3)
    spec = RewardSpec(welfare="log_nash", fairness_coef=1.7)
    m, m_next = rng.uniform(0, 50, (20, 4)), rng.uniform(0, 50, (20, 4))
    terminal = rng.random(20) < 0.3
    batch = shaping_from_welfare(spec.welfare_of_rows(m), spec.welfare_of_rows(m_next), 1.7, 0.97, terminal)
    assert np.array_equal(batch, potential_shaping(spec, m, m_next, 0.97, terminal))
    for i in range(20):
        one = shaping_from_welfare(spec.welfare_of(m[i]), spec.welfare_of(m_next[i]), 1.7, 0.97, bool(terminal[i]))
        assert isinstance(one, float) and one == batch[i] == potential_shaping(spec, m[i], m_next[i], 0.97, bool(terminal[i]))
    with pytest.raises(ValueError, match="gamma in \\[0, 1\\)"):
        shaping_from_welfare(0.0, 1.0, 1.0, -0.1)


def test_potential_shaping_telescopes():
    """sum_t gamma^t F_t = gamma^T Phi(m_T) - Phi(m_0): the shaped return differs by a function of the start state only."""
    rng = np.random.default_rng(0)
    spec, gamma = RewardSpec(welfare="log_nash"), 0.9
    memories = np.cumsum(rng.integers(0, 2, size=(21, 4)), axis=0).astype(float)
    total = sum(gamma**t * potential_shaping(spec, memories[t], memories[t + 1], gamma) for t in range(20))
    phi = [spec.welfare_of(m) / (1 - gamma) for m in (memories[0], memories[20])]
    assert total == pytest.approx(gamma**20 * phi[1] - phi[0])


def _stored(model: FairDQN) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    buf = model.replay_buffer
    n = buf.pos
    decode = model.env.envs[0].get_wrapper_attr("decode")
    m = np.array([decode(o) for o in buf.observations[:n, 0]])
    m_next = np.array([decode(o) for o in buf.next_observations[:n, 0]])
    return m, m_next, buf.rewards[:n, 0]


@pytest.mark.parametrize("counterfactual", [False, True])
def test_fair_dqn_stores_shaped_rewards_real_and_counterfactual(counterfactual):
    gamma = 0.9
    model = FairDQN("MlpPolicy", make_donut_allocation(), counterfactual=counterfactual, potential_shaping=True, gamma=gamma, seed=0, **SMALL)
    model.learn(150)  # crosses the time limit at step 100, which bootstraps: Phi(m') is kept there
    m, m_next, rewards = _stored(model)
    delivered = np.any(m_next != m, axis=1)
    welfare = np.log1p(m).sum(axis=1), np.log1p(m_next).sum(axis=1)
    expected = np.where(delivered, welfare[1], 0.0) + (gamma * welfare[1] - welfare[0]) / (1 - gamma)
    np.testing.assert_allclose(rewards, expected, rtol=1e-5, atol=1e-4)
    assert len(rewards) > 150 if counterfactual else len(rewards) == 150
    # the logged episode reward stays the env's own: the paper's log-Nash score of the first episode
    if not counterfactual:
        assert model.ep_info_buffer[0]["r"] == pytest.approx(np.where(delivered, welfare[1], 0.0)[:100].sum(), rel=1e-5)


def test_potential_shaping_off_stores_env_rewards():
    model = FairDQN("MlpPolicy", make_donut_allocation(), potential_shaping=False, seed=0, **SMALL)
    model.learn(50)
    m, m_next, rewards = _stored(model)
    np.testing.assert_allclose(rewards, np.where(np.any(m_next != m, axis=1), np.log1p(m_next).sum(axis=1), 0.0), rtol=1e-6)


def test_potential_shaping_is_saved(tmp_path):
    model = FairDQN("MlpPolicy", make_donut_allocation(), potential_shaping=True, **SMALL)
    assert model.fairness_config()["potential_shaping"] is True
    model.save(tmp_path / "m.zip")
    assert FairDQN.load(tmp_path / "m.zip", env=make_donut_allocation()).potential_shaping is True


def test_potential_shaping_bad_input():
    with pytest.raises(ValueError, match="potential_shaping=True needs an env with memory"):
        FairDQN("MlpPolicy", FairnessReward(DonutAllocationEnv(), welfare="log_nash"), potential_shaping=True)
    with pytest.raises(ValueError, match="potential_shaping=True needs the reward to be a function of the memory"):
        FairDQN("MlpPolicy", make_donut_allocation().env, potential_shaping=True)
    for gamma in (1.0, None, "0.9"):
        with pytest.raises(ValueError, match="potential_shaping=True needs gamma in \\[0, 1\\)"):
            FairDQN("MlpPolicy", make_donut_allocation(), potential_shaping=True, gamma=gamma)
    with pytest.raises(ValueError, match="potential_shaping=True needs gamma"):  # given by position, as DQN allows
        FairDQN("MlpPolicy", make_donut_allocation(), 1e-4, 500, 10, 32, 1.0, 1.0, potential_shaping=True)
    with pytest.raises(ValueError, match="potential_shaping=True needs MemoryAugmentation's observation .* and no VecNormalize"):
        FairDQN("MlpPolicy", VecNormalize(DummyVecEnv([make_donut_allocation])), potential_shaping=True)
    with pytest.raises(ValueError, match="potential_shaping"):
        FairDQN("MlpPolicy", make_donut_allocation(), potential_shaping="yes")


class _EndsForReal(gym.Wrapper):
    """The doughnut env with its horizon as a true end of episode (terminated, not truncated)."""

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        return obs, reward, terminated or truncated, False, info


def _short_donut(ends_for_real: bool, dict_observation: bool) -> gym.Env:
    env: gym.Env = DonutAllocationEnv(horizon=30)
    if ends_for_real:
        env = _EndsForReal(env)
    env = MemoryAugmentation(env, kind="full", encoding="binary", dict_observation=dict_observation)
    return FairnessReward(env, welfare="log_nash", scheme="bounded", filter="benefit")


@pytest.mark.parametrize("counterfactual", [False, True])
@pytest.mark.parametrize("ends_for_real, dict_observation", [(False, False), (True, False), (True, True)])
def test_shaping_row_by_row_with_two_envs(counterfactual, ends_for_real, dict_observation):
    """Every stored row, real and counterfactual, of 2 envs whose episodes are cut (bootstrapped) or truly end (Phi = 0
    after the end), with a flat or a Dict observation: reward = W(m') B + gamma (1 - done) Phi(m') - Phi(m)."""
    gamma = 0.9
    venv = DummyVecEnv([lambda: FairnessMonitor(_short_donut(ends_for_real, dict_observation))] * 2)
    policy = "MultiInputPolicy" if dict_observation else "MlpPolicy"
    model = FairDQN(policy, venv, counterfactual=counterfactual, potential_shaping=True, gamma=gamma, seed=1, **SMALL)
    model.learn(80)  # 40 steps per env: every env ends an episode
    buf = model.replay_buffer
    n = buf.pos

    def rows(x):
        return {k: v[:n].reshape(-1, *v.shape[2:]) for k, v in x.items()} if isinstance(x, dict) else x[:n].reshape(-1, x.shape[-1])

    m, m_next = model._memories(rows(buf.observations)), model._memories(rows(buf.next_observations))
    done = buf.dones[:n].reshape(-1) * (1 - buf.timeouts[:n].reshape(-1))
    assert done.sum() > 0 if ends_for_real else done.sum() == 0
    assert len(done) > 80 if counterfactual else len(done) == 80  # counterfactual rows beside the 2 x 40 real ones
    w, w_next = np.log1p(m).sum(axis=1), np.log1p(m_next).sum(axis=1)
    delivered = np.any(m_next != m, axis=1)
    expected = np.where(delivered, w_next, 0.0) + (gamma * (1 - done) * w_next - w) / (1 - gamma)
    np.testing.assert_allclose(buf.rewards[:n].reshape(-1), expected, rtol=1e-5, atol=1e-4)


def test_fairness_config_holds_the_specs_settings_only():
    """The memory spec caches derived values (sizes, bit tables) on first use; the config lists its fields only."""
    model = FairDQN("MlpPolicy", make_donut_allocation(), potential_shaping=True, seed=0, **SMALL)
    before = set(model.fairness_config())
    model.learn(30)
    config = model.fairness_config()
    assert set(config) == before
    assert {k for k in config if k.startswith("memory_")} == {"memory_n_stakeholders", "memory_kind", "memory_encoding",
                                                             "memory_max_value", "memory_period"}
