"""Bad input, tried as a hostile user would (issue 11): each case asserts the exact error type and
that the message names the argument. Cases are grouped by where the input enters."""

from __future__ import annotations

from typing import Any, Callable

import gymnasium as gym
import numpy as np
import pytest
import torch as th
from nan_after import NanAfter

from sb3_fair import FairDQN, FairPPO, FairTD3
from sb3_fair import metrics as M
from sb3_fair.common.callbacks import FairnessCallback
from sb3_fair.common.fairqcm.memory import MemorySpec
from sb3_fair.envs import (
    AllelopathicHarvestEnv,
    DelayedImpactLendingEnv,
    DonutAllocationEnv,
    LoanApplicantsEnv,
    PursuitEvasionEnv,
    make_donut_allocation,
)
from sb3_fair.envs.disparity import DisparityGame
from sb3_fair.wrappers import FairnessMonitor, FairnessReward, MemoryAugmentation

# (id, call, error type, regex the message must match: it names the argument)
Case = tuple[str, Callable[[], Any], type, str]

CONSTRUCTION: list[Case] = [
    # FairnessCallback: window=0 used to become 100; wandb="yes" counted as True
    ("callback window 0", lambda: FairnessCallback(window=0), ValueError, r"window must be an int >= 1 or None, got 0"),
    ("callback window float", lambda: FairnessCallback(window=2.5), ValueError, r"window must be an int >= 1"),
    ("callback wandb 'yes'", lambda: FairnessCallback(wandb="yes"), ValueError, r"wandb must be True, False or a dict"),
    ("callback config list", lambda: FairnessCallback(config=[1]), ValueError, r"config must be a dict or None"),
    # floats were truncated to int, strings failed inside int()
    ("donut horizon float", lambda: DonutAllocationEnv(horizon=10.5), ValueError, r"horizon must be an int >= 1, got 10.5"),
    ("donut n_customers str", lambda: DonutAllocationEnv(n_customers="5"), ValueError, r"n_customers must be an int >= 2"),
    ("donut p wrong length", lambda: DonutAllocationEnv(p=[0.5, 0.5]), ValueError, r"p must be one probability or one per customer \(5\)"),
    ("donut p NaN", lambda: DonutAllocationEnv(p=float("nan")), ValueError, r"p must be probabilities in \[0, 1\]"),
    ("loans horizon float", lambda: LoanApplicantsEnv(horizon=3.5), ValueError, r"horizon must be an int >= 1, got 3.5"),
    ("loans apply_prob str", lambda: LoanApplicantsEnv(apply_prob="x"), ValueError, r"apply_prob must be a probability"),
    ("loans initial_credit str", lambda: LoanApplicantsEnv(initial_credit="abc"), ValueError, r"initial_credit must be 4 values"),
    ("memory max_value inf", lambda: MemorySpec(3, max_value=float("inf")), ValueError, r"max_value must be a finite number > 0"),
    ("memory period float", lambda: MemorySpec(3, period=2.5), ValueError, r"period must be an int >= 1 or None, got 2.5"),
    ("memory period str", lambda: MemorySpec(3, period="2"), ValueError, r"period must be an int >= 1 or None, got '2'"),
    ("memory wrapper max_value inf", lambda: MemoryAugmentation(DonutAllocationEnv(), max_value=float("inf")), ValueError,
     r"max_value must be a finite number > 0"),
    ("reward period float", lambda: FairnessReward(DonutAllocationEnv(), period=2.5), ValueError, r"period must be an int >= 1, got 2.5"),
    # a welfare that can never be evaluated at the all-zero status of every episode's start
    ("reward alpha_fair alpha 1", lambda: FairnessReward(DonutAllocationEnv(), welfare="alpha_fair"), ValueError,
     r"welfare 'alpha_fair' .* undefined at the all-zero status"),
    ("reward alpha_fair alpha 2", lambda: FairnessReward(DonutAllocationEnv(), welfare="alpha_fair", welfare_kwargs={"alpha": 2.0}),
     ValueError, r"welfare 'alpha_fair' .* undefined at the all-zero status"),
    # counterfactual replay that produces no counterfactual memory
    ("offsets all zero", lambda: FairDQN("MlpPolicy", make_donut_allocation(), counterfactual=True, counterfactual_offsets=(0,)),
     ValueError, r"counterfactual_offsets \(0,\) give no counterfactual memory"),
    ("offsets one value, min memory",
     lambda: FairDQN("MlpPolicy", FairnessReward(MemoryAugmentation(DonutAllocationEnv(), kind="min"), welfare="parity"),
                     counterfactual=True, counterfactual_offsets=(1, 1)),
     ValueError, r"counterfactual_offsets needs two distinct values"),
    ("Fair-E actor for 2 agents on 3 pursuers",
     lambda: FairTD3("FairEPolicy", PursuitEvasionEnv(n_pursuers=3), policy_kwargs={"agent_obs": np.arange(8).reshape(2, 4).tolist()}),
     ValueError, r"policy_kwargs\['agent_obs'\] gives 2 agents' views, but the env's symmetry has 3 agents"),
    # env arguments that failed inside NumPy, int() or a comparison, or were truncated
    ("pursuit n_pursuers str", lambda: PursuitEvasionEnv(n_pursuers="abc"), ValueError, r"n_pursuers must be an int >= 2"),
    ("pursuit n_pursuers float", lambda: PursuitEvasionEnv(n_pursuers=2.5), ValueError, r"n_pursuers must be an int >= 2, got 2.5"),
    ("pursuit max_steps inf", lambda: PursuitEvasionEnv(max_steps=float("inf")), ValueError, r"max_steps must be an int >= 1"),
    ("pursuit speed list", lambda: PursuitEvasionEnv(pursuer_speed=[1, 2]), ValueError, r"pursuer_speed must be a number"),
    ("pursuit dt zero", lambda: PursuitEvasionEnv(dt=0), ValueError, r"dt must be a finite number > 0"),
    ("harvest impaired_fraction str", lambda: AllelopathicHarvestEnv(impaired_fraction="abc"), ValueError,
     r"impaired_fraction must be a number in \(0, 1\)"),
    ("harvest seed float", lambda: AllelopathicHarvestEnv(seed=2.5), ValueError, r"seed must be an int >= 0 or None"),
    ("disparity str", lambda: DisparityGame(disparity="abc"), ValueError, r"disparity must be a probability"),
    ("rest_reward NaN", lambda: DisparityGame(rest_reward=float("nan")), ValueError, r"rest_reward must be a finite number"),
    ("lending pmfs str", lambda: DelayedImpactLendingEnv(initial_pmfs="abc"), ValueError, r"initial_pmfs must be two pmfs"),
    ("lending success_probs str", lambda: DelayedImpactLendingEnv(success_probs="abc"), ValueError, r"success_probs must be 7 probabilities"),
    # algorithm arguments: bools are not numbers, strings are not bools, ints are not truncated
    ("FairPPO fairness_coef True", lambda: FairPPO("MlpPolicy", "CartPole-v1", fairness_coef=True), ValueError,
     r"fairness_coef must be a number, got True"),
    ("FairPPO delta True", lambda: FairPPO("MlpPolicy", "CartPole-v1", fairness="long_term", delta=True), ValueError,
     r"delta must be a number, got True"),
    ("FairTD3 equivariance_coef True", lambda: FairTD3("MlpPolicy", "Pendulum-v1", equivariance_coef=True), ValueError,
     r"equivariance_coef must be a number"),
    ("FairDQN counterfactual str", lambda: FairDQN("MlpPolicy", make_donut_allocation(), counterfactual="yes"), ValueError,
     r"counterfactual must be True or False"),
    ("FairDQN max_counterfactuals str", lambda: FairDQN("MlpPolicy", make_donut_allocation(), max_counterfactuals="abc"), ValueError,
     r"max_counterfactuals must be an int >= 1 or None"),
    ("FairDQN max_counterfactuals float", lambda: FairDQN("MlpPolicy", make_donut_allocation(), max_counterfactuals=2.5), ValueError,
     r"max_counterfactuals must be an int >= 1 or None, got 2.5"),
    ("FairDQN exploration_decay True", lambda: FairDQN("MlpPolicy", make_donut_allocation(), exploration_decay=True), ValueError,
     r"exploration_decay must be None or a number in \(0, 1\]"),
    ("memory per_group str", lambda: MemoryAugmentation(DonutAllocationEnv(), per_group="yes"), ValueError,
     r"per_group must be True or False"),
    ("memory dict_observation int", lambda: MemoryAugmentation(DonutAllocationEnv(), dict_observation=1), ValueError,
     r"dict_observation must be True or False"),
    ("reward welfare list", lambda: FairnessReward(DonutAllocationEnv(), welfare=["nash"]), ValueError, r"welfare must be one of"),
    ("reward welfare_kwargs str", lambda: FairnessReward(DonutAllocationEnv(), welfare_kwargs="alpha=2"), ValueError,
     r"welfare_kwargs must be a dict"),
    ("reward welfare_kwargs 0", lambda: FairnessReward(DonutAllocationEnv(), welfare_kwargs=0), ValueError,
     r"welfare_kwargs must be a dict"),
    ("monitor metric typo", lambda: FairnessMonitor(DonutAllocationEnv(), metrics="ginni"), ValueError,
     r"metrics: unknown figure 'ginni'"),
]


