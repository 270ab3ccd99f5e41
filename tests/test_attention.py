"""Paper 004's attention-allocation env (Hu, Lear, Zhang 2024, §VI-B): dynamics, signals, what-if, policy."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch as th
from gymnasium.utils.env_checker import check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env
from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize
from state_equality import assert_same, snapshot

from sb3_fair.common.protocol import (
    BENEFITS,
    LONG_TERM_FAIRNESS,
    SHORT_TERM_FAIRNESS,
    WHAT_IF,
    get_fairness_signals,
    get_stakeholders,
    get_what_if,
    is_what_if_supported,
)
from sb3_fair.envs.attention import (
    LOGIT_BOUND,
    LONG_TERM_MEASURES,
    MOVE_EPSILON,
    AttentionAllocationEnv,
    ProportionalAllocationPolicy,
    allocation_to_logits,
    logits_to_allocation,
)
from sb3_fair.envs.lending import LoanApplicantsEnv
from sb3_fair.metrics import allocation_share_gap, max_mean_deviation

LAMBDA0 = np.array([8.0, 6.0, 4.0, 3.0, 1.5])


def act(allocation) -> np.ndarray:
    return allocation_to_logits(np.asarray(allocation))


# ------------------------------------------------------------------ API checkers
def test_checkers():
    check_env(AttentionAllocationEnv(), skip_render_check=True)
    sb3_check_env(AttentionAllocationEnv())
    env = AttentionAllocationEnv()
    assert env.observation_space.shape == (160,) and env.observation_space.dtype == np.float32
    assert env.action_space.shape == (5,) and env.action_space.dtype == np.float32
    assert np.all(env.action_space.low == -LOGIT_BOUND) and np.all(env.action_space.high == LOGIT_BOUND)
    sh = get_stakeholders(env)
    assert sh.n == 5 and sh.n_groups == 5


# ------------------------------------------------------------------ allocation procedure
def test_allocation_procedure_and_tie_break():
    # equal logits: every round's maximum is a tie, won by the lowest index
    np.testing.assert_array_equal(logits_to_allocation(np.zeros(5), 6), [2, 1, 1, 1, 1])
    np.testing.assert_array_equal(logits_to_allocation(np.zeros(5), 3), [1, 1, 1, 0, 0])
    # P = (0.5, 0.3, 0.2), N = 4: 0.5 -> 0.25 | 0.3 -> 0.05 | 0.25 -> 0 | 0.2 -> -0.05: (2, 1, 1)
    np.testing.assert_array_equal(logits_to_allocation(np.log([0.5, 0.3, 0.2]), 4), [2, 1, 1])
    # sites 1 and 2 have equal logits: the tie for the one unit goes to site 1
    np.testing.assert_array_equal(logits_to_allocation(np.array([-1.0, 0.0, 0.0]), 1), [0, 1, 0])
    np.testing.assert_array_equal(logits_to_allocation(np.array([-1.0, 0.0, 0.0]), 3), [1, 1, 1])
    rng = np.random.default_rng(0)
    for _ in range(200):
        a = logits_to_allocation(rng.normal(0, 3, size=5), 6)
        assert a.dtype == np.int64 and a.sum() == 6 and np.all(a >= 0)


def test_allocation_round_trip():
    rng = np.random.default_rng(1)
    cases = [np.array([6, 0, 0, 0, 0]), np.array([0, 0, 0, 0, 6]), np.array([1, 0]), np.array([1000, 0, 0, 0, 0])]
    for _ in range(3000):
        k = int(rng.integers(2, 9))
        n = int(rng.integers(1, 25))
        p = rng.dirichlet(np.full(k, 0.5))
        cases.append(rng.multinomial(n, p))
    n_with_zeros = 0
    for a in cases:
        z = allocation_to_logits(a)
        assert z.dtype == np.float32 and np.all(np.abs(z) <= LOGIT_BOUND)
        np.testing.assert_array_equal(logits_to_allocation(z, int(a.sum())), a)
        n_with_zeros += bool(np.any(a == 0))
    assert n_with_zeros > 1000
    for n in range(1, 7):  # every allocation of the default env
        for a in _compositions(n, 5):
            np.testing.assert_array_equal(logits_to_allocation(allocation_to_logits(a), n), a)


def _compositions(n: int, k: int):
    if k == 1:
        yield np.array([n])
        return
    for first in range(n + 1):
        for rest in _compositions(n - first, k - 1):
            yield np.concatenate([[first], rest])


def test_allocation_in_info_and_benefits():
    env = AttentionAllocationEnv()
    env.reset(seed=0)
    _, _, _, _, info = env.step(act([3, 0, 2, 1, 0]))
    np.testing.assert_array_equal(info["allocation"], [3, 0, 2, 1, 0])
    assert info["allocation"].dtype.kind == "i"
    assert info[BENEFITS].dtype == np.float64
    np.testing.assert_array_equal(info[BENEFITS], [3.0, 0.0, 2.0, 1.0, 0.0])
    # any finite logits are accepted, even outside the space's bounds (clipped to them first)
    _, _, _, _, info = env.step(np.array([50.0, -50.0, 0.0, 0.0, 0.0]))
    np.testing.assert_array_equal(info["allocation"], [6, 0, 0, 0, 0])


def test_actions_are_clipped_as_sb3_does_in_step_and_what_if():
    # unclipped, [12, 11, 0, 0, 0] asks for (4, 2, 0, 0, 0); SB3 sends [10, 10, 0, 0, 0]: (3, 3, 0, 0, 0)
    proposed = np.array([12.0, 11.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(logits_to_allocation(proposed, 6), [4, 2, 0, 0, 0])
    clipped = np.clip(proposed, -LOGIT_BOUND, LOGIT_BOUND)
    for action in (proposed, clipped):
        env = AttentionAllocationEnv(window=2)
        env.reset(seed=0)
        candidates, short_term = env.fairness_what_if(action)
        np.testing.assert_array_equal(candidates[0], action.astype(np.float32))  # row 0 as given
        assert short_term[0] == pytest.approx(allocation_share_gap([3, 3, 0, 0, 0]))
        _, _, _, _, info = env.step(action)
        np.testing.assert_array_equal(info["allocation"], [3, 3, 0, 0, 0])
        assert info[SHORT_TERM_FAIRNESS] == pytest.approx(short_term[0])
    # the same allocation for the unclipped and the clipped logits, whatever the history
    rng = np.random.default_rng(2)
    env = AttentionAllocationEnv()
    env.reset(seed=0)
    for _ in range(50):
        big = rng.normal(0, 15, size=5)
        twin = copy.deepcopy(env)
        _, _, _, _, info = env.step(big)
        _, _, _, _, info_clipped = twin.step(np.clip(big, -LOGIT_BOUND, LOGIT_BOUND).astype(np.float32))
        np.testing.assert_array_equal(info["allocation"], info_clipped["allocation"])


# ------------------------------------------------------------------ dynamics
def test_rate_update_by_hand():
    env = AttentionAllocationEnv()
    _, info = env.reset(seed=0)
    np.testing.assert_array_equal(info["rates"], LAMBDA0)
    _, _, _, _, info = env.step(act([3, 0, 2, 1, 0]))
    expected = np.array([8 - 0.3, 6 + 0.26, 4 - 0.2, 3 - 0.1, 1.5 + 0.3])
    np.testing.assert_allclose(info["rates"], expected)
    np.testing.assert_allclose(env.rates, expected)
    # decrease floored at 0
    env = AttentionAllocationEnv(initial_rates=(0.05, 1.0), increase_rates=(0.5, 0.5), n_units=2)
    env.reset(seed=0)
    _, _, _, _, info = env.step(act([2, 0]))
    np.testing.assert_allclose(info["rates"], [0.0, 1.5])


def test_incidents_drawn_before_the_update():
    # site 0 starts at rate 0 and jumps to 100 when left alone: incidents there must come from the old rate
    env = AttentionAllocationEnv(initial_rates=(0.0, 5.0), increase_rates=(100.0, 0.0), n_units=1)
    env.reset(seed=0)
    _, _, _, _, info = env.step(act([0, 1]))
    assert info["occurred"][0] == 0 and info["rates"][0] == 100.0
    _, _, _, _, info = env.step(act([0, 1]))
    assert info["occurred"][0] > 50  # now drawn from 100
    # replaying the generator: y ~ Poisson(rates before the update), one draw per step
    env = AttentionAllocationEnv()
    env.reset(seed=7)
    rng = copy.deepcopy(env.np_random)
    rates = LAMBDA0.copy()
    for alloc in ([3, 0, 2, 1, 0], [0, 6, 0, 0, 0], [1, 1, 1, 1, 2]):
        _, _, _, _, info = env.step(act(alloc))
        np.testing.assert_array_equal(info["occurred"], rng.poisson(rates))
        rates = info["rates"]


def test_reward_and_discoveries():
    env = AttentionAllocationEnv(missed_weight=0.5, discovered_weight=2.0)
    env.reset(seed=3)
    for alloc in ([3, 0, 2, 1, 0], [6, 0, 0, 0, 0], [0, 0, 0, 0, 6]):
        _, r, _, _, info = env.step(act(alloc))
        np.testing.assert_array_equal(info["discovered"], np.minimum(alloc, info["occurred"]))
        missed = info["occurred"] - info["discovered"]
        assert r == pytest.approx(2.0 * info["discovered"].sum() - 0.5 * missed.sum())
    env = AttentionAllocationEnv()  # default weights (1, 0.25)
    env.reset(seed=3)
    _, r, _, _, info = env.step(act([6, 0, 0, 0, 0]))
    assert r == pytest.approx(info["discovered"].sum() - 0.25 * (info["occurred"] - info["discovered"]).sum())


# ------------------------------------------------------------------ observation
def test_observation_layout_oldest_first():
    env = AttentionAllocationEnv(window=3)
    obs, _ = env.reset(seed=0)
    assert np.all(obs == 0) and obs in env.observation_space
    allocs = [[3, 0, 2, 1, 0], [6, 0, 0, 0, 0], [0, 1, 1, 2, 2], [1, 1, 1, 1, 2]] * 3
    records, occ, disc = [], [], []
    for t, alloc in enumerate(allocs):
        obs, _, _, _, info = env.step(act(alloc))
        occ.append(info["occurred"])
        disc.append(info["discovered"])
        ratio = np.sum(disc[-3:], axis=0) / (np.sum(occ[-3:], axis=0) + 1.0)
        records.append(np.concatenate([info["discovered"], info["occurred"], alloc, ratio]).astype(np.float32))
        blocks = obs.reshape(8, 20)
        n = min(t + 1, 8)
        np.testing.assert_allclose(blocks[8 - n :], np.stack(records[-n:]), rtol=1e-6)
        assert np.all(blocks[: 8 - n] == 0)
        assert obs in env.observation_space


def test_observation_bounds_hold():
    env = AttentionAllocationEnv()
    space = env.observation_space
    high = space.high.reshape(8, 4, 5)
    assert np.all(space.low == 0)
    assert np.all(high[:, 0] == 6) and np.all(np.isinf(high[:, 1])) and np.all(high[:, 2] == 6)
    assert np.all(high[:, 3] == 1)
    env.reset(seed=1)
    env.action_space.seed(1)
    for t in range(300):  # neglected sites grow large counts; a concentrated allocation maxes discovered
        a = env.action_space.sample() if t % 2 else act([6, 0, 0, 0, 0])
        obs, *_ = env.step(a)
        assert obs in space


# ------------------------------------------------------------------ fairness signals
def test_short_term_eq9_by_hand():
    env = AttentionAllocationEnv(window=2)
    _, info = env.reset(seed=0)
    assert info[SHORT_TERM_FAIRNESS] == 0.0
    expected = [0.8, 0.3, 0.3, 0.8]  # shares (1,0,0,0,0); (.5,.5,0,0,0); (0,.5,.5,0,0); (0,0,1,0,0)
    for alloc, ds in zip(([6, 0, 0, 0, 0], [0, 6, 0, 0, 0], [0, 0, 6, 0, 0], [0, 0, 6, 0, 0]), expected):
        _, _, _, _, info = env.step(act(alloc))
        assert info[SHORT_TERM_FAIRNESS] == pytest.approx(ds)
    # a full window equals Eq. 9 with its N * w denominator
    env = AttentionAllocationEnv(window=4)
    env.reset(seed=0)
    allocs = np.array([[3, 0, 2, 1, 0], [2, 1, 1, 1, 1], [0, 0, 0, 0, 6], [1, 2, 3, 0, 0], [6, 0, 0, 0, 0]])
    for a in allocs:
        _, _, _, _, info = env.step(act(a))
    eq9 = np.max(np.abs(allocs[-4:].sum(axis=0) / (6 * 4) - 1 / 5))
    assert info[SHORT_TERM_FAIRNESS] == pytest.approx(eq9)


def test_long_term_rates_by_hand():
    env = AttentionAllocationEnv()
    _, info = env.reset(seed=0)
    assert info[LONG_TERM_FAIRNESS] == pytest.approx(3.5)  # |8 - 4.5|, where the paper's Fig. 3b starts
    _, _, _, _, info = env.step(act([3, 0, 2, 1, 0]))
    rates = np.array([7.7, 6.26, 3.8, 2.9, 1.8])
    assert info[LONG_TERM_FAIRNESS] == pytest.approx(7.7 - rates.mean())  # 3.208


def test_long_term_counts_by_hand():
    env = AttentionAllocationEnv(long_term="counts", window=2)
    _, info = env.reset(seed=0)
    assert info[LONG_TERM_FAIRNESS] == 0.0  # no incident yet
    occ = []
    for alloc in ([3, 0, 2, 1, 0], [0, 6, 0, 0, 0], [1, 1, 1, 1, 2], [2, 2, 2, 0, 0]):
        _, _, _, _, info = env.step(act(alloc))
        occ.append(info["occurred"])
        h = np.sum(occ[-2:], axis=0).astype(float)
        assert info[LONG_TERM_FAIRNESS] == pytest.approx(np.max(np.abs(h - h.mean())) / h.max())
    # deterministic counts: rates 0 except site 0 -> h = (y, 0, 0), gap = (y - y/3) / y = 2/3
    env = AttentionAllocationEnv(initial_rates=(5.0, 0.0, 0.0), increase_rates=(0, 0, 0), n_units=3, long_term="counts")
    env.reset(seed=0)
    _, _, _, _, info = env.step(act([1, 1, 1]))
    assert info["occurred"][0] > 0 and info[LONG_TERM_FAIRNESS] == pytest.approx(2 / 3)


def test_metric_functions():
    assert allocation_share_gap([6, 0, 0, 0, 0]) == pytest.approx(0.8)
    assert allocation_share_gap([[3, 3, 0, 0, 0], [3, 3, 0, 0, 0]]) == pytest.approx(0.3)
    assert allocation_share_gap([2, 1, 1, 1, 1]) == pytest.approx(2 / 6 - 0.2)
    assert allocation_share_gap(np.zeros(5)) == 0.0
    assert max_mean_deviation([8, 6, 4, 3, 1.5]) == pytest.approx(3.5)
    assert max_mean_deviation([4, 2, 0], normalize=True) == pytest.approx(0.5)
    assert max_mean_deviation([0, 0], normalize=True) == 0.0
    with pytest.raises(ValueError):
        allocation_share_gap([-1, 2])


def test_signals_survive_vec_env_auto_reset():
    venv = DummyVecEnv([lambda: AttentionAllocationEnv(horizon=3)])
    venv.reset()
    for _ in range(3):
        _, _, dones, infos = venv.step(np.zeros((1, 5), dtype=np.float32))
    assert dones[0] and infos[0]["TimeLimit.truncated"]
    ds, dl = get_fairness_signals(infos)
    assert ds[0] == pytest.approx(allocation_share_gap([2, 1, 1, 1, 1]))
    # Δl of the last step, not the reset value 3.5 that auto-reset put in place
    assert dl[0] == pytest.approx(max_mean_deviation(infos[0]["rates"]))
    assert dl[0] != pytest.approx(3.5)


# ------------------------------------------------------------------ what-if
def _moved(allocation: np.ndarray, i: int, j: int) -> np.ndarray:
    out = allocation.copy()
    out[i] -= 1
    out[j] += 1
    return out


def _expected_targets(allocation: np.ndarray) -> list[np.ndarray]:
    """The what-if's candidate allocations in their order: from each site with a unit to each other site."""
    k = allocation.size
    return [_moved(allocation, i, j) for i in range(k) if allocation[i] > 0 for j in range(k) if j != i]


