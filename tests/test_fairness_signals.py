"""Δs, Δl and a cost from the stakeholder contract alone (FairnessSignals): F-PPO, A-PPO and CPO on envs sb3-fair did
not write (a Gymnasium env of the test's, MO-Gymnasium's fishwood, a PettingZoo game), and CPO on an env's own cost."""

from __future__ import annotations

import copy
import pickle

import cloudpickle
import gymnasium as gym
import numpy as np
import pytest
from stable_baselines3.common.callbacks import BaseCallback

from sb3_fair import CPO, FairPPO, Stakeholders
from sb3_fair.common.protocol import (
    BENEFITS,
    COST,
    GROUP,
    LONG_TERM_FAIRNESS,
    SHORT_TERM_FAIRNESS,
    get_costs,
    is_cost_supported,
)
from sb3_fair.envs import AttentionAllocationEnv, DisparityGame
from sb3_fair.metrics import BENEFIT_GAPS, benefit_gap, demographic_parity, demographic_parity_norm
from sb3_fair.wrappers import DeclareStakeholders, FairnessSignals, ParallelFairnessSignals, make_multiagent_vec_env

PPO_KW = dict(n_steps=64, batch_size=32, n_epochs=1, seed=0)


class Scripted(gym.Env):
    """Hands out the rows of ``benefits`` in turn (the episode ends after the last); stakeholders on the bare env."""

    observation_space = gym.spaces.Box(0.0, 1.0, (1,), dtype=np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, benefits, groups=(0, 1), cost=None):
        self.rows = np.asarray(benefits, dtype=np.float64)
        self.stakeholders = Stakeholders(names=tuple(f"s{i}" for i in range(len(groups))), groups=np.array(groups))
        self.cost, self.t = cost, 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(1, dtype=np.float32), {}

    def step(self, action):
        info = {BENEFITS: self.rows[self.t]}
        if self.cost is not None:
            info[COST] = self.cost
        self.t += 1
        return np.zeros(1, dtype=np.float32), 0.0, self.t == len(self.rows), False, info


class Serve(gym.Env):
    """Serve stakeholder 0 (group 0) or 1 (group 1): the reward favours serving 1, so a greedy policy leaves a gap."""

    observation_space = gym.spaces.Box(0.0, 1.0, (2,), dtype=np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self):
        self.stakeholders = Stakeholders(names=("a", "b"), groups=np.array([0, 1]))
        self.t = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return self.np_random.random(2).astype(np.float32), {}

    def step(self, action):
        benefits = np.zeros(2)
        benefits[int(action)] = self.np_random.random() + 0.5
        self.t += 1
        obs = self.np_random.random(2).astype(np.float32)
        return obs, float(action) + 0.1, False, self.t >= 24, {BENEFITS: benefits}


class Record(BaseCallback):
    """Every step's infos (copied), one list of sub-envs' infos per step, over the whole of learn()."""

    def __init__(self):
        super().__init__()
        self.infos = []

    def _on_step(self):
        self.infos.append([dict(i) for i in self.locals["infos"]])
        return True


def by_hand(rows, groups, window, gap="dp_abs", ends=None):
    """Δs and Δl after each step of ``rows`` (one benefits row each), the window restarting after each step in ends."""
    short, long, start = [], [], 0
    for t in range(len(rows)):
        episode = np.asarray(rows[start:t + 1])
        short.append(benefit_gap(episode[-window:].sum(axis=0), groups, gap))
        long.append(benefit_gap(episode.sum(axis=0), groups, gap))
        if ends is not None and ends[t]:
            start = t + 1
    return np.array(short), np.array(long)


# ------------------------------------------------------------------------------------------------ the metric


def test_benefit_gap_known_answers():
    assert benefit_gap([3.0, 1.0, 2.0, 0.0], [0, 1, 0, 1]) == 2.0  # |mean(1, 0) - mean(3, 2)|
    assert benefit_gap([3.0, 1.0, 2.0, 0.0], [0, 1, 0, 1], "dp_abs") == abs(demographic_parity([3, 1, 2, 0], [0, 1, 0, 1]))
    assert benefit_gap([3.0, 1.0], [0, 1], "dp_norm_abs") == 0.5  # |(3 - 1) / 4|
    assert benefit_gap([3.0, 1.0], [0, 1], "dp_norm_abs") == abs(demographic_parity_norm([3, 1], [0, 1]))
    assert benefit_gap([3.0, 1.0, 2.0, 6.0], [0, 1, 2, 2], "group_gap") == 3.0  # group means 3, 1, 4
    assert benefit_gap([[1.0, 0.0], [0.0, 0.0], [0.0, 1.0]], [0, 1]) == 0.0  # rows summed over the steps first
    assert benefit_gap(np.zeros((0, 2)), [0, 1]) == 0.0  # no benefits yet: parity
    assert benefit_gap([2.0, 5.0], [1, 0]) == 3.0  # unsigned whichever group is ahead
    assert set(BENEFIT_GAPS) == {"dp_abs", "dp_norm_abs", "group_gap"}


