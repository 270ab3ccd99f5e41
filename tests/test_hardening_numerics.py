"""Hardening, round 2 (issue 26): schedules that are total functions, diagnostics that name the real cause, env
parameters refused at construction before they overflow, and the open items of the last round."""

from __future__ import annotations

import logging
import math
import warnings
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from nan_after import NanAfter
from stable_baselines3 import PPO

from sb3_fair import FairDQN, FairPPO, Stakeholders
from sb3_fair import metrics as M
from sb3_fair.common.figure_table import episode_figures
from sb3_fair.common.long_term.advantages import (
    attention_massaging_threshold,
    epidemic_massaging_threshold,
    lending_massaging_threshold,
    massaging_choice,
)
from sb3_fair.common.long_term.massaging import massage_actions
from sb3_fair.common.protocol import LONG_TERM_FAIRNESS, SHORT_TERM_FAIRNESS, get_fairness_signals
from sb3_fair.envs import (
    AllelopathicHarvestEnv,
    AttentionAllocationEnv,
    DelayedImpactLendingEnv,
    DonutAllocationEnv,
    EpidemicControlEnv,
    LoanApplicantsEnv,
    PursuitEvasionEnv,
)
from sb3_fair.envs.disparity import DisparityGame
from sb3_fair.wrappers import FairnessMonitor

ITERATIONS = (0, 50, 3940, 10**6, 10**9)


# ---------------------------------------------------------------- A: schedules are total functions
@pytest.mark.parametrize("schedule", [lending_massaging_threshold, attention_massaging_threshold, epidemic_massaging_threshold])
@pytest.mark.parametrize("iteration", ITERATIONS)
def test_every_schedule_is_finite_for_every_iteration(schedule, iteration) -> None:
    tau = schedule(iteration)
    assert math.isfinite(tau) and 0.0 <= tau <= 1.0


def test_schedules_keep_their_values_where_they_were_finite() -> None:
    assert epidemic_massaging_threshold(49) == 0.0
    assert epidemic_massaging_threshold(50) == pytest.approx(0.01)
    assert epidemic_massaging_threshold(60) == 0.01 * 1.2 ** 10
    assert epidemic_massaging_threshold(70) == 0.35 and epidemic_massaging_threshold(3940) == 0.35
    assert epidemic_massaging_threshold(10**9) == 0.35  # 1.2 ** (10**9) raised OverflowError
    assert epidemic_massaging_threshold(100, gamma=0.5) == 0.01 * 0.5 ** 50  # a decay underflows to 0, no error
    assert lending_massaging_threshold(17) == 0.0 and lending_massaging_threshold(100) == 1.0 - 2.0 * 0.5 * 0.985 ** 83
    assert lending_massaging_threshold(10**9) == 1.0
    assert attention_massaging_threshold(15) == 0.0 and attention_massaging_threshold(10**9) == 0.08
    assert epidemic_massaging_threshold(np.int64(60)) == epidemic_massaging_threshold(60)


@pytest.mark.parametrize("call, message", [
    (lambda: lending_massaging_threshold(100, gamma=1.5), r"gamma must be a number in \(0, 1\]"),
    (lambda: lending_massaging_threshold(100, tau_s=0.8), r"tau_s must be a number in \[0, 0.5\]"),
    (lambda: epidemic_massaging_threshold(100, gamma=float("inf")), r"gamma must be a finite number > 0"),
    (lambda: epidemic_massaging_threshold(100, tau_e=float("nan")), r"tau_e must be a finite number >= 0"),
    (lambda: epidemic_massaging_threshold(2.5), r"iteration must be an int"),
    (lambda: attention_massaging_threshold(3, i_s=-1), r"i_s must be an int >= 0"),
])
def test_schedule_parameters_that_would_leave_the_range_are_refused(call, message) -> None:
    with pytest.raises(ValueError, match=message):
        call()


