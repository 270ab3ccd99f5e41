"""F-PPO's action massaging (Eq. 6) in FairPPO / FairMaskablePPO / FairRecurrentPPO and at evaluation."""

from __future__ import annotations

import functools

import gymnasium as gym
import numpy as np
import pytest
import torch as th
from logged_csv import read_csv
from sb3_contrib import MaskablePPO, RecurrentPPO
from stable_baselines3 import PPO
from stable_baselines3.common.distributions import CategoricalDistribution
from stable_baselines3.common.evaluation import evaluate_policy
from stable_baselines3.common.logger import configure

from sb3_fair import FairMaskablePPO, FairPPO, FairRecurrentPPO
from sb3_fair.common.long_term.advantages import attention_massaging_threshold, lending_massaging_threshold
from sb3_fair.common.long_term.massaging import MassagedPredictor, massage_actions
from sb3_fair.common.protocol import LONG_TERM_FAIRNESS, SHORT_TERM_FAIRNESS
from sb3_fair.envs import AttentionAllocationEnv, DelayedImpactLendingEnv

#: Δs each of the three actions of :class:`ThreeDoors` would leave: action 1 is the fairest
GAPS = np.array([0.5, 0.0, 1.0])


class NoWhatIf(gym.Env):
    """Discrete(3), action ``a`` leaves Δs = ``GAPS[a]``; records each executed action and can mask action 1."""

    observation_space = gym.spaces.Box(-1.0, 1.0, (2,), dtype=np.float32)
    action_space = gym.spaces.Discrete(3)

    def __init__(self, mask_fairest: bool = False, length: int = 7):
        self.mask_fairest, self.length = mask_fairest, length
        self.executed: list[int] = []
        self.queries = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return self._obs(), {SHORT_TERM_FAIRNESS: 0.0, LONG_TERM_FAIRNESS: 0.0}

    def _obs(self):
        return np.array([np.sin(self.t), np.cos(self.t)], dtype=np.float32)

    def step(self, action):
        a = int(action)
        self.executed.append(a)
        self.t += 1
        info = {SHORT_TERM_FAIRNESS: float(GAPS[a]), LONG_TERM_FAIRNESS: float(self.t)}
        return self._obs(), float(a == 2), False, self.t >= self.length, info

    def action_masks(self):
        return np.array([True, not self.mask_fairest, True])


class ThreeDoors(NoWhatIf):
    """:class:`NoWhatIf` answering what-if queries: every action is a candidate of every other."""

    def fairness_what_if(self, action):
        self.queries += 1
        a = int(action)
        candidates = np.array([a, *[b for b in range(3) if b != a]])
        return candidates, GAPS[candidates]


KW = dict(n_steps=16, batch_size=8, n_epochs=2, seed=0)
OFF = dict(fairness_coef=0.0)  # the group penalty (FairPPO's default fairness) off: these envs have one agent
CASES = [(PPO, FairPPO, "MlpPolicy", {}), (MaskablePPO, FairMaskablePPO, "MlpPolicy", {"use_masking": False}),
         (RecurrentPPO, FairRecurrentPPO, "MlpLstmPolicy", {})]
IDS = ["FairPPO", "FairMaskablePPO", "FairRecurrentPPO"]


def logged_rows(model, path):
    """Send ``model``'s logger dumps to ``path/progress.csv``; returns a reader of the rows dumped so far."""
    model.set_logger(configure(str(path), ["csv"]))

    def rows():
        model.logger.close()  # flushed, and no open file left for the garbage collector to warn about in another test
        return [{k: float(v) for k, v in row.items() if v} for row in read_csv(path / "progress.csv")]
    return rows


def weights(model):
    return [p.detach().clone() for p in model.policy.state_dict().values()]


@pytest.mark.parametrize("parent, fair_cls, policy, learn_kw", CASES, ids=IDS)
def test_massaging_off_or_tau_zero_is_the_parent(parent, fair_cls, policy, learn_kw):
    base = parent(policy, ThreeDoors(), **KW).learn(32, **learn_kw)
    for kwargs in ({}, {"massaging": True, "massaging_tau": 0.0}):
        env = ThreeDoors()
        model = fair_cls(policy, env, **KW, **OFF, **kwargs).learn(32, **learn_kw)
        for a, b in zip(weights(base), weights(model)):
            th.testing.assert_close(a, b, rtol=0, atol=0)
        assert env.queries == 0  # τ = 0 never asks the env