@pytest.mark.parametrize("args, match", [
    (([1.0, 2.0, 3.0], [0, 1, 2]), r"gap='dp_abs' .* exactly two groups, one of them 1, got groups \[0, 1, 2\]"),
    (([1.0, 2.0], [0, 2]), r"gap='dp_abs' .* got groups \[0, 2\]"),
    (([1.0, 2.0], [1, 1], "group_gap"), r"gap='group_gap' .* two groups or more, got groups \[1\]"),
    (([1.0, 2.0], [0, 1], "gini"), r"gap must be one of \['dp_abs', 'dp_norm_abs', 'group_gap'\], got 'gini'"),
    (([1.0, np.nan], [0, 1]), "benefits must be finite"),
    ((np.zeros((2, 2, 2)), [0, 1]), r"benefits must have one entry per stakeholder"),
])
def test_benefit_gap_refuses(args, match):
    with pytest.raises(ValueError, match=match):
        benefit_gap(*args)


# ------------------------------------------------------------------------------------------------ the wrapper


def test_the_window_example_by_hand():
    # 2 stakeholders (groups 0, 1), window 2: the sums over the last two steps [1,0] [1,0] [0,1] [0,2] give Δs 1, 1, 1, 2;
    # the episode's sums [1,0] [1,0] [1,1] [1,2] give Δl 1, 1, 0, 1; with long_term=3, [1,0] [1,0] [1,1] [0,2]: 1, 1, 0, 2
    rows = [[1, 0], [0, 0], [0, 1], [0, 1]]
    env = FairnessSignals(Scripted(rows), window=2, cost="short_term")
    three = FairnessSignals(Scripted(rows), window=2, long_term=3, cost="long_term")
    for e in (env, three):
        _, info = e.reset(seed=0)
        assert info[SHORT_TERM_FAIRNESS] == 0.0 and info[LONG_TERM_FAIRNESS] == 0.0  # the reset state: no benefit yet
    got = [env.step(0)[4] for _ in rows]
    assert [i[SHORT_TERM_FAIRNESS] for i in got] == [1.0, 1.0, 1.0, 2.0]
    assert [i[LONG_TERM_FAIRNESS] for i in got] == [1.0, 1.0, 0.0, 1.0]
    assert [i[COST] for i in got] == [1.0, 1.0, 1.0, 2.0]  # cost="short_term": Δs
    got3 = [three.step(0)[4] for _ in rows]
    assert [i[LONG_TERM_FAIRNESS] for i in got3] == [1.0, 1.0, 0.0, 2.0]
    assert [i[COST] for i in got3] == [1.0, 1.0, 0.0, 2.0]  # cost="long_term": Δl
    assert all(type(i[SHORT_TERM_FAIRNESS]) is float for i in got)
    env.reset()  # a new episode starts with empty windows
    assert env.step(0)[4][SHORT_TERM_FAIRNESS] == 1.0 and env.step(0)[4][LONG_TERM_FAIRNESS] == 1.0


def test_a_long_episode_keeps_the_window_exact():
    rng = np.random.default_rng(0)
    rows = rng.random((200, 3))
    env = FairnessSignals(Scripted(rows, groups=(0, 1, 1)), window=7, long_term=50, gap="dp_norm_abs")
    env.reset(seed=0)
    got = np.array([[i[SHORT_TERM_FAIRNESS], i[LONG_TERM_FAIRNESS]] for i in (env.step(0)[4] for _ in rows)])
    expected = [[benefit_gap(rows[max(0, t - 6):t + 1], [0, 1, 1], "dp_norm_abs"),
                 benefit_gap(rows[max(0, t - 49):t + 1], [0, 1, 1], "dp_norm_abs")] for t in range(200)]
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("kwargs, match", [
    (dict(window=0), "window must be an int >= 1, got 0"),
    (dict(window=2.5), "window must be an int >= 1"),
    (dict(gap="dp"), r"gap must be one of \['dp_abs', 'dp_norm_abs', 'group_gap'\], got 'dp'"),
    (dict(window=5, long_term=3), r"long_term must be 'episode' .* or an int >= window \(5"),
    (dict(long_term="all"), r"long_term must be 'episode'"),
    (dict(cost="cost"), r"cost must be one of \['short_term', 'long_term', None\], got 'cost'"),
])
def test_bad_arguments_are_refused_at_construction(kwargs, match):
    with pytest.raises(ValueError, match=match):
        FairnessSignals(Scripted([[1, 0]]), **kwargs)


