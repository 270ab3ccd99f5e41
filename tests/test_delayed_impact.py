"""Paper 004's delayed-impact lending env (Liu et al. 2018 dynamics), its fairness signals and the EO baseline."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.envs.registration import EnvSpec
from gymnasium.utils.env_checker import check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env
from stable_baselines3.common.vec_env import DummyVecEnv
from state_equality import assert_same, snapshot

from sb3_fair.common.protocol import (
    BENEFITS,
    LONG_TERM_FAIRNESS,
    SHORT_TERM_FAIRNESS,
    WHAT_IF,
    get_fairness_signals,
    get_stakeholders,
    get_what_if,
)
from sb3_fair.envs.delayed_impact import INITIAL_PMFS, DelayedImpactLendingEnv, EqualOpportunityPolicy
from sb3_fair.metrics import count_vector_distance, smoothed_distribution, wasserstein_1

PMF0, PMF1 = (np.array(p) for p in INITIAL_PMFS)


def window_counts(decided: list[tuple[int, int]], window: int) -> np.ndarray:
    """Per-group cluster counts of the last ``window`` decided applicants ``(group, cluster)``."""
    counts = np.zeros((2, 7))
    for g, c in decided[-window:]:
        counts[g, c] += 1
    return counts


def set_applicant(env: DelayedImpactLendingEnv, group: int, cluster: int, repay: bool) -> None:
    """Force the next applicant (group, cluster, hidden repayment): the tests' only private access."""
    env.applicant_group, env.applicant_cluster, env._would_repay = group, cluster, repay


@pytest.mark.parametrize("long_term", ["wasserstein", "pmf_wasserstein", "pmf_l2", "counts_sinkhorn"])
def test_checkers(long_term):
    check_env(DelayedImpactLendingEnv(long_term=long_term, horizon=50), skip_render_check=True)
    sb3_check_env(DelayedImpactLendingEnv(long_term=long_term, horizon=50))


def test_observation_layout_and_bounds():
    env = DelayedImpactLendingEnv(window=20)
    assert env.observation_space.shape == (25,) and env.observation_space.dtype == np.float32
    assert np.all(env.observation_space.low == 0.0) and np.all(env.observation_space.high == 1.0)
    obs, info = env.reset(seed=1)
    assert obs[env.applicant_cluster] == 1.0 and obs[:7].sum() == 1.0
    assert obs[7 + env.applicant_group] == 1.0 and obs[7:9].sum() == 1.0
    assert np.all(obs[9:] == 0.0)  # empty window at reset
    # empty window: Δs 0, smoothed Δl = W1 of the true pmfs
    assert info[SHORT_TERM_FAIRNESS] == 0.0 and info[LONG_TERM_FAIRNESS] == pytest.approx(1.0)
    np.testing.assert_array_equal(info["credit_pmfs"], np.stack([PMF0, PMF1]))
    rng = np.random.default_rng(0)
    decided = []  # (group, cluster) of each decided applicant, from the step infos
    for t in range(60):
        obs, _, _, _, info = env.step(int(rng.integers(2)))
        decided.append((info["applicant_group"], info["applicant_cluster"]))
        counts = window_counts(decided, 20)
        assert env.observation_space.contains(obs)
        assert obs[env.applicant_cluster] == 1.0 and obs[7 + env.applicant_group] == 1.0
        n = min(t + 1, 20)  # window entries after the step
        np.testing.assert_allclose(obs[9:11], info["tpr"], atol=1e-7)
        assert abs(abs(obs[9] - obs[10]) - info[SHORT_TERM_FAIRNESS]) < 1e-6
        np.testing.assert_allclose(obs[11:].sum(), n / (n + 1), atol=1e-6)
        np.testing.assert_allclose(obs[11:].reshape(2, 7) * (n + 1), counts, atol=1e-4)
        assert info["credit_pmfs"].shape == (2, 7)