def test_what_if_candidates_and_answers():
    env = AttentionAllocationEnv(window=3)
    env.reset(seed=0)
    for alloc in ([6, 0, 0, 0, 0], [3, 0, 2, 1, 0], [0, 0, 0, 3, 3], [1, 1, 1, 1, 2]):
        env.step(act(alloc))
    proposed = np.array([0.3, -1.0, 2.0, 0.5, -0.2], dtype=np.float32)
    base = logits_to_allocation(proposed, 6)
    candidates, short_term = getattr(env, WHAT_IF)(proposed)
    n_from = int(np.count_nonzero(base))
    assert candidates.shape == (1 + 4 * n_from, 5) and short_term.shape == (1 + 4 * n_from,)
    assert candidates.dtype == np.float32 and short_term.dtype == np.float64
    np.testing.assert_array_equal(candidates[0], proposed)
    allocs = [logits_to_allocation(c, 6) for c in candidates]
    np.testing.assert_array_equal(np.stack(allocs[1:]), np.stack(_expected_targets(base)))
    assert len({tuple(a) for a in allocs}) == len(allocs)
    # each answer is the Δs that executing the candidate leaves
    for c, ds in zip(candidates, short_term):
        twin = copy.deepcopy(env)
        _, _, _, _, info = twin.step(c)
        assert info[SHORT_TERM_FAIRNESS] == pytest.approx(ds)
    assert np.all(np.abs(candidates) <= LOGIT_BOUND)