# ---------------------------------------------------------------- B: diagnostics that point at the cause
@pytest.mark.parametrize("algo", ["FairPPO", "FairDQN"])
def test_nan_observation_is_named_at_the_step_not_inside_torch(algo) -> None:
    env = NanAfter(gym.make("CartPole-v1"), after=5)
    if algo == "FairPPO":
        model = FairPPO("MlpPolicy", env, seed=0, n_steps=64, batch_size=32, n_epochs=1, fairness_coef=0.0)
    else:
        model = FairDQN("MlpPolicy", env, seed=0, learning_starts=0, train_freq=1, batch_size=16, buffer_size=1000)
    with pytest.raises(ValueError, match=rf"{algo}: the env returned an observation holding NaN or inf \(the observation "
                                         r"after this step, sub-env 0, 5 timesteps\): the env's observations are the cause"):
        model.learn(300)


def test_finite_run_is_unchanged_by_the_observation_check() -> None:
    """Same actions and same weights as the parent: the check draws no random number."""
    fair = FairPPO("MlpPolicy", "CartPole-v1", seed=3, n_steps=64, batch_size=32, n_epochs=1, fairness_coef=0.0).learn(128)
    plain = PPO("MlpPolicy", "CartPole-v1", seed=3, n_steps=64, batch_size=32, n_epochs=1).learn(128)
    for a, b in zip(fair.policy.parameters(), plain.policy.parameters()):
        assert bool((a == b).all())


def _poison(model, obs: bool = False, rewards: bool = False) -> None:
    buf = model.replay_buffer
    if obs:
        buf.observations[3] = np.nan
    if rewards:
        buf.rewards[3] = np.nan
    with np.errstate(all="ignore"):
        next(model.policy.parameters()).data.view(-1)[0] = float("nan")


@pytest.mark.parametrize("obs, rewards, cause", [
    (True, False, r"the env's observations \(as stored in the buffer\) hold NaN or inf"),
    (False, True, r"the env's rewards \(as stored in the buffer\) hold NaN or inf"),
    (False, False, r"the learning rate or the reward scale is too large for this network \(fairness is off"),
])
def test_non_finite_network_names_the_inputs_before_the_fairness_weight(obs, rewards, cause) -> None:
    model = FairDQN("MlpPolicy", "CartPole-v1", learning_starts=0, buffer_size=100, counterfactual=False)
    _poison(model, obs=obs, rewards=rewards)
    with pytest.raises(FloatingPointError, match=rf"FairDQN: the policy's parameters became NaN .* Likely cause: {cause}"):
        model._raise_non_finite()
    assert not model.fairness_active()


def test_the_fairness_weight_is_blamed_only_when_fairness_is_on_and_inputs_are_finite() -> None:
    model = FairPPO("MlpPolicy", "CartPole-v1", fairness="long_term", fairness_coef=1.0, n_steps=64)
    assert model.fairness_active()
    with pytest.raises(FloatingPointError, match=r"a fairness weight too large .* \(the observations and rewards in the "
                                                 r"buffer are finite\)"):
        model._raise_non_finite()


@pytest.mark.parametrize("key", [SHORT_TERM_FAIRNESS, LONG_TERM_FAIRNESS])
@pytest.mark.parametrize("bad", [float("nan"), float("inf"), "0.5", None])
def test_non_finite_fairness_signal_is_refused_at_its_step_naming_the_key(key, bad) -> None:
    infos = [{SHORT_TERM_FAIRNESS: 0.1, LONG_TERM_FAIRNESS: 0.2}, {SHORT_TERM_FAIRNESS: 0.1, LONG_TERM_FAIRNESS: 0.2}]
    infos[1][key] = bad
    with pytest.raises(ValueError, match=rf"info\['{key}'\] of sub-env 1 must be a finite number"):
        get_fairness_signals(infos)
    ds, dl = get_fairness_signals([{SHORT_TERM_FAIRNESS: np.float32(0.5), LONG_TERM_FAIRNESS: 1}])
    assert ds.tolist() == [0.5] and dl.tolist() == [1.0]