@pytest.mark.parametrize("parent, fair_cls, policy, learn_kw", CASES, ids=IDS)
def test_the_buffer_stores_the_executed_action_and_its_log_probability(parent, fair_cls, policy, learn_kw, tmp_path):
    env = ThreeDoors()
    # τ = 1: every candidate is close enough (probabilities differ by less than 1), so the fairest always runs
    model = fair_cls(policy, env, n_steps=16, batch_size=16, n_epochs=1, seed=0, massaging=True, massaging_tau=1.0,
                     **OFF)
    rows = logged_rows(model, tmp_path)
    model.learn(16, **learn_kw)
    buf = model.rollout_buffer
    assert env.executed == [1] * 16
    np.testing.assert_array_equal(buf.actions.ravel(), np.ones(16))
    assert 0 < rows()[0]["fairness/massaged_fraction"] <= 1
    assert rows()[0]["fairness/massaging_tau"] == 1.0
    # the stored log-probabilities are the pre-update policy's log-probabilities of action 1
    if parent is not RecurrentPPO:
        fresh = fair_cls(policy, ThreeDoors(), n_steps=16, batch_size=16, n_epochs=1, seed=0, **OFF)
        obs = th.as_tensor(buf.observations.reshape(16, -1))
        _, log_prob, _ = fresh.policy.evaluate_actions(obs, th.ones(16))
        np.testing.assert_allclose(buf.log_probs.ravel(), log_prob.detach().numpy(), rtol=1e-5)


def test_a_close_threshold_keeps_unlikely_candidates_out(tmp_path):
    env = ThreeDoors()
    model = FairPPO("MlpPolicy", env, n_steps=64, batch_size=64, n_epochs=1, seed=0, massaging=True, massaging_tau=1e-9, **OFF)
    rows = logged_rows(model, tmp_path)
    model.learn(64)
    # no candidate has exactly the sampled action's probability: nothing is replaced
    assert rows()[0]["fairness/massaged_fraction"] == 0.0
    assert set(env.executed) == {0, 1, 2}


def test_a_masked_candidate_is_never_executed():
    env = ThreeDoors(mask_fairest=True)
    model = FairMaskablePPO("MlpPolicy", env, n_steps=16, batch_size=16, n_epochs=1, seed=0, massaging=True, massaging_tau=1.0,
                            **OFF)
    model.learn(16)
    assert 1 not in env.executed
    assert set(env.executed) == {0}  # the fairer of the two allowed actions


def test_the_schedule_gets_the_iteration():
    seen = []

    def schedule(i):
        seen.append(i)
        return 0.0 if i < 2 else 1.0

    env = ThreeDoors()
    model = FairPPO("MlpPolicy", env, n_steps=8, batch_size=8, n_epochs=1, seed=0, massaging=True, massaging_tau=schedule, **OFF)
    model.learn(32)
    assert seen[1:] == [0, 1, 2, 3]  # the first call checks the schedule at construction
    assert env.executed[:16] != [1] * 16 and env.executed[16:] == [1] * 16


def test_massaging_alone_does_not_need_the_long_term_penalty_and_is_logged(tmp_path):
    model = FairPPO("MlpPolicy", ThreeDoors(), **KW, **OFF, massaging=True,
                    massaging_tau=functools.partial(lending_massaging_threshold))
    assert model.fairness_config()["massaging"] is True
    env = ThreeDoors()
    model = FairPPO("MlpPolicy", env, **KW, **OFF, massaging=True, massaging_tau=0.3)
    rows = logged_rows(model, tmp_path)
    model.learn(16)
    row = rows()[0]  # the dump after the first rollout
    # the signals of the rollout's 16 executed steps: Δs of each action, Δl = the step count (1..7, 1..7, 1, 2)
    assert float(row["fairness/short_term"]) == pytest.approx(GAPS[env.executed[:16]].mean())
    assert float(row["fairness/long_term"]) == pytest.approx(np.mean([*range(1, 8), *range(1, 8), 1, 2]))
    assert float(row["fairness/massaged_fraction"]) > 0