def test_what_if_candidates_execute_as_scored_on_random_states():
    rng = np.random.default_rng(11)
    setups = ((6, (8.0, 6.0, 4.0, 3.0, 1.5), 5), (3, (2.0, 1.0, 1.0), 2), (13, (1.0,) * 4, 7))
    for n_units, initial_rates, window in setups:
        k = len(initial_rates)
        env = AttentionAllocationEnv(
            n_units=n_units, initial_rates=initial_rates, increase_rates=(0.1,) * k, window=window
        )
        env.reset(seed=int(rng.integers(1000)))
        for _ in range(4):  # a few random states, each probed with a few random proposals
            for _ in range(int(rng.integers(1, 2 * window))):
                env.step(rng.normal(0, 2, size=k))
            scales = (0.0, 0.3, 1.0, 4.0, 30.0)  # 0: equal logits (ties); 30: clipped, extreme
            for proposed in [rng.normal(0, s, size=k).astype(np.float32) for s in scales]:
                base = env._executed(proposed)
                candidates, short_term = env.fairness_what_if(proposed)
                assert candidates.dtype == np.float32 and np.all(np.abs(candidates[1:]) <= LOGIT_BOUND)
                targets = [base] + _expected_targets(base)
                assert len(candidates) == len(targets) == len(short_term)
                for c, target, ds in zip(candidates, targets, short_term):
                    twin = copy.deepcopy(env)
                    _, _, _, _, info = twin.step(c)
                    np.testing.assert_array_equal(info["allocation"], target)
                    assert info[SHORT_TERM_FAIRNESS] == ds


