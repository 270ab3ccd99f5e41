"""F-PPO's long-term regularisation and A-PPO inside FairPPO / FairMaskablePPO / FairRecurrentPPO."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch as th
from sb3_contrib import MaskablePPO, RecurrentPPO
from stable_baselines3 import PPO

from sb3_fair import FairMaskablePPO, FairPPO, FairRecurrentPPO
from sb3_fair.common.long_term.advantages import a_ppo_terms, long_term_terms, regularized_advantages
from sb3_fair.common.fairness_terms import FairnessBufferMixin
from sb3_fair.common.protocol import LONG_TERM_FAIRNESS, SHORT_TERM_FAIRNESS
from sb3_fair.envs import DelayedImpactLendingEnv

KW = dict(n_steps=32, batch_size=16, n_epochs=2, seed=0)


class Clock(gym.Env):
    """Reports Δs = t / 10 and Δl = t^2 after step t (and Δl = 0.5 at reset); ``length``-step episodes."""

    observation_space = gym.spaces.Box(0.0, 10.0, (1,), dtype=np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, length: int = 5, reset_signals: bool = True):
        self.length, self.reset_signals = length, reset_signals

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        info = {SHORT_TERM_FAIRNESS: 0.0, LONG_TERM_FAIRNESS: 0.5} if self.reset_signals else {}
        return np.zeros(1, dtype=np.float32), info

    def step(self, action):
        self.t += 1
        info = {SHORT_TERM_FAIRNESS: self.t / 10, LONG_TERM_FAIRNESS: float(self.t**2)}
        return np.array([self.t], dtype=np.float32), float(action), False, self.t >= self.length, info


def weights(model):
    return [p.detach().clone() for p in model.policy.state_dict().values()]


@pytest.mark.parametrize("parent, fair_cls, policy", [(PPO, FairPPO, "MlpPolicy"), (MaskablePPO, FairMaskablePPO, "MlpPolicy"),
                                                      (RecurrentPPO, FairRecurrentPPO, "MlpLstmPolicy")],
                         ids=["FairPPO", "FairMaskablePPO", "FairRecurrentPPO"])
def test_zero_weight_is_the_parent_and_weight_changes_the_actor_only(parent, fair_cls, policy):
    extra = {"use_masking": False} if parent is MaskablePPO else {}
    base = parent(policy, DelayedImpactLendingEnv(horizon=40), **KW).learn(32, **extra)
    zero = fair_cls(policy, DelayedImpactLendingEnv(horizon=40), **KW, fairness="long_term", fairness_coef=0.0).learn(32, **extra)
    for a, b in zip(weights(base), weights(zero)):
        th.testing.assert_close(a, b, rtol=0, atol=0)
    on = fair_cls(policy, DelayedImpactLendingEnv(horizon=40), **KW, fairness="long_term", fairness_coef=1.0).learn(32, **extra)
    assert isinstance(on.rollout_buffer, FairnessBufferMixin)
    assert any(not th.equal(a, b) for a, b in zip(weights(base), weights(on)))
    # the first rollout is the same, and the critic's targets are never regularised
    np.testing.assert_array_equal(base.rollout_buffer.returns, on.rollout_buffer.returns)
    logged = on.logger.name_to_value  # the last update's records (the rollout's Δs and Δl are dumped before it)
    for key in ("fairness/long_term_penalty", "fairness/long_term_reward"):
        assert key in logged and np.isfinite(logged[key])
    # the share of the rollout's steps in Eq. 7's reward branch (short-term gap within delta)
    assert logged["fairness/within_delta"] == np.mean(on.rollout_buffer.short_term <= on.delta)


def test_tracker_rows_follow_the_infos_across_auto_resets():
    model = FairPPO("MlpPolicy", Clock(), n_steps=12, batch_size=12, n_epochs=1, seed=0, fairness="a_ppo")
    model.learn(12)
    buf = model.rollout_buffer
    # after training the arrays are flattened as SB3 flattens its own ((steps * envs, 1)); t = 1..5, 1..5, 1..2
    t = np.array([1, 2, 3, 4, 5, 1, 2, 3, 4, 5, 1, 2], dtype=np.float64)
    np.testing.assert_allclose(buf.short_term.ravel(), t / 10, rtol=1e-6)
    np.testing.assert_allclose(buf.long_term.ravel(), t**2)
    before_l = np.where(t == 1, 0.5, (t - 1) ** 2)  # the reset info's Δl before each episode's first step
    np.testing.assert_allclose(buf.long_term_change.ravel(), t**2 - before_l)
    before_s = np.where(t == 1, 0.0, (t - 1) / 10)
    np.testing.assert_allclose(buf.short_term_change.ravel(), t / 10 - before_s, atol=1e-6)


def test_each_minibatch_gets_its_own_regularised_advantages():
    model = FairPPO("MlpPolicy", Clock(), n_steps=10, batch_size=5, n_epochs=1, seed=0, fairness="long_term",
                    fairness_coef=(1.12, 1.0), delta=0.25)
    model.learn(10)  # fills the buffer once
    buf = model.rollout_buffer  # flattened by the training pass; sample fixed rows as PPO's minibatches do
    raw = buf.advantages.copy()
    idx = np.array([0, 3, 4, 7, 9])
    term = model.fairness_term
    buf.transform_minibatches(term.terms(buf), term.regularize)  # as train() sets them (the whole rollout's rows)
    got = buf._get_samples(idx).advantages.numpy()
    buf.transform_minibatches((), None)
    pen, rew = long_term_terms(buf.short_term[idx, 0], buf.long_term_change[idx, 0], 0.25)
    want = regularized_advantages(raw[idx, 0], (pen, rew), (1.12, 1.0), mode="scaled")
    np.testing.assert_allclose(got, want, rtol=1e-5)
    np.testing.assert_array_equal(buf.advantages, raw)  # the buffer's own advantages are untouched
    # A-PPO's terms through the same path
    term.method = "a_ppo"
    buf.transform_minibatches(term.terms(buf), term.regularize)
    got = buf._get_samples(idx).advantages.numpy()
    buf.transform_minibatches((), None)
    vt, dec = a_ppo_terms(buf.short_term[idx, 0], buf.short_term_change[idx, 0], model.omega)
    np.testing.assert_allclose(got, regularized_advantages(raw[idx, 0], (vt, dec), (1.12, 1.0)), rtol=1e-5)


def test_save_load_and_config(tmp_path):
    model = FairPPO("MlpPolicy", Clock(), **KW, fairness="long_term", fairness_coef=(1.12, 1.0), delta=0.005,
                    regularization="literal")
    model.save(tmp_path / "m")
    loaded = FairPPO.load(tmp_path / "m", env=Clock())
    assert (loaded.fairness, tuple(loaded.fairness_coef), loaded.delta, loaded.regularization) == (
        "long_term", (1.12, 1.0), 0.005, "literal")
    assert isinstance(loaded.rollout_buffer, FairnessBufferMixin)
    loaded.learn(32)
    assert loaded.fairness_config()["fairness_coef"] == [1.12, 1.0]


@pytest.mark.parametrize("kwargs, match", [
    ({"delta": -0.1}, "delta must be a finite number >= 0"),
    ({"omega": float("nan")}, "omega must be a finite number >= 0"),
    ({"regularization": "minmax"}, r"regularization must be one of \['scaled', 'literal'\]"),
    ({"fairness_coef": (1.0, 2.0, 3.0)}, "fairness_coef must be a number >= 0 or a pair"),
    ({"fairness_coef": -1.0}, "fairness_coef must be a finite number >= 0"),
])
def test_bad_input_fails_at_construction(kwargs, match):
    with pytest.raises(ValueError, match=match):
        FairPPO("MlpPolicy", Clock(), **KW, **{"fairness": "long_term", **kwargs})


def test_env_without_signals_fails_at_the_first_step_naming_the_keys():
    model = FairPPO("MlpPolicy", "CartPole-v1", **KW, fairness="long_term")
    with pytest.raises(ValueError, match="short_term_fairness.*long_term_fairness"):
        model.learn(32)


def test_two_envs_of_different_lengths_and_resets_without_signals():
    from stable_baselines3.common.vec_env import DummyVecEnv

    vec = DummyVecEnv([lambda: Clock(5), lambda: Clock(3, reset_signals=False)])
    model = FairPPO("MlpPolicy", vec, n_steps=8, batch_size=16, n_epochs=1, seed=0, fairness="long_term")
    model.learn(16)
    buf = model.rollout_buffer  # flattened env by env: env 0's 8 steps, then env 1's
    t0 = np.array([1, 2, 3, 4, 5, 1, 2, 3], dtype=np.float64)
    t1 = np.array([1, 2, 3, 1, 2, 3, 1, 2], dtype=np.float64)
    np.testing.assert_allclose(buf.long_term.ravel(), np.concatenate([t0**2, t1**2]))
    change0 = t0**2 - np.where(t0 == 1, 0.5, (t0 - 1) ** 2)
    change1 = np.where(t1 == 1, 0.0, t1**2 - (t1 - 1) ** 2)  # no reset value: no change on the first step
    np.testing.assert_allclose(buf.long_term_change.ravel(), np.concatenate([change0, change1]))
    s_change1 = np.where(t1 == 1, 0.0, 0.1)
    np.testing.assert_allclose(buf.short_term_change.ravel()[8:], s_change1, atol=1e-12)


def test_short_term_gap_exactly_at_delta_takes_the_reward_branch():
    model = FairPPO("MlpPolicy", Clock(), n_steps=10, batch_size=10, n_epochs=1, seed=0, fairness="long_term", delta=0.1)
    model.learn(10)
    buf = model.rollout_buffer
    penalty, reward = long_term_terms(buf.short_term.ravel(), buf.long_term_change.ravel(), 0.1)
    at_delta = np.isclose(buf.short_term.ravel(), 0.1)
    assert at_delta.any() and np.all(penalty[at_delta] == 0)  # Eq. 7: Δs <= δ is the reward branch


def test_scaled_regularisation_needs_advantage_normalisation_and_fairness_is_checked():
    with pytest.raises(ValueError, match="normalize_advantage=True"):
        FairPPO("MlpPolicy", Clock(), **KW, fairness="long_term", normalize_advantage=False)
    FairPPO("MlpPolicy", Clock(), **KW, fairness="long_term", normalize_advantage=False, regularization="literal")
    with pytest.raises(ValueError, match=r"fairness must be one of \['dp', 'csp', 'cf', 'long_term', 'a_ppo'\]"):
        FairPPO("MlpPolicy", Clock(), **KW, fairness="longterm")


def test_a_rollout_cut_short_by_a_callback_goes_on_from_its_last_step():
    """A callback stops learn() mid-rollout; the next learn(reset_num_timesteps=False) starts its rollout from the env's
    state there, so the first row's change is measured from the last step taken (the rows are written when a rollout
    ends, and when training ends)."""
    from stable_baselines3.common.callbacks import BaseCallback

    class StopAfter(BaseCallback):
        def __init__(self, n: int) -> None:
            super().__init__()
            self.n = n

        def _on_step(self) -> bool:
            return self.n_calls < self.n

    model = FairPPO("MlpPolicy", Clock(length=20), n_steps=8, batch_size=8, n_epochs=1, seed=0, fairness="long_term")
    model.learn(8, callback=StopAfter(3))  # t = 1, 2, 3, then stopped inside the first rollout
    assert model.num_timesteps == 3
    model.learn(8, reset_num_timesteps=False)  # the env goes on: t = 4 .. 11
    t = np.arange(4, 12, dtype=np.float64)
    buf = model.rollout_buffer
    np.testing.assert_allclose(buf.long_term.ravel(), t**2)
    np.testing.assert_allclose(buf.long_term_change.ravel(), t**2 - (t - 1) ** 2)  # row 0: 16 - 9, from t = 3


def test_signal_lists_are_the_arrays_values_with_the_same_checks():
    from sb3_fair.common.protocol import get_fairness_signal_lists, get_fairness_signals

    infos = [{SHORT_TERM_FAIRNESS: 0.25, LONG_TERM_FAIRNESS: np.float32(0.5)}, {SHORT_TERM_FAIRNESS: 1, LONG_TERM_FAIRNESS: 0.0}]
    ds, dl = get_fairness_signal_lists(infos)
    assert ds == [0.25, 1.0] and dl == [0.5, 0.0] and all(type(v) is float for v in ds + dl)
    arrays = get_fairness_signals(infos)
    assert arrays[0].dtype == np.float64 and arrays[0].tolist() == ds and arrays[1].tolist() == dl
    for bad in (float("nan"), "0.5", None, float("inf")):
        with pytest.raises(ValueError, match="sub-env 1 must be a finite number"):
            get_fairness_signal_lists([infos[0], {SHORT_TERM_FAIRNESS: bad, LONG_TERM_FAIRNESS: 0.0}])


def test_a_learn_that_raised_mid_rollout_leaves_the_next_learn_working():
    """Rows of a rollout that an exception cut short are written when training starts again (they set the
    "before" values of the env that goes on), or dropped when the env is reset."""
    from stable_baselines3.common.callbacks import BaseCallback

    class Boom(BaseCallback):
        def _on_step(self) -> bool:
            if self.n_calls == 3:
                raise KeyboardInterrupt
            return True

    for reset in (False, True):
        model = FairPPO("MlpPolicy", Clock(length=20), n_steps=8, batch_size=8, n_epochs=1, seed=0, fairness="long_term")
        with pytest.raises(KeyboardInterrupt):
            model.learn(8, callback=Boom())
        model.learn(8, reset_num_timesteps=reset)
        t = np.arange(1, 9, dtype=np.float64) if reset else np.arange(4, 12, dtype=np.float64)
        buf = model.rollout_buffer
        np.testing.assert_allclose(buf.long_term.ravel(), t**2)
        before = np.where(t == 1, 0.5, (t - 1) ** 2)  # after a reset, the first row's "before" is the reset info's
        np.testing.assert_allclose(buf.long_term_change.ravel(), t**2 - before)
