"""Hardening, round 2 (issue 26): settings that were silently ignored or silently changed the method are refused.

* CSP / CF on games whose infos lack the factor / twin (CSP became DP: every agent in one stratum);
* arguments the chosen mode does not use (the group penalty's under ``long_term`` / ``a_ppo``,
  ``delta`` / ``omega`` / ``regularization`` under another mode);
* ``from_preset`` with another case study's env;
* counterfactual offsets that can never give a counterfactual memory.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from stable_baselines3.common.env_util import make_vec_env

from sb3_fair import FairDQN, FairMaskablePPO, FairPPO, FairRecurrentPPO
from sb3_fair.common.fairqcm.memory import MemorySpec, counterfactual_memories
from sb3_fair.common.protocol import BENEFITS, group_info
from sb3_fair.common.validation import check_unused, env_class, is_default
from sb3_fair.common.fairqcm.mixin import usable_offsets
from sb3_fair.envs import (
    DelayedImpactLendingEnv,
    DisparityGame,
    DonutAllocationEnv,
    EpidemicControlEnv,
    LoanApplicantsEnv,
    make_donut_allocation,
    make_loan_applicants,
)
from sb3_fair.ppo.presets import ENV_IDS
from sb3_fair.wrappers import FairnessReward, MemoryAugmentation, make_multiagent_vec_env

KW = {"n_steps": 20, "batch_size": 40, "n_epochs": 1, "seed": 0}


# ---------------------------------------------------------------------------- 1. CSP / CF need the factor / twin
class NoFactor(DisparityGame):
    """Stakeholders declare factors, but no info carries one."""

    def _infos(self, benefits=None):
        extra = {} if benefits is None else {BENEFITS: benefits}
        return {a: {**group_info(g), **extra} for a, g in zip(self.agents, self.groups)}


class FactorAtResetOnly(DisparityGame):
    """The reset infos carry the factor (and a twin), the step infos only the group."""

    def _infos(self, benefits=None):
        if benefits is None:
            n = self.n_agents
            return {a: group_info(g, f, (i + n // 2) % n) for i, (a, g, f) in enumerate(zip(self.agents, self.groups, self.factors))}
        return {a: {**group_info(g), BENEFITS: benefits} for a, g in zip(self.agents, self.groups)}


def test_csp_without_factors_in_the_infos_is_refused_when_training_starts():
    model = FairPPO("MlpPolicy", make_multiagent_vec_env(NoFactor(n_agents=4), n_instances=2), **KW, fairness="csp")
    with pytest.raises(ValueError, match=r"fairness='csp' needs every agent's legitimate factor in its info \(info\['factor'\]\)"):
        model.learn(40)
    assert model.num_timesteps == 0  # refused from the reset infos, before any step


def test_csp_factor_missing_at_a_step_is_refused_at_that_step():
    model = FairPPO("MlpPolicy", make_multiagent_vec_env(FactorAtResetOnly(n_agents=4), n_instances=2), **KW, fairness="csp")
    with pytest.raises(ValueError, match=r"CSP would silently become DP"):
        model.learn(40)


def test_cf_twin_missing_at_a_step_is_refused_at_that_step():
    model = FairPPO("MlpPolicy", make_multiagent_vec_env(FactorAtResetOnly(n_agents=4), n_instances=2), **KW, fairness="cf")
    with pytest.raises(ValueError, match=r"fairness='cf' needs a counterfactual twin for every agent \(info\['twin'\]"):
        model.learn(40)


@pytest.mark.parametrize("game", [NoFactor, FactorAtResetOnly])
def test_dp_still_trains_on_games_without_factors(game):
    model = FairPPO("MlpPolicy", make_multiagent_vec_env(game(n_agents=4), n_instances=2), **KW, fairness="dp").learn(40)
    assert model.num_timesteps == 160  # one rollout: 20 steps x 8 slots


def test_csp_with_factors_still_trains_and_uses_them():
    model = FairPPO("MlpPolicy", make_multiagent_vec_env(DisparityGame(n_agents=4), n_instances=2), **KW, fairness="csp")
    model.learn(40)
    np.testing.assert_array_equal(model.fairness_term.tracker.factors[0], np.arange(8) % 2)  # DisparityGame: factor = index parity


# ---------------------------------------------------------------------------- 2. arguments the mode does not use
UNUSED = [
    # (fairness, argument, value, the mode that uses it, as the message says)
    ("long_term", "alpha", 0.9, "fairness='dp', 'csp' or 'cf'"),
    ("long_term", "beta", 0.0, "fairness='dp', 'csp' or 'cf'"),
    ("a_ppo", "protected_group", 0, "fairness='dp', 'csp' or 'cf'"),
    ("a_ppo", "agents_per_instance", 4, "fairness='dp', 'csp' or 'cf'"),
    ("dp", "delta", 0.1, "fairness='long_term'"),
    ("csp", "delta", 0.1, "fairness='long_term'"),
    ("a_ppo", "delta", 0.1, "fairness='long_term'"),
    ("cf", "omega", 0.2, "fairness='a_ppo'"),
    ("long_term", "omega", 0.2, "fairness='a_ppo'"),
    ("dp", "regularization", "literal", "fairness='long_term' or 'a_ppo'"),
]


@pytest.mark.parametrize("cls, policy", [(FairPPO, "MlpPolicy"), (FairMaskablePPO, "MlpPolicy"), (FairRecurrentPPO, "MlpLstmPolicy")],
                         ids=["FairPPO", "FairMaskablePPO", "FairRecurrentPPO"])
@pytest.mark.parametrize("fairness, name, value, used_with", UNUSED, ids=[f"{c[1]}-with-{c[0]}" for c in UNUSED])
def test_an_argument_the_mode_ignores_is_refused_at_construction(cls, policy, fairness, name, value, used_with):
    message = (f"{name}={value!r} is not used with fairness={fairness!r}: only {used_with} uses it; "
               f"leave {name} out or choose {used_with}")
    with pytest.raises(ValueError, match=f"^{__import__('re').escape(message)}$"):
        cls(policy, "CartPole-v1", fairness=fairness, **{name: value})


def test_an_ignored_argument_left_at_its_default_passes_and_the_used_ones_are_kept():
    """Defaults given explicitly (what Class.load and drop-in code pass) are accepted; each mode keeps its own arguments."""
    FairPPO("MlpPolicy", "CartPole-v1", fairness="long_term", alpha=0.5, beta=0.5, protected_group=1, agents_per_instance=None,
            omega=0.05)
    FairPPO("MlpPolicy", "CartPole-v1", fairness="dp", fairness_coef=0.0, delta=0.05, omega=np.float64(0.05), regularization="scaled")
    lt = FairPPO("MlpPolicy", "CartPole-v1", fairness="long_term", fairness_coef=0.0, delta=0.2, regularization="literal")
    assert (lt.delta, lt.regularization, lt.fairness) == (0.2, "literal", "long_term")
    ap = FairPPO("MlpPolicy", "CartPole-v1", fairness="a_ppo", omega=0.3)
    assert ap.omega == 0.3
    dp = FairPPO("MlpPolicy", "CartPole-v1", fairness="dp", fairness_coef=0.0, alpha=0.1, beta=0.2, protected_group=0)
    assert (dp.alpha, dp.beta, dp.protected_group) == (0.1, 0.2, 0)


def test_bad_values_are_still_named_before_the_mode_is_considered():
    with pytest.raises(ValueError, match=r"delta must be a finite number >= 0, got -1"):
        FairPPO("MlpPolicy", "CartPole-v1", fairness="dp", delta=-1)
    with pytest.raises(ValueError, match=r"regularization must be one of \['scaled', 'literal'\]"):
        FairPPO("MlpPolicy", "CartPole-v1", fairness="dp", regularization="raw")


@pytest.mark.parametrize("kwargs", [{"fairness": "long_term", "delta": 0.2, "regularization": "literal"}, {"fairness": "a_ppo", "omega": 0.3}])
def test_load_still_works_for_every_mode(tmp_path, kwargs):
    """SB3's load builds the class with its defaults, then restores the saved attributes."""
    model = FairPPO("MlpPolicy", "CartPole-v1", n_steps=16, batch_size=16, **kwargs)
    model.save(tmp_path / "m")
    loaded = FairPPO.load(tmp_path / "m")
    assert loaded.fairness_config() == model.fairness_config()


