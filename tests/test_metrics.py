"""Known-answer tests for sb3_fair.metrics (papers 000-004)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import wasserstein_distance

from sb3_fair import metrics as M


# ---------------------------------------------------------------- paper 003's worked examples
def test_vaccine_example_long_term_equal_but_not_monthly():
    """Paper 003 Fig. 1: both processes deliver 40k to A and B; only the second is fair each month."""
    shipments_1 = np.array([[20, 0], [20, 0], [0, 20], [0, 20]]) * 1000  # A, A, B, B
    shipments_2 = np.array([[10, 10]] * 4) * 1000
    status_1, status_2 = np.cumsum(shipments_1, 0), np.cumsum(shipments_2, 0)
    # long-term fairness (Def. 4.1) with the parity welfare: both perfectly fair at the end
    assert M.fairness_score(status_1, "parity", scheme="long_term") == 0.0
    assert M.fairness_score(status_2, "parity", scheme="long_term") == 0.0
    # monthly (periodic p=1 = anytime, Defs. 4.2-4.3), Rawlsian in time: process 1 is unfair for a while
    assert M.fairness_score(status_2, "parity", scheme="periodic", period=1, how="min") == 0.0
    assert M.fairness_score(status_1, "parity", scheme="anytime", how="min") == -40000.0
    # process 1 favours A early: positive unfairness in favour of A in month 1-3 (Def. 4.10)
    assert M.unfairness(status_1[0])[0] > 0 and M.unfairness(status_1[1])[0] > 0
    assert M.overall_unfairness(status_1)[0] > 0
    np.testing.assert_array_equal(M.overall_unfairness(status_2), [0, 0])


def test_doughnut_example_unfair_to_a_in_favour_of_c():
    """Paper 003 §4.2.1: (6, 8, 10) is unfair to A by -2 and in favour of C by +2."""
    np.testing.assert_array_equal(M.unfairness([6, 8, 10]), [-2, 0, 2])
    np.testing.assert_array_equal(M.unfairness([8, 8, 8]), [0, 0, 0])


def test_overall_unfairness_sums_over_time():
    statuses = [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    np.testing.assert_allclose(M.overall_unfairness(statuses), [2 / 3 + 1 / 3, -1 / 3 + 1 / 3, -1 / 3 - 2 / 3], atol=1e-12)


# ---------------------------------------------------------------- welfare functions
def test_welfare_functions_hand_computed():
    u = [1.0, 2.0, 4.0]
    assert M.utilitarian(u) == 7.0
    assert M.egalitarian(u) == 1.0
    assert M.nash(u) == 8.0
    assert M.log_nash(u) == pytest.approx(math.log(2) + math.log(3) + math.log(5))
    assert M.alpha_fair(u, 0.0) == 7.0
    assert M.alpha_fair(u, 1.0) == pytest.approx(math.log(8))
    assert M.alpha_fair(u, 2.0) == pytest.approx(-(1 + 0.5 + 0.25))
    assert M.generalized_gini(u) == pytest.approx(1 * 1 + 0.5 * 2 + 0.25 * 4)
    assert M.generalized_gini(u, [1, 0, 0]) == 1.0  # all weight on the worst-off = Rawls
    assert M.parity(u) == -3.0
    assert M.parity([5, 5]) == 0.0
    assert M.welfare(u, "rawls") == 1.0


def test_gini_known_values():
    assert M.gini([1, 1, 1, 1]) == 0.0
    assert M.gini([0, 0, 0, 4]) == pytest.approx(0.75)  # 1 - 1/n when one has everything
    assert M.gini([1, 3]) == pytest.approx(0.25)
    assert M.gini([0, 0]) == 0.0


def test_temporal_aggregations():
    w = [1.0, 3.0, 2.0]
    assert M.temporal_aggregate(w, "long_term") == 2.0
    assert M.temporal_aggregate(w, "sum") == 6.0
    assert M.temporal_aggregate(w, "mean") == 2.0
    assert M.temporal_aggregate(w, "min") == 1.0
    assert M.temporal_aggregate(w, "discounted", gamma=0.5) == pytest.approx(1 + 1.5 + 0.5)


def test_fairness_score_schemes():
    statuses = np.array([[1, 0], [1, 1], [2, 1], [2, 2]])
    # parity welfare per timepoint: -1, 0, -1, 0
    assert M.fairness_score(statuses, "parity", "anytime") == -2.0
    assert M.fairness_score(statuses, "parity", "periodic", period=2) == 0.0
    assert M.fairness_score(statuses, "parity", "long_term") == 0.0
    assert M.fairness_score(statuses, "parity", "bounded", mask=[True, False, True, False]) == -2.0


def test_bad_welfare_and_scheme_names():
    with pytest.raises(ValueError, match="accepted values"):
        M.welfare([1, 2], "happiness")
    with pytest.raises(ValueError, match="accepted values"):
        M.fairness_score([[1, 2]], scheme="sometimes")
    with pytest.raises(ValueError, match="alpha"):
        M.alpha_fair([1, 2], -1)
    with pytest.raises(ValueError, match="weights"):
        M.generalized_gini([1, 2], [-1, 0])


# ---------------------------------------------------------------- group fairness (papers 000, 001)
def test_demographic_parity_signed_gap():
    returns = [1, 3, 5, 7]
    groups = [1, 1, 0, 0]
    assert M.demographic_parity(returns, groups) == -4.0  # protected mean 2 minus unprotected 6
    assert M.demographic_parity_pairwise(returns, groups) == -4.0
    # pairs restricted to equal attributes: (1 vs 5) and (3 vs 7)
    assert M.demographic_parity_pairwise(returns, groups, attributes=[0, 1, 0, 1]) == -4.0
    assert M.demographic_parity_pairwise([1, 3, 5, 9], groups, attributes=[0, 1, 0, 1]) == -5.0
    with pytest.raises(ValueError, match="protected"):
        M.demographic_parity([1, 2], [0, 0])


def test_demographic_parity_norm():
    # R_s = 1 + 3 = 4 (protected), R_ns = 12: (4 - 12) / 16, the protected group behind (fair-PPO prints +0.5)
    assert M.demographic_parity_norm([1, 3, 5, 7], [1, 1, 0, 0]) == -0.5
    assert M.demographic_parity_norm([0, 0, 0, 0], [1, 1, 0, 0]) == 0.0


def test_conditional_statistical_parity_per_stratum():
    returns = [1, 3, 5, 7, 2, 2]
    groups = [1, 0, 1, 0, 1, 1]
    factors = [0, 0, 1, 1, 2, 2]  # stratum 2 has no unprotected agent: skipped
    out = M.conditional_statistical_parity(returns, groups, factors)
    assert out["per_stratum"] == {0: -2.0, 1: -2.0}
    assert out["mean"] == -2.0 and out["mean_abs"] == 2.0


def test_counterfactual_fairness():
    assert M.counterfactual_fairness([3, 4, 5], [1, 4, 6]) == pytest.approx(1 / 3)
    with pytest.raises(ValueError, match="match"):
        M.counterfactual_fairness([1, 2], [1, 2, 3])


def test_price_of_fairness():
    assert M.price_of_fairness(44, 100) == pytest.approx(-56.0)
    np.testing.assert_allclose(M.price_of_fairness([44, 118], [100, 100]), [-56.0, 18.0])
    assert M.price_of_fairness(-5, -10) == pytest.approx(50.0)  # less negative return = gain
    assert np.isnan(M.price_of_fairness(1, 0))


# ---------------------------------------------------------------- team fairness (paper 002)
def test_team_fairness_uniform_credit_is_zero():
    credit = np.eye(3)[np.arange(300) % 3]
    assert M.team_fairness(credit) == pytest.approx(0.0)


def test_team_fairness_one_agent_always_credited_is_log2_n():
    credit = np.tile([0, 0, 1], (50, 1))
    assert M.team_fairness(credit) == pytest.approx(math.log2(3))


def test_team_fairness_partial_skew_and_capture_success():
    # capture shares 2/3, 1/6, 1/6 among single captures: log2(3) - H(2/3, 1/6, 1/6) = 1/3 bit
    credit = np.array([[1, 0, 0]] * 4 + [[0, 1, 0]] + [[0, 0, 1]])
    assert M.team_fairness(credit) == pytest.approx(1 / 3)
    # failures (no agent credited) carry no information about identity
    credit_f = np.vstack([credit, np.zeros((6, 3))])
    assert M.team_fairness(credit_f) == pytest.approx(0.5 * (1 / 3))
    assert M.capture_success(credit_f) == 0.5


# ---------------------------------------------------------------- paper 004
def test_wasserstein_matches_scipy_and_hand_value():
    support = [1, 2, 3]
    assert M.wasserstein_1(support, [0, 0.5, 0.5], [0.5, 0.5, 0]) == pytest.approx(1.0)
    rng = np.random.default_rng(0)
    x = np.arange(1, 8)
    for _ in range(5):
        p, q = rng.random(7), rng.random(7)
        assert M.wasserstein_1(x, p, q) == pytest.approx(wasserstein_distance(x, x, p, q))
    assert M.l2_distribution_gap([1, 0], [0, 1]) == pytest.approx(math.sqrt(2))


def test_equal_opportunity_gap():
    assert M.equal_opportunity_gap(8, 10, 5, 10) == pytest.approx(0.3)
    assert M.equal_opportunity_gap(0, 0, 5, 10) == pytest.approx(0.5)


def test_health_state_gap_rejects_fractional_states():
    groups = np.array([0, 0, 1, 1])
    with pytest.raises(ValueError, match="states must be ints"):
        M.health_state_gap([0.0, 1.5, 0.0, 2.0], groups)  # used to be truncated to state 1
    for bad in ([0.0, np.nan, 0.0, 1.0], [True, False, True, False], ["S", "I", "S", "R"]):
        with pytest.raises(ValueError, match="states must be ints"):
            M.health_state_gap(bad, groups)
    # whole floats are the same states as ints
    assert M.health_state_gap([0.0, 1.0, 0.0, 2.0], groups, "counts") == M.health_state_gap([0, 1, 0, 2], groups, "counts")


def test_true_positive_rates():
    """Hu et al. 2024, Eq. 8: per-group TPRs, 0 where a group has no positive."""
    np.testing.assert_allclose(M.true_positive_rates([8, 5, 0], [10, 10, 0]), [0.8, 0.5, 0.0])
    assert M.true_positive_rates(np.array([3]), np.array([4])).dtype == np.float64
    assert M.equal_opportunity_gap(3, 4, 0, 0) == pytest.approx(0.75)
    for tp, pos in (([1, 2], [1]), ([-1, 0], [1, 1]), ([2, 0], [1, 1]), ([np.nan, 0], [1, 1])):
        with pytest.raises(ValueError, match="tp and pos"):
            M.true_positive_rates(tp, pos)


def test_smoothed_distribution_known_answer():
    # counts (2, 0, 1, 1) + 4 pseudo-counts spread as (1, 1, 1, 1) / 4: (3, 1, 2, 2) / 8
    out = M.smoothed_distribution([2, 0, 1, 1], [1, 1, 1, 1], 4.0)
    np.testing.assert_allclose(out, [3 / 8, 1 / 8, 2 / 8, 2 / 8])
    # the prior is normalised; empty counts give the prior itself; weight 0 gives the raw histogram
    np.testing.assert_allclose(M.smoothed_distribution([0, 0, 0], [2, 0, 6], 10.0), [0.25, 0.0, 0.75])
    np.testing.assert_allclose(M.smoothed_distribution([1, 3, 0], [1, 1, 1], 0.0), [0.25, 0.75, 0.0])
    with pytest.raises(ValueError, match="undefined"):
        M.smoothed_distribution([0, 0], [1, 1], 0.0)
    with pytest.raises(ValueError, match="weight"):
        M.smoothed_distribution([1, 0], [1, 1], -1.0)
    with pytest.raises(ValueError, match="same length"):
        M.smoothed_distribution([1, 0], [1, 1, 1], 1.0)
    with pytest.raises(ValueError, match="prior"):
        M.smoothed_distribution([1, 0], [0, 0], 1.0)


def test_point_cloud_wasserstein_known_answers():
    from sb3_fair.metrics import point_cloud_wasserstein

    # one point each: the Euclidean distance
    assert point_cloud_wasserstein([[0.0, 0.0]], [[3.0, 4.0]]) == pytest.approx(5.0)
    # the same cloud in another order: 0
    assert point_cloud_wasserstein([[0, 1], [2, 3]], [[2, 3], [0, 1]]) == pytest.approx(0.0)
    # on a line it is the 1-D W1 of the two samples (sorted matching): |0-1| and |10-11| -> mean 1
    assert point_cloud_wasserstein([0.0, 10.0], [11.0, 1.0]) == pytest.approx(1.0)
    # identical clouds of the paper's initial lending pmfs: the L2 distance the paper's Fig. 1b starts at
    p = np.array([0, .1, .1, .2, .3, .3, 0])
    q = np.array([.1, .1, .2, .3, .3, 0, 0])
    assert point_cloud_wasserstein(np.tile(p, (10, 1)), np.tile(q, (10, 1))) == pytest.approx(0.3464, abs=1e-4)
    with pytest.raises(ValueError, match="same shape"):
        point_cloud_wasserstein([[0, 1]], [[0, 1], [1, 1]])


# ---------------------------------------------------------------- domains and edge cases (module docstring)
# one entry per metric that takes a stakeholder vector: (call with the vector, argument named in errors)
_VECTOR_METRICS = {
    "utilitarian": (M.utilitarian, "u"),
    "egalitarian": (M.egalitarian, "u"),
    "nash": (M.nash, "u"),
    "log_nash": (M.log_nash, "u"),
    "alpha_fair": (lambda u: M.alpha_fair(u, 0.5), "u"),
    "ggf": (M.generalized_gini, "u"),
    "parity": (M.parity, "u"),
    "gini": (M.gini, "u"),
    "unfairness": (M.unfairness, "u"),
    "group_means": (lambda r: M.group_means(r, [0, 1][: len(r)] + [1] * max(len(r) - 2, 0)), "returns"),
    "dp": (lambda r: M.demographic_parity(r, [0, 1, 0, 1][: len(r)]), "returns"),
    "dp_norm": (lambda r: M.demographic_parity_norm(r, [0, 1, 0, 1][: len(r)]), "returns"),
    "cf_gap": (lambda r: M.counterfactual_gap(r, [0, 1] * (len(r) // 2) + [0] * (len(r) % 2), np.arange(len(r)) ^ 1), "returns"),
    "cf": (lambda r: M.counterfactual_fairness(r, np.zeros(len(r))), "factual"),
    "cf_normalized": (lambda r: M.normalized_counterfactual_fairness(r, np.zeros(len(r))), "factual"),
    "wasserstein_1": (lambda p: M.wasserstein_1(np.arange(len(p)), p, np.ones(len(p))), "(support|p)"),  # support first
    "l2_gap": (lambda p: M.l2_distribution_gap(p, np.ones(len(p))), "p"),
    "count_vector_distance": (lambda u: M.count_vector_distance(u, np.ones(len(u))), "u"),
    "sinkhorn_count_distance": (lambda u: M.sinkhorn_count_distance(u, np.ones(len(u))), "u"),
    "max_mean_deviation": (M.max_mean_deviation, "values"),
    "vaccination_gap": (lambda v: M.vaccination_gap(v, np.zeros(len(v))), "vaccinated"),
    "true_positive_rates": (lambda t: M.true_positive_rates(t, np.full(len(t), 10.0)), "tp"),
}


@pytest.mark.parametrize("name", sorted(_VECTOR_METRICS))
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_input_is_an_error_naming_the_argument(name, bad):
    fn, arg = _VECTOR_METRICS[name]
    with pytest.raises(ValueError, match=rf"\b{arg}\b"):
        fn(np.array([1.0, 2.0, bad, 3.0]))


@pytest.mark.parametrize("name", sorted(_VECTOR_METRICS))
def test_empty_input_is_an_error_naming_the_argument(name):
    fn, arg = _VECTOR_METRICS[name]
    with pytest.raises(ValueError, match=rf"\b{arg}\b"):
        fn(np.array([]))


def test_nash_outside_its_domain_is_an_error_not_a_larger_welfare():
    """The issue's example: nash([-1, -1]) was 1.0, more than nash([0, 0])."""
    assert M.nash([0, 0]) == 0.0 and M.nash([2, 3]) == 6.0
    with pytest.raises(ValueError, match=r"u_i >= 0"):
        M.nash([-1, -1])
    with pytest.raises(ValueError, match=r"u_i >= 0"):
        M.welfare([-1, -1], "nash")
    assert M.log_nash([-0.5, 0]) == pytest.approx(math.log(0.5))  # the form for utilities > -1