@pytest.mark.parametrize("kwargs, match", [
    ({"massaging": True, "massaging_tau": -0.1}, "massaging_tau"),
    ({"massaging": True, "massaging_tau": float("nan")}, "massaging_tau"),
    ({"massaging": True, "massaging_tau": "0.1"}, "massaging_tau"),
    ({"massaging": True, "massaging_tau": lambda i: -1.0}, r"massaging_tau\(0\)"),
    ({"massaging": "yes"}, "massaging must be True or False"),
])
def test_bad_input_fails_at_construction(kwargs, match):
    with pytest.raises(ValueError, match=match):
        FairPPO("MlpPolicy", ThreeDoors(), **OFF, **kwargs)


def test_massaging_needs_the_what_if_protocol():
    with pytest.raises(ValueError, match="fairness_what_if"):
        FairPPO("MlpPolicy", NoWhatIf(), massaging=True, **OFF)
    model = FairPPO("MlpPolicy", ThreeDoors(), massaging=True, **OFF)
    with pytest.raises(ValueError, match="fairness_what_if"):
        model.set_env(NoWhatIf())
    FairPPO("MlpPolicy", NoWhatIf(), **OFF)  # without massaging the env needs no what-if


def test_a_schedule_turning_negative_fails_with_the_iteration():
    model = FairPPO("MlpPolicy", ThreeDoors(), n_steps=8, batch_size=8, massaging=True, massaging_tau=lambda i: 0.1 - i,
                    **OFF)
    with pytest.raises(ValueError, match=r"massaging_tau\(1\)"):
        model.learn(16)


def test_predict_never_massages_and_the_predictor_does():
    model = FairPPO("MlpPolicy", ThreeDoors(), **KW, **OFF, massaging=True, massaging_tau=1.0)
    env = model.get_env()
    obs = env.reset()
    raw = {int(model.predict(obs)[0][0]) for _ in range(50)}
    assert raw == {0, 1, 2}
    predictor = MassagedPredictor(model, env)  # τ from the model
    assert {int(predictor.predict(obs)[0][0]) for _ in range(20)} == {1}
    # a single env and a single observation
    single = ThreeDoors()
    o, _ = single.reset(seed=0)
    assert int(MassagedPredictor(model, single, tau=1.0).predict(o)[0]) == 1
    mean, _ = evaluate_policy(predictor, env, n_eval_episodes=2)
    assert mean == 0.0  # action 2 (the rewarded one) is never executed
    # evaluate_policy with a single env (it wraps it and passes batches of one)
    single = ThreeDoors()
    mean, _ = evaluate_policy(MassagedPredictor(model, single, tau=1.0), single, n_eval_episodes=2)
    assert mean == 0.0 and set(single.executed) == {1}
    with pytest.raises(ValueError, match="tau is needed"):
        MassagedPredictor(PPO("MlpPolicy", ThreeDoors()), env)
    with pytest.raises(ValueError, match="tau is needed"):
        MassagedPredictor(FairPPO("MlpPolicy", ThreeDoors(), **OFF), env)
    with pytest.raises(ValueError, match="what-if"):
        MassagedPredictor(model, NoWhatIf())


def test_massage_actions_on_a_known_distribution():
    dist = CategoricalDistribution(3).proba_distribution(th.log(th.tensor([[0.5, 0.3, 0.2], [0.1, 0.1, 0.8]])))
    env = ThreeDoors()
    chosen, candidates, log_probs = massage_actions(env, np.array([0]), dist.__class__(3).proba_distribution(
        th.log(th.tensor([[0.5, 0.3, 0.2]]))), tau=0.25)
    # proposal 0 (p 0.5, Δs 0.5); candidate 1 (p 0.3, within 0.25, Δs 0) wins; candidate 2 (p 0.2) is too far
    assert chosen.tolist() == [1] and candidates[0].tolist() == [0, 1, 2]
    np.testing.assert_allclose(log_probs, np.log([0.3]), rtol=1e-6)
    chosen, _, log_probs = massage_actions(env, np.array([2]), CategoricalDistribution(3).proba_distribution(
        th.log(th.tensor([[0.1, 0.1, 0.8]]))), tau=0.25)
    assert chosen.tolist() == [0]  # nothing within 0.25 of 0.8
    np.testing.assert_allclose(log_probs, np.log([0.8]), rtol=1e-6)


