"""Wrappers on any env that honours the stakeholder contract."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces

from sb3_fair import Stakeholders
from sb3_fair.common.fairqcm.memory import MemorySpec, counterfactual_memories, decode_memory, encode_memory, update_memory
from sb3_fair.envs import DonutAllocationEnv, LoanApplicantsEnv
from sb3_fair.wrappers import FairnessMonitor, FairnessReward, MemoryAugmentation


class ScriptedEnv(gym.Env):
    """Three stakeholders (groups 1, 0, 0); action i gives stakeholder i one unit; T steps."""

    metadata = {"render_modes": []}

    def __init__(self, horizon: int = 6, with_benefits: bool = True, factors=None, bad_benefit=None):
        self.stakeholders = Stakeholders(names=("a", "b", "c"), groups=np.array([1, 0, 0]), factors=factors)
        self.bad_benefit = bad_benefit  # (step, stakeholder index, value) reported instead of the real benefit
        self.observation_space = spaces.Box(0, 1, (2,), np.float32)
        self.action_space = spaces.Discrete(3)
        self.horizon = horizon
        self.with_benefits = with_benefits

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(2, np.float32), {}

    def step(self, action):
        self.t += 1
        b = np.zeros(3)
        b[int(action)] = 1.0
        if self.bad_benefit is not None and self.t == self.bad_benefit[0]:
            b[self.bad_benefit[1]] = self.bad_benefit[2]
        info = {"benefits": b} if self.with_benefits else {}
        return np.ones(2, np.float32), 0.5, self.t >= self.horizon, False, info


def run(env, actions):
    env.reset(seed=0)
    out = []
    for a in actions:
        out.append(env.step(a))
    return out


# ---------------------------------------------------------------- memory
@pytest.mark.parametrize(
    "kind, expected",
    [("full", [[1, 0, 0], [1, 1, 0], [1, 1, 1], [2, 1, 1]]),
     ("min", [[1, 0, 0], [1, 1, 0], [0, 0, 0], [1, 0, 0]]),
     ("reset", [[1, 0, 0], [1, 1, 0], [0, 0, 0], [1, 0, 0]])],
)
def test_memory_kinds(kind, expected):
    env = MemoryAugmentation(ScriptedEnv(), kind=kind)
    steps = run(env, [0, 1, 2, 0])
    for (obs, *_rest, info), exp in zip(steps, expected):
        np.testing.assert_array_equal(info["memory"], exp)
        np.testing.assert_array_equal(obs[2:5], exp)


def test_min_and_reset_differ():
    spec_min = MemorySpec(3, kind="min")
    spec_reset = MemorySpec(3, kind="reset")
    m = np.array([1.0, 1.0, 0.0])
    np.testing.assert_array_equal(update_memory(spec_min, m, [1, 0, 0]), [2, 1, 0])
    np.testing.assert_array_equal(update_memory(spec_reset, [1.0, 0.0, 0.0], [1, 0, 0]), [2, 0, 0])
    np.testing.assert_array_equal(update_memory(spec_min, [1.0, 0.0, 0.0], [0, 1, 1]), [0, 0, 0])


def test_per_group_memory_and_period_counter():
    env = MemoryAugmentation(ScriptedEnv(), per_group=True, period=3)
    steps = run(env, [0, 1, 2, 1])
    obs, *_rest, info = steps[-1]
    # groups sorted: 0 -> b, c ; 1 -> a
    np.testing.assert_array_equal(info["memory"], [3, 1])
    np.testing.assert_array_equal(obs[4:], [0, 1, 0])  # t = 4 -> 4 mod 3 = 1
    assert env.observation_space.shape == (2 + 2 + 3,)


@pytest.mark.parametrize("encoding", ["raw", "scaled", "binary"])
def test_encodings_round_trip(encoding):
    spec = MemorySpec(3, encoding=encoding, max_value=100)
    m = np.array([[0.0, 37.0, 100.0], [5.0, 6.0, 64.0]])
    enc = encode_memory(spec, m)
    assert enc.shape == (2, spec.encoded_size)
    np.testing.assert_allclose(decode_memory(spec, enc), m, atol=1e-4)
    if encoding == "binary":
        assert spec.n_bits == 7  # as in the paper's code for T = 100
        np.testing.assert_array_equal(enc[0, 7:14], [0, 1, 0, 0, 1, 0, 1])  # 37
        with pytest.raises(ValueError, match="binary"):
            encode_memory(spec, [0.5, 0, 0])


def test_memory_env_passes_checkers():
    from gymnasium.utils.env_checker import check_env
    from stable_baselines3.common.env_checker import check_env as sb3_check

    env = MemoryAugmentation(DonutAllocationEnv(), kind="min", encoding="binary")
    check_env(env, skip_render_check=True)
    sb3_check(env)


def test_counterfactual_memories_default_set():
    spec = MemorySpec(5, max_value=100)
    m = np.array([0.0, 3, 1, 2, 0])
    cf = counterfactual_memories(spec, m)
    assert cf.shape == (32, 5)
    assert np.all((cf > m) & (cf <= m + 2))
    # entries at the horizon are dropped; the real memory is never in the set
    spec3 = MemorySpec(3, max_value=4)
    cf3 = counterfactual_memories(spec3, np.array([2.0, 2.0, 0.0]))
    assert np.all(cf3 < 4) and len(cf3) == 2
    spec_min = MemorySpec(2, kind="min")
    cf_min = counterfactual_memories(spec_min, np.array([0.0, 1.0]), (0, 1))
    assert not any(np.array_equal(row, [0.0, 1.0]) for row in cf_min)
    # sampling k members for large n
    big = MemorySpec(12, max_value=1000)
    sampled = counterfactual_memories(big, np.zeros(12), max_members=16, rng=np.random.default_rng(0))
    assert 0 < len(sampled) <= 16 and np.all((sampled >= 1) & (sampled <= 2))


def test_memory_bad_input():
    with pytest.raises(ValueError, match="memory kind"):
        MemoryAugmentation(ScriptedEnv(), kind="everything")
    with pytest.raises(ValueError, match="encoding"):
        MemoryAugmentation(ScriptedEnv(), encoding="hex")
    with pytest.raises(ValueError, match="stakeholder contract"):
        MemoryAugmentation(gym.make("CartPole-v1"))
    with pytest.raises(ValueError, match="benefits"):
        run(MemoryAugmentation(ScriptedEnv(with_benefits=False)), [0])


# ---------------------------------------------------------------- fairness reward
def test_fairness_reward_log_nash_anytime():
    env = FairnessReward(ScriptedEnv(), welfare="log_nash")
    rewards = [s[1] for s in run(env, [0, 1, 2])]
    np.testing.assert_allclose(rewards, [np.log(2), 2 * np.log(2), 3 * np.log(2)])


def test_fairness_reward_schemes():
    rl = [s[1] for s in run(FairnessReward(ScriptedEnv(horizon=4), welfare="parity", scheme="long_term"), [0, 1, 2, 0])]
    assert rl == [0, 0, 0, -1.0]
    rp = [s[1] for s in run(FairnessReward(ScriptedEnv(), welfare="parity", scheme="periodic", period=2), [0, 0, 1, 2])]
    assert rp == [0, -2.0, 0, -1.0]
    only_a = lambda t, benefits, info: bool(benefits[0] > 0)  # noqa: E731
    rb = [s[1] for s in run(FairnessReward(ScriptedEnv(), welfare="utilitarian", scheme="bounded", filter=only_a), [0, 1, 0])]
    assert rb == [1.0, 0.0, 3.0]


def test_fairness_reward_group_aggregate_and_task_reward():
    env = FairnessReward(ScriptedEnv(), welfare="parity", aggregate="group", task_coef=2.0, fairness_coef=0.5)
    steps = run(env, [1, 2, 0])
    # group totals (0: b+c, 1: a): (1,0) -> -1 ; (2,0) -> -2 ; (2,1) -> -1 ; plus 2 * 0.5 task reward
    np.testing.assert_allclose([s[1] for s in steps], [0.5, 0.0, 0.5])
    assert steps[-1][-1]["fairness_terms"]["task_reward"] == 0.5


def test_paper_rewards_reproduced():
    from sb3_fair.envs import make_donut_allocation, make_loan_applicants

    env = make_donut_allocation()
    env.reset(seed=0)
    base = env.unwrapped
    for _ in range(50):
        a = int(np.argmax(base.present)) if base.present.any() else 0
        delivered = bool(base.present[a])
        _, r, *_rest, info = env.step(a)
        assert r == pytest.approx(np.sum(np.log(base.counts + 1.0)) if delivered else 0.0)
    env = make_loan_applicants()
    env.reset(seed=0)
    base = env.unwrapped
    loans = np.zeros(4)
    for t in range(40):
        applicants = np.flatnonzero(base.applied)
        a = int(applicants[0]) if applicants.size else 0
        valid = bool(base.applied[a])
        _, r, term, trunc, info = env.step(a)
        assert not term and trunc == (t == 39)
        loans[a] += valid
        expected = -abs(loans[:2].sum() - loans[2:].sum()) if valid else -40.0
        if trunc and base.profit < 4:
            expected -= 400.0
        assert r == pytest.approx(expected)


def test_fairness_reward_bad_input():
    with pytest.raises(ValueError, match="welfare"):
        FairnessReward(ScriptedEnv(), welfare="joy")
    with pytest.raises(ValueError, match="scheme"):
        FairnessReward(ScriptedEnv(), scheme="weekly")
    with pytest.raises(ValueError, match="filter"):
        FairnessReward(ScriptedEnv(), scheme="bounded")
    with pytest.raises(ValueError, match="fairness_coef"):
        FairnessReward(ScriptedEnv(), fairness_coef=-1)
    with pytest.raises(ValueError, match="task_coef"):
        FairnessReward(ScriptedEnv(), task_coef=float("nan"))


# ---------------------------------------------------------------- monitor
def test_monitor_reports_fairness_at_episode_end():
    env = FairnessMonitor(ScriptedEnv(horizon=4, factors=np.array([0, 0, 1])))
    steps = run(env, [0, 0, 1, 2])
    assert all("fairness" not in s[-1] for s in steps[:-1])
    f = steps[-1][-1]["fairness"]
    np.testing.assert_array_equal(f["returns"], [2, 1, 1])
    assert (f["group_0_mean"], f["group_1_mean"]) == (1.0, 2.0)
    assert f["dp"] == 1.0 and f["dp_abs"] == 1.0
    assert f["utilitarian"] == 4.0 and f["egalitarian"] == 1.0
    assert f["csp_mean"] == 1.0 and f["csp_mean_abs"] == 1.0  # only stratum 0 holds both groups: a (2) vs b (1)
    assert f["gini"] == pytest.approx(1 / 6)


def test_monitor_custom_metrics_and_bad_names():
    env = FairnessMonitor(ScriptedEnv(horizon=2), metrics={"top": lambda r, sh: float(r.max())})
    assert run(env, [0, 0])[-1][-1]["fairness"]["top"] == 2.0
    with pytest.raises(ValueError, match="unknown figure 'happiness'; accepted values"):
        FairnessMonitor(ScriptedEnv(), metrics=["happiness"])
    only = FairnessMonitor(ScriptedEnv(horizon=2), metrics=["dp_abs"])
    assert set(run(only, [0, 0])[-1][-1]["fairness"]) == {"returns", "dp_abs"}


def test_monitor_skips_group_metrics_without_two_groups():
    donut = FairnessMonitor(DonutAllocationEnv()).summary(np.arange(5.0))
    assert "dp" not in donut and "group_gap" in donut  # five stakeholders, each a group of their own
    assert "dp" in FairnessMonitor(LoanApplicantsEnv()).summary(np.arange(4.0))


def test_stakeholders_validation():
    with pytest.raises(ValueError, match="groups"):
        Stakeholders(names=("a", "b"), groups=np.array([0]))
    with pytest.raises(ValueError, match="integers"):
        Stakeholders(names=("a", "b"), groups=np.array([0.5, 1.0]))


def test_more_bad_input_is_caught_early():
    from sb3_fair import metrics as M

    with pytest.raises(ValueError, match="welfare_kwargs"):
        FairnessReward(ScriptedEnv(), welfare="alpha_fair", welfare_kwargs={"alhpa": 2})
    with pytest.raises(ValueError, match="welfare_kwargs"):
        FairnessReward(ScriptedEnv(), welfare="alpha_fair", welfare_kwargs={"alpha": -1})
    with pytest.raises(ValueError, match="choose another name"):
        FairnessMonitor(ScriptedEnv(), metrics={"returns": lambda r, sh: 0.0})
    with pytest.raises(ValueError, match="non-empty"):
        M.fairness_score(np.zeros((0, 3)), scheme="long_term")
    with pytest.raises(ValueError, match="one row per agent"):
        M.demographic_parity_pairwise([1, 2, 3, 4], [1, 1, 0, 0], attributes=[0, 1])


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("wrap", [FairnessMonitor, MemoryAugmentation, FairnessReward])
def test_non_finite_benefits_fail_at_that_step_naming_env_and_stakeholder(wrap, bad):
    """A NaN or inf benefit would enter the memory, the reward and the figures: it is an error at that step."""
    env = wrap(ScriptedEnv(bad_benefit=(3, 1, bad)))
    env.reset(seed=0)
    env.step(0)
    env.step(1)
    with pytest.raises(ValueError, match=r"info\['benefits'\] of env ScriptedEnv must be finite: stakeholder 'b' \(index 1\)"):
        env.step(2)


def test_wrappers_record_their_arguments_so_the_spec_rebuilds_the_same_env() -> None:
    """MemoryAugmentation and FairnessReward are RecordConstructorArgs wrappers: ``env.spec`` lists them with their
    arguments, and ``gym.make(env.spec)`` builds the same stack, which steps like the original."""
    # a registered bare env (the sb3_fair/DonutAllocation ids already include both wrappers: a second is refused)
    if "test/BareDonutTabular-v0" not in gym.registry:
        gym.register("test/BareDonutTabular-v0", entry_point="sb3_fair.envs.donut:DonutAllocationEnv",
                     kwargs={"n_customers": 3, "horizon": 12})
    base = gym.make("test/BareDonutTabular-v0")
    env = FairnessReward(MemoryAugmentation(base, kind="min", encoding="scaled", period=3), welfare="utilitarian",
                         scheme="periodic", period=3, task_coef=0.5)
    recorded = env.spec.additional_wrappers[-2:]
    assert [w.name for w in recorded] == ["MemoryAugmentation", "FairnessReward"]
    assert recorded[0].kwargs == {"kind": "min", "per_group": False, "encoding": "scaled", "max_value": None, "period": 3,
                                  "dict_observation": False}
    assert recorded[1].kwargs["welfare"] == "utilitarian" and recorded[1].kwargs["task_coef"] == 0.5
    again = gym.make(env.spec)
    assert str(again) == str(env)
    obs, _ = env.reset(seed=3)
    obs_again, _ = again.reset(seed=3)
    np.testing.assert_array_equal(obs, obs_again)
    rng = np.random.default_rng(0)
    for _ in range(12):
        action = int(rng.integers(env.action_space.n))
        step, step_again = env.step(action), again.step(action)
        np.testing.assert_array_equal(step[0], step_again[0])
        assert step[1:4] == step_again[1:4]
        if step[2] or step[3]:
            break


def test_fairness_reward_is_a_plain_wrapper() -> None:
    """Its reward needs the step's info and the status kept across steps, which RewardWrapper.reward(r) does not see."""
    assert issubclass(FairnessReward, gym.Wrapper) and not issubclass(FairnessReward, gym.RewardWrapper)
    assert issubclass(MemoryAugmentation, gym.ObservationWrapper)


def test_the_monitor_and_the_terminal_horizon_record_their_arguments_too() -> None:
    from sb3_fair.envs.horizon import TerminalHorizon

    env = TerminalHorizon(FairnessMonitor(gym.make("sb3_fair/LoanApplicants-v0"), metrics=["gini", "dp"]))
    monitor, horizon = env.spec.additional_wrappers[-2:]
    assert (monitor.name, monitor.kwargs, horizon.name, horizon.kwargs) == ("FairnessMonitor", {"metrics": ["gini", "dp"]},
                                                                           "TerminalHorizon", {})
    assert str(gym.make(env.spec)) == str(env)