def test_known_answers():
    support = np.arange(7)
    assert wasserstein_1(support, PMF0, PMF1) == pytest.approx(1.0)
    assert count_vector_distance(PMF0, PMF1) == 0.0
    assert count_vector_distance(150 * PMF0, 150 * PMF1) == 0.0
    _, info = DelayedImpactLendingEnv(long_term="pmf_l2").reset(seed=0)
    assert info[LONG_TERM_FAIRNESS] == pytest.approx(np.sqrt(0.12)) == pytest.approx(0.346, abs=1e-3)
    _, info = DelayedImpactLendingEnv(long_term="pmf_wasserstein").reset(seed=0)
    assert info[LONG_TERM_FAIRNESS] == pytest.approx(1.0)
    # rejecting everybody leaves the pmfs alone: the windowed W1 hovers around the true 1.0 cluster
    env = DelayedImpactLendingEnv()
    env.reset(seed=3)
    dl = [env.step(0)[4][LONG_TERM_FAIRNESS] for _ in range(900)]
    np.testing.assert_array_equal(env.credit_pmfs, np.stack([PMF0, PMF1]))
    assert np.mean(dl[300:]) == pytest.approx(1.0, abs=0.1)
    # the counts variant sees only sampling noise (a few counts), not the one-cluster shift
    env = DelayedImpactLendingEnv(long_term="counts_sinkhorn")
    env.reset(seed=3)
    dl = [env.step(0)[4][LONG_TERM_FAIRNESS] for _ in range(900)]
    assert 0.5 < np.mean(dl[300:]) < 8.0


def test_credit_shift_reward_benefits_and_cash():
    env = DelayedImpactLendingEnv()
    env.reset(seed=0)
    pmfs = np.stack([PMF0, PMF1])
    # accepted repayer of group 0 in cluster 3: +1, mass 0.01 moves to cluster 4
    set_applicant(env, 0, 3, True)
    _, r, term, trunc, info = env.step(1)
    pmfs[0, 3] -= 0.01
    pmfs[0, 4] += 0.01
    assert r == 1.0 and not term and not trunc and env.bank_cash == 10_001.0
    np.testing.assert_allclose(info["credit_pmfs"], pmfs)
    np.testing.assert_array_equal(info[BENEFITS], [1.0, 0.0])
    assert info["accepted"] and info["would_repay"] and info["applicant_group"] == 0
    # accepted defaulter of group 1 in cluster 2: -1, mass moves down to cluster 1
    set_applicant(env, 1, 2, False)
    _, r, _, _, info = env.step(1)
    pmfs[1, 2] -= 0.01
    pmfs[1, 1] += 0.01
    assert r == -1.0 and env.bank_cash == 10_000.0
    np.testing.assert_allclose(info["credit_pmfs"], pmfs)
    np.testing.assert_array_equal(info[BENEFITS], [0.0, 1.0])
    # ten repayments from cluster 4 of group 0 move 0.1 up, clipped at cluster 6 afterwards
    for _ in range(10):
        set_applicant(env, 0, 4, True)
        env.step(1)
    pmfs[0, 4] -= 0.1
    pmfs[0, 5] += 0.1
    np.testing.assert_allclose(env.credit_pmfs, pmfs)
    set_applicant(env, 0, 6, True)  # top cluster: nothing moves
    env.step(1)
    set_applicant(env, 1, 0, False)  # bottom cluster: nothing moves
    env.step(1)
    np.testing.assert_allclose(env.credit_pmfs, pmfs)
    # at most the cluster's mass moves: group 1 cluster 5 is empty
    set_applicant(env, 1, 5, True)
    env.step(1)
    np.testing.assert_allclose(env.credit_pmfs, pmfs)
    # rejection: reward 0, no benefit, nothing moves
    cash = env.bank_cash
    set_applicant(env, 0, 3, True)
    _, r, _, _, info = env.step(0)
    assert r == 0.0 and env.bank_cash == cash and not info["accepted"]
    np.testing.assert_array_equal(info[BENEFITS], [0.0, 0.0])
    np.testing.assert_allclose(env.credit_pmfs, pmfs)
    np.testing.assert_allclose(env.credit_pmfs.sum(axis=1), 1.0)