def test_paper_envs_massage_through_vec_envs(tmp_path):
    from stable_baselines3.common.env_util import make_vec_env

    venv = make_vec_env(DelayedImpactLendingEnv, n_envs=2, seed=0, env_kwargs={"horizon": 50})
    model = FairPPO("MlpPolicy", venv, n_steps=25, batch_size=50, n_epochs=1, seed=0, fairness="long_term",
                    massaging=True, massaging_tau=functools.partial(lending_massaging_threshold, i_s=0, tau_s=0.1))
    rows = logged_rows(model, tmp_path / "lending")
    model.learn(50)
    assert rows()[0]["fairness/massaging_tau"] == pytest.approx(0.8)
    attention = FairPPO("MlpPolicy", AttentionAllocationEnv(horizon=20), n_steps=20, batch_size=20, n_epochs=1, seed=0,
                        massaging=True, massaging_tau=functools.partial(attention_massaging_threshold, i_s=0), **OFF)
    rows = logged_rows(attention, tmp_path / "attention")
    attention.learn(20)
    assert rows()[0]["fairness/massaged_fraction"] > 0


def test_candidate_log_probs_match_one_call_per_row():
    from sb3_contrib.common.maskable.distributions import MaskableCategoricalDistribution
    from stable_baselines3.common.distributions import DiagGaussianDistribution, MultiCategoricalDistribution

    from sb3_fair.common.long_term.massaging import candidate_log_probs

    g = th.Generator().manual_seed(0)
    cases = [
        (CategoricalDistribution(4).proba_distribution(th.randn(3, 4, generator=g)), th.randint(0, 4, (5, 3), generator=g)),
        (DiagGaussianDistribution(2).proba_distribution(th.randn(3, 2, generator=g), th.zeros(2)), th.randn(5, 3, 2, generator=g)),
        (MultiCategoricalDistribution([2, 3]).proba_distribution(th.randn(3, 5, generator=g)), th.randint(0, 2, (5, 3, 2), generator=g)),
    ]
    masked = MaskableCategoricalDistribution(4).proba_distribution(th.randn(3, 4, generator=g))
    masked.apply_masking(np.array([[True, False, True, True]] * 3))
    cases.append((masked, th.randint(0, 4, (5, 3), generator=g)))
    for dist, candidates in cases:
        expected = th.stack([dist.log_prob(row) for row in candidates]).numpy().astype(np.float64)
        got = candidate_log_probs(dist, candidates.numpy())
        assert got.dtype == np.float64
        np.testing.assert_array_equal(got, expected)  # the same float32 values, exactly


class OffsetDial(gym.Env):
    """Box(0, 2) action; the what-if query offers the proposal and a less fair neighbour, and records the proposals."""

    observation_space = gym.spaces.Box(-1.0, 1.0, (1,), dtype=np.float32)
    action_space = gym.spaces.Box(0.0, 2.0, (1,), dtype=np.float32)

    def __init__(self):
        self.proposed, self.executed = [], []

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(1, dtype=np.float32), {SHORT_TERM_FAIRNESS: 0.0, LONG_TERM_FAIRNESS: 0.0}

    def step(self, action):
        self.executed.append(float(np.asarray(action).ravel()[0]))
        return np.zeros(1, dtype=np.float32), 0.0, False, False, {SHORT_TERM_FAIRNESS: 0.0, LONG_TERM_FAIRNESS: 0.0}

    def fairness_what_if(self, action):
        a = np.asarray(action, dtype=np.float32).reshape(1)
        self.proposed.append(float(a[0]))
        return np.stack([a, np.clip(a + 0.5, 0.0, 2.0)]), np.array([0.0, 1.0])


@pytest.mark.parametrize("fair_cls, policy", [(FairPPO, "MlpPolicy"), (FairRecurrentPPO, "MlpLstmPolicy")])
def test_the_what_if_query_sees_the_action_the_parents_rollout_executes(fair_cls, policy):
    # a squashed gSDE policy: SB3's PPO rollout unscales its [-1, 1] action to the bounds, RecurrentPPO's clips it
    env = OffsetDial()
    model = fair_cls(policy, env, n_steps=8, batch_size=8, n_epochs=1, seed=0, use_sde=True, **OFF,
                     policy_kwargs={"squash_output": True}, massaging=True, massaging_tau=1e6)
    model.learn(8)
    assert model._massaged[0] == 0  # the neighbour is never fairer: every proposal is executed as asked
    np.testing.assert_allclose(env.proposed, env.executed, rtol=0, atol=1e-6)