def test_normalized_gaps_stay_in_minus_one_one_for_negative_returns():
    """The issue's example: returns [-100, -100, -200, -200] gave a 'normalised' DP of 200."""
    r, g = [-100, -100, -200, -200], [0, 0, 1, 1]
    # R_ns = -200, R_s = -400: the protected group is worse off by 200 of 600 in absolute return
    assert M.demographic_parity_norm(r, g) == pytest.approx(-200 / 600)
    # the paper's (non-negative) domain keeps its magnitude, the sign flipped: (R_s - R_ns) / max(R_ns + R_s, 1)
    assert M.demographic_parity_norm([3, 1, 2, 0], [0, 0, 1, 1]) == pytest.approx((2 - 4) / 6)
    assert M.demographic_parity_norm([0.2, 0.0], [0, 1]) == pytest.approx(-0.2)  # max(., 1) as the paper
    assert M.normalized_counterfactual_fairness([-1, -1], [-3, -3]) == pytest.approx(4 / 8)
    rng = np.random.default_rng(0)
    for _ in range(200):
        x = rng.normal(0, 100, 6)
        assert -1 <= M.demographic_parity_norm(x, [0, 1] * 3) <= 1
        assert -1 <= M.counterfactual_gap_norm(x, [0, 1] * 3, [1, 0, 3, 2, 5, 4]) <= 1
        assert -1 <= M.normalized_counterfactual_fairness(x[:3], x[3:]) <= 1