# metrics: arguments that are not the data (the data's own domain is in tests/test_metrics.py)
R, G = [1.0, 2.0, 3.0, 4.0], [0, 0, 1, 1]
CONSTRUCTION += [
    ("dp protected str", lambda: M.demographic_parity(R, G, protected="1"), ValueError, r"protected must be an int"),
    ("welfare name list", lambda: M.welfare(R, ["nash"]), ValueError, r"unknown welfare \['nash'\]"),
    ("welfare kwargs", lambda: M.welfare(R, "nash", alpha=2), ValueError, r"welfare 'nash' does not take the arguments \['alpha'\]"),
    ("health n_states str", lambda: M.health_state_gap([0, 1, 2], [0, 0, 1], n_states="3"), ValueError, r"n_states must be an int >= 1"),
    ("smoothed weight str", lambda: M.smoothed_distribution([1, 2], [1, 1], "x"), ValueError, r"weight must be a finite number"),
    ("point cloud str", lambda: M.point_cloud_wasserstein("ab", "cd"), ValueError, r"x must be an array of numbers"),
    ("normalize str", lambda: M.max_mean_deviation([1, 2], normalize="yes"), ValueError, r"normalize must be True or False"),
    ("groups fractional", lambda: M.demographic_parity(R, [0, 0.5, 1, 1]), ValueError, r"groups must hold integers"),
    ("bounded mask NaN", lambda: M.fairness_score(np.ones((3, 2)), "parity", scheme="bounded", mask=[1, 0, float("nan")]), ValueError,
     r"mask must be booleans"),
    ("lending credit NaN", lambda: LoanApplicantsEnv(initial_credit=[float("nan"), 0.5, 0.5, 0.5]), ValueError,
     r"initial_credit must be 4 values"),
    ("probability numpy bool", lambda: DisparityGame(disparity=np.True_), ValueError, r"disparity must be a probability"),
    ("credit not numbers", lambda: M.team_fairness([["a", "b"]]), ValueError, r"credit must be an array of numbers"),
]