class _NanSignal(gym.Wrapper):
    def step(self, action: Any) -> Any:
        obs, reward, terminated, truncated, info = self.env.step(action)
        return obs, reward, terminated, truncated, {**info, SHORT_TERM_FAIRNESS: float("nan")}


def test_nan_short_term_signal_stops_fppo_at_the_step() -> None:
    model = FairPPO("MlpPolicy", _NanSignal(DelayedImpactLendingEnv(horizon=50)), fairness="long_term", n_steps=32,
                    batch_size=32, seed=0)
    with pytest.raises(ValueError, match=r"info\['short_term_fairness'\] of sub-env 0 must be a finite number .* got nan"):
        model.learn(32)
    assert model.num_timesteps == 1, "refused at the first step, not at the update"


class _NanWhatIf(gym.Wrapper):
    def fairness_what_if(self, action: Any) -> Any:
        candidates, short_term = self.env.unwrapped.fairness_what_if(action)
        short_term = short_term.copy()
        short_term[1] = np.nan
        return candidates, short_term


def test_nan_what_if_answer_is_refused_naming_the_method_and_the_candidate() -> None:
    env = DelayedImpactLendingEnv()
    env.reset(seed=0)
    model = FairPPO("MlpPolicy", env, n_steps=32, batch_size=32, fairness_coef=0.0)
    obs = model.policy.obs_to_tensor(env.reset(seed=0)[0])[0]
    dist = model.policy.get_distribution(obs)

    class _Env:  # the what-if of the wrapped env, as get_what_if asks a single env
        unwrapped = _NanWhatIf(env)

    with pytest.raises(ValueError, match=r"fairness_what_if answered a non-finite Δs \(short-term fairness gap\) for "
                                         r"candidate 1 of sub-env 0: nan"):
        massage_actions(_Env(), np.array([1]), dist, tau=0.5)


def test_massaging_choice_refuses_nan_but_keeps_inf_for_impossible_candidates() -> None:
    assert massaging_choice([0.5, 0.4, 0.0], [0.3, 0.1, np.inf], tau=0.2) == 1
    with pytest.raises(ValueError, match=r"short_term must be numbers .*candidate 1 has nan"):
        massaging_choice([0.5, 0.4], [0.3, np.nan], tau=0.2)
    with pytest.raises(ValueError, match=r"probabilities must be numbers .*candidate 0 has nan"):
        massaging_choice([np.nan, 0.4], [0.3, 0.1], tau=0.2)