def test_all_zero_input_is_equal_treatment():
    z = np.zeros(4)
    assert M.gini(z) == 0.0 and M.parity(z) == 0.0 and M.nash(z) == 0.0
    assert M.demographic_parity(z, [0, 0, 1, 1]) == 0.0 and M.demographic_parity_norm(z, [0, 0, 1, 1]) == 0.0
    assert M.counterfactual_fairness(z, z) == 0.0 and M.normalized_counterfactual_fairness(z, z) == 0.0
    assert M.allocation_share_gap(np.zeros((3, 5))) == 0.0
    assert M.max_mean_deviation(z) == 0.0 and M.max_mean_deviation(z, normalize=True) == 0.0
    np.testing.assert_array_equal(M.unfairness(z), z)


def test_negative_values_where_the_domain_is_counts():
    with pytest.raises(ValueError, match="gini needs non-negative"):
        M.gini([-1, 2])
    with pytest.raises(ValueError, match="normalize=True needs values >= 0"):
        M.max_mean_deviation([-5, 0], normalize=True)  # was 0.0 ("perfectly fair")
    assert M.max_mean_deviation([-5, 0]) == 2.5  # unnormalised: any real values
    with pytest.raises(ValueError, match="allocations must be finite counts >= 0"):
        M.allocation_share_gap([1, -1])
    with pytest.raises(ValueError, match="counts >= 0"):
        M.vaccination_gap([1, -1], [0, 0])
    # differences take any real values
    assert M.parity([-3, 1]) == -4.0 and M.demographic_parity([-3, 1], [0, 1]) == 4.0