def test_interest_rate_and_random_rewards():
    env = DelayedImpactLendingEnv(interest_rate=0.3)
    env.reset(seed=5)
    rng = np.random.default_rng(5)
    total = 0.0
    for _ in range(300):
        _, r, _, _, info = env.step(int(rng.integers(2)))
        expected = (0.3 if info["would_repay"] else -1.0) if info["accepted"] else 0.0
        assert r == pytest.approx(expected)
        assert info[BENEFITS].sum() == float(info["accepted"])
        assert info[BENEFITS][info["applicant_group"]] == float(info["accepted"])
        total += r
    assert env.bank_cash == pytest.approx(10_000.0 + total)


def test_stakeholders():
    sh = get_stakeholders(DelayedImpactLendingEnv())
    assert sh.n == 2
    np.testing.assert_array_equal(sh.groups, [0, 1])


def test_deterministic_under_seed():
    def rollout(seed):
        env = DelayedImpactLendingEnv()
        obs, _ = env.reset(seed=seed)
        trace = [obs]
        for t in range(200):
            obs, r, _, _, info = env.step(int(t % 3 != 0))
            trace += [obs, [r, info[SHORT_TERM_FAIRNESS], info[LONG_TERM_FAIRNESS]]]
        return np.concatenate(trace)

    np.testing.assert_array_equal(rollout(7), rollout(7))
    assert not np.array_equal(rollout(7), rollout(8))


def test_reset_restores_initial_state():
    env = DelayedImpactLendingEnv()
    env.reset(seed=0)
    for _ in range(50):
        env.step(1)
    assert not np.allclose(env.credit_pmfs, np.stack([PMF0, PMF1]))
    assert env.tpr.max() > 0
    obs, info = env.reset()
    np.testing.assert_array_equal(info["credit_pmfs"], np.stack([PMF0, PMF1]))
    assert env.bank_cash == 10_000.0 and env.t == 0 and np.all(obs[9:] == 0)
    assert info[SHORT_TERM_FAIRNESS] == 0.0 and info[LONG_TERM_FAIRNESS] == pytest.approx(1.0)
    np.testing.assert_array_equal(info["tpr"], [0.0, 0.0])


def test_what_if_has_no_side_effect_and_predicts_the_step():
    env = DelayedImpactLendingEnv(window=25)
    env.reset(seed=11)
    rng = np.random.default_rng(11)
    for _ in range(120):  # beyond the window, so the oldest entry leaves
        a = int(rng.integers(2))
        before = snapshot(env)  # every field, including ones added later
        candidates, short_term = getattr(env, WHAT_IF)(a)
        assert_same(before, vars(env.unwrapped))
        np.testing.assert_array_equal(candidates, [a, 1 - a])
        assert short_term.shape == (2,)
        _, _, _, _, info = env.step(a)
        assert short_term[0] == info[SHORT_TERM_FAIRNESS]
    # a defaulter leaves TPRs alone: both candidates give the same gap
    set_applicant(env, 0, 2, False)
    _, st = env.fairness_what_if(1)
    assert st[0] == st[1]
    # the comparison does catch a change of state, of the generator alone too
    before = snapshot(env)
    env.step(0)
    with pytest.raises(AssertionError):
        assert_same(before, vars(env.unwrapped))
    before = snapshot(env)
    env.np_random.random()
    with pytest.raises(AssertionError, match="bit_generator"):
        assert_same(before, vars(env.unwrapped))