@pytest.mark.parametrize("case", CONSTRUCTION, ids=[c[0] for c in CONSTRUCTION])
def test_bad_input_fails_at_construction_naming_the_argument(case: Case) -> None:
    _, call, error, message = case
    with pytest.raises(error, match=message):
        call()


def test_good_input_next_to_the_bad_still_works() -> None:
    """The checks reject only what they should: NumPy scalars, 0-d arrays and a welfare's own arguments for n stakeholders."""
    FairnessReward(DonutAllocationEnv(), welfare="ggf", welfare_kwargs={"weights": [1, 0.5, 0.25, 0.125, 0.0625]})
    FairDQN("MlpPolicy", make_donut_allocation(), exploration_decay=np.float32(0.99))
    assert M.alpha_fair([1.0, 2.0], np.array(0.5)) == M.alpha_fair([1.0, 2.0], 0.5)
    assert M.temporal_aggregate([1.0, 2.0], "discounted", gamma=np.float32(0.5)) == 2.0
    env = AllelopathicHarvestEnv.from_preset("tiny", seed=np.int64(3))
    env.reset()
    FairnessCallback(window=5, wandb=False, config={"a": 1})
    DonutAllocationEnv(p=[0.1, 0.2, 0.3, 0.4, 0.5], horizon=np.int64(10))
    FairnessReward(DonutAllocationEnv(), welfare="alpha_fair", welfare_kwargs={"alpha": 0.5})
    FairnessMonitor(DonutAllocationEnv(), metrics="gini")  # one name as a string is one figure
    MemorySpec(3, max_value=10.0, period=np.int64(4), encoding="binary")


