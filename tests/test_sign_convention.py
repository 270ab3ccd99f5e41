"""One sign for every signed group gap: positive when the protected group is ahead (issue 46, part c).

``dp`` always had it; ``dp_norm`` / ``csp_norm_<k>`` (fair-PPO's Table 1 form, which prints the opposite sign) and the
counterfactual figures ``cf_gap`` / ``cf_norm`` (oriented by group, not by world) have it since 0.5.0, and the old
names (``dp_normalized``, ``csp_<k>``, ``cf``, ``cf_abs``, ``cf_normalized``) are refused with the new one.
"""

import numpy as np
import pytest

from sb3_fair import metrics as M
from sb3_fair.common.figure_table import (
    FIGURE_NAMES, RENAMED_FIGURES, check_figure_names, check_not_renamed, episode_figures, renamed_figure,
)
from sb3_fair.envs import DisparityGame
from sb3_fair.wrappers import CounterfactualPair, ParallelFairnessMonitor

SIGNED = ("dp", "dp_norm", "csp_mean", "csp_norm_0", "csp_norm_1", "cf_gap", "cf_norm")
RENAME_MESSAGE = "renamed to '{}' in 0.5.0; its sign is now positive = protected group ahead"

# equal groups: 3 protected (1) and 3 others; unequal: 2 protected and 4 others. Factors make two strata that each
# hold both groups; twins pair (0, 3), (1, 4), (2, 5): in the unequal case pair (2, 5) is in one group and left out
EQUAL = dict(groups=[1, 1, 1, 0, 0, 0], factors=[0, 1, 0, 1, 0, 1], twins=[3, 4, 5, 0, 1, 2])
UNEQUAL = dict(groups=[1, 1, 0, 0, 0, 0], factors=[0, 1, 0, 1, 0, 1], twins=[3, 4, 5, 0, 1, 2])


def _returns(groups, ahead):
    """The protected members earn 10, 12, ..., the others 1, 2, ... (or the other way round when not ``ahead``)."""
    g = np.asarray(groups)
    high, low = 10.0 + 2 * np.arange(g.size), 1.0 + np.arange(g.size)
    return np.where((g == 1) == ahead, high, low)


@pytest.mark.parametrize("case", [EQUAL, UNEQUAL], ids=["equal groups", "unequal groups"])
@pytest.mark.parametrize("ahead", [True, False], ids=["protected ahead", "protected behind"])
def test_every_signed_figure_has_the_sign_of_dp(case, ahead):
    r = _returns(case["groups"], ahead)
    out = episode_figures(r, **case)
    assert set(SIGNED) <= set(out)
    sign = 1.0 if ahead else -1.0
    assert np.sign(out["dp"]) == sign
    for name in SIGNED:
        assert np.sign(out[name]) == sign, (name, out[name])
    # the sizes are the signed figures' magnitudes
    assert out["dp_abs"] == abs(out["dp"]) and out["cf_gap_abs"] == abs(out["cf_gap"])
    assert out["csp_mean_abs"] == pytest.approx(abs(out["csp_mean"]))


def test_known_answers_equal_and_unequal_groups():
    # equal groups, protected ahead: means 5.5 vs 1.5, totals 11 vs 3
    out = episode_figures([1.0, 2.0, 5.0, 6.0], [0, 0, 1, 1], twins=[2, 3, 0, 1])
    assert out["dp"] == 4.0 and out["dp_norm"] == pytest.approx((11 - 3) / 14)
    assert out["cf_gap"] == 4.0 and out["cf_norm"] == pytest.approx((11 - 3) / 14)
    # fair-PPO's Table 1 form has the same magnitude and the opposite sign
    assert out["dp_norm"] == pytest.approx(-(3 - 11) / max(3 + 11, 1))
    # unequal groups, protected behind: 2 protected (1, 2) and 4 others (5, 5, 6, 6)
    r, g = [1.0, 2.0, 5.0, 5.0, 6.0, 6.0], [1, 1, 0, 0, 0, 0]
    out = episode_figures(r, g, twins=[2, 3, 0, 1, 5, 4])
    assert out["dp"] == pytest.approx(1.5 - 5.5) and out["dp_norm"] == pytest.approx((3 - 22) / 25)
    # the pairs (0, 2) and (1, 3); (4, 5), both unprotected, is left out
    assert out["cf_gap"] == pytest.approx(((1 - 5) + (2 - 5)) / 2) and out["cf_norm"] == pytest.approx((3 - 10) / 13)


def test_dp_norm_compares_totals_so_its_sign_can_differ_from_dp_with_unequal_groups():
    """Not a sign convention but a different figure: one protected member ahead of nine others in mean, behind in
    total (the docs say so beside the table)."""
    r, g = [10.0] + [2.0] * 9, [1] + [0] * 9
    assert M.demographic_parity(r, g) == 8.0 and M.demographic_parity_norm(r, g) == pytest.approx((10 - 18) / 28)