def test_what_if_candidates_perturb_the_proposed_logits():
    # the authors' move: σ = min(1/N, p_i - ε) of probability from i to j; only z_i and z_j change
    env = AttentionAllocationEnv()
    env.reset(seed=0)
    proposed = np.array([0.3, -1.0, 2.0, 0.5, -0.2], dtype=np.float32)
    z = proposed.astype(np.float64)
    p = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
    base = logits_to_allocation(proposed, 6)
    candidates, _ = env.fairness_what_if(proposed)
    moves = [(i, j) for i in range(5) if base[i] > 0 for j in range(5) if j != i]
    n_exact = 0
    for c, (i, j) in zip(candidates[1:], moves):
        if np.count_nonzero(c != proposed) > 2:
            continue  # a fallback candidate (checked to execute as scored elsewhere)
        n_exact += 1
        sigma = min(1 / 6, p[i] - MOVE_EPSILON)
        others = [k for k in range(5) if k not in (i, j)]
        np.testing.assert_array_equal(c[others], proposed[others])
        assert c[i] == pytest.approx(z[i] + np.log((p[i] - sigma) / p[i]), abs=1e-5)
        assert c[j] == pytest.approx(z[j] + np.log((p[j] + sigma) / p[j]), abs=1e-5)
    assert n_exact >= len(moves) - 2
    # across random Gaussian samples, most candidates are the two-logit move, and they are much
    # nearer the sample than the reference logits of their allocations
    rng = np.random.default_rng(5)
    n_two, n_all, nearer = 0, 0, 0
    for _ in range(200):
        proposed = rng.normal(0, 1, size=5).astype(np.float32)
        candidates, _ = env.fairness_what_if(proposed)
        for c in candidates[1:]:
            n_all += 1
            n_two += np.count_nonzero(c != proposed) <= 2
            ref = allocation_to_logits(logits_to_allocation(c, 6))
            nearer += np.linalg.norm(c - proposed) < np.linalg.norm(ref - proposed)
    assert n_two / n_all > 0.9 and nearer / n_all > 0.85
    # a sample with a tiny probability at a site it still sends a unit to (p_i <= ε): fallback, still exact
    env = AttentionAllocationEnv(n_units=1000, initial_rates=(1.0,) * 3, increase_rates=(0.1,) * 3)
    env.reset(seed=0)
    proposed = np.array([0.0, 0.0, np.log(0.004 / 0.498)], dtype=np.float32)
    base = logits_to_allocation(proposed, 1000)
    assert base[2] > 0
    candidates, _ = env.fairness_what_if(proposed)
    for c, target in zip(candidates[1:], _expected_targets(base)):
        np.testing.assert_array_equal(env._executed(c), target)