def test_is_default_and_check_unused():
    assert is_default(0.5, 0.5) and is_default(np.float32(0.5), 0.5) and is_default(None, None) and is_default("a", "a")
    assert is_default((1, 2), (1.0, 2.0)) and not is_default((1, 2, 3), (1.0, 2.0))
    assert not is_default(None, 1) and not is_default(0, None) and not is_default("1", 1) and not is_default([1], 1)
    check_unused("x", 1, 1, "mode='a'", "mode='b'")
    with pytest.raises(ValueError, match=r"^x=2 is not used with mode='a': only mode='b' uses it; leave x out or choose mode='b'$"):
        check_unused("x", 2, 1, "mode='a'", "mode='b'")


# ---------------------------------------------------------------------------- 2b. from_preset with another case study's env
class Shim(gym.Wrapper):
    """A user's own wrapper."""


@pytest.mark.parametrize("env_fn, shown", [
    (lambda: "sb3_fair/EpidemicControl-v0", r"'sb3_fair/EpidemicControl-v0' \(EpidemicControlEnv\)"),
    (lambda: EpidemicControlEnv(horizon=5), "EpidemicControlEnv"),
    (lambda: Shim(EpidemicControlEnv(horizon=5)), "EpidemicControlEnv"),
    (lambda: make_vec_env(EpidemicControlEnv, n_envs=2, env_kwargs={"horizon": 5}), "EpidemicControlEnv"),
], ids=["id", "env", "wrapped", "VecEnv"])
def test_fppo_preset_refuses_another_case_studys_env(env_fn, shown):
    message = (rf"name='delayed_impact_lending' is the preset of sb3_fair/DelayedImpactLending-v0 \(DelayedImpactLendingEnv\), but env is {shown}: "
               r"the preset's network, rollout length and massaging schedule \(tau\) belong to its own env, .*use name='epidemic'")
    with pytest.raises(ValueError, match=message):
        FairPPO.from_preset("delayed_impact_lending", env_fn())