# ---------------------------------------------------------------- C: env parameters that overflow at the first step
ENV_CASES = [
    ("attention rate 1e20", lambda: AttentionAllocationEnv(initial_rates=(1e20, 6.0, 4.0, 3.0, 1.5)),
     r"initial_rates\[0\] must be a number in \[0, 1e\+12\] \(MAX_RATE"),
    ("attention increase over the episode", lambda: AttentionAllocationEnv(increase_rates=(1e10, 0.2, 0.2, 0.2, 0.2)),
     r"initial_rates\[0\] \+ horizon \* increase_rates\[0\] must be at most 1e\+12"),
    ("attention decrease 1e300", lambda: AttentionAllocationEnv(decrease_rate=1e300), r"decrease_rate must be a number in \[0, 1e\+12\]"),
    ("attention weight 1e300", lambda: AttentionAllocationEnv(discovered_weight=1e300), r"discovered_weight must be a number in \[0, 1e\+06\]"),
    ("attention window 1e9", lambda: AttentionAllocationEnv(window=10**9), r"window must be an int in \[1, 1e\+06\]"),
    ("attention history 1e9", lambda: AttentionAllocationEnv(history_len=10**9), r"history_len must be an int in \[1, 10000\]"),
    ("attention horizon 1e30", lambda: AttentionAllocationEnv(horizon=10**30), r"horizon must be an int in \[1, 1e\+09\]"),
    ("donut horizon 1e400", lambda: DonutAllocationEnv(horizon=10**400), r"horizon must be an int in \[1, 1e\+09\]"),
    ("lending horizon 1e20", lambda: LoanApplicantsEnv(horizon=10**20), r"horizon must be an int in \[1, 1e\+09\]"),
    ("delayed impact interest 1e300", lambda: DelayedImpactLendingEnv(interest_rate=1e300),
     r"loan_amount \* max\(interest_rate, 1\) \* horizon must be at most 3.4e\+38"),
    ("delayed impact window 1e30", lambda: DelayedImpactLendingEnv(window=10**30), r"window must be an int in \[1, 1e\+09\]"),
    ("epidemic burn_in 1e30", lambda: EpidemicControlEnv(burn_in=10**30), r"burn_in must be an int in \[0, 10000\]"),
    ("epidemic horizon 2**63", lambda: EpidemicControlEnv(horizon=2**63), r"horizon must be an int in \[1, 1e\+09\]"),
    ("pursuit size 0.5", lambda: PursuitEvasionEnv(size=0.5), r"size must be a finite number >= 1.0"),
    ("pursuit speed * dt inf", lambda: PursuitEvasionEnv(pursuer_speed=1e300, dt=1e10), r"pursuer_speed \* dt must be finite"),
    ("pursuit max_steps 1e30", lambda: PursuitEvasionEnv(max_steps=10**30), r"max_steps must be an int in \[1, 1e\+09\]"),
    ("harvest bush_lifetime 1e30", lambda: AllelopathicHarvestEnv.from_preset("tiny", bush_lifetime=10**30),
     r"bush_lifetime must be an int in \[1, 1e\+09\]"),
    ("harvest width 1e30", lambda: AllelopathicHarvestEnv.from_preset("tiny", width=10**30), r"width must be an int in \[1, 10000\]"),
    ("harvest view_radius 1e6", lambda: AllelopathicHarvestEnv.from_preset("tiny", view_radius=10**6),
     r"view_radius must be an int in \[0, 100\]"),
    ("disparity rest_reward 1e400", lambda: DisparityGame(rest_reward=10**400), r"rest_reward must be a finite number in \[-1e\+06, 1e\+06\]"),
    ("disparity max_steps 1e30", lambda: DisparityGame(max_steps=10**30), r"max_steps must be an int in \[1, 1e\+09\]"),
]


@pytest.mark.parametrize("case", ENV_CASES, ids=[c[0] for c in ENV_CASES])
def test_env_parameters_that_would_overflow_are_refused_at_construction(case) -> None:
    _, call, message = case
    with pytest.raises(ValueError, match=message):
        call()


def test_env_parameters_at_the_bounds_still_step() -> None:
    env = AttentionAllocationEnv(initial_rates=(1e12, 1.0), increase_rates=(0.0, 1.0), n_units=2, window=10)
    env.reset(seed=0)
    for _ in range(3):
        obs, reward, *_ = env.step(np.zeros(2, dtype=np.float32))
        assert np.all(np.isfinite(obs)) and math.isfinite(reward)
    env = PursuitEvasionEnv(size=1.0)
    env.reset(seed=0)
    assert np.all(np.isfinite(env.step(env.action_space.sample())[0]))
    EpidemicControlEnv(burn_in=100).reset(seed=0)


# ---------------------------------------------------------------- D: the open items of the last round
def test_loading_a_zip_with_the_wrong_class_names_both(tmp_path) -> None:
    FairPPO("MlpPolicy", "CartPole-v1", n_steps=64, fairness_coef=0.0).save(tmp_path / "fppo.zip")
    FairDQN("MlpPolicy", "CartPole-v1").save(tmp_path / "fdqn.zip")
    PPO("MlpPolicy", "CartPole-v1", n_steps=64).save(tmp_path / "ppo.zip")
    with pytest.raises(ValueError, match=r"FairDQN.load: the zip .*fppo.zip' was saved by FairPPO, whose policy "
                                         r"ActorCriticPolicy \(PPO / A2C\) FairDQN cannot use .* load it with FairPPO.load"):
        FairDQN.load(tmp_path / "fppo.zip")
    with pytest.raises(ValueError, match=r"FairPPO.load: the zip .* was saved by FairDQN"):
        FairPPO.load(str(tmp_path / "fdqn"))  # SB3's load adds the .zip suffix
    with pytest.raises(ValueError, match=r"FairDQN.load: the zip .* was saved by an SB3 PPO / A2C model"):
        FairDQN.load(tmp_path / "ppo.zip")
    # the parent's zip loads into its Fair class, and a file-like object is read from where it stands
    assert type(FairPPO.load(tmp_path / "ppo.zip")) is FairPPO
    with open(tmp_path / "fppo.zip", "rb") as f:
        assert FairPPO.load(f)._saved_by == "FairPPO"