def test_stakeholders_without_the_groups_of_the_gap_are_refused():
    with pytest.raises(ValueError, match=r"gap='dp_abs' .* got groups \[0, 1, 2\]; use gap='group_gap'"):
        FairnessSignals(Scripted([[1, 0, 0]], groups=(0, 1, 2)))
    FairnessSignals(Scripted([[1, 0, 0]], groups=(0, 1, 2)), gap="group_gap")  # any two groups or more
    with pytest.raises(ValueError, match=r"gap='group_gap' .* got groups \[0\]"):
        FairnessSignals(Scripted([[1, 0]], groups=(0, 0)), gap="group_gap")
    with pytest.raises(ValueError, match="does not honour the stakeholder contract"):
        FairnessSignals(gym.make("CartPole-v1"))


def test_an_env_with_signals_of_its_own_is_refused():
    with pytest.raises(ValueError, match=r"AttentionAllocationEnv reports info\['short_term_fairness'\].*itself"):
        FairnessSignals(AttentionAllocationEnv())
    with pytest.raises(ValueError, match="the env already has a FairnessSignals"):
        FairnessSignals(gym.wrappers.TimeLimit(FairnessSignals(Scripted([[1, 0]])), 5))

    class Writes(Scripted):
        def step(self, action):
            obs, r, term, trunc, info = super().step(action)
            return obs, r, term, trunc, {**info, SHORT_TERM_FAIRNESS: 0.3}

    env = FairnessSignals(Writes([[1, 0]]))
    env.reset()
    with pytest.raises(ValueError, match=r"Writes already reports info\['short_term_fairness'\]"):
        env.step(0)


def test_an_envs_own_cost_is_kept_or_refused():
    kept = FairnessSignals(Scripted([[1, 0]], cost=0.25))
    kept.reset()
    assert kept.step(0)[4][COST] == 0.25  # cost=None: the env's own cost is left as it is
    refused = FairnessSignals(Scripted([[1, 0]], cost=0.25), cost="short_term")
    refused.reset()
    with pytest.raises(ValueError, match=r"FairnessSignals\(cost='short_term'\): env Scripted already reports info\['cost'\]"):
        refused.step(0)


def test_cost_getters():
    assert is_cost_supported({COST: 0.0}) and not is_cost_supported({})
    assert get_costs([{COST: 1}, {COST: np.float32(0.5)}]) == [1.0, 0.5]
    with pytest.raises(ValueError, match=r"info\['cost'\] is missing \(sub-envs \[1\]\).*FairnessSignals"):
        get_costs([{COST: 1.0}, {}])
    with pytest.raises(ValueError, match=r"info\['cost'\] of sub-env 0 must be a finite number \(a constraint cost\)"):
        get_costs([{COST: np.inf}])


@pytest.mark.parametrize("dump, load", [(pickle.dumps, pickle.loads), (cloudpickle.dumps, pickle.loads), (None, None)])
def test_both_wrappers_pickle_and_copy_mid_episode(dump, load):
    def clone(x):
        return copy.deepcopy(x) if dump is None else load(dump(x))

    env = FairnessSignals(Serve(), window=3, cost="long_term")
    env.reset(seed=1)
    for _ in range(4):
        env.step(1)
    twin = clone(env)
    a, b = env.step(0)[4], twin.step(0)[4]
    assert (a[SHORT_TERM_FAIRNESS], a[LONG_TERM_FAIRNESS], a[COST]) == (b[SHORT_TERM_FAIRNESS], b[LONG_TERM_FAIRNESS], b[COST])
    assert twin.window == 3 and twin.cost == "long_term"

    game = ParallelFairnessSignals(DisparityGame(n_agents=4), window=2)
    game.reset(seed=0)
    game.step(dict.fromkeys(game.agents, 0))
    copied = clone(game)
    a = game.step(dict.fromkeys(game.agents, 0))[4]
    b = copied.step(dict.fromkeys(copied.agents, 0))[4]
    assert a["agent_0"][SHORT_TERM_FAIRNESS] == b["agent_0"][SHORT_TERM_FAIRNESS] == 1.0  # sums [2, 1, 2, 1]: |2 - 1|