def test_what_if_has_no_side_effect():
    env, twin = AttentionAllocationEnv(window=2), AttentionAllocationEnv(window=2)
    env.reset(seed=5)
    twin.reset(seed=5)
    for alloc in ([6, 0, 0, 0, 0], [3, 0, 2, 1, 0], [0, 0, 0, 3, 3]):
        env.step(act(alloc))
        twin.step(act(alloc))
        before = snapshot(env)
        env.fairness_what_if(act([2, 2, 2, 0, 0]))
        env.fairness_what_if(np.zeros(5))
        env.fairness_what_if(np.array([12.0, 11.0, 0.0, 0.0, -30.0]))
        assert_same(before, snapshot(env))  # the generator's state included
    o1, r1, *_, i1 = env.step(act([1, 1, 1, 1, 2]))
    o2, r2, *_, i2 = twin.step(act([1, 1, 1, 1, 2]))
    np.testing.assert_array_equal(o1, o2)
    assert r1 == r2 and i1[SHORT_TERM_FAIRNESS] == i2[SHORT_TERM_FAIRNESS]


def test_same_detects_differences():
    env = AttentionAllocationEnv()
    env.reset(seed=0)
    before = snapshot(env)
    env.step(act([6, 0, 0, 0, 0]))
    with pytest.raises(AssertionError):
        assert_same(before, snapshot(env))
    nested = {"a": np.array([1.0, np.nan]), "b": [1, (2, "x")]}
    assert_same(nested, copy.deepcopy(nested))
    with pytest.raises(AssertionError):
        assert_same({"a": np.zeros(2)}, {"a": np.zeros(3)})