@pytest.mark.parametrize("kwargs, message", [
    ({"names": "ab", "groups": [0, 1]}, r"stakeholders: names must be a sequence of names, one per stakeholder .* not a string: got 'ab'"),
    ({"names": ("a", "b"), "groups": "01"}, r"stakeholders: groups must be a sequence of ints, one per stakeholder, not a string: got .01."),
    ({"names": ("a", "b"), "groups": [0, 1], "factors": "01"}, r"stakeholders: factors must be a sequence of ints, one per stakeholder, not a string"),
    ({"names": ("a", "b"), "groups": [0, 1], "group_names": "AB"}, r"stakeholders: group_names must be a dict"),
    ({"names": ("a", "b", "a"), "groups": [0, 1, 0]}, r"stakeholders: names must be distinct .* got \['a'\] more than once"),
    ({"names": ("a", "b"), "groups": [0, -3]}, r"stakeholders: groups must be ints >= 0 .* got \[0, -3\]"),
])
def test_stakeholders_refuse_a_string_where_a_sequence_is_meant(kwargs, message) -> None:
    with pytest.raises(ValueError, match=message):
        Stakeholders(**kwargs)
    assert Stakeholders(names=["ab", "c"], groups=[0, 1]).names == ("ab", "c")


def test_group_contrasts_twins_out_of_range() -> None:
    for twins, bad in (([1, 2], r"stakeholder 1 has twin 2"), ([-1, 0], r"stakeholder 0 has twin -1")):
        with pytest.raises(ValueError, match=rf"twins must be indices of stakeholders in \[0, 1\] .*{bad}"):
            M.group_contrasts([0, 1], "cf", twins=twins)
    np.testing.assert_array_equal(M.group_contrasts([0, 1], "cf", twins=[1, 0]), [[1.0, -1.0]])
    # twins that are not a pairing gave a penalty of 0 (each agent its own twin) or a lopsided one
    for twins, bad in (([1, 1, 3, 3], "stakeholder 0 has twin 1, whose twin is 1"), ([0, 1, 2, 3], "stakeholder 0 has twin 0")):
        with pytest.raises(ValueError, match=rf"twins must pair the stakeholders .*{bad}"):
            M.group_contrasts([0, 1, 0, 1], "cf", twins=twins)


def test_metrics_out_of_their_domain_raise_and_the_monitor_leaves_them_out(caplog) -> None:
    with pytest.raises(ValueError, match=r"log_nash needs every u_i > -1 .*got \[-1.0, 2.0\]"):
        M.log_nash([-1.0, 2.0])
    with pytest.raises(ValueError, match=r"gini needs non-negative utilities \(every u_i >= 0\), got \[-0.5, 2.0\]"):
        M.gini([-0.5, 2.0])
    out = episode_figures([-2.0, 1.0, 3.0], [0, 1, 2])
    assert "log_nash" not in out and "gini" not in out and out["utilitarian"] == 2.0
    assert "gini" not in episode_figures([-0.5, 1.0], [0, 1]) and "log_nash" in episode_figures([-0.5, 1.0], [0, 1])

    monitor = FairnessMonitor(DonutAllocationEnv(n_customers=2))
    with caplog.at_level(logging.WARNING, logger="sb3_fair"):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a notice through logging: warnings-as-errors never stops training
            for _ in range(3):
                summary = monitor.summary(np.array([-2.0, 4.0]))
    assert not any(np.isnan(v) for k, v in summary.items() if k != "returns")
    assert "gini" not in summary and "log_nash" not in summary
    said = [r.getMessage() for r in caplog.records]
    assert sum("'gini'" in m and "not meaningful for negative returns" in m for m in said) == 1
    assert sum("'log_nash'" in m and "undefined for a return <= -1" in m for m in said) == 1