def test_a_candidate_outside_the_action_space_is_a_clear_error():
    from sb3_fair.common.long_term.massaging import candidate_log_probs

    dist = CategoricalDistribution(3).proba_distribution(th.zeros(1, 3))
    with pytest.raises(ValueError, match="fairness_what_if"):
        candidate_log_probs(dist, np.array([[0], [3]]))
    with pytest.raises(ValueError, match="fairness_what_if"):
        candidate_log_probs(dist, np.array([[0], [-1]]))  # not wrapped around to the last action


class _Answers(gym.Env):
    """A Discrete(2) env whose what-if query returns a fixed answer."""

    observation_space = gym.spaces.Box(0.0, 1.0, (1,), dtype=np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, answer):
        self.answer = answer

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(1, dtype=np.float32), {}

    def step(self, action):
        return np.zeros(1, dtype=np.float32), 0.0, False, False, {}

    def fairness_what_if(self, action):
        return self.answer


def test_bad_what_if_answers_are_named_in_sub_env_order():
    """The batch is tested at once; a failure names the first bad answer by sub-env, as the per-answer checks do."""
    from stable_baselines3.common.vec_env import DummyVecEnv

    dist = CategoricalDistribution(2).proba_distribution(th.zeros(2, 2))
    nan_first = DummyVecEnv([lambda: _Answers((np.array([0, 1]), np.array([0.1, np.nan]))),
                             lambda: _Answers((np.array([0, 1]), np.array([0.1])))])
    with pytest.raises(ValueError, match="non-finite Δs .* candidate 1 of sub-env 0"):
        massage_actions(nan_first, np.array([0, 0]), dist, 0.1)
    length_first = DummyVecEnv([lambda: _Answers((np.array([0, 1]), np.array([0.1]))),
                                lambda: _Answers((np.array([0, 1]), np.array([0.1, np.nan])))])
    with pytest.raises(ValueError, match=r"as many candidates as Δs values, at least one \(sub-env 0\)"):
        massage_actions(length_first, np.array([0, 0]), dist, 0.1)
    one = CategoricalDistribution(2).proba_distribution(th.zeros(1, 2))
    with pytest.raises(ValueError, match="non-finite candidate action 1 for sub-env 0"):  # checked before any cast
        massage_actions(_Answers((np.array([0.0, np.nan]), np.array([0.1, 0.2]))), np.array([0]), one, 0.1)


def _random_answer(rng, n_actions):
    width = int(rng.integers(1, n_actions + 1))
    candidates = rng.permutation(n_actions)[:width]
    gaps = rng.choice([0.0, 0.1, 0.25, 0.5], size=width)  # ties on purpose
    return np.asarray(candidates, dtype=np.int64), gaps


def test_the_python_float_path_chooses_as_the_array_path():
    """A rollout step's few sub-envs are massaged on Python floats (massaging._massage_small); the array path (taken
    here through an identity ``to_policy``) must give the same choice, candidates and log-probabilities, bit for bit,
    with ties, masked candidates, answers of different widths and any τ."""
    from sb3_contrib.common.maskable.distributions import MaskableCategoricalDistribution
    from stable_baselines3.common.vec_env import DummyVecEnv

    rng = np.random.default_rng(0)
    g = th.Generator().manual_seed(0)
    checked = 0
    for trial in range(400):
        n, n_actions = int(rng.integers(1, 6)), int(rng.integers(2, 5))
        logits = th.randn(n, n_actions, generator=g) * float(rng.choice([0.1, 1.0, 5.0]))
        if trial % 3 == 0:
            dist = MaskableCategoricalDistribution(n_actions).proba_distribution(logits)
            masks = rng.random((n, n_actions)) < 0.7
            masks[:, 0] = True
            dist.apply_masking(masks)
        else:
            dist = CategoricalDistribution(n_actions).proba_distribution(logits)
        answers = [_random_answer(rng, n_actions) for _ in range(n)]
        venv = DummyVecEnv([functools.partial(_Answers, a) for a in answers])
        proposed = np.array([int(a[0][0]) for a in answers])
        tau = float(rng.choice([0.0, -1.0, np.nan, 0.05, 0.3, 2.0]))
        ties = ("keep", "flip")[trial % 2]
        fast = massage_actions(venv, proposed, dist, tau, ties=ties)
        slow = massage_actions(venv, proposed, dist, tau, to_policy=lambda c: c, ties=ties)
        assert fast[0].tolist() == slow[0].tolist(), trial
        assert [c.tolist() for c in fast[1]] == [c.tolist() for c in slow[1]]
        assert fast[2].dtype == slow[2].dtype and fast[2].tobytes() == slow[2].tobytes(), trial
        checked += bool(fast[0].any())
    assert checked > 50  # many trials did massage