def test_what_if_through_protocol_and_vec_env():
    venv = DummyVecEnv([lambda: AttentionAllocationEnv(), lambda: AttentionAllocationEnv()])
    venv.reset()
    assert is_what_if_supported(venv)
    answers = get_what_if(venv, np.stack([act([6, 0, 0, 0, 0]), act([2, 1, 1, 1, 1])]))
    assert answers[0][0].shape == (5, 5) and answers[1][0].shape == (21, 5)
    assert answers[0][1][0] == pytest.approx(0.8)


# ------------------------------------------------------------------ episodes, seeding, bad input
def test_determinism_under_seed():
    def rollout(seed):
        env = AttentionAllocationEnv()
        env.reset(seed=seed)
        env.action_space.seed(seed)
        out = []
        for _ in range(50):
            obs, r, *_ = env.step(env.action_space.sample())
            out.append(np.append(obs, r))
        return np.concatenate(out)

    np.testing.assert_array_equal(rollout(3), rollout(3))
    assert not np.array_equal(rollout(3), rollout(4))


@pytest.mark.parametrize("horizon_terminates", [False, True])
def test_horizon(horizon_terminates):
    env = AttentionAllocationEnv(horizon=5, horizon_terminates=horizon_terminates)
    env.reset(seed=0)
    for _ in range(4):
        _, _, term, trunc, _ = env.step(np.zeros(5))
        assert not term and not trunc
    _, _, term, trunc, _ = env.step(np.zeros(5))
    assert (term, trunc) == ((True, False) if horizon_terminates else (False, True))
    obs, info = env.reset()
    assert env.t == 0 and np.all(obs == 0) and info[LONG_TERM_FAIRNESS] == pytest.approx(3.5)
    assert AttentionAllocationEnv().horizon == 1000


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"n_units": 0}, "n_units"),
        ({"n_units": 2.5}, "n_units"),
        ({"n_units": 5000}, "n_units"),
        ({"initial_rates": (1.0,)}, "initial_rates"),
        ({"initial_rates": (1.0, -1.0, 1, 1, 1)}, "initial_rates"),
        ({"initial_rates": "abc"}, "initial_rates"),
        ({"increase_rates": (0.1, 0.2)}, "increase_rates"),
        ({"decrease_rate": -0.1}, "decrease_rate"),
        ({"decrease_rate": None}, "decrease_rate"),
        ({"missed_weight": float("nan")}, "missed_weight"),
        ({"discovered_weight": "one"}, "discovered_weight"),
        ({"discovered_weight": -1.0}, "discovered_weight"),
        ({"increase_rates": (0.1, 0.2, 0.3, 0.4, float("inf"))}, "increase_rates"),
        ({"increase_rates": 0.1}, "increase_rates"),
        ({"initial_rates": np.ones((2, 5))}, "initial_rates"),
        ({"n_units": True}, "n_units"),
        ({"history_len": 2.0}, "history_len"),
        ({"horizon_terminates": 1}, "horizon_terminates"),
        ({"history_len": 0}, "history_len"),
        ({"window": 0}, "window"),
        ({"horizon": 0}, "horizon"),
        ({"horizon_terminates": "yes"}, "horizon_terminates"),
        ({"long_term": "w1"}, "long_term"),
        ({"render_mode": "human"}, "render_mode"),
    ],
)
def test_bad_arguments(kwargs, name):
    with pytest.raises(ValueError, match=name):
        AttentionAllocationEnv(**kwargs)