def test_vec_env_signals_survive_auto_reset():
    venv = DummyVecEnv([lambda: DelayedImpactLendingEnv(horizon=3) for _ in range(2)])
    venv.seed(0)
    venv.reset()
    repaid = np.zeros(2, dtype=bool)  # groups with a would-repay applicant in sub-env 0 (accepts all)
    for _ in range(3):
        answers = get_what_if(venv, np.array([1, 0]))
        _, _, dones, infos = venv.step(np.array([1, 0]))
        ds, dl = get_fairness_signals(infos)
        assert ds.tolist() == [ans[1][0] for ans in answers]
        repaid[infos[0]["applicant_group"]] |= infos[0]["would_repay"]
    assert dones.all() and all(info["TimeLimit.truncated"] for info in infos)
    initial = np.stack([PMF0, PMF1])
    # sub-env 0 (always accepts): the terminal info holds the episode's end, not the reset state
    assert repaid.any()
    np.testing.assert_array_equal(infos[0]["tpr"], repaid.astype(float))
    assert not np.allclose(infos[0]["credit_pmfs"], initial)
    assert infos[0]["bank_cash"] != 10_000.0
    np.testing.assert_array_equal(venv.reset_infos[0]["tpr"], [0.0, 0.0])
    np.testing.assert_array_equal(venv.reset_infos[0]["credit_pmfs"], initial)
    # sub-env 1 (always rejects): same state values as at reset, but a step's info (a decided applicant)
    np.testing.assert_array_equal(infos[1]["tpr"], [0.0, 0.0])
    np.testing.assert_array_equal(infos[1]["credit_pmfs"], initial)
    assert infos[1]["accepted"] is False and "terminal_observation" in infos[1]
    assert "accepted" not in venv.reset_infos[1]


def test_time_limit_semantics():
    env = DelayedImpactLendingEnv(horizon=5)
    env.reset(seed=0)
    flags = [env.step(0)[2:4] for _ in range(5)]
    assert flags == [(False, False)] * 4 + [(False, True)]
    env = DelayedImpactLendingEnv(horizon=5, horizon_terminates=True)
    env.reset(seed=0)
    flags = [env.step(0)[2:4] for _ in range(5)]
    assert flags == [(False, False)] * 4 + [(True, False)]
    # through gym.make (registered without max_episode_steps) the horizon stays the env's own
    spec = EnvSpec(id="DelayedImpactLendingTest-v0", entry_point=DelayedImpactLendingEnv)
    env = gym.make(spec, horizon=4, horizon_terminates=True)
    env.reset(seed=0)
    assert [env.step(1)[2:4] for _ in range(4)][-1] == (True, False)
    # a bank without cash for the next loan is done
    env = DelayedImpactLendingEnv(bank_starting_cash=1.0)
    env.reset(seed=0)
    set_applicant(env, 0, 3, False)
    _, r, term, trunc, _ = env.step(1)
    assert r == -1.0 and term and not trunc


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"long_term": "sinkhorn"}, r"long_term must be one of \['wasserstein', 'pmf_wasserstein'"),
        ({"window": 0}, "window must be an int >= 1"),
        ({"window": 30.0}, "window must be an int >= 1"),
        ({"horizon": 0}, "horizon must be an int >= 1"),
        ({"horizon": "100"}, "horizon must be an int >= 1"),
        ({"horizon_terminates": "yes"}, "horizon_terminates must be True or False"),
        ({"interest_rate": -1.0}, "interest_rate must be a finite number > 0"),
        ({"loan_amount": 0.0}, "loan_amount must be a finite number > 0"),
        ({"bank_starting_cash": float("nan")}, "bank_starting_cash must be a finite number >= 0"),
        ({"bank_starting_cash": 0.5}, r"bank_starting_cash must be a finite number >= loan_amount \(1.0\)"),
        ({"cluster_shift_increment": -0.01}, "cluster_shift_increment must be a finite number >= 0"),
        ({"group_0_prob": 1.5}, r"group_0_prob must be a probability in \[0, 1\]"),
        ({"prior_weight": -1.0}, "prior_weight must be a finite number >= 0"),
        ({"prior_weight": float("inf")}, "prior_weight must be a finite number >= 0"),
        ({"initial_pmfs": [[1.0] + [0.0] * 6]}, r"initial_pmfs must be two pmfs over 7 clusters"),
        ({"success_probs": [0.0] * 7}, r"success_probs must be 7 probabilities in \(0, 1\]"),
        ({"render_mode": "human"}, r"render_mode must be one of \['ansi', 'rgb_array'\] or None"),
    ],
)
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        DelayedImpactLendingEnv(**kwargs)