def test_the_parallel_wrapper_gives_every_agent_the_same_signals():
    game = ParallelFairnessSignals(DisparityGame(n_agents=4, disparity=0.5, max_steps=3), window=2, cost="short_term")
    _, infos = game.reset(seed=0)
    assert all(SHORT_TERM_FAIRNESS not in i for i in infos.values())  # no signals in a game's reset info
    groups = np.array([infos[a][GROUP] for a in game.possible_agents])
    np.testing.assert_array_equal(game.episode_groups, groups)
    rows = []
    for _ in range(3):
        _, _, _, _, infos = game.step(dict.fromkeys(game.agents, 0))
        rows.append(infos["agent_0"][BENEFITS])
        short, long = by_hand(rows, groups, 2)
        for info in infos.values():
            assert (info[SHORT_TERM_FAIRNESS], info[LONG_TERM_FAIRNESS], info[COST]) == (short[-1], long[-1], short[-1])
    assert short.tolist() == [0.5, 1.0, 1.0] and long.tolist() == [0.5, 1.0, 1.5]  # work pays 1 to group 1, 0.5 to 0
    with pytest.raises(ValueError, match=r"gap must be one of"):
        ParallelFairnessSignals(DisparityGame(), gap="x")


def test_massaging_still_refuses_an_env_without_what_if_answers():
    with pytest.raises(ValueError, match=r"massaging=True needs an env with a fairness_what_if\(action\) method.*Serve"):
        FairPPO("MlpPolicy", FairnessSignals(Serve()), fairness="long_term", massaging=True, **PPO_KW)


# ------------------------------------------------------------------------------------------------ the methods run on it


def signals_by_hand(record, groups, window):
    """Δs and Δl of every recorded step of one sub-env, computed by hand from its benefits, and where episodes end."""
    infos = [row[0] for row in record.infos]
    ends = [TERMINAL in i for i in infos]
    short, long = by_hand([i[BENEFITS] for i in infos], groups, window, ends=ends)
    return short, long, ends


def check_tracker(model, record, groups, window):
    """The tracker's buffer rows (the last rollout) are the gaps computed by hand from the recorded benefits."""
    buf = model.rollout_buffer
    short, long, ends = signals_by_hand(record, groups, window)
    n = buf.buffer_size
    np.testing.assert_allclose(np.asarray(buf.short_term).reshape(-1), short[-n:], rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.asarray(buf.long_term).reshape(-1), long[-n:], rtol=0, atol=1e-12)
    assert np.any(short[-n:] > 0) and np.any(long[-n:] > 0)
    return short[-n:], long[-n:], ends[-n - 1:]


TERMINAL = "terminal_observation"


@pytest.mark.parametrize("fairness", ["long_term", "a_ppo"])
def test_f_ppo_and_a_ppo_train_on_a_users_env(fairness):
    record = Record()
    model = FairPPO("MlpPolicy", FairnessSignals(Serve(), window=4), fairness=fairness, **PPO_KW)
    model.learn(128, callback=record)
    short, long, ends = check_tracker(model, record, [0, 1], 4)
    # a change never crosses an episode: the first step's is its own gap (the reset state's signals are 0)
    change = np.asarray(model.rollout_buffer.long_term_change).reshape(-1)
    for t in range(1, len(long)):
        assert change[t] == pytest.approx(long[t] - (0.0 if ends[t] else long[t - 1]))
    assert any(ends[1:])


def test_cpo_trains_on_the_derived_gap_and_on_the_cost():
    for kwargs, signal in ((dict(), "short_term"), (dict(cost="long_term"), "cost")):
        record = Record()
        model = CPO("MlpPolicy", FairnessSignals(Serve(), window=3, **kwargs), cost_limit=0.1, cost_signal=signal,
                    n_steps=64, batch_size=32, seed=0)
        model.learn(128, callback=record)
        short, long, _ = signals_by_hand(record, [0, 1], 3)
        costs = np.array(model._cost_tracker.rows).reshape(-1)  # the last rollout's
        np.testing.assert_allclose(costs, (short if signal == "short_term" else long)[-64:], rtol=0, atol=1e-12)
        assert np.any(costs > 0) and model.last_step is not None


