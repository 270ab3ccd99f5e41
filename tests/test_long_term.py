"""The advantage regularisation of F-PPO (Hu, Lear, Zhang 2024, Eqs. 4 and 7) and A-PPO (Yu et al. 2022): known answers."""

from __future__ import annotations

import numpy as np
import pytest

from sb3_fair.common.long_term.advantages import (
    a_ppo_terms,
    epidemic_massaging_threshold,
    lending_massaging_threshold,
    long_term_terms,
    massaging_choice,
    min_max_scale,
    regularized_advantages,
)
from sb3_fair.common.protocol import (
    LONG_TERM_FAIRNESS,
    SHORT_TERM_FAIRNESS,
    get_fairness_signals,
    get_what_if,
    is_what_if_supported,
)


def test_eq7_branches():
    # Δs above δ: only a rise of Δl counts (penalty <= 0); at or below δ: only a fall counts (reward >= 0)
    ds = np.array([0.2, 0.2, 0.01, 0.01, 0.05])
    dl_change = np.array([+0.3, -0.3, +0.3, -0.3, -0.1])  # Δl_{t+1} - Δl_t
    pen, rew = long_term_terms(ds, dl_change, delta=0.05)
    np.testing.assert_allclose(pen, [-0.3, 0.0, 0.0, 0.0, 0.0])
    np.testing.assert_allclose(rew, [0.0, 0.0, 0.0, 0.3, 0.1])  # Δs = δ is "fair enough" (Eq. 7: <= δ)
    assert np.all(pen <= 0) and np.all(rew >= 0)


def test_a_ppo_terms():
    ds = np.array([0.1, 0.01, 0.1])
    dds = np.array([0.02, 0.02, -0.05])
    vt, dec = a_ppo_terms(ds, dds, omega=0.05)
    np.testing.assert_allclose(vt, [-0.05, 0.0, -0.05])
    np.testing.assert_allclose(dec, [-0.02, 0.0, 0.0])  # only a rise while above ω is penalised


def test_min_max_scale():
    np.testing.assert_allclose(min_max_scale([2.0, 4.0, 3.0]), [0.0, 1.0, 0.5], atol=1e-7)
    np.testing.assert_array_equal(min_max_scale([5.0, 5.0]), [0.0, 0.0])  # a constant term vanishes
    # a tiny spread is blown up to the full range (the authors' scaling amplifies noise)
    np.testing.assert_allclose(min_max_scale([0.0, 1e-4]), [0.0, 1.0], atol=1e-3)


def test_a_one_row_minibatch_keeps_its_advantage_in_scaled_mode():
    # min-max scaling would turn the single advantage into 0 (no gradient); SB3 leaves one row unstandardised too
    np.testing.assert_array_equal(regularized_advantages([-3.5], ([-1.0], [0.0]), (1.12, 1.0)), [-3.5])
    np.testing.assert_array_equal(regularized_advantages([-3.5], ([-1.0], [0.0]), (1.12, 1.0), advantage_weight=2.0), [-7.0])
    assert regularized_advantages([-3.5], ([-1.0], [0.0]), (1.0, 1.0), mode="literal")[0] == -4.5
    with pytest.raises(ValueError, match="shape"):
        regularized_advantages([-3.5], ([-1.0, 0.0],), (1.0,))


def test_regularized_advantages_literal_and_scaled():
    adv = np.array([1.0, -1.0, 0.0])
    pen = np.array([-0.5, 0.0, 0.0])
    rew = np.array([0.0, 0.0, 0.2])
    lit = regularized_advantages(adv, (pen, rew), (2.0, 2.0), mode="literal")
    np.testing.assert_allclose(lit, adv + 2.0 * (pen + rew))  # Eq. 4 with λ = 2
    sc = regularized_advantages(adv, (pen, rew), (1.12, 1.0), mode="scaled")
    expected = np.array([1.0, 0.0, 0.5]) + 1.12 * np.array([0.0, 1.0, 1.0]) + 1.0 * np.array([0.0, 0.0, 1.0])
    np.testing.assert_allclose(sc, expected, atol=1e-6)
    # zero weights: the advantage alone (literal) / its min-max image (scaled); PPO standardises either
    np.testing.assert_allclose(regularized_advantages(adv, (pen, rew), (0.0, 0.0), mode="literal"), adv)


def test_bad_input():
    with pytest.raises(ValueError, match="mode"):
        regularized_advantages([1.0], ([0.0],), (1.0,), mode="minmax")
    with pytest.raises(ValueError, match="weights must be a finite number"):
        regularized_advantages([1.0], ([0.0],), (-1.0,))
    with pytest.raises(ValueError, match="one weight per term"):
        regularized_advantages([1.0], ([0.0],), (1.0, 2.0))
    with pytest.raises(ValueError, match="same shape"):
        long_term_terms([0.1, 0.2], [0.0], 0.05)
    with pytest.raises(ValueError, match="finite"):
        long_term_terms([np.nan], [0.0], 0.05)