def test_fppo_preset_refuses_any_other_sb3_fair_env():
    with pytest.raises(ValueError, match=r"name='attention' .* but env is DonutAllocationEnv: .*no preset is made for DonutAllocationEnv"):
        FairPPO.from_preset("attention", make_donut_allocation())


class MyLending(DelayedImpactLendingEnv):
    """A user's subclass of the right env."""


class Own(gym.Env):
    """A user's own env (the check cannot identify it)."""

    observation_space = gym.spaces.Box(0.0, 1.0, (3,), dtype=np.float32)
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(3, dtype=np.float32), {}

    def step(self, action):
        return np.zeros(3, dtype=np.float32), 0.0, False, True, {}


@pytest.mark.parametrize("env_fn", [lambda: ENV_IDS["delayed_impact_lending"], lambda: Shim(DelayedImpactLendingEnv(horizon=20)),
                                    lambda: make_vec_env(MyLending, n_envs=1, env_kwargs={"horizon": 20}), Own],
                         ids=["id", "user wrapper", "user subclass in a VecEnv", "user env"])
def test_fppo_preset_accepts_its_env_and_what_it_cannot_identify(env_fn):
    model = FairPPO.from_preset("delayed_impact_lending", env_fn(), variant="f_ppo_l", n_steps=16, batch_size=16)
    assert model.n_steps == 16


@pytest.mark.parametrize("name, env_fn, other", [
    ("donut", lambda: make_loan_applicants(), "loan_applicants"),
    ("donut", lambda: "sb3_fair/LoanApplicants-v0", "loan_applicants"),
    ("loan_applicants", lambda: make_donut_allocation(), "donut"),
    ("loan_applicants", lambda: make_vec_env(make_donut_allocation, n_envs=2), "donut"),
])
def test_dqn_preset_refuses_the_other_experiments_env(name, env_fn, other):
    with pytest.raises(ValueError, match=rf"name='{name}' is the preset of .* but env is .*: the preset's network, replay buffer.*"
                                         rf"use name='{other}'"):
        FairDQN.from_preset(name, env_fn(), counterfactual=True)


@pytest.mark.parametrize("name, env_fn", [("donut", lambda: "sb3_fair/DonutAllocationTabular-v0"),
                                          ("loan_applicants", lambda: gym.make("sb3_fair/LoanApplicantsGaussian-v0", memory="min"))])
def test_dqn_preset_accepts_variants_of_its_own_task(name, env_fn):
    from sb3_fair.dqn import preset_kwargs

    model = FairDQN.from_preset(name, env_fn(), counterfactual=True)
    expected = preset_kwargs(name, True)
    assert model.counterfactual and (model.batch_size, model.buffer_size) == (expected["batch_size"], expected["buffer_size"])


def test_env_class_identifies_ids_envs_and_vec_envs():
    assert env_class("sb3_fair/DonutAllocation-v0") is DonutAllocationEnv  # a factory id
    assert env_class("sb3_fair/LoanApplicants-v0") is LoanApplicantsEnv
    assert env_class("sb3_fair/EpidemicControl-v0") is EpidemicControlEnv
    assert env_class("no/SuchEnv-v0") is None
    assert env_class(FairnessReward(MemoryAugmentation(DonutAllocationEnv()))) is DonutAllocationEnv
    assert env_class(make_vec_env(Own, n_envs=1)) is Own


