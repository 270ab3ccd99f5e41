"""FairDQN: counterfactual replay (paper 003), equivalence with DQN, presets, save/load, bad input."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch as th
from stable_baselines3 import DQN

import sb3_fair  # noqa: F401
from sb3_fair import FairDQN
from sb3_fair.common.fairqcm.buffers import CounterfactualReplayBuffer
from sb3_fair.envs import DonutAllocationEnv, LoanApplicantsEnv, make_donut_allocation, make_loan_applicants
from sb3_fair.wrappers import FairnessReward, MemoryAugmentation

SMALL = dict(learning_starts=50, buffer_size=2000, batch_size=32, train_freq=1, target_update_interval=100)


def test_counterfactual_off_matches_dqn_exactly():
    kwargs = dict(seed=3, **SMALL)
    fair = FairDQN("MlpPolicy", make_donut_allocation(), counterfactual=False, **kwargs).learn(600)
    base = DQN("MlpPolicy", make_donut_allocation(), **kwargs).learn(600)
    for p, q in zip(fair.policy.parameters(), base.policy.parameters()):
        assert th.equal(p, q)
    obs = np.random.default_rng(0).integers(0, 2, size=(20, 40)).astype(np.float32)
    np.testing.assert_array_equal(fair.predict(obs, deterministic=True)[0], base.predict(obs, deterministic=True)[0])


def test_counterfactual_set_is_papers_default():
    model = FairDQN("MlpPolicy", make_donut_allocation(), counterfactual=True, **SMALL)
    model.learn(120)
    buf = model.replay_buffer
    assert isinstance(buf, CounterfactualReplayBuffer)
    # 32 counterfactuals per step while no count is near the horizon (paper 003, A.4.1)
    assert buf.n_counterfactual == 32 * 120
    assert buf.full and buf.pos == (33 * 120) % buf.buffer_size


def test_counterfactual_with_real_memory_reproduces_real_transition():
    """Eq. 2 with m~ = m_t must give the real next observation and reward: one code path for both."""
    env = make_donut_allocation()
    model = FairDQN("MlpPolicy", env, counterfactual=True, **SMALL)
    raw = model.env.envs[0]
    obs, _ = raw.reset(seed=1)
    mem_wrapper = raw.get_wrapper_attr("decode")
    for _ in range(30):
        action = raw.action_space.sample()
        next_obs, reward, *_rest, info = raw.step(action)
        m = mem_wrapper(obs)
        o, n, r = model.counterfactual_transitions(obs, next_obs, info, m[None])
        np.testing.assert_array_equal(o[0], obs)
        np.testing.assert_array_equal(n[0], next_obs)
        assert r[0] == pytest.approx(reward)
        obs = next_obs


def test_counterfactual_reward_uses_memory_and_filter():
    model = FairDQN("MlpPolicy", make_donut_allocation(), counterfactual=True, **SMALL)
    raw = model.env.envs[0]
    obs, _ = raw.reset(seed=0)
    present = raw.unwrapped.present
    action = int(np.argmax(present))  # a present customer: the doughnut is not wasted
    next_obs, reward, *_rest, info = raw.step(action)
    m = np.array([[3.0, 1.0, 0.0, 2.0, 5.0]])
    _, n, r = model.counterfactual_transitions(obs, next_obs, info, m)
    expected_next = m[0].copy()
    expected_next[action] += 1
    np.testing.assert_array_equal(raw.get_wrapper_attr("decode")(n[0]), expected_next)
    assert r[0] == pytest.approx(np.sum(np.log1p(expected_next)))
    # a wasted doughnut: B = 0, so the counterfactual reward is 0 too
    raw.reset(seed=0)
    absent = np.flatnonzero(raw.unwrapped.present == 0)
    if absent.size:
        next_obs, reward, *_rest, info = raw.step(int(absent[0]))
        _, _, r = model.counterfactual_transitions(obs, next_obs, info, m)
        assert reward == 0.0 and r[0] == 0.0


def test_lending_counterfactuals_keep_task_penalty_and_paper_set():
    model = FairDQN.from_preset("loan_applicants", make_loan_applicants(memory="min"), counterfactual=True)
    raw = model.env.envs[0]
    obs, _ = raw.reset(seed=0)
    # a loan to a non-applicant carries the -T penalty into every counterfactual
    raw.unwrapped.applied[:] = 0
    obs = raw.get_wrapper_attr("observation")(raw.unwrapped._obs())
    next_obs, reward, *_rest, info = raw.step(0)
    assert reward == -40.0
    m = np.array([[0.0, 3.0], [2.0, 0.0]])
    _, _, r = model.counterfactual_transitions(obs, next_obs, info, m)
    np.testing.assert_allclose(r, [-40.0, -40.0])
    # the paper's lending set: <0, x +- k>, k = 1..5 (10 members, A.4.2)
    from sb3_fair.common.fairqcm.memory import counterfactual_memories

    cf = counterfactual_memories(model.memory_spec, np.array([0.0, 7.0]), (0, 1, 2, 3, 4, 5))
    assert len(cf) == 10
    assert {tuple(row) for row in cf} == {(0.0, 7.0 + k) for k in range(-5, 6) if k != 0}


def test_bad_input_fails_at_construction():
    with pytest.raises(ValueError, match="MemoryAugmentation"):
        FairDQN("MlpPolicy", make_donut_allocation(memory=None), counterfactual=True)
    with pytest.raises(ValueError, match="FairnessReward"):
        FairDQN("MlpPolicy", MemoryAugmentation(DonutAllocationEnv()), counterfactual=True)
    FairDQN("MlpPolicy", gym.make("CartPole-v1"))  # at zero weight: the parent, without figures (a log notice, no warning)
    with pytest.raises(ValueError, match="loss"):
        FairDQN("MlpPolicy", make_donut_allocation(), loss="l1")
    with pytest.raises(ValueError, match="reset"):
        FairDQN("MlpPolicy", make_donut_allocation(memory="reset"), counterfactual=True)
    with pytest.raises(ValueError, match="parity"):
        FairDQN("MlpPolicy", make_donut_allocation(memory="min"), counterfactual=True)
    with pytest.raises(ValueError, match="preset"):
        FairDQN.from_preset("chess", make_donut_allocation())


def test_save_load_keeps_configuration(tmp_path):
    model = FairDQN.from_preset("donut", make_donut_allocation(), counterfactual=True, max_counterfactuals=8)
    model.learn(60)
    path = tmp_path / "fairdqn.zip"
    model.save(path)
    loaded = FairDQN.load(path, env=make_donut_allocation())
    assert loaded.counterfactual is True
    assert loaded.max_counterfactuals == 8
    assert loaded.loss == "mse"
    assert loaded.batch_size == 2048
    assert loaded.memory_spec == model.memory_spec
    loaded.learn(60, reset_num_timesteps=False)
    assert loaded.replay_buffer.n_counterfactual <= 8 * 60


def test_multiple_envs_counterfactuals():
    from stable_baselines3.common.env_util import make_vec_env

    venv = make_vec_env(make_donut_allocation, n_envs=2, seed=0)
    model = FairDQN("MlpPolicy", venv, counterfactual=True, **SMALL)
    model.learn(100)
    assert model.replay_buffer.n_counterfactual == 2 * 32 * 50


def test_large_n_samples_at_most_max_counterfactuals():
    env = make_donut_allocation(n_customers=8, horizon=50)  # 2^8 = 256 members: sampled, not enumerated
    model = FairDQN("MlpPolicy", env, counterfactual=True, **SMALL)
    model.learn(50)
    per_step = model.replay_buffer.n_counterfactual / 50
    assert 20 < per_step <= 32


def test_more_bad_input_fails_at_construction():
    with pytest.raises(ValueError, match="counterfactual_offsets"):
        FairDQN("MlpPolicy", make_donut_allocation(), counterfactual=True, counterfactual_offsets="12")
    with pytest.raises(ValueError, match="integer counterfactual_offsets"):
        FairDQN("MlpPolicy", make_donut_allocation(), counterfactual=True, counterfactual_offsets=(0.5, 1))
    with pytest.raises(ValueError, match="fairness_window"):
        FairDQN("MlpPolicy", make_donut_allocation(), fairness_window=0)
    with pytest.raises(ValueError, match="max_counterfactuals"):
        FairDQN("MlpPolicy", make_donut_allocation(), counterfactual=True, max_counterfactuals=0)
    env = FairnessReward(MemoryAugmentation(LoanApplicantsEnv(), kind="min"), welfare="parity", aggregate="group")
    with pytest.raises(ValueError, match="per-group memory"):
        FairDQN("MlpPolicy", env, counterfactual=True)


def test_env_ids_work_as_sb3_strings():
    """SB3 builds string envs with render_mode='rgb_array'; the envs render it."""
    model = FairDQN("MlpPolicy", "sb3_fair/DonutAllocation-v0", counterfactual=True, **SMALL)
    model.env.reset()
    frame = model.env.envs[0].render()
    assert frame.ndim == 3 and frame.shape[2] == 3 and frame.dtype == np.uint8


def _linear_layers(q_net):
    return [m for m in q_net.modules() if isinstance(m, th.nn.Linear)]


def test_ortho_init_is_the_authors_initialisation():
    """ortho_init=True: orthogonal weights (gain 1), zero biases, target a copy (paper 003's code)."""
    model = FairDQN("MlpPolicy", make_donut_allocation(), policy_kwargs={"net_arch": [32, 16, 8], "ortho_init": True},
                    buffer_size=100, seed=0)
    layers = _linear_layers(model.q_net)
    assert [tuple(m.weight.shape) for m in layers] == [(32, 40), (16, 32), (8, 16), (5, 8)]
    for m in layers:
        w = m.weight.detach().double()
        gram = w @ w.T if w.shape[0] <= w.shape[1] else w.T @ w  # orthonormal rows or columns
        th.testing.assert_close(gram, th.eye(gram.shape[0], dtype=th.float64), atol=1e-5, rtol=0)
        assert th.count_nonzero(m.bias) == 0
    for p, q in zip(model.q_net.parameters(), model.q_net_target.parameters()):
        assert th.equal(p, q)
    # the option works with SB3's own DQN too, and is off by default (PyTorch's init: nonzero biases)
    from sb3_fair.dqn import MlpPolicy

    dqn = DQN(MlpPolicy, make_donut_allocation(), policy_kwargs={"ortho_init": np.True_}, buffer_size=100)
    assert all(th.count_nonzero(m.bias) == 0 for m in _linear_layers(dqn.q_net))
    default = FairDQN("MlpPolicy", make_donut_allocation(), buffer_size=100)
    assert not default.policy.ortho_init and th.count_nonzero(_linear_layers(default.q_net)[0].bias) > 0
    with pytest.raises(ValueError, match="ortho_init"):
        FairDQN("MlpPolicy", make_donut_allocation(), policy_kwargs={"ortho_init": "yes"}, buffer_size=100)


def test_presets_use_the_papers_learning_rate_and_init(tmp_path):
    from sb3_fair.dqn import preset_kwargs

    for name in ("donut", "loan_applicants"):
        for cf in (False, True):
            kw = preset_kwargs(name, cf)
            assert kw["learning_rate"] == 1e-4 and kw["policy_kwargs"]["ortho_init"] is True and kw["loss"] == "mse"
    model = FairDQN.from_preset("donut", make_donut_allocation(), counterfactual=True)
    assert model.policy.ortho_init
    model.save(tmp_path / "m.zip")
    assert FairDQN.load(tmp_path / "m.zip").policy.ortho_init


@pytest.mark.parametrize("make_env, horizon", [(make_donut_allocation, 100), (make_loan_applicants, 40)])
def test_last_step_of_an_episode_is_bootstrapped(make_env, horizon):
    """The horizon is a time limit (truncated): the last real and counterfactual rows keep the bootstrap.

    Paper 003's authors store no done flag at all; with ``terminated=True`` at the horizon SB3 would
    cut the bootstrap of the last step, which the observation cannot foresee (no clock in it).
    """
    model = FairDQN("MlpPolicy", make_env(), counterfactual=True, learning_starts=10**6, buffer_size=50_000)
    model.learn(horizon)
    buf = model.replay_buffer
    n = buf.pos
    not_done = 1.0 - buf.dones[:n, 0] * (1.0 - buf.timeouts[:n, 0])  # the factor SB3's sample() puts on the bootstrap
    assert not_done.min() == 1.0
    assert buf.dones[:n, 0].sum() == 1.0 and buf.timeouts[:n, 0].sum() == 1.0  # the one real last step


def test_exploration_decay_per_episode():
    """exploration_decay: epsilon = max(final, initial * decay ** episodes), as paper 003's code decays it."""
    env = make_donut_allocation(n_customers=3, horizon=10)
    model = FairDQN("MlpPolicy", env, exploration_decay=0.9, exploration_final_eps=0.3, learning_starts=5, buffer_size=100, seed=0)
    model.learn(60)  # 6 episodes
    assert model._episode_num == 6 and model.exploration_rate == pytest.approx(0.9**5)
    model.learn(200, reset_num_timesteps=False)  # 26 episodes: the floor
    assert model.exploration_rate == 0.3
    assert model.fairness_config()["exploration_decay"] == 0.9
    with pytest.raises(ValueError, match="exploration_decay"):
        FairDQN("MlpPolicy", env, exploration_decay=0.0, buffer_size=100)


# ---------------------------------------------------------------- Dict observations: an image beside the memory
class ImageDonut(gym.ObservationWrapper):
    """The doughnut env seen as a 36 x 36 grey image: a bright band per present customer."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.observation_space = gym.spaces.Box(0, 255, (36, 36, 1), np.uint8)

    def observation(self, observation):
        img = np.zeros((36, 36, 1), np.uint8)
        for i, present in enumerate(observation):
            if present:
                img[:, 7 * i : 7 * i + 5, 0] = 255
        return img


def _memory_wrapper(env: gym.Env) -> MemoryAugmentation:
    while not isinstance(env, MemoryAugmentation):
        env = env.env
    return env


def _image_env(dict_observation: bool = True) -> gym.Env:
    base = MemoryAugmentation(ImageDonut(DonutAllocationEnv(horizon=20)), encoding="binary", dict_observation=dict_observation)
    return FairnessReward(base, welfare="log_nash")


def test_dict_observation_keeps_the_image_and_puts_the_memory_beside_it():
    from gymnasium.utils.env_checker import check_env

    env = _image_env()
    assert set(env.observation_space.spaces) == {"observation", "memory"}
    assert env.observation_space["observation"].shape == (36, 36, 1) and env.observation_space["observation"].dtype == np.uint8
    flat = _image_env(dict_observation=False)
    obs, _ = env.reset(seed=0)
    flat_obs, _ = flat.reset(seed=0)
    for action in (0, 1, 1, 3):
        obs, *_rest, info = env.step(action)
        flat_obs, *_ = flat.step(action)
        # the same memory in both layouts: the flat one appends it to the flattened image
        np.testing.assert_array_equal(obs["memory"], flat_obs[36 * 36:])
        np.testing.assert_array_equal(_memory_wrapper(env).decode(obs), info["memory"])
    check_env(_image_env().unwrapped)  # the base env is untouched
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    sb3_check_env(_image_env(), warn=False)


def test_counterfactual_replay_on_a_dict_observation_with_a_cnn():
    model = FairDQN("MultiInputPolicy", _image_env(), counterfactual=True, learning_starts=20, buffer_size=2000, batch_size=8,
                    max_counterfactuals=4, seed=0)
    model.learn(60)
    buffer = model.replay_buffer
    assert type(buffer).__name__ == "CounterfactualDictReplayBuffer" and buffer.n_counterfactual > 0
    assert "CombinedExtractor" in type(model.policy.q_net.features_extractor).__name__
    assert buffer.observations["observation"].dtype == np.uint8  # images are stored as images
    # each counterfactual row: the real image, a counterfactual memory (never the real one), the reward of its next memory
    obs, _ = model.env.envs[0].reset(seed=1)
    next_obs, _, _, _, info = model.env.envs[0].step(2)
    memory = _memory_wrapper(model.env.envs[0])
    memories = memory.decode(obs)[None] + np.eye(5)  # one more unit for one customer each
    obs_cf, next_cf, rew_cf = model.counterfactual_transitions(obs, next_obs, info, memories)
    assert obs_cf["observation"].dtype == np.uint8 and (obs_cf["observation"] == obs["observation"]).all()
    decoded = memory.decode(obs_cf)
    np.testing.assert_array_equal(decoded, memories)
    flat_model = FairDQN("MlpPolicy", _image_env(dict_observation=False), counterfactual=True, learning_starts=20, seed=0)
    flat_env = flat_model.env.envs[0]
    flat_obs, _ = flat_env.reset(seed=1)
    flat_next, _, _, _, flat_info = flat_env.step(2)
    _, _, flat_rew = flat_model.counterfactual_transitions(flat_obs, flat_next, flat_info, memories)
    np.testing.assert_allclose(rew_cf, flat_rew)  # the same rewards as with the flat layout