def test_signals_from_infos():
    ds, dl = get_fairness_signals([{SHORT_TERM_FAIRNESS: 0.1, LONG_TERM_FAIRNESS: 1.0},
                                   {SHORT_TERM_FAIRNESS: 0.0, LONG_TERM_FAIRNESS: 0.5}])
    np.testing.assert_allclose(ds, [0.1, 0.0])
    np.testing.assert_allclose(dl, [1.0, 0.5])
    with pytest.raises(ValueError, match="short_term_fairness.*long_term_fairness.*sub-envs \\[1\\]"):
        get_fairness_signals([{SHORT_TERM_FAIRNESS: 0.1, LONG_TERM_FAIRNESS: 1.0}, {}])


def test_what_if_protocol_through_a_vec_env():
    import gymnasium as gym
    from stable_baselines3.common.vec_env import DummyVecEnv

    class Flip(gym.Env):
        observation_space = gym.spaces.Box(0, 1, (1,))
        action_space = gym.spaces.Discrete(2)

        def reset(self, seed=None, options=None):
            return np.zeros(1, dtype=np.float32), {}

        def step(self, action):
            return np.zeros(1, dtype=np.float32), 0.0, False, False, {}

        def fairness_what_if(self, action):
            return np.array([action, 1 - action]), np.array([0.3, 0.1]) if action == 0 else np.array([0.1, 0.3])

    vec = DummyVecEnv([Flip, Flip])
    assert is_what_if_supported(vec) and is_what_if_supported(gym.wrappers.TimeLimit(Flip(), 5))
    answers = get_what_if(vec, np.array([0, 1]))
    np.testing.assert_array_equal(answers[0][0], [0, 1])
    np.testing.assert_array_equal(answers[1][0], [1, 0])
    np.testing.assert_allclose(answers[1][1], [0.1, 0.3])
    plain = DummyVecEnv([lambda: gym.make("CartPole-v1")])
    assert not is_what_if_supported(plain)
    with pytest.raises(ValueError, match="fairness_what_if"):
        get_what_if(plain, np.array([0]))


def test_massaging_choice_eq6():
    # candidate 0 is the sampled action; only candidates within τ of its probability are eligible
    assert massaging_choice([0.5, 0.45, 0.1], [0.3, 0.2, 0.0], tau=0.08) == 1  # 2 is fairer but too unlikely
    assert massaging_choice([0.5, 0.45, 0.1], [0.3, 0.2, 0.0], tau=0.5) == 2
    assert massaging_choice([0.5, 0.45], [0.2, 0.2], tau=1.0) == 0  # a tie keeps the sampled action
    assert massaging_choice([0.5, 0.45], [0.1, 0.0], tau=0.0) == 0  # τ = 0: no massaging
    # equally fair candidates: the most probable one (an epidemic policy's likeliest person of a community)
    assert massaging_choice([0.3, 0.05, 0.25, 0.1], [0.5, 0.1, 0.1, 0.1], tau=1.0) == 2
    with pytest.raises(ValueError, match="same non-zero length"):
        massaging_choice([0.5], [0.1, 0.2], tau=0.1)


def test_the_batch_choice_gives_each_columns_choice_in_both_of_its_paths():
    """_choices compares a small batch on Python floats and a large one in NumPy: the same choices, ties and
    impossible (+inf) candidates included."""
    from sb3_fair._exact import SHORT
    from sb3_fair.common.long_term.advantages import _choices

    rng = np.random.default_rng(0)
    k, n = 4, 60
    assert k * n > SHORT  # the NumPy path
    p = rng.choice([0.0, 0.1, 0.25, 0.3, 0.5], size=(k, n))  # coarse values: many equal probabilities
    ds = rng.choice([0.0, 0.1, 0.2, np.inf], size=(k, n))
    ds[0] = rng.choice([0.0, 0.1, 0.2], size=n)  # the proposal's Δs is finite
    for tau in (0.0, 0.1, 0.2, 1.0):
        batch = _choices(p, ds, tau)
        one_by_one = [int(_choices(p[:, j : j + 1], ds[:, j : j + 1], tau)[0]) for j in range(n)]  # k x 1: Python
        assert batch.tolist() == one_by_one
        assert one_by_one == [massaging_choice(p[:, j], ds[:, j], tau) for j in range(n)]
    assert len(set(_choices(p, ds, 1.0).tolist())) > 2  # the cases exercise several candidates


def test_massaging_schedules_of_the_paper():
    # bank loans: τ = 1 - 2 τ(i), τ(i) = 0.5 * 0.985^(i - 17) from i = 17, else 0.5
    assert lending_massaging_threshold(0) == 0.0 and lending_massaging_threshold(17) == 0.0
    assert lending_massaging_threshold(100) == pytest.approx(1 - 0.985 ** 83)  # π(a) in [0.143, 0.857]
    assert 0.99 < lending_massaging_threshold(349) < 1.0
    # epidemic: min(0.35, 0.01 * 1.2^(i - 50)) from i = 50, else 0; the cap is reached at i = 70
    assert epidemic_massaging_threshold(49) == 0.0 and epidemic_massaging_threshold(50) == pytest.approx(0.01)
    assert epidemic_massaging_threshold(69) < 0.35 and epidemic_massaging_threshold(70) == 0.35