# ---------------------------------------------------------------------------- 2c. counterfactual offsets that can never be used
@pytest.mark.parametrize("offsets", [(1e9,), (-1e9,), (0, 100), (100, 250)], ids=["1e9", "-1e9", "0 and horizon", "beyond horizon"])
def test_offsets_outside_the_memory_range_are_refused_at_construction(offsets):
    """The doughnut memory (binary, max_value = horizon 100): a counterfactual keeps every entry in [0, 100)."""
    message = (rf"counterfactual_offsets {__import__('re').escape(str(tuple(float(o) for o in offsets)))} give no counterfactual "
               r"memory on this env: its memory entries lie in \[0, 100\] \(max_value\) .* strictly between -100 and 100")
    with pytest.raises(ValueError, match=message):
        FairDQN("MlpPolicy", make_donut_allocation(), counterfactual=True, counterfactual_offsets=offsets)
    spec = MemorySpec(5, encoding="binary", max_value=100)
    for memory in (np.zeros(5), np.full(5, 50.0), np.full(5, 99.0), np.arange(5.0) * 20):
        assert len(counterfactual_memories(spec, memory, tuple(float(o) for o in offsets))) == 0  # indeed none, ever


def test_offsets_outside_a_raw_memorys_range_are_refused():
    env = FairnessReward(MemoryAugmentation(DonutAllocationEnv(horizon=10), encoding="raw"), welfare="nash")
    with pytest.raises(ValueError, match=r"counterfactual_offsets \(10.0, 20.0\) give no counterfactual memory on this env: .*"
                                         r"only offsets below 10 can be used"):
        FairDQN("MlpPolicy", env, counterfactual=True, counterfactual_offsets=(10, 20))
    FairDQN("MlpPolicy", env, counterfactual=True, counterfactual_offsets=(-3, 9))  # a raw memory takes negative entries


def test_min_memory_needs_two_distinct_usable_offsets():
    env = make_loan_applicants(memory="min")
    horizon = env.unwrapped.horizon
    with pytest.raises(ValueError, match=rf"the single offset \(1.0,\) \(of counterfactual_offsets \(1.0, {float(10 * horizon)}\), .*"
                                         r"counterfactual_offsets needs two distinct values"):
        FairDQN("MlpPolicy", env, counterfactual=True, counterfactual_offsets=(1, 10 * horizon))


@pytest.mark.parametrize("offsets", [(float("nan"),), (1, float("inf")), ("a", 1), (True, 2), (1, None)])
@pytest.mark.parametrize("counterfactual", [True, False])
def test_non_finite_or_non_number_offsets_are_refused(offsets, counterfactual):
    with pytest.raises(ValueError, match=r"counterfactual_offsets must be a tuple of finite numbers, got"):
        FairDQN("MlpPolicy", make_donut_allocation(), counterfactual=counterfactual, counterfactual_offsets=offsets)


def test_usable_offsets_and_the_productive_ones_pass():
    assert usable_offsets(MemorySpec(3, encoding="binary", max_value=10), (0.0, 1.0, 10.0, -10.0, -9.0))[0] == (0.0, 1.0, -9.0)
    assert usable_offsets(MemorySpec(3, encoding="raw", max_value=10), (-50.0, 9.0, 10.0))[0] == (-50.0, 9.0)
    assert usable_offsets(MemorySpec(3), (1e9,))[0] == (1e9,)  # no max_value: nothing to tell
    model = FairDQN("MlpPolicy", make_donut_allocation(), counterfactual=True, counterfactual_offsets=(1, 1e9))
    assert model.counterfactual_offsets == (1.0, 1e9)  # 1 gives counterfactuals; 1e9 none, which is allowed


def test_offsets_without_counterfactual_replay_are_accepted_with_a_warning():
    """Warned, not refused: a config (e.g. the shipped lending entry in a sweep over counterfactual=true,false) toggles the
    replay and keeps its counterfactual settings; paper 003's ablation adds exploration_decay to presets that set
    exploration_fraction."""
    import warnings

    with pytest.warns(UserWarning, match=r"FairDQN does not use counterfactual_offsets=\(0, 1, 2\) \(only counterfactual=True uses "
                                         r"it\); max_counterfactuals=None \(only counterfactual=True uses it\)"):
        model = FairDQN("MlpPolicy", make_donut_allocation(), counterfactual=False, counterfactual_offsets=(0, 1, 2),
                        max_counterfactuals=None)
    assert not model.counterfactual
    with pytest.warns(UserWarning, match=r"exploration_fraction=0.5 \(exploration_decay replaces SB3's linear schedule\)"):
        FairDQN("MlpPolicy", make_donut_allocation(), exploration_decay=0.999, exploration_fraction=0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        FairDQN("MlpPolicy", make_donut_allocation(), counterfactual=True, counterfactual_offsets=(0, 1, 2))
        FairDQN("MlpPolicy", make_donut_allocation(), counterfactual=False, counterfactual_offsets=(1.0, 2.0))