@pytest.mark.parametrize("metrics", [["gini", 1], 5, b"gini"], ids=["non-str entry", "int", "bytes"])
def test_monitor_metrics_that_are_not_names(metrics: Any) -> None:
    with pytest.raises(ValueError, match=r"metrics"):
        FairnessMonitor(DonutAllocationEnv(), metrics=metrics)


# ---------------------------------------------------------------- values that pass validation, then break training
@pytest.mark.parametrize("weight", ["fairness_coef", "task_coef"])
def test_huge_reward_weight_is_refused(weight: str) -> None:
    with pytest.raises(ValueError, match=rf"{weight} must be a number in \[0, 1e\+06\], got 1e\+18"):
        FairnessReward(DonutAllocationEnv(), **{weight: 1e18})


def test_huge_penalty_weights_are_refused() -> None:
    with pytest.raises(ValueError, match=r"fairness_coef must be a number in \[0, 1e\+06\]"):
        FairPPO("MlpPolicy", "CartPole-v1", fairness_coef=1e18)
    with pytest.raises(ValueError, match=r"alpha must be a number in \[0, 1e\+06\]"):
        FairPPO("MlpPolicy", "CartPole-v1", alpha=1e300, beta=1e300)
    with pytest.raises(ValueError, match=r"fairness_coef must be a number in \[0, 1e\+06\]"):
        FairPPO("MlpPolicy", "CartPole-v1", fairness="long_term", fairness_coef=(1.0, 1e300))


def test_huge_equivariance_weight_is_refused() -> None:
    with pytest.raises(ValueError, match=r"equivariance_coef must be a number in \[0, 1e\+06\]"):
        FairTD3("MlpPolicy", "Pendulum-v1", equivariance_coef=1e300)


@pytest.mark.parametrize("algo", ["FairPPO", "FairDQN"])
def test_a_non_finite_reward_stops_training_at_its_step_naming_the_cause(algo: str) -> None:
    """A NaN reward is refused at the step that returned it (it used to reach the network, and FairDQN could train on
    NaN targets for up to FINITE_CHECK_EVERY updates before the network check saw it)."""
    env = NanAfter(gym.make("CartPole-v1"), after=5, what="reward")
    cls = {"FairPPO": FairPPO, "FairDQN": FairDQN}[algo]
    kwargs = {"n_steps": 64, "batch_size": 32, "n_epochs": 1, "fairness_coef": 0.0} if algo == "FairPPO" else {
        "learning_starts": 0, "train_freq": 1, "batch_size": 16, "buffer_size": 1000}
    model = cls("MlpPolicy", env, seed=0, **kwargs)
    with pytest.raises(ValueError, match=rf"{algo}: the env returned a reward holding NaN or inf \(the reward of this step, "
                                         r"sub-env 0, 5 timesteps\): the env's rewards are the cause"):
        model.learn(64 * 3 if algo == "FairPPO" else 2 * cls.FINITE_CHECK_EVERY + 10)