@pytest.mark.parametrize("action", [2, -1, 0.7, 1.5, np.array([0, 1]), [1, 1], "1", None])
def test_bad_actions(action):
    env = DelayedImpactLendingEnv()
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"action must be an int in \[0, 2\)"):
        env.step(action)
    with pytest.raises(ValueError, match=r"action must be an int in \[0, 2\)"):
        env.fairness_what_if(action)


def test_integer_like_actions_are_accepted():
    for action in (1, np.int64(1), np.array(1), np.array([1]), 1.0):
        env = DelayedImpactLendingEnv()
        env.reset(seed=0)
        set_applicant(env, 0, 3, True)
        np.testing.assert_array_equal(env.fairness_what_if(action)[0], [1, 0])
        assert env.step(action)[4]["accepted"]


def test_bad_policy_env():
    from sb3_fair.envs.donut import DonutAllocationEnv

    with pytest.raises(ValueError, match="DelayedImpactLendingEnv"):
        EqualOpportunityPolicy(DonutAllocationEnv())


def test_eo_thresholds_equalise_expected_tpr():
    env = DelayedImpactLendingEnv()
    policy = EqualOpportunityPolicy(env, seed=0)
    p = env.success_probs
    for pmfs in (np.stack([PMF0, PMF1]), np.stack([PMF1, np.roll(PMF0, -2)])):
        th = policy.thresholds(pmfs)
        tprs = []
        for g in range(2):
            k, beta, _ = th[g]
            accept = (np.arange(7) > k) + beta * (np.arange(7) == k)
            q = pmfs[g] * p
            tprs.append((accept * q).sum() / q.sum())
        assert tprs[0] == pytest.approx(tprs[1]) == pytest.approx(th[0, 2])
    # initial pmfs: group 0 lends from cluster 3 up, group 1 also lends part of cluster 2
    th = policy.thresholds(np.stack([PMF0, PMF1]))
    assert th[0, 0] == 3 and th[0, 1] == pytest.approx(1.0) and th[1, 0] == 2 and 0 < th[1, 1] < 1


def test_eo_policy_keeps_a_small_tpr_gap():
    def run(choose, steps=2500):
        env = DelayedImpactLendingEnv(horizon=steps)
        policy = EqualOpportunityPolicy(env, seed=2)
        obs, _ = env.reset(seed=2)
        gaps = []
        for _ in range(steps):
            obs, _, _, _, info = env.step(choose(policy, obs))
            gaps.append(info[SHORT_TERM_FAIRNESS])
        return np.mean(gaps[300:])

    eo = run(lambda policy, obs: int(policy.predict(obs)[0]))
    greedy = run(lambda policy, obs: int(np.argmax(obs[:7]) >= 3))  # lend where it pays, same clusters for both
    assert eo < 0.08 < greedy
    # batch prediction through a VecEnv answers each row from its own sub-env
    venv = DummyVecEnv([lambda: DelayedImpactLendingEnv() for _ in range(2)])
    actions, state = EqualOpportunityPolicy(venv, seed=0).predict(venv.reset())
    assert actions.shape == (2,) and state is None