def test_episode_statistics_need_an_episode():
    for fn in (M.team_fairness, M.capture_success):
        with pytest.raises(ValueError, match=r"credit must hold at least one episode"):
            fn(np.zeros((0, 3)))
        with pytest.raises(ValueError, match=r"credit must hold at least one episode"):
            fn(np.zeros((4, 0)))
        with pytest.raises(ValueError, match=r"credit must be finite"):
            fn(np.array([[1.0, np.nan]]))


def test_temporal_aggregation_of_nothing():
    """A sum over no timepoint is the empty sum 0; a mean, a minimum or a last value of nothing is undefined."""
    assert M.temporal_aggregate([], "sum") == 0.0 and M.temporal_aggregate([], "discounted", 0.9) == 0.0
    for how in ("mean", "min", "long_term"):
        with pytest.raises(ValueError, match="values is empty"):
            M.temporal_aggregate([], how)
    with pytest.raises(ValueError, match=r"values must be finite"):
        M.temporal_aggregate([1.0, np.nan], "mean")
    with pytest.raises(ValueError, match=r"gamma must be a finite number >= 0"):
        M.temporal_aggregate([1.0], "discounted", gamma=float("nan"))
    # a bounded scheme whose filter keeps no timepoint: the empty sum, or an error for a mean
    statuses = np.ones((3, 2))
    assert M.fairness_score(statuses, "parity", scheme="bounded", mask=[False] * 3, how="sum") == 0.0
    with pytest.raises(ValueError, match="values is empty"):
        M.fairness_score(statuses, "parity", scheme="bounded", mask=[False] * 3, how="mean")
    # an empty trace sums to zero unfairness; a trace of no stakeholder is an error
    np.testing.assert_array_equal(M.overall_unfairness(np.zeros((0, 3))), np.zeros(3))
    with pytest.raises(ValueError, match=r"statuses must be a \(T, n\) array with n >= 1"):
        M.overall_unfairness(np.zeros((3, 0)))