def test_cpo_reads_a_safety_gymnasium_style_cost():
    class Hazard(gym.Wrapper):
        """Safety-Gymnasium's convention after SafetyGymnasium2Gymnasium: a float info["cost"] at every step."""

        def step(self, action):
            obs, reward, terminated, truncated, info = self.env.step(action)
            return obs, reward, terminated, truncated, {**info, COST: float(abs(obs[2]) > 0.05)}

    record = Record()
    model = CPO("MlpPolicy", Hazard(gym.make("CartPole-v1")), cost_limit=0.1, cost_signal="cost", n_steps=64,
                batch_size=32, seed=0)
    model.learn(128, callback=record)
    np.testing.assert_array_equal(np.array(model._cost_tracker.rows).reshape(-1), [r[0][COST] for r in record.infos[-64:]])
    with pytest.raises(ValueError, match=r"CPO\(cost_signal='cost'\).*info\['cost'\] is missing.*SafetyGymnasium2Gymnasium"):
        CPO("MlpPolicy", "CartPole-v1", cost_limit=0.1, cost_signal="cost", n_steps=32, batch_size=32).learn(32)
    with pytest.raises(ValueError, match=r"short_term_fairness.*FairnessSignals"):
        CPO("MlpPolicy", "CartPole-v1", cost_limit=0.1, n_steps=32, batch_size=32).learn(32)


@pytest.mark.parametrize("algo", ["long_term", "a_ppo", "cpo"])
def test_every_method_trains_on_mo_gymnasium_fishwood(algo):
    mo_gymnasium = pytest.importorskip("mo_gymnasium")
    from mo_gymnasium.wrappers import LinearReward

    declared = DeclareStakeholders(mo_gymnasium.make("fishwood-v0"), stakeholders={"names": ["fish", "wood"], "groups": [0, 1]})
    env = FairnessSignals(LinearReward(declared, weight=np.ones(2)), window=10, cost="short_term")
    record = Record()
    if algo == "cpo":
        model = CPO("MlpPolicy", env, cost_limit=0.05, cost_signal="cost", n_steps=64, batch_size=32, seed=0)
    else:
        model = FairPPO("MlpPolicy", env, fairness=algo, **PPO_KW)
    model.learn(128, callback=record)
    short, long, _ = signals_by_hand(record, [0, 1], 10)
    if algo == "cpo":
        np.testing.assert_allclose(np.array(model._cost_tracker.rows).reshape(-1), short[-64:], rtol=0, atol=1e-12)
    else:
        check_tracker(model, record, [0, 1], 10)
    assert np.any(short[-64:] > 0)


@pytest.mark.parametrize("algo", ["long_term", "a_ppo", "cpo"])
def test_every_method_trains_on_a_pettingzoo_game(algo):
    n_agents, steps = 4, 32
    game = ParallelFairnessSignals(DisparityGame(n_agents=n_agents, max_steps=10), window=3, cost="short_term")
    vec_env = make_multiagent_vec_env(game)
    record = Record()
    if algo == "cpo":
        model = CPO("MlpPolicy", vec_env, cost_limit=0.05, cost_signal="cost", n_steps=steps, batch_size=64, seed=0)
    else:
        model = FairPPO("MlpPolicy", vec_env, fairness=algo, n_steps=steps, batch_size=64, n_epochs=1, seed=0)
    model.learn(2 * steps * n_agents, callback=record)
    infos = record.infos  # (steps, slots)
    # the groups of an episode: those of its first step's infos (the last step's carry the next episode's reset info)
    rows, ends, groups, episode_groups = [], [], [], None
    for t, row in enumerate(infos):
        if episode_groups is None:
            episode_groups = [i[GROUP] for i in row]
        rows.append(row[0][BENEFITS])
        groups.append(episode_groups)
        ends.append(TERMINAL in row[0])
        if ends[-1]:
            episode_groups = None
    short, long = [], []
    start = 0
    for t in range(len(rows)):
        episode = np.asarray(rows[start:t + 1])
        short.append(benefit_gap(episode[-3:].sum(axis=0), groups[t]))
        long.append(benefit_gap(episode.sum(axis=0), groups[t]))
        if ends[t]:
            start = t + 1
    short, long = np.array(short[-steps:]), np.array(long[-steps:])  # the last rollout's
    assert np.any(short > 0) and any(ends)
    if algo == "cpo":
        got = np.array(model._cost_tracker.rows)  # (steps, slots)
        np.testing.assert_allclose(got, np.repeat(short[:, None], n_agents, axis=1), rtol=0, atol=1e-12)
        return
    buf = model.rollout_buffer  # flattened slot-major by SB3's swap_and_flatten
    got_short = np.asarray(buf.short_term).reshape(n_agents, steps).T
    got_long = np.asarray(buf.long_term).reshape(n_agents, steps).T
    np.testing.assert_allclose(got_short, np.repeat(short[:, None], n_agents, axis=1), rtol=0, atol=1e-12)
    np.testing.assert_allclose(got_long, np.repeat(long[:, None], n_agents, axis=1), rtol=0, atol=1e-12)