def test_a_vec_env_is_asked_through_the_method_its_env_method_finds():
    """The sub-envs' what-if methods are looked up once, as DummyVecEnv.env_method looks them up (the outermost
    wrapper that has one), also under a VecEnvWrapper."""
    from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

    class Louder(gym.Wrapper):
        def fairness_what_if(self, action):
            return np.array([action, 1 - action]), np.array([9.0, 8.0])

    base = (np.array([0, 1]), np.array([0.1, 0.2]))
    venv = VecNormalize(DummyVecEnv([lambda: _Answers(base), lambda: Louder(_Answers(base))]), norm_obs=False)
    from sb3_fair.common.protocol import get_what_if

    for _ in range(2):  # the first call checks that the VecEnv answers, the second does not ask again
        answers = get_what_if(venv, np.array([0, 1]))
        assert [a[1].tolist() for a in answers] == [[0.1, 0.2], [9.0, 8.0]]
        assert [a[0].tolist() for a in answers] == [[0, 1], [1, 0]]
    # a sub-env replaced, or its method replaced, is asked as env_method would ask it now
    venv.venv.envs[1] = _Answers((np.array([1, 0]), np.array([0.5, 0.6])))
    venv.venv.envs[0].fairness_what_if = lambda action: (np.array([action]), np.array([0.7]))
    answers = get_what_if(venv, np.array([0, 1]))
    assert [a[1].tolist() for a in answers] == [[0.7], [0.5, 0.6]]
    assert [a[1].tolist() for a in answers] == [venv.env_method("fairness_what_if", a, indices=[i])[0][1].tolist()
                                                for i, a in enumerate([0, 1])]


def test_odd_answers_fail_as_on_the_array_path():
    """What the Python-float path does not take (a Δs that is not 1-D, a distribution for fewer sub-envs, candidates
    in another dtype) goes to the array path, which accepts or refuses it as it always did."""
    from stable_baselines3.common.vec_env import DummyVecEnv

    def both(venv, proposed, dist, tau=0.3):
        outcomes = []
        for to_policy in (None, lambda c: c):
            try:
                chosen, candidates, log_probs = massage_actions(venv, proposed, dist, tau, to_policy=to_policy)
                outcomes.append((chosen.tolist(), [c.tolist() for c in candidates], log_probs.tobytes()))
            except Exception as exc:  # noqa: BLE001 - the type and message are what is compared
                outcomes.append((type(exc), str(exc)))
        assert outcomes[0] == outcomes[1]
        return outcomes[0]

    dist = CategoricalDistribution(2).proba_distribution(th.tensor([[0.3, -0.2]]))
    assert both(DummyVecEnv([lambda: _Answers((np.array([0]), np.array([[0.1]])))]), np.array([0]), dist)[0] == [0]
    two_d = both(DummyVecEnv([lambda: _Answers((np.array([0, 1]), np.array([[0.1], [0.0]])))]), np.array([0]), dist)
    assert two_d[0] is ValueError
    fewer = DummyVecEnv([lambda: _Answers((np.array([0, 1]), np.array([0.1, 0.0])))] * 2)
    assert both(fewer, np.array([0, 0]), dist)[0] is IndexError
    int32 = both(DummyVecEnv([lambda: _Answers((np.array([0, 1], dtype=np.int32), np.array([0.1, 0.0])))]),
                 np.array([0]), dist)
    assert int32[0] == [1]