def test_counterfactual_pairs_are_oriented_by_group():
    prot, unprot = M.counterfactual_pairs([1, 0, 0, 1, 0, 0], [3, 4, 5, 0, 1, 2])
    # pairs (0, 3): both protected, left out; (1, 4): both unprotected, left out; (2, 5): none protected -> empty
    assert prot.size == unprot.size == 0
    prot, unprot = M.counterfactual_pairs([1, 0, 0, 0], [2, 3, 0, 1])
    assert prot.tolist() == [0] and unprot.tolist() == [2]
    prot, unprot = M.counterfactual_pairs([0, 1, 1, 0], [2, 3, 0, 1])  # protected in either world
    assert sorted(prot.tolist()) == [1, 2] and sorted(unprot.tolist()) == [0, 3]
    with pytest.raises(ValueError, match="one member in the protected group"):
        M.counterfactual_gap([1.0, 2.0], [0, 0], [1, 0])
    # no pair across the groups: the CF figures do not apply to the episode
    out = episode_figures([1.0, 2.0, 3.0, 4.0], [0, 1, 0, 1], twins=[2, 3, 0, 1])
    assert "cf_gap" not in out and "cf_norm" not in out and "dp" in out
    with pytest.raises(ValueError, match="twins must pair"):
        episode_figures([1.0, 2.0, 3.0, 4.0], [0, 1, 0, 1], twins=[1, 2, 3, 0])


def _play(mode, disparity=0.5, steps=4):
    """One episode of DisparityGame (everybody works: the protected group 1 earns more) in a CounterfactualPair."""
    game = ParallelFairnessMonitor(CounterfactualPair(DisparityGame(n_agents=4, disparity=disparity, max_steps=steps),
                                                      mode=mode))
    _, infos = game.reset(seed=3)
    groups = np.array([infos[a]["group"] for a in game.possible_agents])
    while game.agents:
        _, _, _, _, infos = game.step({a: 0 for a in game.agents})
    figures = next(i["fairness"] for i in infos.values() if "fairness" in i)
    return groups, np.asarray(figures["returns"]), figures


@pytest.mark.parametrize("mode", CounterfactualPair.MODES)
def test_counterfactual_figures_in_both_modes_of_the_pair(mode):
    disparity, steps = 0.5, 4
    groups, returns, figures = _play(mode, disparity, steps)
    n = groups.size // 2
    assert figures["dp"] == pytest.approx(disparity * steps)  # the protected group earns more: positive
    assert figures["cf_gap"] == pytest.approx(disparity * steps) and figures["cf_gap_abs"] == figures["cf_gap"]
    prot, unprot = returns[groups == 1].sum(), returns[groups == 0].sum()
    assert figures["cf_norm"] == pytest.approx((prot - unprot) / (prot + unprot)) and figures["cf_norm"] > 0
    factual, counterfactual = returns[:n], returns[n:]
    if mode == "extreme":  # nobody protected in the factual world: the old world-against-world figures, negated
        assert figures["cf_gap"] == pytest.approx(-M.counterfactual_fairness(factual, counterfactual))
        assert figures["cf_norm"] == pytest.approx(-M.normalized_counterfactual_fairness(factual, counterfactual))
    else:  # each world holds both groups: the old signed mean cancelled, the oriented one does not
        assert M.counterfactual_fairness(factual, counterfactual) == pytest.approx(0.0)
    assert not {"cf", "cf_abs", "cf_normalized", "dp_normalized"} & set(figures)


@pytest.mark.parametrize("old, new", [*RENAMED_FIGURES.items(), ("csp_0", "csp_norm_0"), ("csp_12", "csp_norm_12"),
                                      ("fairness/cf", "fairness/cf_gap"), ("eval/dp_normalized", "eval/dp_norm")])
def test_old_names_are_refused_with_the_new_one(old, new):
    assert renamed_figure(old) == new
    with pytest.raises(ValueError, match=RENAME_MESSAGE.format(new)):
        check_not_renamed(old, "x")
    if "/" not in old:
        with pytest.raises(ValueError, match=r"metrics: figure .* renamed to"):
            check_figure_names([old])


def test_new_and_unchanged_names_are_accepted():
    for name in ("dp", "dp_abs", "csp_mean", "csp_mean_abs", "csp_norm_0", "cf_gap", "cf_norm", "group_0_mean"):
        assert renamed_figure(name) is None
    assert check_figure_names(["dp_norm", "csp_norm", "cf_gap", "cf_gap_abs", "cf_norm"])
    assert not set(RENAMED_FIGURES) & set(FIGURE_NAMES)


def test_old_names_are_refused_by_compare_sweep_and_the_monitor():
    from sb3_fair.experiment.compare import check_figure
    from sb3_fair.experiment.sweep import points

    assert check_figure("csp_norm_1", "t") == "csp_norm_1" and check_figure("dp_norm", "t") == "dp_norm"
    for old, new in (("dp_normalized", "dp_norm"), ("csp_1", "csp_norm_1"), ("cf_normalized", "cf_norm")):
        with pytest.raises(ValueError, match="tasks.yml: figure .*" + RENAME_MESSAGE.format(new)):
            check_figure(old, "tasks.yml")
    with pytest.raises(ValueError, match="unfairness: figure 'cf'.*" + RENAME_MESSAGE.format("cf_gap")):
        points([], "episode_reward", "cf")
    with pytest.raises(ValueError, match=RENAME_MESSAGE.format("dp_norm")):
        ParallelFairnessMonitor(DisparityGame(n_agents=4), metrics=["dp_normalized"])


def test_old_metric_functions_are_refused_with_the_new_name():
    with pytest.raises(AttributeError, match="renamed to demographic_parity_norm in 0.5.0; its sign is now positive"):
        M.normalized_demographic_parity([1, 2], [0, 1])
    with pytest.raises(AttributeError, match="renamed to conditional_statistical_parity_norm"):
        M.normalized_conditional_statistical_parity([1, 2], [0, 1], [0, 0])
    with pytest.raises(ImportError):  # and `from ... import` of an old name fails (Python's own message)
        from sb3_fair.metrics import normalized_demographic_parity  # noqa: F401
