"""Seeded goldens of the memory and fairness-reward paths that ``tests/test_env_trajectories.py`` does not reach.

``test_env_trajectories.py`` pins the registered ids (full memory, binary encoding, log-Nash and parity rewards). This
file pins, bit for bit and with the same serialisation (:func:`test_env_trajectories.encode`):

* the :class:`~sb3_fair.wrappers.MemoryAugmentation` and :class:`~sb3_fair.wrappers.FairnessReward` wrappers in
  every memory kind, encoding, period, Dict observation, welfare, scheme, aggregate and coefficient, on the doughnut
  and loan envs and on an env with real-valued benefits and groups of three (where the order of a sum matters);
* the errors they raise for bad benefits (missing, wrong shape, NaN, inf, text, outside a welfare's domain, not
  encodable in binary), type and message;
* the functions FairQCM applies to counterfactual transitions (``update_memory``, ``encode_memory``,
  ``decode_memory``, ``counterfactual_memories``, ``fairness_reward``, ``potential_shaping``, ``assessed``) on
  single vectors and batches;
* the public welfare functions of :mod:`sb3_fair.metrics` and the protocol's getters (``get_benefits``,
  ``get_fairness_signals``), values and error messages.

It also checks the per-step shortcuts of that work against the NumPy computations they replace, on random and edge
inputs: the loan env's credit update, the binary encoding of one memory, the group totals, the short-vector paths of
the metrics and the filter ``assessed``; and that the specs' cached layouts stay out of their pickles.

Each case is compared as in ``test_env_trajectories.py``: portably on every machine (the values other than floats
exactly, the floats to its tolerances, against ``tests/data/portable/fairness_goldens.json`` and
``fairness_goldens.floats.xz``), and, where this machine's kernels give the recording machine's bits
(``same_arithmetic``), bit for bit against ``GOLDEN``, the sha256 of each case computed from the code before the
throughput work on the wrappers. Error messages are strings, compared exactly; a few print float vectors (at
NumPy's or Python's shortest repr), which another machine's last bits could change.
``python tests/test_fairness_goldens.py`` prints the dict of the current code and rewrites the portable references
(only to regenerate them after an intended change).
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces
from test_env_trajectories import (
    Recorder,
    nudge_arithmetic,
    portable_problems,
    read_references,
    same_arithmetic,
    sum_matches,
    write_references,
)

import sb3_fair  # noqa: F401  (registers the envs)
from sb3_fair import metrics
from sb3_fair._exact import all_finite, pairwise_sum
from sb3_fair.common.fairqcm.memory import (
    MemorySpec,
    counterfactual_memories,
    decode_memory,
    encode_counter,
    encode_memory,
    initial_memory,
    memory_increment,
    update_memory,
)
from sb3_fair.common.fairqcm.reward import RewardSpec, assessed, fairness_reward, potential_shaping
from sb3_fair.common.protocol import get_benefits, get_fairness_signals
from sb3_fair.common.stakeholders import Stakeholders
from sb3_fair.envs import DonutAllocationEnv, LoanApplicantsEnv, make_donut_allocation, make_loan_applicants
from sb3_fair.wrappers.fairness_reward import FairnessReward
from sb3_fair.wrappers.memory_augmentation import MemoryAugmentation


# ------------------------------------------------------------------------------------------ envs with other benefits
class _RealBenefits(gym.Env):
    """Six stakeholders in groups (0, 0, 0, 1, 1, 2) who receive real-valued benefits (sometimes nothing at all).

    ``bad`` names a kind of bad ``info["benefits"]`` reported at every 7th step: ``"missing"``, ``"shape"``, ``"nan"``,
    ``"inf"``, ``"text"``, ``"below_minus_one"`` (an entry of -3, outside log-Nash's domain) or ``None``.
    """

    def __init__(self, bad: str | None = None, scale: float = 1.0, horizon: int = 25) -> None:
        self.stakeholders = Stakeholders(names=tuple(f"s{i}" for i in range(6)), groups=np.array([0, 0, 0, 1, 1, 2]))
        self.observation_space = spaces.Box(-1.0, 1.0, (3,), dtype=np.float32)
        self.action_space = spaces.Discrete(3)
        self.horizon, self.bad, self.scale = horizon, bad, scale
        self.t = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.t = 0
        return self.np_random.uniform(-1, 1, 3).astype(np.float32), {}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        self.t += 1
        b = self.np_random.random(6) * (self.np_random.random(6) < 0.5) * self.scale
        if int(action) == 0 and self.np_random.random() < 0.5:
            b = np.zeros(6)
        info: dict[str, Any] = {"benefits": b}
        if self.bad is not None and self.t % 7 == 0:
            info = {
                "missing": {},
                "shape": {"benefits": b[:4]},
                "nan": {"benefits": np.where(np.arange(6) == 2, np.nan, b)},
                "inf": {"benefits": np.where(np.arange(6) == 4, -np.inf, b)},
                "text": {"benefits": "abc"},
                "below_minus_one": {"benefits": np.where(np.arange(6) == 1, -3.0, b)},
            }[self.bad]
        obs = self.np_random.uniform(-1, 1, 3).astype(np.float32)
        return obs, float(self.np_random.normal()), self.t >= self.horizon and action == 2, self.t >= self.horizon, info


class _ListBenefits(DonutAllocationEnv):
    """The doughnut env reporting its benefits as a list of ints (the contract asks for floats; NumPy reads them)."""

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = super().step(action)
        info["benefits"] = [int(x) for x in info["benefits"]]
        return obs, reward, terminated, truncated, info


def _every_10th(t: int, benefits: np.ndarray, info: dict) -> bool:
    return t % 10 == 0 or bool(benefits[0] > 0)


def _memory(env: gym.Env, **kwargs: Any) -> MemoryAugmentation:
    return MemoryAugmentation(env, **kwargs)


def _welfare_case(base: Callable[[], gym.Env], welfare: str, scheme: str, aggregate: str, memory: dict[str, Any] | None,
                  **kwargs: Any) -> Callable[[], gym.Env]:
    def make() -> gym.Env:
        env = base()
        if memory is not None:
            env = MemoryAugmentation(env, **memory)
        flt: Any = {"bounded": _every_10th}.get(scheme)
        return FairnessReward(env, welfare=welfare, scheme=scheme, aggregate=aggregate, filter=flt, period=3, **kwargs)
    return make


#: welfare name -> welfare_kwargs
WELFARES = {
    "utilitarian": {}, "egalitarian": {}, "rawls": {}, "nash": {}, "log_nash": {}, "alpha_fair": {"alpha": 0.5},
    "ggf": {}, "parity": {}, "neg_gini": {},
}
SCHEMES = ("anytime", "long_term", "periodic", "bounded")

#: case id -> (factory, steps)
CASES: dict[str, tuple[Callable[[], gym.Env], int]] = {}
for kind in ("full", "min", "reset"):
    for enc in ("raw", "scaled", "binary"):
        CASES[f"donut:{kind}_{enc}"] = (lambda k=kind, e=enc: make_donut_allocation(memory=k, encoding=e, horizon=40), 200)
        CASES[f"loan:{kind}_{enc}"] = (lambda k=kind, e=enc: make_loan_applicants(memory=k, encoding=e, horizon=30), 200)
        CASES[f"loan_gaussian:{kind}_{enc}"] = (
            lambda k=kind, e=enc: make_loan_applicants(memory=k, encoding=e, horizon=30, credit_change="gaussian"), 200)
CASES["donut:period3_binary"] = (lambda: make_donut_allocation(memory="full", encoding="binary", period=3, horizon=20), 200)
CASES["donut:tabular_min_period4"] = (
    lambda: make_donut_allocation(memory="min", encoding="scaled", period=4, n_customers=3, horizon=12), 200)
CASES["donut:no_memory"] = (lambda: make_donut_allocation(memory=None), 200)
CASES["loan:period5_binary"] = (lambda: make_loan_applicants(memory="full", encoding="binary", period=5, horizon=20), 200)
CASES["loan:no_memory"] = (lambda: make_loan_applicants(memory=None, horizon=20), 200)
CASES["donut:dict_reset_raw_period2"] = (
    lambda: FairnessReward(MemoryAugmentation(DonutAllocationEnv(horizon=15), kind="reset", encoding="raw", period=2,
                                              dict_observation=True), welfare="log_nash", scheme="bounded", filter="benefit"), 150)
CASES["donut:max_value_7_scaled"] = (
    lambda: FairnessReward(MemoryAugmentation(DonutAllocationEnv(horizon=30), kind="full", encoding="scaled", max_value=7.0),
                           welfare="log_nash"), 150)
CASES["donut:list_benefits"] = (
    lambda: FairnessReward(MemoryAugmentation(_ListBenefits(horizon=20), kind="min", encoding="binary"), welfare="parity"), 150)
for i, (welfare, wkw) in enumerate(WELFARES.items()):
    scheme = SCHEMES[i % len(SCHEMES)]
    CASES[f"donut:welfare_{welfare}_{scheme}"] = (_welfare_case(
        lambda: DonutAllocationEnv(horizon=25), welfare, scheme, "individual", {"kind": "min", "encoding": "scaled"},
        welfare_kwargs=wkw, fairness_coef=0.7, task_coef=0.3), 150)
    scheme = SCHEMES[(i + 1) % len(SCHEMES)]
    CASES[f"loan:welfare_{welfare}_{scheme}"] = (_welfare_case(
        lambda: LoanApplicantsEnv(horizon=25), welfare, scheme, "group",
        {"kind": "full", "encoding": "binary", "per_group": True}, welfare_kwargs=wkw, fairness_coef=1.3, task_coef=0.1), 150)
    for aggregate in ("individual", "group"):
        scheme = SCHEMES[(i + 2 + len(aggregate)) % len(SCHEMES)]
        for kind in ("full", "min", "reset"):
            memory = {"kind": kind, "encoding": "raw" if kind != "min" else "scaled", "per_group": aggregate == "group",
                      "max_value": 25.0}
            CASES[f"real:welfare_{welfare}_{aggregate}_{scheme}_{kind}"] = (_welfare_case(
                lambda: _RealBenefits(), welfare, scheme, aggregate, memory, welfare_kwargs=wkw,
                fairness_coef=0.9, task_coef=0.2), 120)
for bad in ("missing", "shape", "nan", "inf", "text", "below_minus_one"):
    CASES[f"real:bad_{bad}_memory"] = (lambda b=bad: _memory(_RealBenefits(bad=b), kind="full", encoding="raw"), 60)
    CASES[f"real:bad_{bad}_reward"] = (lambda b=bad: FairnessReward(_RealBenefits(bad=b), welfare="log_nash"), 60)
    CASES[f"real:bad_{bad}_both"] = (lambda b=bad: FairnessReward(
        _memory(_RealBenefits(bad=b), kind="min", per_group=True, encoding="scaled", max_value=30.0), welfare="parity",
        aggregate="group"), 60)
CASES["real:binary_not_integer"] = (lambda: _memory(_RealBenefits(), kind="full", encoding="binary", max_value=25.0), 60)
CASES["real:binary_too_large"] = (lambda: _memory(_RealBenefits(scale=1e9), kind="full", encoding="binary", max_value=25.0), 60)
CASES["real:scaled_large"] = (lambda: FairnessReward(_memory(_RealBenefits(scale=1e300), kind="full", encoding="scaled",
                                                             max_value=25.0), welfare="utilitarian"), 60)
CASES["real:overflow_parity"] = (lambda: FairnessReward(_RealBenefits(scale=1.7e308), welfare="parity"), 60)
CASES["real:overflow_log_nash"] = (lambda: FairnessReward(_RealBenefits(scale=1.7e308), welfare="log_nash"), 60)


def _wrappers(env: gym.Env) -> tuple[MemoryAugmentation | None, FairnessReward | None]:
    memory = reward = None
    e: Any = env
    while isinstance(e, gym.Wrapper):
        if isinstance(e, MemoryAugmentation):
            memory = e
        if isinstance(e, FairnessReward):
            reward = e
        e = e.env
    return memory, reward


def _describe(spec: Any) -> str:
    """A spec's fields, a callable by its name (its repr holds an address)."""
    values = {f.name: getattr(spec, f.name) for f in dataclasses.fields(spec)}
    return repr({k: v.__name__ if callable(v) else v for k, v in values.items()})


def _error(exc: BaseException) -> tuple[str, str]:
    return type(exc).__name__, str(exc)


def run_case(case: str) -> Recorder:
    make, n_steps = CASES[case]
    seed = int.from_bytes(hashlib.sha256(case.encode()).digest()[:4], "little")
    env = make()
    memory, reward = _wrappers(env)
    env.action_space.seed(seed)
    rec = Recorder()
    rec.add(0, "observation_space", (env.observation_space.low, env.observation_space.high)
            if isinstance(env.observation_space, spaces.Box) else repr(env.observation_space), returned=False)
    if memory is not None:
        rec.add(0, "memory_slice", repr(memory.memory_slice), returned=False)
    if reward is not None:
        rec.add(0, "reward_spec", _describe(reward.reward_spec), returned=False)
    resets = {n_steps // 3: {"seed": seed + 7}, (2 * n_steps) // 3: {}}
    obs, info = env.reset(seed=seed)
    rec.add(0, "reset", (obs, info))
    for t in range(n_steps):
        action = env.action_space.sample()
        try:
            obs, r, terminated, truncated, info = env.step(action)
        except Exception as exc:  # noqa: BLE001 - the error is part of the golden
            rec.add(t, "error", _error(exc), returned=False)
            obs, info = env.reset()
            rec.add(t, "reset", (obs, info))
            continue
        rec.add(t, "step", (obs, r, terminated, truncated, info))
        if memory is not None:
            rec.add(t, "memory", memory.memory)
            rec.add(t, "decoded", memory.decode(obs))
        if terminated or truncated:
            obs, info = env.reset()
            rec.add(t, "reset", (obs, info))
        elif t in resets:
            obs, info = env.reset(**resets[t])
            rec.add(t, "reset", (obs, info))
    return rec


# ------------------------------------------------------------------------------------------ the functions alone
def _call(rec: Recorder, step: int, field: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    try:
        out = fn(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - the error is part of the golden
        rec.add(step, field, _error(exc), returned=False)
        return None
    rec.add(step, field, out)
    return out


MEMORY_SPECS = [
    MemorySpec(n_stakeholders=n, kind=kind, encoding=enc, max_value=mv, groups=groups, period=period)
    for n, groups in ((5, None), (4, (1, 1, 0, 0)), (6, (0, 0, 0, 1, 1, 2)), (3, (2, 0, 2)))
    for kind in ("full", "min", "reset")
    for enc, mv in (("raw", None), ("raw", 40.0), ("scaled", 40.0), ("binary", 40.0), ("binary", 7.0))
    for period in (None, 3)
]


def _memory_functions() -> Recorder:
    rec = Recorder()
    rng = np.random.default_rng(41)
    for s, spec in enumerate(MEMORY_SPECS):
        integral = spec.encoding == "binary"
        rec.add(s, "spec", (_describe(spec), spec.size, spec.n_bits, spec.encoded_size, spec.counter_size,
                            spec.group_ids), returned=False)
        rec.add(s, "initial", initial_memory(spec))
        for k in (None, 1, 9):
            shape = (spec.size,) if k is None else (k, spec.size)
            mem = rng.integers(0, 12, shape).astype(np.float64)
            if not integral:
                mem = mem + rng.random(shape) * (rng.random(shape) < 0.5)
            b = rng.integers(0, 2, spec.n_stakeholders).astype(np.float64)
            if not integral:
                b = b * rng.random(spec.n_stakeholders) * 3.0
            _call(rec, s, "increment", memory_increment, spec, b)
            nxt = _call(rec, s, "update", update_memory, spec, mem, b)
            _call(rec, s, "update_list", update_memory, spec, mem.tolist(), b.tolist())
            enc = _call(rec, s, "encode", encode_memory, spec, mem)
            _call(rec, s, "encode_next", encode_memory, spec, nxt)
            if enc is not None:
                _call(rec, s, "decode", decode_memory, spec, enc)
            _call(rec, s, "encode_list", encode_memory, spec, mem.tolist())
        _call(rec, s, "encode_half", encode_memory, spec, np.full(spec.size, 2.5))
        _call(rec, s, "encode_negative", encode_memory, spec, np.full(spec.size, -1.0))
        _call(rec, s, "encode_above", encode_memory, spec, np.full(spec.size, 1e6))
        _call(rec, s, "encode_tiny_off", encode_memory, spec, np.full(spec.size, 3.0 + 1e-9))
        if spec.encoding != "binary":  # NaN passes the binary check and is cast to an arbitrary int (platform-dependent)
            _call(rec, s, "encode_nan", encode_memory, spec, np.full(spec.size, np.nan))
        for t in (0, 1, 5, 17):
            _call(rec, s, "counter", encode_counter, spec, t)
        m = rng.integers(0, 5, spec.size).astype(np.float64)
        _call(rec, s, "cf", counterfactual_memories, spec, m)
        _call(rec, s, "cf_offsets", counterfactual_memories, spec, m, offsets=(1.0, 2.0, 3.0), max_members=7,
              rng=np.random.default_rng(s))
        _call(rec, s, "cf_empty", counterfactual_memories, spec, m, offsets=())
    return rec


REWARD_SPECS = [
    RewardSpec(welfare=w, welfare_kwargs=kw, aggregate=agg, groups=groups, scheme=scheme, period=3, filter=flt,
               fairness_coef=fc, task_coef=tc)
    for i, (w, kw) in enumerate(WELFARES.items())
    for agg, groups in (("individual", (0, 0, 0, 1, 1, 2)), ("group", (0, 0, 0, 1, 1, 2)), ("group", (1, 1, 0, 0)),
                        ("individual", None))
    for scheme, flt in (("anytime", None), ("bounded", "benefit"), ("periodic", _every_10th), ("long_term", None))
    for fc, tc in ((1.0, 0.0), (0.7, 1.3))
    if not (agg == "group" and groups is None)
]


def _reward_functions() -> Recorder:
    rec = Recorder()
    rng = np.random.default_rng(42)
    for s, spec in enumerate(REWARD_SPECS):
        n = 5 if spec.groups is None else len(spec.groups)
        n_groups = len(set(spec.groups)) if spec.groups is not None else n
        rec.add(s, "spec", _describe(spec), returned=False)
        for trial in range(4):
            status = rng.random(n) * rng.integers(0, 30) + (rng.integers(0, 3, n) if trial % 2 else 0)
            grouped_status = rng.random(n_groups) * 20.0
            batch = rng.random((6, n)) * 15.0
            grouped_batch = rng.random((6, n_groups)) * 15.0
            b = rng.integers(0, 2, n).astype(np.float64) * (trial != 3)
            for t in (1, 3, 10):
                for over in (False, True):
                    _call(rec, s, "assessed", assessed, spec, t, b, over, {"x": 1})
            for active in (False, True):
                task = float(rng.normal())
                _call(rec, s, "reward", fairness_reward, spec, status, active, task)
                _call(rec, s, "reward_list", fairness_reward, spec, status.tolist(), active, task)
                _call(rec, s, "reward_grouped", fairness_reward, spec, grouped_status, active, task, grouped=True)
                _call(rec, s, "reward_batch", fairness_reward, spec, batch, active, task)
                _call(rec, s, "reward_batch_grouped", fairness_reward, spec, grouped_batch, active, task, grouped=True)
            _call(rec, s, "welfare_of", spec.welfare_of, status)
            _call(rec, s, "welfare_of_rows", spec.welfare_of_rows, batch)
            for gamma in (0.0, 0.95):
                _call(rec, s, "shaping", potential_shaping, spec, status, status + b, gamma, False)
                _call(rec, s, "shaping_batch", potential_shaping, spec, batch, batch + b, gamma, rng.random(6) < 0.3)
                _call(rec, s, "shaping_grouped", potential_shaping, spec, grouped_batch, grouped_batch + 1.0, gamma,
                      True, grouped=True)
        _call(rec, s, "reward_negative", fairness_reward, spec, np.full(n, -2.0), True, 0.0)
        _call(rec, s, "reward_nan", fairness_reward, spec, np.full(n, np.nan), True, 0.0)
        _call(rec, s, "shaping_gamma_1", potential_shaping, spec, np.zeros(n), np.zeros(n), 1.0)
    return rec


def _metric_functions() -> Recorder:
    rec = Recorder()
    rng = np.random.default_rng(43)
    inputs: list[Any] = [rng.random(k) * 10.0 ** rng.uniform(-3, 3) for k in (1, 2, 3, 5, 7, 8, 9, 17, 130)]
    inputs += [rng.integers(0, 50, 6), [1, 2, 3], [0.0] * 4, [-0.5, 0.0, 2.0], [-1.0, 1.0], [-3.0, 2.0], [np.nan, 1.0],
               [np.inf, 1.0], [], [[1.0, 2.0]], "ab", [1e308, 1e308], [1.7e308, -1.7e308], [-0.0, -0.0], 3.0]
    for i, u in enumerate(inputs):
        for name, kw in WELFARES.items():
            _call(rec, i, f"welfare_{name}", metrics.welfare, u, name, **kw)
        for name in ("log_nash", "parity", "utilitarian", "egalitarian", "nash", "gini"):
            _call(rec, i, name, getattr(metrics, name), u)
        _call(rec, i, "alpha_fair_1", metrics.alpha_fair, u, 1.0)
        _call(rec, i, "alpha_fair_2", metrics.alpha_fair, u, 2.0)
    _call(rec, 0, "unknown", metrics.welfare, [1.0], "nope")
    _call(rec, 0, "bad_kwargs", metrics.welfare, [1.0], "parity", alpha=2)
    return rec


def _protocol_functions() -> Recorder:
    rec = Recorder()
    sh = Stakeholders(names=("a", "b", "c"), groups=np.array([0, 1, 1]))
    infos: list[Any] = [{"benefits": np.array([1.0, 0.0, 2.0])}, {"benefits": [1, 0, 2]}, {"benefits": (0.5, 0.25, 0.0)},
                        {"benefits": np.array([1, 0, 2], dtype=np.int8)}, {"benefits": np.array([1.0, 0.0, 2.0], dtype=np.float32)},
                        {}, {"benefits": [1.0, 2.0]}, {"benefits": [[1.0, 2.0, 3.0]]}, {"benefits": [1.0, np.nan, 0.0]},
                        {"benefits": [np.inf, 0.0, 0.0]}, {"benefits": "abc"}, {"benefits": None}, {"benefits": [1.0, "x", 2.0]},
                        {"benefits": np.zeros((3,), dtype=object)}, {"benefits": 1.0}, {"benefits": [True, False, True]}]
    for i, info in enumerate(infos):
        for who in (sh, 3, np.int64(3)):
            _call(rec, i, "get_benefits", get_benefits, info, who)
            _call(rec, i, "get_benefits_env", get_benefits, info, who, DonutAllocationEnv())
            _call(rec, i, "get_benefits_wrapped", get_benefits, info, who, gym.make("sb3_fair/DonutAllocation-v0"))
    signals: list[Any] = [0.5, 1, np.float32(0.25), np.float64(2.0), True, np.nan, np.inf, "0.5", b"1", None, [0.5],
                          np.array(0.5), np.array([0.5]), -0.0, 10**400]
    for i, v in enumerate(signals):
        _call(rec, i, "signals", get_fairness_signals, [{"short_term_fairness": v, "long_term_fairness": 0.1},
                                                        {"short_term_fairness": 0.3, "long_term_fairness": v}])
    _call(rec, 0, "signals_missing", get_fairness_signals, [{"short_term_fairness": 0.1}, {}])
    _call(rec, 0, "signals_empty", get_fairness_signals, [])
    return rec


FUNCTIONS: dict[str, Callable[[], Recorder]] = {
    "functions:memory": _memory_functions,
    "functions:reward": _reward_functions,
    "functions:metrics": _metric_functions,
    "functions:protocol": _protocol_functions,
}


def _record(case: str) -> Recorder:
    return FUNCTIONS[case]() if case in FUNCTIONS else run_case(case)


@pytest.mark.parametrize("case", [*CASES, *FUNCTIONS])
def test_golden(case):
    rec = _record(case)
    mutated = rec.mutated()
    assert not mutated, f"{case}: values returned changed after they were returned (aliased state): {mutated[:10]}"
    problems = portable_problems(rec, read_references("fairness_goldens")[case])
    assert not problems, f"{case}: the records differ from the portable reference: " + "; ".join(problems)
    if same_arithmetic():  # the exact digest, where this machine's kernels are the recording machine's
        assert rec.digest() == GOLDEN[case], f"{case}: the records differ from the golden ones"


def test_every_case_has_a_golden():
    assert set(CASES) | set(FUNCTIONS) == set(GOLDEN) == set(read_references("fairness_goldens"))


#: cases that a planted ulp-scale change reaches (see test_env_trajectories.nudge_arithmetic), of every welfare kind
#: that sums, and of the functions alone. Not ``functions:reward``: its ``reward_negative`` records error messages that
#: print group totals of -2.0 entries (-4.0, -6.0), which the planted change nudges too (a real machine's sum of
#: small integers is exact)
NUDGED_CASES = ["donut:full_scaled", "loan:welfare_nash_anytime", "real:welfare_log_nash_group_bounded_full",
                "real:welfare_neg_gini_individual_anytime_full", "real:welfare_alpha_fair_group_anytime_full",
                "real:scaled_large", "functions:metrics"]


@pytest.mark.parametrize("case", NUDGED_CASES)
def test_a_one_ulp_scale_change_passes_the_portable_comparison(case, monkeypatch):
    nudge_arithmetic(monkeypatch)
    rec = _record(case)
    assert rec.digest() != GOLDEN[case], f"{case}: the planted change did not reach the records"
    assert portable_problems(rec, read_references("fairness_goldens")[case]) == []


def test_a_memory_off_by_one_fails_the_portable_comparison(monkeypatch):
    """A memory that counts a benefit twice changes only floats (raw memory is float64): the comparison fails on them."""
    import sb3_fair.wrappers.memory_augmentation as module

    original = module.update_memory
    monkeypatch.setattr(module, "update_memory", lambda spec, m, b: original(spec, m, 2 * np.asarray(b)))
    problems = portable_problems(_record("donut:full_raw"), read_references("fairness_goldens")["donut:full_raw"])
    assert problems and not any(p.startswith("discrete") for p in problems), problems
    assert any(p.startswith("memory:") for p in problems), problems


# ------------------------------------------------------------------------------------------ the exact shortcuts
def test_credit_after_is_numpys_round_and_clip():
    """The loan env's credit update on Python floats equals NumPy's round-to-10-decimals and clip, bit for bit."""
    from sb3_fair.envs.lending import CREDIT_MAX, CREDIT_MIN, credit_after

    rng = np.random.default_rng(44)
    credits = np.concatenate([rng.uniform(CREDIT_MIN, CREDIT_MAX, 20000), np.round(rng.uniform(0.2, 0.9, 5000), 1),
                              np.round(rng.uniform(0.2, 0.9, 5000), 10)])
    deltas = np.concatenate([rng.normal(0.05, 0.1, 10000), rng.choice([-0.1, 0.1], 10000), rng.normal(0.0, 3.0, 5000),
                             (rng.integers(-10**10, 10**10, 5000) + 0.5) / 1e10 - credits[:5000] % 1e-10])
    for c, d in zip(credits.tolist(), deltas.tolist()):
        expected = float(np.clip(np.round(np.float64(c) + d, 10), CREDIT_MIN, CREDIT_MAX))
        assert float.hex(credit_after(c, d)) == float.hex(expected), (c, d)


def _encode_binary_numpy(spec: MemorySpec, m: np.ndarray) -> np.ndarray:
    """encode_memory's binary encoding before the throughput work (the reference)."""
    ints = np.rint(m)
    if np.any(np.abs(ints - m) > 1e-6) or np.any(ints < 0) or np.any(ints > spec.max_value):
        raise ValueError(f"binary memory encoding needs integer entries in [0, max_value={spec.max_value}], got {m}; "
                         "use encoding='scaled' or 'raw' for real-valued benefits, or raise max_value")
    shifts = np.arange(spec.n_bits - 1, -1, -1, dtype=np.int64)
    bits = (ints.astype(np.int64)[..., None] >> shifts) & 1
    return bits.reshape(*m.shape[:-1], spec.encoded_size).astype(np.float32)


def _outcome(fn: Callable[..., Any], *args: Any) -> bytes | tuple[str, str]:
    from test_env_trajectories import encode

    try:
        return encode(fn(*args))
    except Exception as exc:  # noqa: BLE001 - the error is what is compared
        return _error(exc)


def test_binary_encoding_of_one_memory_is_the_batch_encoding():
    """A single memory, encoded on Python ints with the spec's table, equals NumPy's encoding, errors included."""
    rng = np.random.default_rng(45)
    specs = [MemorySpec(n_stakeholders=n, encoding="binary", max_value=mv) for n in (1, 3, 5, 16, 17)
             for mv in (1, 7.0, 7.5, 40.0, 100, 1024.0, 1025.0, 10**6)]
    for spec in specs:
        assert (spec._bit_rows is None) == (float(spec.max_value) > 1024)
        top = float(spec.max_value)
        for _ in range(300):
            m = rng.integers(0, int(top) + 1, spec.size).astype(np.float64)
            kind = rng.random()
            if kind < 0.3:  # near-integers, half-integers, negatives, above the top, -0.0, NaN, inf
                i = rng.integers(spec.size)
                m[i] = rng.choice([m[i] + 1e-7, m[i] - 4e-7, m[i] + 2e-6, m[i] + 0.5, -0.5, -1e-9, -0.0, top + 1.0,
                                   np.floor(top) + 0.4, np.nan, np.inf, -np.inf, 1e300])
            assert _outcome(encode_memory, spec, m) == _outcome(_encode_binary_numpy, spec, m), (spec, m)
            assert _outcome(encode_memory, spec, m.tolist()) == _outcome(_encode_binary_numpy, spec, m)
        batch = rng.integers(0, int(min(top, 50)) + 1, (7, spec.size)).astype(np.float64)
        assert _outcome(encode_memory, spec, batch) == _outcome(_encode_binary_numpy, spec, batch)


def test_group_totals_and_welfare_shortcuts_match_numpy():
    """The group totals of ``welfare_of`` and the short-vector paths of ``log_nash``, ``parity``, ``all_finite`` and
    ``assessed`` give NumPy's results bit for bit (signed zeros, ties and non-finite values included). The sums
    (group totals, ``log_nash``) are NumPy's bit for bit where this machine's kernels are the recording machine's,
    and within the error bound of any order of the additions elsewhere (:func:`test_env_trajectories.sum_matches`);
    ``parity``, ``all_finite`` and ``assessed`` bit for bit everywhere."""
    rng = np.random.default_rng(46)
    for groups in ((1, 1, 0, 0), (0, 0, 0, 1, 1, 2), (3, 0, 3, 3, 0, 1, 3, 3, 3, 0, 3, 3), tuple(rng.integers(0, 3, 40))):
        spec = RewardSpec(welfare="utilitarian", aggregate="group", groups=groups)
        g = np.asarray(groups)
        for _ in range(500):
            u = rng.standard_normal(g.size) * 10.0 ** rng.uniform(-8, 8, g.size)
            u[rng.random(g.size) < 0.2] = rng.choice([0.0, -0.0, 1e308, -1e308])
            with np.errstate(over="ignore", invalid="ignore"):
                expected = [float(u[g == k].sum()) for k in np.unique(g)]
                values = u.tolist()
                got = [pairwise_sum([values[i] for i in members]) for members in spec._group_members]
            assert len(got) == len(expected), (groups, u)
            for k, total, want in zip(np.unique(g), got, expected):
                assert sum_matches(total, u[g == k], want), (groups, u)
    bounded = RewardSpec(welfare="utilitarian", scheme="bounded", filter="benefit")
    for _ in range(20000):
        n = int(rng.integers(1, 20))
        v = rng.choice([0.0, -0.0, 1.0, -0.5, 2.5, 1e-300, 7.0], n) if rng.random() < 0.5 else rng.uniform(-0.9, 50.0, n)
        assert float.hex(metrics.parity(v)) == float.hex(float(np.min(v) - np.max(v))), v
        if np.all(v > -1):
            assert sum_matches(metrics.log_nash(v), np.log1p(v), float(np.sum(np.log1p(v)))), v
        w = v.copy()
        w[rng.integers(n)] = rng.choice([np.nan, np.inf, -np.inf, 1.0])
        assert all_finite(w) == bool(np.all(np.isfinite(w)))
        for b in (v, w, v.astype(np.float32), (v > 0.5), v.astype(np.int64), v.astype(np.complex128), v.tolist()):
            assert assessed(bounded, 1, b, False) is bool(np.any(np.asarray(b) != 0))


def test_memory_spec_caches_keep_it_a_value():
    """The specs' cached layouts do not enter their equality, hash, repr, fields or pickles."""
    import pickle

    a = MemorySpec(n_stakeholders=4, encoding="binary", max_value=40.0, groups=(1, 1, 0, 0))
    b = MemorySpec(n_stakeholders=4, encoding="binary", max_value=40.0, groups=(1, 1, 0, 0))
    pickled = pickle.dumps(a)
    encode_memory(a, update_memory(a, initial_memory(a), np.ones(4)))
    encode_memory(a, np.ones((3, 2)))
    assert a.encoded_size == 12 and a.counter_size == 0
    assert a == b and hash(a) == hash(b) and repr(a) == repr(b) and pickle.dumps(a) == pickled
    assert [f.name for f in dataclasses.fields(a)] == ["n_stakeholders", "kind", "encoding", "max_value", "groups", "period"]
    c = pickle.loads(pickled)
    assert c == a and c.encoded_size == 12 and c._bit_rows == a._bit_rows
    r = RewardSpec(welfare="parity", aggregate="group", groups=(1, 1, 0, 0))
    pickled = pickle.dumps(r)
    r.welfare_of(np.ones(4))
    assert pickle.dumps(r) == pickled and pickle.loads(pickled) == r
    assert r == RewardSpec(welfare="parity", aggregate="group", groups=(1, 1, 0, 0))


# ------------------------------------------------------------------------------------------ goldens (generated)
GOLDEN: dict[str, str] = {
    'donut:full_raw': 'c5950c42e92fe58b8bc1cfc380d97f1ab038373dcdb2891bf56dada6442d8198',
    'loan:full_raw': 'db2f239329f683b7853c3c345422858aa9d146ce2f51fee72cd5b28ca6fc82f6',
    'loan_gaussian:full_raw': 'd5372a3b6708482d71bf4d2af675872afac1a89b7b525718621cfc58c60426d6',
    'donut:full_scaled': 'f815aa44469a2bc87e8de3487e4c05ed02caaea9942afbad2872950d2dd341f7',
    'loan:full_scaled': 'd97ef3691ba496dca81ad5b614136bc473f066c20abeb3f5bd20cb8823b478f7',
    'loan_gaussian:full_scaled': 'c9ba57e9cfd86bbfb6c8a858041044b809431c3cf5b63b5666f9274135d6cdc0',
    'donut:full_binary': 'e465548789f65417eba5e846fbc56803a5cd568c08856b17c36cb3d6d73ba30d',
    'loan:full_binary': '9a9a53f56d1e4f484733240cd7d834b4888f2fdc2487a780084ba749adb40582',
    'loan_gaussian:full_binary': '511f98043a850a1768b03569dfb5291372c239c07006a068c8b5eb2baf5434a6',
    'donut:min_raw': '9786f46e3b5cf9f50011ae0e5aaec7411460bf5f76d44d18e00e57b0617b7f22',
    'loan:min_raw': '7fa015df24d0872af19d00f3d91e997262b5e717a7714711c3713da7cb0766e7',
    'loan_gaussian:min_raw': '96da7faef0b375947d533a6bc6f0cd9a900de1d22d04baa012cca78bfb08b5fb',
    'donut:min_scaled': '3ca72b47449529cbf130741904277d284dde27765989d68ea396a21fc97c2e58',
    'loan:min_scaled': '9eb307b14a22e023c459662924119d8a77570f1c14b84a71e690c4b38901e901',
    'loan_gaussian:min_scaled': 'b88b74e795387f059968a5710cc7c4ce9c92a7dca72a8e5269c81659aa10c154',
    'donut:min_binary': '3dbecf2d149e51b88b903a2b7fe94d452a3b170a34cce366cb82888217948c26',
    'loan:min_binary': 'b591f39ff354c6b736be50271f0c934dd77c7488ddeead8f67762668da752c56',
    'loan_gaussian:min_binary': '3ed7af37ef5e6dc4d89f21b713be534504fd566eee0d840e380cb48a978e3135',
    'donut:reset_raw': '0ce09a10c9ebc890717c0a8ef17558d6eb412aa729eaa27ac6ea5f7ff4033a92',
    'loan:reset_raw': '16c54c8603dc14ad425b641bd5ce3cf63c4456ed620e59c1ec78616876ba4849',
    'loan_gaussian:reset_raw': '398e0a826181d226eaaf818dda3f6e94fddc494e32d96b6f5ffbf6c2cf6f8783',
    'donut:reset_scaled': '615a196fbaa5235a70f6749c8429b504a6b9924ff8dd78d48260de3d9596da55',
    'loan:reset_scaled': '3b7d3dae40c2c42357d2c49c2df7b1c2b811be71c5499791c9f7791ce7fc5d3d',
    'loan_gaussian:reset_scaled': 'fca7439d4b08150e4fa6673aac8315f8c05d8284bc2877afbcf5fb361b5aa833',
    'donut:reset_binary': 'df346f104eea0f8e95483514d7d577119937948f1e1463b4ef928aa914ea5135',
    'loan:reset_binary': 'f2052790655956d49898341baec7806cd058c2e0ae3f41821bc5cde427c20772',
    'loan_gaussian:reset_binary': '67e21d93822b05dd1949a1794d4e5bf7599e3ba467dbd9e31f3b56387b2b9def',
    'donut:period3_binary': 'd417bf3e0d9d4f89c6a27ab336dd29b1b4334f45966d6c31ac045a77f5ce543b',
    'donut:tabular_min_period4': 'ee7e675f793e3c33261aa2b78ce526430f7f98074c7b86e09f44e6fe6ba1b11c',
    'donut:no_memory': 'e375fd372dfd049dfdf2e3ab10d91568f18f11a6da702febe9fa1109df3fe372',
    'loan:period5_binary': 'a2a279f3f45c558279238168a8822bda49aa0c23038249edf4127e2ba21eeb93',
    'loan:no_memory': '592b313c2916adb7e9a089eb0cb65087bb08982dcb19cefc23a864895f9fb1b7',
    'donut:dict_reset_raw_period2': '0670932e1aef7e0e4a1e43d1c33435f89cb74ff7d756434b07f1cd8c20e875a8',
    'donut:max_value_7_scaled': '8c58bbaf585dbb48e04d17adebe1c13dd9a29906729a2c535aa5104bce91422b',
    'donut:list_benefits': 'bac6550f93bbdabfdf6eb0593c3aa9372d8deca869ad9ab0c75d984b0a45d9b6',
    'donut:welfare_utilitarian_anytime': 'c365e4b5a7538526bb5eba16beab6b46b35a6cd2e20bb843b4acf0d2666aa2ca',
    'loan:welfare_utilitarian_long_term': '0486315dc20b251b67b87d4bea4ad425fd438e17087fc138af88c77b8b86dbe6',
    'real:welfare_utilitarian_individual_anytime_full': 'bf3c9ed31165d9e841db1572b14f4ddeb65a888b202ffa01d0c6b8d4d77b336c',
    'real:welfare_utilitarian_individual_anytime_min': 'd2e72024c29949911b5c6603fb07e8623d8fd395ff509528eb379d93b9ca4e5d',
    'real:welfare_utilitarian_individual_anytime_reset': '77cf126f1108cfa7459b9d627c2fe1ee0fb900e312904a3061bbfeced04c4232',
    'real:welfare_utilitarian_group_bounded_full': '98d7f799dc8622a014c47b111de5d081c0d86a0c381727dbae355ea5129756c0',
    'real:welfare_utilitarian_group_bounded_min': 'd86c1700aa7f577bb3a6edc1aca80efd9691bb415c0323f23ab9db84896128aa',
    'real:welfare_utilitarian_group_bounded_reset': 'c30e69fdb3432b4e0dbfc727cf6f1d73b23c4090b07cba7ff4e34596ce995b7c',
    'donut:welfare_egalitarian_long_term': '9e39a693edf03a3b8d1d2965faba103589aee51a85fa6ec11631698796db7fd7',
    'loan:welfare_egalitarian_periodic': '980527b547c03178ac107f293e411b7aef48f09f67ea7c46ea55ec2297945da7',
    'real:welfare_egalitarian_individual_long_term_full': '6fbda8a4920328735fda6ed67e239ed8992d6bde720e4f3ac0b4f54ba64a828a',
    'real:welfare_egalitarian_individual_long_term_min': '174acd06b333c5b5a51a8bea7d32f9994345bcfc81f63cbc9e016e2e863bfa72',
    'real:welfare_egalitarian_individual_long_term_reset': '3609073ac6ae7a6800b1170ccebeaf7605cf6917353c635dfad8189f4e781a47',
    'real:welfare_egalitarian_group_anytime_full': '1c7c6179856d3defc743a207be885ba8016c3d2f12aa3d1b9b2f263127b14aa8',
    'real:welfare_egalitarian_group_anytime_min': '2e1066d65cb248dd3a7345b260f98604fbc3e1f321bc17c72d6c98029c7bd6f4',
    'real:welfare_egalitarian_group_anytime_reset': '7aa902a1b1cd1b5e29069c01e7e861f0ab84f69f18e919b2191b821a42d87908',
    'donut:welfare_rawls_periodic': '9cb554854bdd0e0bd1c0b6a009b0ec98f5df82f94c0fc11ed5f616c8ab35145c',
    'loan:welfare_rawls_bounded': 'd694b040a05c665bd0eda969dbfaa534cebcf88bbe11ccc1244336b44e2dc9b6',
    'real:welfare_rawls_individual_periodic_full': '19a88f38db2805b1294a92e61792c473edeaba0e57964b1c2a9e5d5892e652d8',
    'real:welfare_rawls_individual_periodic_min': '52b61507e372d9796ba60372d7e5852d8bba132aa66ec9bfffbe76510c33eb45',
    'real:welfare_rawls_individual_periodic_reset': '0f1966f3d87af68e030a71b188d189dabb67946ae6b743c1154ba1656342fdcd',
    'real:welfare_rawls_group_long_term_full': 'ab1052be80a3bf364336355095fcb9c1b5bf7323e2bb0918bb28800c1f07738f',
    'real:welfare_rawls_group_long_term_min': 'c59cff07917d77793711f7b58ec6b18ed706560d3462cefc6761c5356205d421',
    'real:welfare_rawls_group_long_term_reset': '2bfef85dd9672f28a18c5417dc798f7047b1e2bdf77d3cc87efbb9d619d2745d',
    'donut:welfare_nash_bounded': 'b37c4c3d9db2b0d850c410b8a791a17ef2ed4754533abfa8696a4b44ec371342',
    'loan:welfare_nash_anytime': 'de03a5f76855d57cdd02608bd5f173988562c35f42e3ecdc63db62ef06d95d3a',
    'real:welfare_nash_individual_bounded_full': '04d4c6beea3062d2302252847fe0902985dcdc30e0dea3f7340a1558d5f344d0',
    'real:welfare_nash_individual_bounded_min': '04013643d1ef8dbc9088e4a7ec7ab5fcc71614097d78810b20b4c063da83759e',
    'real:welfare_nash_individual_bounded_reset': 'f1cbc25a6954c4da397d5be27754e05ccbb1df4d556fa69e80bf1e5726db3ea6',
    'real:welfare_nash_group_periodic_full': '46be470b0335cead17424dbca7d7a5de4146631b8c0f9fd60fd2e6be2edd2fe5',
    'real:welfare_nash_group_periodic_min': '99ad28c7c910a626ec60a5583e454a30bc3197a87ee1a5b2fd813772acb522e7',
    'real:welfare_nash_group_periodic_reset': '9e6efb7f25691a8abe5f99ae7695ac3cd1849d8f1b36f42c03c625dd220ec875',
    'donut:welfare_log_nash_anytime': '616c4dff471bdeba3951d8e7ac90619378821893985bbf843369539a481f74a2',
    'loan:welfare_log_nash_long_term': '35f24be1efbc0953021c83cd62b9d8a958088c4c7fd6e800bba6d3473b8b7d43',
    'real:welfare_log_nash_individual_anytime_full': 'c389c6d7229846427a9f6e85ecc03d39bc6f38448f336c77746277ea7cde7a07',
    'real:welfare_log_nash_individual_anytime_min': 'efd60d01e8b54b6d8c58d90e01c7968b2b2aa532ae6bc96916620e180609d576',
    'real:welfare_log_nash_individual_anytime_reset': '38376d2f431c604949c5e43d5ae2f1474d7d7137890803d117f159fab3eb63a4',
    'real:welfare_log_nash_group_bounded_full': 'f83272fd7a717974efe08117407fda1e6a3457da5a7637193caf93661fdbb468',
    'real:welfare_log_nash_group_bounded_min': '5d18d92322bc16e0adb39a337325129c83bee9edd724cd68072175112aeb3ef7',
    'real:welfare_log_nash_group_bounded_reset': '4b5b2b601f0d18fd6d118e62edfdc4e109e1353290b350040b3b3a16191c8c70',
    'donut:welfare_alpha_fair_long_term': '72e708db46e0161fa69f9dab443af6d134597cc39c565c41e4f251df997459b6',
    'loan:welfare_alpha_fair_periodic': 'fd3b41222904bb5885e7b7d6550d7ef98c27d40c3326fd414467b970baaa3a4b',
    'real:welfare_alpha_fair_individual_long_term_full': '974c046d82f6522d8e4de59a7cda8ce7fea63519274081f347e340bb08c2bdf1',
    'real:welfare_alpha_fair_individual_long_term_min': 'd739383b682d8c89fbd183c4c1bb9484ff7f4852097101a624f241ebdc87e79c',
    'real:welfare_alpha_fair_individual_long_term_reset': 'e37802108edb7b920a9ae129582f9d9a14e4db6c05919516f0c3fed47c5dc8b3',
    'real:welfare_alpha_fair_group_anytime_full': '11c2c63a6142311db393b8da6afc5b4a302654022797ab069dfc4c8a8538b353',
    'real:welfare_alpha_fair_group_anytime_min': '4b0a904a68a2a193a78b5a35eca7137d3d56323f40f5ac059fad9c2f2db95567',
    'real:welfare_alpha_fair_group_anytime_reset': 'a8276f50f796a9b4ce78ac9eb4fdbb29a53217d7357c65c9292fe4a586630d63',
    'donut:welfare_ggf_periodic': 'c15647386b8d18b063f04152af516586c9509b645094d817cb9a8d7f502e136f',
    'loan:welfare_ggf_bounded': '56c10ceed2fb655e860ccb14fe4ab3375fdc9be89b9389a6a1d29112d4f3090a',
    'real:welfare_ggf_individual_periodic_full': '6a9f3730bb0e27b14910cd1a71ae8dafda71762202bcf73345229d1c7707e2df',
    'real:welfare_ggf_individual_periodic_min': 'd7c2ec4274c9cbbfee491c2f4be372f3db7037db570a03637f66c49e0ecf7ddc',
    'real:welfare_ggf_individual_periodic_reset': 'e7fb7633fe6983b73bb31c75c33280e1e9ced5f505de92129559ec1f3e69c622',
    'real:welfare_ggf_group_long_term_full': '0f2d3954fbc695db757abc3ca3f4b7b71323c2fd805f30de1ebae45fe946ff79',
    'real:welfare_ggf_group_long_term_min': 'f4218597990fbde53b4cce085b5ced7cf0955433df29539e1219e71942ff0c05',
    'real:welfare_ggf_group_long_term_reset': 'bdd91f57d4b42fc53a6059b0efc26884860d775f870e1e578ed6da6a68c41100',
    'donut:welfare_parity_bounded': '4d6e151b950931ae6059a68238e3938897f33c177d6a629426f18b60db785005',
    'loan:welfare_parity_anytime': 'ccbb3fce9cdf6d19b43398d5c3f6ff8e61965f27cd6cb89d26baafe603d62668',
    'real:welfare_parity_individual_bounded_full': 'ac767c930e98d8f7212b18b7a7365380eae97e9df1f6866a79b496f86cc6c3f9',
    'real:welfare_parity_individual_bounded_min': '7d7d80d63002fe75a3eba27f828ebac61552629ad58cb06ec417036009c1ce8d',
    'real:welfare_parity_individual_bounded_reset': '82b678ca409be568f76a248632049e325bf2a028f911bbd50e13ab0aa213b0b9',
    'real:welfare_parity_group_periodic_full': '63953a3196a672fa812087028f6b846fc61497550660939d81ba0f48577e61b1',
    'real:welfare_parity_group_periodic_min': 'c84ec0386df91e8c5cbbf8207c7c77a355c53f595318ba372d4005638c1f5c0c',
    'real:welfare_parity_group_periodic_reset': '062194065b8c0923a0af2dffa2e0ef5b9e9e8bc326312741b7b044e139b5bf14',
    'donut:welfare_neg_gini_anytime': '4b4ba0982c75780c6fb454b567af4f62cefc54aeb09877873d099e59fdf0eece',
    'loan:welfare_neg_gini_long_term': '1e2f334edbd656eb11fc5e6a94ed75d15b3c09ce36d345ccf49284dc327cf52d',
    'real:welfare_neg_gini_individual_anytime_full': '898c51e4ad6e25b41b059bf4e664515cfd5dbc3d707eba31629dfa4060c8d307',
    'real:welfare_neg_gini_individual_anytime_min': '6f505137fbbf4dfd5b50275e94389909ad4d03ab731760cfda5abc05f045b242',
    'real:welfare_neg_gini_individual_anytime_reset': 'b0d8ef975f1b7472b22482091b5dfb8e7fee5ae060eddffaf2235754bb793840',
    'real:welfare_neg_gini_group_bounded_full': '96323f8580378220e998bfd224fac0fba3a707b97476a783887adfd1f569d27b',
    'real:welfare_neg_gini_group_bounded_min': '789e269943590e45c67de6da2b0b20e8f4ff150c1a2e00a32b80e0fd866c6dd1',
    'real:welfare_neg_gini_group_bounded_reset': '4ced5bd7b6a2f1c2d68254fc41d1ad618ce94bb415268777fdd0399d5b725477',
    'real:bad_missing_memory': '81ae251782eb8cdca85ee7f2eb22cdcc2c4ba24264d6ce42840d8af89e9e8384',
    'real:bad_missing_reward': '18877f6096134c405664dead74e1edcf5992f6c364e82f98fcfe1ebc095ce3ed',
    'real:bad_missing_both': 'b39de792e9516209875c3d14e6494aea810efa3354a868cb690037ffbfbd4a2d',
    'real:bad_shape_memory': '5f0018f8183ff64faf7c8305b26d7aa9defb5a03a49d07cdc50a5ef48dafda65',
    'real:bad_shape_reward': '5a042ec92e287679b4278dc0a370b6e769617a697c8f8d3c11cc7afceca32dd8',
    'real:bad_shape_both': 'f87ded9ec8c34520c6598abf7dd64e62d7146e067eb797d8bbef29f2697fdf31',
    'real:bad_nan_memory': 'ba7bb61f087c29d559f2da2877181a317a17b3375309a397e4a850d86dc8862b',
    'real:bad_nan_reward': 'afbd91d6317f747972dbf7900d1526a595d4f669d50d5b16553af5f1c6836e52',
    'real:bad_nan_both': '4fa5f678a26b7b3f844dbf4ac09d2f956860dc42df5ed8392c476b8ebb4a18ad',
    'real:bad_inf_memory': '6304635ed060bb897227fa002c3db3c304108931d8032f9d9f0354b44ce83077',
    'real:bad_inf_reward': '37b390b5161a75c72a554e083dc891a2e654611e63b8329e8c25dcc033f0886e',
    'real:bad_inf_both': 'e6c62b27f2afb367fc3f7ccdb063d8f23f98e06d6998708c5fa2a88e4122ae0a',
    'real:bad_text_memory': 'ff9df470c01ed702649cdea33a4fa4671ad47c207252aac34e0aa0fb30abb03f',
    'real:bad_text_reward': 'd5ee98425d43d240b86a188102975ee871ead4b9752ca75b1c95052b50af2f92',
    'real:bad_text_both': 'beb2a972495e576733bfebcdc5f841ff74bfdd3dfbc9ec3573b2cbff68a71b47',
    'real:bad_below_minus_one_memory': '8ef06f3de46082eb8cabe9d48b060994e5d95ff002e4e21e0f163f1aa86b3590',
    'real:bad_below_minus_one_reward': '11002a3821d6376a3ca0b24d829e473624cfc5d5ffcb5e2d241f080ddaaa61b2',
    'real:bad_below_minus_one_both': '02ec660a4df31384ef0323bdd8c1376c5c9f47cf733f9bfdce36e5e46521b5de',
    'real:binary_not_integer': '5bdb64e18c249421fd9526c5f8a21e7a57e39e34fcbd280bb6af584dc679e0a5',
    'real:binary_too_large': '38470e81ca63f2f27b9b0e4e50b749ef415fbcbb238b677a76c92ae9e7b6715e',
    'real:scaled_large': '8f0826e390cb992e306ad1f330b00751fd2e0ebf60d831ce2461fd0603d62442',
    'real:overflow_parity': 'e1bd1d95a24d756222a3e8d9bafa7ba95b70ddd324a38b142b6caadc66e276bd',
    'real:overflow_log_nash': 'a23fdb1bd8c3dff085ede4ae1f5977d3d4910cda12f2a68ea17233a42e3ef624',
    'functions:memory': '7017c84304f1acdf2659e4c4262e35389bae976c28ad6b1b3117902f8cb0a5af',
    'functions:reward': 'eee921d51c70a1d024eb93cd6b28c4da5939a85c275e4f513c70e39dd77cf261',
    'functions:metrics': '43788196cd4f3ca5894e3c2e961577f556d5b46bb37aa7f670fb703335694751',
    'functions:protocol': 'a74bfb273043a9500efcd9c8dc7472c451ac826c8a574c2b302b593dbd20411b',
}

if __name__ == "__main__":
    import sys

    records = {name: _record(name) for name in [*CASES, *FUNCTIONS]}
    write_references("fairness_goldens", records)
    sys.stderr.write("wrote tests/data/portable/fairness_goldens.json and .floats.xz\n")
    if not same_arithmetic():
        sys.stderr.write("note: this machine's kernels are not the recording machine's (CANARY); GOLDEN is its digests\n")
    sys.stdout.write("GOLDEN: dict[str, str] = {\n")
    for name, rec in records.items():
        sys.stdout.write(f"    {name!r}: {rec.digest()!r},\n")
    sys.stdout.write("}\n")


def test_a_memory_of_the_wrong_length_is_refused_by_the_short_path_too():
    """The Python path for one short binary memory takes only the spec's length; anything else goes to NumPy's
    path, which refuses it as it always did."""
    spec = MemorySpec(n_stakeholders=3, encoding="binary", max_value=3)
    for wrong in ([1, 2], [1, 2, 3, 0]):
        with pytest.raises(ValueError, match="reshape"):
            encode_memory(spec, wrong)