@pytest.mark.parametrize("parent, fair_cls, policy, learn_kw", CASES, ids=IDS)
def test_only_the_rollouts_own_forward_call_is_massaged(parent, fair_cls, policy, learn_kw):
    """A callback that runs the policy on other observations of the rollout's batch size, while the hook is installed,
    gets the policy's own output; the rollout's call on its current observation is massaged, once per step."""
    from stable_baselines3.common.callbacks import BaseCallback

    class Probe(BaseCallback):
        def __init__(self):
            super().__init__()
            self.outputs = []

        def _on_step(self) -> bool:
            other = th.full((1, 2), 0.25)  # not the rollout's observation (sin t, cos t), same batch size
            if isinstance(self.model, FairRecurrentPPO):
                from sb3_contrib.common.recurrent.type_aliases import RNNStates

                zeros = th.zeros(self.model.policy.lstm_hidden_state_shape)
                states = RNNStates((zeros, zeros), (zeros, zeros))
                out = self.model.policy.forward(other, states, th.zeros(1))
            else:
                out = self.model.policy(other)
            self.outputs.append(out)
            return True

    env = ThreeDoors()
    model = fair_cls(policy, env, **KW, **OFF, massaging=True, massaging_tau=1.0)
    model.learn(16, callback=Probe(), **learn_kw)
    assert env.queries == 16  # one what-if query per rollout step, none for the callback's calls
    assert model._massaged[1] == 16



@pytest.mark.parametrize("probabilities, short_term, tau, keep, flip", [
    ([0.5, 0.45], [0.2, 0.2], 0.1, 0, 1),              # as fair: the paper's text keeps, the authors' code flips
    ([0.5, 0.45], [0.2, 0.1], 0.1, 1, 1),              # fairer: both replace
    ([0.5, 0.45], [0.2, 0.3], 0.1, 0, 0),              # less fair: neither
    ([0.5, 0.1], [0.2, 0.2], 0.1, 0, 0),               # too unlikely (|0.1 - 0.5| >= tau): neither
    ([0.5, 0.45, 0.48], [0.2, 0.2, 0.2], 0.1, 0, 2),   # the most probable of the equally fair alternatives
    ([0.5, 0.45], [0.2, np.inf], 0.1, 0, 0),           # a candidate that cannot be executed: never
    ([0.5, 0.45], [0.2, 0.2], 0.0, 0, 0),              # tau 0: no massaging
])
def test_the_tie_rule_of_massaging(probabilities, short_term, tau, keep, flip):
    from sb3_fair.common.long_term import massaging_choice

    assert massaging_choice(probabilities, short_term, tau) == keep  # "keep" is the default
    assert massaging_choice(probabilities, short_term, tau, ties="keep") == keep
    assert massaging_choice(probabilities, short_term, tau, ties="flip") == flip


def test_the_tie_rule_is_an_option_of_the_fair_classes_and_the_predictor():
    model = FairPPO("MlpPolicy", ThreeDoors(), **KW, **OFF, massaging=True, massaging_tau=1.0, massaging_ties="flip")
    assert model.massaging_ties == "flip" and model.fairness_config()["massaging_ties"] == "flip"
    assert FairPPO("MlpPolicy", ThreeDoors(), **KW, **OFF).fairness_config()["massaging_ties"] == "keep"
    assert MassagedPredictor(model, model.get_env()).ties == "flip"
    assert MassagedPredictor(model, model.get_env(), ties="keep").ties == "keep"
    with pytest.raises(ValueError, match=r"massaging_ties must be one of \['keep', 'flip'\], got 'ge'"):
        FairPPO("MlpPolicy", ThreeDoors(), **KW, **OFF, massaging=True, massaging_ties="ge")
    with pytest.raises(ValueError, match=r"ties must be one of \['keep', 'flip'\], got '>='"):
        MassagedPredictor(model, model.get_env(), ties=">=")


def test_a_callback_sees_which_sub_envs_the_step_massaged():
    """``massaged_rows``: the sub-envs whose sampled action the current rollout step replaced, read in ``on_step``
    beside the step's infos (here: every executed action that is not the proposal's)."""
    from stable_baselines3.common.callbacks import BaseCallback

    seen = []

    class Rows(BaseCallback):
        def _on_step(self) -> bool:
            seen.append(list(self.model.massaged_rows))
            return True

    model = FairPPO("MlpPolicy", ThreeDoors(), **KW, **OFF, massaging=True, massaging_tau=1.0)
    model.learn(16, callback=Rows())
    env = model.get_env().envs[0].unwrapped
    assert len(seen) == 16 and all(rows in ([], [0]) for rows in seen)
    assert sum(len(rows) for rows in seen) > 0 and set(env.executed) == {1}  # τ = 1: the fairest door every time
    assert FairPPO("MlpPolicy", ThreeDoors(), **KW, **OFF).massaged_rows == []