def test_trace_and_argument_errors_name_the_argument():
    with pytest.raises(ValueError, match=r"statuses must be finite"):
        M.fairness_score([[1.0, np.nan]], "parity")
    with pytest.raises(ValueError, match=r"statuses must be a non-empty"):
        M.fairness_score(np.zeros((2, 0)), "parity")
    for period in (2.5, 0, True, "2"):
        with pytest.raises(ValueError, match=r"period must be an int >= 1"):
            M.fairness_score(np.ones((4, 2)), "parity", scheme="periodic", period=period)
    with pytest.raises(ValueError, match=r"alpha must be a finite number >= 0, got 'a'"):
        M.alpha_fair([1, 2], "a")
    with pytest.raises(ValueError, match=r"u must be an array of numbers"):
        M.utilitarian(["x", 1])
    with pytest.raises(ValueError, match=r"weights must be an array of numbers"):
        M.generalized_gini([1, 2], weights=["a", "b"])
    with pytest.raises(ValueError, match=r"fair_return must be finite"):
        M.price_of_fairness(np.nan, 1.0)
    assert math.isnan(M.price_of_fairness(1.0, 0.0))  # documented: a relative change from 0
    with pytest.raises(ValueError, match=r"tp and pos must have one entry per group, got none"):
        M.true_positive_rates([], [])