@pytest.mark.parametrize(
    "kwargs, accepted",
    [
        ({"long_term": "W1"}, r"one of \['rates', 'counts'\]"),
        ({"n_units": 5000}, r"an int in \[1, 1000\]"),
        ({"n_units": 0}, r"an int >= 1"),
        ({"window": 1.5}, r"an int >= 1"),
        ({"initial_rates": (1.0,)}, r"a sequence of >= 2 finite numbers >= 0"),
        ({"initial_rates": (1.0, -1.0)}, r"initial_rates\[1\] must be a finite number >= 0"),
        ({"increase_rates": (0.1, 0.2)}, r"5 finite numbers >= 0"),
        ({"decrease_rate": -0.1}, r"a finite number >= 0"),
        ({"horizon_terminates": "yes"}, r"True or False"),
    ],
)
def test_bad_arguments_name_accepted_values(kwargs, accepted):
    assert LONG_TERM_MEASURES == ("rates", "counts")
    with pytest.raises(ValueError, match=accepted):
        AttentionAllocationEnv(**kwargs)
    for good in LONG_TERM_MEASURES:
        assert AttentionAllocationEnv(long_term=good).long_term == good
    env = AttentionAllocationEnv(initial_rates=np.array([1.0, 2.0]), increase_rates=[0, 1], decrease_rate=0)
    assert env.initial_rates.dtype == np.float64 and env.increase_rates.tolist() == [0.0, 1.0]


def test_bad_actions_and_allocations():
    env = AttentionAllocationEnv()
    env.reset(seed=0)
    for bad in (np.zeros(4), np.zeros((1, 5)), np.array([0, 0, np.nan, 0, 0]), np.array([np.inf, 0, 0, 0, 0])):
        with pytest.raises(ValueError, match="action"):
            env.step(bad)
        with pytest.raises(ValueError, match="action"):
            env.fairness_what_if(bad)
    for bad in ([0, 0, 0], [1, -1, 2], [1.5, 0.5], [[1, 2]]):
        with pytest.raises(ValueError, match="allocation"):
            allocation_to_logits(bad)
    with pytest.raises(ValueError, match="n_units"):
        logits_to_allocation(np.zeros(3), 0)