# ---------------------------------------------------------------- the CLI: every argument checked before training
CLI_CASES = [
    (["compare", "--alpha", "-1"], "--alpha", "must be a finite number >= 0"),
    (["compare", "--beta", "1e300"], "--beta", "<= 1e+06"),
    (["compare", "--seeds", "0"], "--seeds", "must be an int >= 1, got '0'"),
    (["compare", "--episodes", "0"], "--episodes", "must be an int >= 1"),
    (["compare", "--eval-episodes", "-2"], "--eval-episodes", "must be an int >= 1"),
    (["compare", "--learning-rate", "0"], "--learning-rate", "must be a finite number > 0"),
    (["compare", "--plot", "."], "--plot", "is a directory"),
    (["train", "--algo", "fair_dqn", "--env", "sb3_fair/DonutAllocation-v0", "--timesteps", "-5"], "--timesteps", "must be an int >= 1, got '-5'"),
    (["train", "--algo", "fair_dqn", "--env", "sb3_fair/DonutAllocation-v0", "--timesteps", "1e4"], "--timesteps", "must be an int >= 1, got '1e4'"),
    (["train", "--algo", "fair_dqn", "--env", "sb3_fair/DonutAllocation-v0", "--seed", "-1"], "--seed", "must be an int >= 0"),
    (["train", "--algo", "fair_dqn", "--env", "sb3_fair/DonutAllocation-v0", "--learning-rate", "nan"], "--learning-rate", "must be a finite number > 0"),
    (["train", "--algo", "fair_dqn", "--env", "sb3_fair/DonutAllocation-v0", "--eval-episodes", "0"], "--eval-episodes", "must be an int >= 1"),
    (["train", "--algo", "fair_dqn", "--env", "sb3_fair/DonutAllocation-v0", "--save", "{file}/model.zip"], "--save", "is a file, not a folder"),
    (["train", "--algo", "fair_dqn", "--env", "sb3_fair/DonutAllocation-v0", "--save", "{dir}"], "--save", "is a directory"),
    (["evaluate", "m.zip", "--env", "sb3_fair/DonutAllocation-v0", "--episodes", "0"], "--episodes", "must be an int >= 1"),
]


@pytest.mark.parametrize("argv, option, message", CLI_CASES, ids=[" ".join(c[0][:1] + c[0][-2:]) for c in CLI_CASES])
def test_cli_rejects_bad_arguments_before_training(argv, option, message, tmp_path, capsys, monkeypatch) -> None:
    from sb3_fair import cli

    trained = []
    monkeypatch.setattr(cli, "cmd_train", lambda args: trained.append(args))
    monkeypatch.setattr(cli, "cmd_compare", lambda args: trained.append(args))
    monkeypatch.setattr(cli, "cmd_evaluate", lambda args: trained.append(args))
    a_file = tmp_path / "a_file"
    a_file.write_text("")
    argv = [a.format(file=a_file, dir=tmp_path) for a in argv]
    with pytest.raises(SystemExit) as exit_info:
        cli.main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {option}: " in err and message in err
    assert not trained  # nothing ran


def test_cli_good_arguments_still_reach_the_command(tmp_path, monkeypatch) -> None:
    from sb3_fair import cli

    ran = []
    monkeypatch.setattr(cli, "cmd_train", lambda args: ran.append(args))
    cli.main(["train", "--algo", "fair_dqn", "--env", "sb3_fair/DonutAllocation-v0", "--timesteps", "100", "--save", str(tmp_path / "new" / "m.zip"),
              "--learning-rate", "1e-4"])
    assert ran and ran[0].timesteps == 100 and ran[0].learning_rate == 1e-4


def test_finite_check_flags_nan_and_inf_but_not_large_finite_weights() -> None:
    model = FairPPO("MlpPolicy", "CartPole-v1", fairness_coef=0.0, n_steps=64, batch_size=32)
    param = next(model.policy.parameters())
    assert model._parameters_finite()
    with th.no_grad():
        param.fill_(1e30)  # its norm overflows float32; the values do not
    assert model._parameters_finite()
    for bad in (float("nan"), float("inf")):
        with th.no_grad():
            param.view(-1)[0] = bad
        assert not model._parameters_finite()


def test_a_fresh_learn_starts_its_fairness_figures_afresh_and_a_continued_one_keeps_them() -> None:
    """As SB3 clears its ep_info_buffer exactly when reset_num_timesteps=True."""
    model = FairDQN("MlpPolicy", make_donut_allocation(), learning_starts=50, buffer_size=1000, batch_size=16)
    model.learn(300)
    assert len(model.fairness_episodes) == 3
    model.learn(100, reset_num_timesteps=False)
    assert len(model.fairness_episodes) == 4
    model.learn(100)  # a new run
    assert len(model.fairness_episodes) == 1 == len(model.ep_info_buffer)