def test_smoothed_long_term_gap_is_the_w1_of_the_smoothed_window():
    env = DelayedImpactLendingEnv(window=40, prior_weight=10.0)
    env.reset(seed=4)
    rng = np.random.default_rng(4)
    decided = []
    for _ in range(120):
        _, _, _, _, info = env.step(int(rng.integers(2)))
        decided.append((info["applicant_group"], info["applicant_cluster"]))
        counts = window_counts(decided, 40)
        pmfs = info["credit_pmfs"]
        expected = wasserstein_1(
            np.arange(7), *((counts[g] + 10.0 * pmfs[g]) / (counts[g].sum() + 10.0) for g in range(2))
        )
        assert info[LONG_TERM_FAIRNESS] == pytest.approx(expected, abs=1e-12)
        assert expected == pytest.approx(
            wasserstein_1(np.arange(7), *(smoothed_distribution(counts[g], pmfs[g], 10.0) for g in range(2)))
        )


def test_smoothed_long_term_gap_does_not_jump_at_the_start():
    for seed in range(20):
        env = DelayedImpactLendingEnv()  # prior_weight=10
        _, info = env.reset(seed=seed)
        dl = [info[LONG_TERM_FAIRNESS]] + [env.step(0)[4][LONG_TERM_FAIRNESS] for _ in range(20)]
        assert dl[0] == pytest.approx(1.0)
        assert max(dl) < 2.0 and np.max(np.abs(np.diff(dl))) < 0.5
    # prior_weight=0: the raw window histograms, 0 until both groups are seen, then jumps (seed 0: 3.0)
    env = DelayedImpactLendingEnv(prior_weight=0.0)
    _, info = env.reset(seed=0)
    dl = [info[LONG_TERM_FAIRNESS]] + [env.step(0)[4][LONG_TERM_FAIRNESS] for _ in range(20)]
    assert dl[0] == 0.0 and max(dl) > 2.0


def test_prior_weight_leaves_the_other_measures_alone():
    def trace(long_term, prior_weight):
        env = DelayedImpactLendingEnv(long_term=long_term, prior_weight=prior_weight, window=30)
        env.reset(seed=6)
        return [env.step(t % 2)[4][LONG_TERM_FAIRNESS] for t in range(80)]

    for long_term in ("counts_sinkhorn", "pmf_wasserstein", "pmf_l2"):  # counts_sinkhorn stays on raw counts
        assert trace(long_term, 0.0) == trace(long_term, 25.0)
    assert trace("wasserstein", 0.0) != trace("wasserstein", 25.0)


@pytest.mark.filterwarnings("ignore:.*alternative render modes")
def test_render_modes():
    env = DelayedImpactLendingEnv(render_mode="ansi")
    env.reset(seed=0)
    assert env.render().startswith("t=0 cash=10000.0")
    env = DelayedImpactLendingEnv(render_mode="rgb_array")
    env.reset(seed=0)
    img = env.render()
    assert img.dtype == np.uint8 and img.shape == (96, 14 * 20, 3)
    # the current applicant's cluster carries the white mark, and only it
    marked = [bool(np.all(img[2, i * 20 + 5] == 255)) for i in range(14)]
    assert marked == [i == env.applicant_group * 7 + env.applicant_cluster for i in range(14)]
    check_env(DelayedImpactLendingEnv(render_mode="rgb_array", horizon=20))
    assert DelayedImpactLendingEnv().render() is None


def test_counts_geomloss_is_the_authors_computation_of_the_counts_distance():
    from sb3_fair.metrics import sinkhorn_count_distance

    env = DelayedImpactLendingEnv(long_term="counts_geomloss")
    _, info = env.reset(seed=0)
    assert info[LONG_TERM_FAIRNESS] == 0.0  # empty window: one value everywhere
    twin = DelayedImpactLendingEnv(long_term="counts_sinkhorn")
    twin.reset(seed=0)
    for _ in range(50):
        info = env.step(1)[4]
        exact = twin.step(1)[4][LONG_TERM_FAIRNESS]
    counts = env._counts
    assert info[LONG_TERM_FAIRNESS] == sinkhorn_count_distance(counts[0], counts[1])
    assert info[LONG_TERM_FAIRNESS] <= exact + 1e-9  # the same trajectory; Sinkhorn reads at most the exact W1