# ------------------------------------------------------------------ reference policy, render, SB3
def test_proportional_policy():
    env = AttentionAllocationEnv()
    policy = ProportionalAllocationPolicy(env)
    obs, _ = env.reset(seed=0)
    a, state = policy.predict(obs)
    assert state is None and a.shape == (5,) and a.dtype == np.float32
    np.testing.assert_array_equal(logits_to_allocation(a, 6), [2, 1, 1, 1, 1])  # equal shares at reset
    crafted = np.zeros((8, 4, 5), dtype=np.float32)
    crafted[:, 1] = [9, 4, 0, 0, 0]  # 72, 32, 0, 0, 0 seen -> shares 73:33:1:1:1 of 6 units
    np.testing.assert_array_equal(policy.allocation(crafted.ravel()), [4, 2, 0, 0, 0])
    batch, _ = policy.predict(np.stack([obs, crafted.ravel()]))
    assert batch.shape == (2, 5)
    np.testing.assert_array_equal(logits_to_allocation(batch[1], 6), [4, 2, 0, 0, 0])
    total = 0.0
    for _ in range(200):
        a, _ = policy.predict(obs)
        obs, r, *_ = env.step(a)
        total += r
    assert total > 0
    with pytest.raises(ValueError, match="AttentionAllocationEnv"):
        ProportionalAllocationPolicy(LoanApplicantsEnv())


def test_proportional_policy_accepts_a_vec_env():
    kwargs = {"n_units": 4, "initial_rates": (3.0, 1.0, 2.0), "increase_rates": (0.1, 0.1, 0.1), "history_len": 3}
    venv = DummyVecEnv([lambda: AttentionAllocationEnv(**kwargs) for _ in range(2)])
    policy = ProportionalAllocationPolicy(venv)
    reference = ProportionalAllocationPolicy(AttentionAllocationEnv(**kwargs))
    assert (policy.n_sites, policy.history_len, policy.n_units) == (3, 3, 4)
    obs = venv.reset()
    for _ in range(10):
        actions, state = policy.predict(obs)
        assert state is None and actions.shape == (2, 3)
        np.testing.assert_array_equal(actions, reference.predict(obs)[0])
        obs, _, _, infos = venv.step(actions)
        for a, info in zip(actions, infos):
            np.testing.assert_array_equal(info["allocation"], logits_to_allocation(a, 4))
    # the default env through a VecEnv and through the env itself: the same actions
    venv = DummyVecEnv([AttentionAllocationEnv])
    assert ProportionalAllocationPolicy(venv).n_units == 6
    # a VecEnv of another env is rejected, naming env
    with pytest.raises(ValueError, match="env must be an AttentionAllocationEnv"):
        ProportionalAllocationPolicy(DummyVecEnv([LoanApplicantsEnv]))
    with pytest.raises(ValueError, match="env must be an AttentionAllocationEnv"):
        ProportionalAllocationPolicy(VecNormalize(DummyVecEnv([LoanApplicantsEnv])))


def test_render():
    env = AttentionAllocationEnv(render_mode="ansi")
    env.reset(seed=0)
    env.step(act([6, 0, 0, 0, 0]))
    assert "allocation=[6, 0, 0, 0, 0]" in env.render()
    env = AttentionAllocationEnv(render_mode="rgb_array")
    env.reset(seed=0)
    img = env.render()
    assert img.dtype == np.uint8 and img.ndim == 3


def test_sb3_ppo_trains_on_the_env_and_its_actions_allocate_every_unit():
    """SB3's PPO (Gaussian actions on the Box of logits) trains on the env as it is: two updates change the policy, the
    rollout holds the env's 5 logits per step, and the trained policy's actions place all 6 units."""
    from stable_baselines3 import PPO

    env = AttentionAllocationEnv(horizon=40)
    model = PPO("MlpPolicy", env, n_steps=32, batch_size=32, n_epochs=1, seed=0)
    before = [p.detach().clone() for p in model.policy.parameters()]
    model.learn(64)
    assert model.num_timesteps == 64 and model._n_updates == 2
    assert any(not th.equal(a, b) for a, b in zip(before, model.policy.parameters()))
    assert model.rollout_buffer.actions.shape == (32, 5)  # SB3 keeps (n_steps * n_envs, action dim) for Box actions
    obs, _ = env.reset(seed=1)
    for _ in range(5):
        action, _ = model.predict(obs, deterministic=True)
        assert env.action_space.contains(action.astype(env.action_space.dtype))
        obs, _, _, _, info = env.step(action)
        assert sum(info["allocation"]) == 6