def test_sinkhorn_count_distance_is_the_authors_value():
    """The value the F-PPO authors' code computes for these count vectors (geomloss 0.2.5 in their own environment;
    the [authors] extra pins 0.3.1, which must give the same value),
    below the exact 1-D W1 of the same vectors; a zero-diameter pair is 0, not geomloss's error."""
    u, v = [48, 2, 0, 23, 65, 23, 24], [6, 28, 1, 2, 22, 22, 34]
    assert M.sinkhorn_count_distance(u, v) == pytest.approx(9.048757558309669, rel=1e-9)
    assert M.count_vector_distance(u, v) == pytest.approx(72 / 7)
    assert M.sinkhorn_count_distance([5, 5], [5, 5, 5]) == 0.0
    assert M.sinkhorn_count_distance([1, 2, 3], [1, 2, 3]) == pytest.approx(0.0, abs=1e-6)


def test_sinkhorn_count_distance_without_geomloss_names_the_extra(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "geomloss", None)
    with pytest.raises(ImportError, match=r'sb3-fair\[authors\]'):
        M.sinkhorn_count_distance([1, 2], [2, 1])
    from sb3_fair.envs.delayed_impact import DelayedImpactLendingEnv

    with pytest.raises(ImportError, match=r"geomloss"):
        DelayedImpactLendingEnv(long_term="counts_geomloss")