def test_after_a_failed_finish_the_next_model_starts_a_new_run(tmp_path, monkeypatch) -> None:
    """The finish raises before W&B lets the run go: the next model must not join the stale run."""
    wandb = pytest.importorskip("wandb")
    from wandb.sdk.wandb_run import Run

    from sb3_fair.common import logging as fair_logging
    from sb3_fair.envs import make_donut_allocation

    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path))
    monkeypatch.setattr(fair_logging, "_ONLINE_FAILED", False)
    monkeypatch.setattr(fair_logging, "_STALE_RUNS", [])
    small = dict(learning_starts=50, buffer_size=1000, batch_size=16, train_freq=4, target_update_interval=100)
    original = Run.finish

    def broken_finish(self, *args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(Run, "finish", broken_finish)
    first = FairDQN("MlpPolicy", make_donut_allocation(), wandb={"dir": str(tmp_path)}, **small)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first.learn(100)
    stale = first.fairness_callback.wandb_run
    assert any("could not finish the run" in str(w.message) and "the next model starts a new run" in str(w.message)
               for w in caught)
    assert fair_logging.active_wandb_run() is None and wandb.run is None
    monkeypatch.setattr(Run, "finish", original)
    second = FairDQN("MlpPolicy", make_donut_allocation(), wandb={"dir": str(tmp_path)}, **small)
    second.learn(100)
    fresh = second.fairness_callback.wandb_run
    assert fresh is not None and fresh is not stale and fresh.id != stale.id
    assert fresh._is_finished, "the model that started the run finished it"
    # train() starts one run and its model joins it, also once a run is stale (W&B does not make a run started
    # beside a stale one its wandb.run): one more run folder per train()
    from sb3_fair.experiment import ExperimentConfig, train

    monkeypatch.setattr(fair_logging, "_CREATED_RUN", None, raising=False)
    before = len(list((tmp_path / "wandb").glob("offline-run-*")))
    train(ExperimentConfig(algo="fair_dqn", env="sb3_fair/DonutAllocation-v0", hyperparams={"policy": "MlpPolicy", **small},
                           n_timesteps=100, eval_episodes=1, wandb={"dir": str(tmp_path)}, trusted=True))  # tmp_path: outside
    assert len(list((tmp_path / "wandb").glob("offline-run-*"))) == before + 1
    original(stale)


class _NanResetSignal(gym.Wrapper):
    """Δs of NaN in the reset info (the value the first step's change is taken from)."""

    def reset(self, **kwargs: Any) -> Any:
        obs, info = self.env.reset(**kwargs)
        return obs, {**info, SHORT_TERM_FAIRNESS: float("nan")}


def test_a_non_finite_reset_signal_is_refused_like_a_steps() -> None:
    """The tracker reads Δs/Δl of the reset info with the same check as every step's (a NaN there used to be read as
    'no reset value', an inf failed only at the update)."""
    model = FairPPO("MlpPolicy", _NanResetSignal(DelayedImpactLendingEnv(horizon=50)), fairness="long_term", n_steps=32,
                    batch_size=32, seed=0)
    with pytest.raises(ValueError, match=r"info\['short_term_fairness'\] of sub-env 0 must be a finite number .* got nan"):
        model.learn(32)
    assert model.num_timesteps == 0


@pytest.mark.parametrize("call", [
    lambda: AttentionAllocationEnv(decrease_rate=10**400),
    lambda: FairPPO("MlpPolicy", "CartPole-v1", ent_coef=0.0, fairness_coef=10**400),
])
def test_integers_beyond_floats_range_are_named_not_an_overflow_error(call) -> None:
    with pytest.raises(ValueError, match=r"must be a (finite )?number"):
        call()
