"""Seeded trajectories of every single-agent env: to a tolerance anywhere, bit for bit where the kernels allow.

Every registered ``sb3_fair/`` id (through ``gym.make``, with its default wrappers), the default construction of
each env class, and variants that reach other code paths (short windows and horizons, every ``long_term``
measure, rendering, a Dict observation, reference policies) run a few hundred steps of seeded actions
(``env.action_space.seed`` and a fixed NumPy ``Generator``), with several resets (seeded and unseeded, at
episode ends and forced mid-episode). Every observation, reward, terminated, truncated and info dict (recursively),
the what-if answers (``fairness_what_if``) where the env has them, the env's public state and its random
generator's state are serialised exactly (arrays as dtype, shape and bytes; floats as ``float.hex``; dicts by
sorted keys; every value with its type) and hashed.

Each case is compared twice:

* **portably, on every machine** (issue 47): :func:`split` takes the floating-point values out of each record;
  what is left (types, dtypes, shapes, keys, ints, bools, strings, integer and boolean arrays such as the images
  of ``render``, the random generators' states, and where the floats were) is hashed and compared exactly, and
  the floats themselves, every one of every step, are compared to a tolerance: relative 1e-9 and absolute 1e-12
  for float64 (``F8_RTOL``, ``F8_ATOL``), relative and absolute 1e-6 (about 8 float32 ulps) for float32
  (``F4_RTOL``, ``F4_ATOL``). Why those: other machines' NumPy / BLAS kernels (and libm) differ from the
  recording machine's in the last bit of some results (1e-16 relative), which the trajectories carry forward;
  with every float64 result of NumPy's and ``math``'s functions, reductions, dot products and norms and of the
  envs' Python sums changed by a few ulps (:func:`nudge_arithmetic`), no recorded float64 of any case here moves
  by more than 5e-12 of its value (pursuit, whose headings normalise tiny and huge vectors; most cases stay
  under 1e-14), none of ``test_fairness_goldens.py`` by more than 3e-11, and no float32 at all, so 1e-9 leaves a
  margin of 30 to 200 and more; a behaviour change moves values by far more (an off-by-one, a reward + 1, a
  constant changed in its 7th digit: ``test_a_behaviour_change_fails_the_portable_comparison``).
  The absolute 1e-12 admits a zero that another machine computes as a difference of nearly equal numbers of
  up to about 1e3. The references are ``tests/data/portable/env_trajectories.json`` (the exact parts: digests,
  per field and 50-step block a 4-hex-digit digest and the counts of floats) and ``env_trajectories.floats.xz``
  (the floats, float64 then float32, every case in order, xz-compressed). A discrete value that the code decides
  by comparing floats can still differ on a machine whose last bits differ where a comparison is a tie in exact
  arithmetic (``attention:proportional``'s policy allocates by comparing shares of integer counts; see
  ``NUDGED_CASES``): under the planted change, that case's allocations change, and no other case's.
* **bit for bit, where this machine's kernels give the recording machine's bits** (:func:`same_arithmetic`: the
  :func:`_canary` of NumPy's primitives equals ``CANARY``): ``GOLDEN`` holds the sha256 of each case, computed
  from the code before the throughput work; ``TRACE`` holds, per case and per recorded field, 4 hex digits of the
  digest of each 50-step block, so a failure names the first block (steps) and the fields that differ. On other
  machines this extra check is not made (nothing is skipped: the portable comparison decides).

Once the whole trajectory is recorded, everything the env returned is serialised again: a returned array that
the env mutated later (an alias of its state) fails the test too.

``python tests/test_env_trajectories.py`` prints the dicts of the current code and rewrites the portable
references (only to regenerate them after an intended change of the dynamics; on the machine of ``CANARY``, so
that the exact and the portable references agree); ``python tests/test_fairness_goldens.py`` does the same for
that file's cases.
"""

from __future__ import annotations

import functools
import hashlib
import json
import lzma
import struct
import sys
from array import array
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces

import sb3_fair  # noqa: F401  (registers the envs)
from sb3_fair.envs import (
    AttentionAllocationEnv,
    DelayedImpactLendingEnv,
    DonutAllocationEnv,
    EpidemicControlEnv,
    EqualOpportunityPolicy,
    GreedyPursuitPolicy,
    LoanApplicantsEnv,
    MaxDegreePolicy,
    ProportionalAllocationPolicy,
    PursuitEvasionEnv,
)
from sb3_fair.wrappers.fairness_reward import FairnessReward
from sb3_fair.wrappers.memory_augmentation import MemoryAugmentation

BLOCK = 50  # steps per block of TRACE


# ------------------------------------------------------------------------------------------ canonical serialisation
def encode(x: Any) -> bytes:
    """An unambiguous byte string of ``x``: its type, and its value exactly (no rounding, no repr of floats)."""
    if x is None:
        return b"N"
    t = type(x)
    if t is bool:
        return b"b1" if x else b"b0"
    if isinstance(x, np.ndarray):
        a = np.ascontiguousarray(x)
        if a.dtype == object:
            return b"O" + struct.pack("<q", a.size) + repr(a.shape).encode() + b"".join(encode(v) for v in a.ravel())
        head = f"{a.dtype.str}{a.shape}".encode()
        return b"a" + struct.pack("<q", len(head)) + head + a.tobytes()
    if isinstance(x, np.generic):  # before float and int: np.float64 is a float
        head = x.dtype.str.encode()
        return b"g" + struct.pack("<q", len(head)) + head + x.tobytes()
    if t is int:
        s = repr(x).encode()
        return b"i" + struct.pack("<q", len(s)) + s
    if t is float:
        s = float.hex(x).encode()
        return b"f" + struct.pack("<q", len(s)) + s
    if t is str:
        s = x.encode()
        return b"s" + struct.pack("<q", len(s)) + s
    if t is bytes:
        return b"y" + struct.pack("<q", len(x)) + x
    if t in (list, tuple):
        return (b"l" if t is list else b"t") + struct.pack("<q", len(x)) + b"".join(encode(v) for v in x)
    if t is dict:
        items = sorted(x.items(), key=lambda kv: encode(kv[0]))
        return b"d" + struct.pack("<q", len(items)) + b"".join(encode(k) + encode(v) for k, v in items)
    raise TypeError(f"cannot serialise {t.__name__}: {x!r}")


def split(x: Any, skeleton: list[bytes], f8: array, f4: array) -> None:
    """:func:`encode` with the floating-point values taken out: ``skeleton`` receives the bytes of everything else
    (types, dtypes, shapes, lengths, keys, and the values of ints, bools, strings, bytes and non-float arrays), in
    :func:`encode`'s order, and a tag where a float was; ``f8`` receives the float64 values (Python floats, float64
    scalars and arrays, the real and imaginary parts of complex128), ``f4`` the float32 and float16 ones, in order."""
    if x is None:
        skeleton.append(b"N")
        return
    t = type(x)
    if t is bool:
        skeleton.append(b"b1" if x else b"b0")
        return
    if isinstance(x, np.ndarray):
        a = np.ascontiguousarray(x)
        if a.dtype == object:
            skeleton.append(b"O" + struct.pack("<q", a.size) + repr(a.shape).encode())
            for v in a.ravel():
                split(v, skeleton, f8, f4)
            return
        head = f"{a.dtype.str}{a.shape}".encode()
        kind = a.dtype.kind
        if kind in "fc":
            if kind == "c":
                a = a.view(a.real.dtype)
            wide = a.dtype.itemsize >= 8
            (f8 if wide else f4).frombytes(a.astype("<f8" if wide else "<f4").tobytes())
            skeleton.append(b"A" + struct.pack("<q", len(head)) + head)
        else:
            skeleton.append(b"a" + struct.pack("<q", len(head)) + head + a.tobytes())
        return
    if isinstance(x, np.generic):
        head = x.dtype.str.encode()
        if isinstance(x, np.inexact):
            split(np.asarray(x), [], f8, f4)
            skeleton.append(b"G" + struct.pack("<q", len(head)) + head)
        else:
            skeleton.append(b"g" + struct.pack("<q", len(head)) + head + x.tobytes())
        return
    if t is float:
        f8.append(x)
        skeleton.append(b"F")
        return
    if t in (int, str, bytes):
        skeleton.append(encode(x))
        return
    if t in (list, tuple):
        skeleton.append((b"l" if t is list else b"t") + struct.pack("<q", len(x)))
        for v in x:
            split(v, skeleton, f8, f4)
        return
    if t is dict:
        items = sorted(x.items(), key=lambda kv: encode(kv[0]))
        skeleton.append(b"d" + struct.pack("<q", len(items)))
        for k, v in items:
            split(k, skeleton, f8, f4)
            split(v, skeleton, f8, f4)
        return
    raise TypeError(f"cannot serialise {t.__name__}: {x!r}")


class _Block:
    """One field's records in one 50-step block, for the portable comparison: the digest of their skeletons (what
    :func:`split` leaves of them) and their floats."""

    __slots__ = ("discrete", "f4", "f8")

    def __init__(self) -> None:
        self.discrete = hashlib.sha256()
        self.f8 = array("d")
        self.f4 = array("f")


class Recorder:
    """The fields of a trajectory, hashed in order: one running sha256, and one per field and 50-step block.

    Beside them, the portable record (:func:`portable_problems`): one running sha256 of what :func:`split` leaves of
    the values (everything but the floats), one per field and block, and the floats themselves, per field and block.
    """

    def __init__(self) -> None:
        self.total = hashlib.sha256()
        self.kept: list[tuple[int, str, Any, bytes]] = []
        self.blocks: dict[str, dict[int, Any]] = {}
        self.discrete = hashlib.sha256()
        self.portable: dict[str, dict[int, _Block]] = {}

    def add(self, step: int, field: str, value: Any, returned: bool = True) -> None:
        """Record ``value``; ``returned``: the env returned it (kept, to check later that the env left it alone)."""
        data = encode(value)
        if returned:
            self.kept.append((step, field, value, data))
        head = f"{step}:{field}:".encode()
        self.total.update(struct.pack("<q", len(head)) + head + struct.pack("<q", len(data)) + data)
        block = self.blocks.setdefault(field, {}).setdefault(step // BLOCK, hashlib.sha256())
        block.update(struct.pack("<q", step) + data)
        pblock = self.portable.setdefault(field, {}).get(step // BLOCK)
        if pblock is None:
            pblock = self.portable[field][step // BLOCK] = _Block()
        skeleton: list[bytes] = []
        split(value, skeleton, pblock.f8, pblock.f4)
        data = b"".join(skeleton)
        self.discrete.update(struct.pack("<q", len(head)) + head + struct.pack("<q", len(data)) + data)
        pblock.discrete.update(struct.pack("<q", step) + data)

    def digest(self) -> str:
        return self.total.hexdigest()

    def reference(self) -> tuple[dict[str, Any], np.ndarray, np.ndarray]:
        """The portable record: its discrete part (the digest of the skeletons, and per field 4 hex digits of each
        block's skeleton digest and each block's count of float64 and float32 values), and its float64 and float32
        values (fields in sorted order, blocks in order)."""
        fields, f8, f4 = {}, [], []
        for field, blocks in sorted(self.portable.items()):
            n_blocks = max(blocks) + 1
            fields[field] = {
                "trace": "".join(blocks[b].discrete.hexdigest()[:4] if b in blocks else "----" for b in range(n_blocks)),
                "f8": [len(blocks[b].f8) if b in blocks else 0 for b in range(n_blocks)],
                "f4": [len(blocks[b].f4) if b in blocks else 0 for b in range(n_blocks)],
            }
            f8 += [np.frombuffer(blocks[b].f8, dtype=np.float64) for b in sorted(blocks)]
            f4 += [np.frombuffer(blocks[b].f4, dtype=np.float32) for b in sorted(blocks)]
        discrete = {"digest": self.discrete.hexdigest(), "fields": fields}
        return discrete, np.concatenate([np.zeros(0), *f8]), np.concatenate([np.zeros(0, np.float32), *f4])

    def trace(self, n_blocks: int) -> dict[str, str]:
        """Per field: 4 hex digits per block (``----`` for a block where the field was not recorded)."""
        return {
            field: "".join(blocks[b].hexdigest()[:4] if b in blocks else "----" for b in range(n_blocks))
            for field, blocks in sorted(self.blocks.items())
        }

    def mutated(self) -> list[tuple[int, str]]:
        """The (step, field) of returned values whose bytes changed after they were recorded."""
        return [(step, field) for step, field, value, data in self.kept if encode(value) != data]


# ------------------------------------------------------------------------------------------ the cases
#: public state read after every step, per env class
STATE = {
    DonutAllocationEnv: ("counts", "present", "t"),
    LoanApplicantsEnv: ("credit", "applied", "repaid", "defaulted", "profit", "t"),
    PursuitEvasionEnv: ("pursuers", "evader", "t", "pursuer_speed"),
    DelayedImpactLendingEnv: ("credit_pmfs", "tpr", "bank_cash", "t", "applicant_group", "applicant_cluster"),
    AttentionAllocationEnv: ("rates", "t"),
    EpidemicControlEnv: ("health", "vaccination_counts", "vaccinations", "new_infections", "t"),
}


def _donut_dict() -> gym.Env:
    env = MemoryAugmentation(DonutAllocationEnv(), kind="full", encoding="binary", dict_observation=True)
    return FairnessReward(env, welfare="log_nash", scheme="bounded", filter="benefit")


def _loan_dict() -> gym.Env:
    env = MemoryAugmentation(LoanApplicantsEnv(), kind="min", per_group=True, encoding="scaled", dict_observation=True)
    return FairnessReward(env, welfare="parity", aggregate="group", scheme="bounded", filter="benefit", task_coef=1.0)


class _WildPursuit:
    """Pursuit actions of every kind: unit and huge headings, zero vectors, NaN and infinite entries (seeded)."""

    def __init__(self, env: gym.Env) -> None:
        self.shape = env.action_space.shape
        self.rng = np.random.default_rng(31)

    def predict(self, obs: Any) -> tuple[np.ndarray, None]:
        a = self.rng.normal(0.0, 10.0 ** self.rng.uniform(-9.0, 3.0), self.shape)
        kind = self.rng.random()
        if kind < 0.1:
            a[self.rng.integers(a.size)] = 0.0
            a[: a.size // 2] = 0.0
        elif kind < 0.12:
            a[self.rng.integers(a.size)] = self.rng.choice([np.nan, np.inf, -np.inf])
        return a, None


#: case id -> (factory, steps, policy factory or None)
CASES: dict[str, tuple[Callable[[], gym.Env], int, Callable[[gym.Env], Any] | None]] = {
    # every registered id, through gym.make (OrderEnforcing, PassiveEnvChecker and the ids' own wrappers)
    "make:sb3_fair/DonutAllocation-v0": (lambda: gym.make("sb3_fair/DonutAllocation-v0"), 350, None),
    "make:sb3_fair/DonutAllocationTabular-v0": (lambda: gym.make("sb3_fair/DonutAllocationTabular-v0"), 200, None),
    "make:sb3_fair/LoanApplicants-v0": (lambda: gym.make("sb3_fair/LoanApplicants-v0"), 300, None),
    "make:sb3_fair/LoanApplicantsGaussian-v0": (lambda: gym.make("sb3_fair/LoanApplicantsGaussian-v0"), 300, None),
    "make:sb3_fair/PursuitEvasion-v0": (lambda: gym.make("sb3_fair/PursuitEvasion-v0"), 300, None),
    "make:sb3_fair/DelayedImpactLending-v0": (lambda: gym.make("sb3_fair/DelayedImpactLending-v0"), 450, None),
    "make:sb3_fair/AttentionAllocation-v0": (lambda: gym.make("sb3_fair/AttentionAllocation-v0"), 400, None),
    "make:sb3_fair/EpidemicControl-v0": (lambda: gym.make("sb3_fair/EpidemicControl-v0"), 300, None),
    # the default construction of each env class
    "class:DonutAllocationEnv": (DonutAllocationEnv, 300, None),
    "class:LoanApplicantsEnv": (LoanApplicantsEnv, 300, None),
    "class:PursuitEvasionEnv": (PursuitEvasionEnv, 300, None),
    "class:DelayedImpactLendingEnv": (DelayedImpactLendingEnv, 450, None),
    "class:AttentionAllocationEnv": (AttentionAllocationEnv, 400, None),
    "class:EpidemicControlEnv": (EpidemicControlEnv, 300, None),
    # other code paths
    "donut:dict_observation": (_donut_dict, 250, None),
    "donut:n3_p_ansi": (lambda: DonutAllocationEnv(n_customers=3, p=[0.2, 0.5, 1.0], horizon=30, render_mode="ansi"), 200, None),
    "loan:dict_observation": (_loan_dict, 250, None),
    "loan:gaussian_ansi": (lambda: LoanApplicantsEnv(horizon=25, credit_change="gaussian", render_mode="ansi"), 200, None),
    "pursuit:absolute": (lambda: PursuitEvasionEnv(observation="absolute", max_steps=60), 250, None),
    "pursuit:greedy_captures": (
        lambda: PursuitEvasionEnv(n_pursuers=4, size=3.0, capture_radius=0.3, evader_speed=0.5, render_mode="ansi"),
        300, GreedyPursuitPolicy),
    "pursuit:wild_actions_9": (lambda: PursuitEvasionEnv(n_pursuers=9, max_steps=40, size=2.5, capture_radius=0.3), 300,
                               _WildPursuit),
    "pursuit:wild_actions_absolute": (
        lambda: PursuitEvasionEnv(n_pursuers=2, max_steps=30, observation="absolute", evader_speed=0.0), 200, _WildPursuit),
    "delayed:wasserstein_w25_h120_ansi": (
        lambda: DelayedImpactLendingEnv(window=25, horizon=120, render_mode="ansi"), 400, None),
    "delayed:wasserstein_prior0_w25": (
        lambda: DelayedImpactLendingEnv(window=25, horizon=90, prior_weight=0.0), 400, None),
    "delayed:pmf_wasserstein_w25": (
        lambda: DelayedImpactLendingEnv(window=25, horizon=90, long_term="pmf_wasserstein"), 350, None),
    "delayed:pmf_l2_w25": (lambda: DelayedImpactLendingEnv(window=25, horizon=90, long_term="pmf_l2"), 350, None),
    "delayed:counts_sinkhorn_w25": (
        lambda: DelayedImpactLendingEnv(window=25, horizon=90, long_term="counts_sinkhorn"), 350, None),
    "delayed:terminates_w1_rgb": (
        lambda: DelayedImpactLendingEnv(window=1, horizon=60, horizon_terminates=True, render_mode="rgb_array"), 200, None),
    "delayed:eo_policy_shift": (
        lambda: DelayedImpactLendingEnv(window=40, horizon=400, cluster_shift_increment=0.05, group_0_prob=0.3,
                                        interest_rate=0.5), 400, lambda env: EqualOpportunityPolicy(env, seed=3)),
    "delayed:bank_runs_dry": (
        lambda: DelayedImpactLendingEnv(window=30, bank_starting_cash=6.0, loan_amount=2.0, interest_rate=0.1), 300, None),
    "attention:counts_w20_h100_ansi": (
        lambda: AttentionAllocationEnv(window=20, horizon=100, long_term="counts", render_mode="ansi"), 300, None),
    "attention:h3_terminates_rgb": (
        lambda: AttentionAllocationEnv(history_len=3, window=7, horizon=80, horizon_terminates=True, n_units=3,
                                       render_mode="rgb_array"), 250, None),
    "attention:proportional": (
        lambda: AttentionAllocationEnv(window=50, horizon=150), 300, ProportionalAllocationPolicy),
    "attention:wide_sites": (
        lambda: AttentionAllocationEnv(n_units=11, initial_rates=(0.0, 2.0, 30.0), increase_rates=(1.0, 0.0, 0.5),
                                       decrease_rate=0.7, discovered_weight=0.3, missed_weight=2.0, window=9,
                                       horizon=70), 250, None),
    "epidemic:counts_ansi": (lambda: EpidemicControlEnv(long_term="counts", render_mode="ansi"), 250, None),
    "epidemic:burn_in_terminates_rgb": (
        lambda: EpidemicControlEnv(burn_in=3, horizon=35, horizon_terminates=True, recovery_probability=0.2,
                                   initial_infected=(5, 20), render_mode="rgb_array"), 250, None),
    "epidemic:max_degree": (lambda: EpidemicControlEnv(infection_probability=0.3), 250, lambda env: MaxDegreePolicy(env)),
}


def _action(env: gym.Env, gen: np.random.Generator, policy: Any, obs: Any) -> Any:
    """A seeded action: the policy's (most of the time, when there is one) or a sample of the action space."""
    if policy is not None and gen.random() < 0.8:
        action, _ = policy.predict(obs)
        return action
    action = env.action_space.sample()
    if isinstance(env.action_space, spaces.Discrete) and gen.random() < 0.5:
        action = int(action)  # both a Python int and NumPy's int64 reach step
    return action


def _what_if_queries(env: gym.Env, gen: np.random.Generator, action: Any) -> list[Any]:
    """The proposed action and another one (a random one; large logits for Box actions, which step clips)."""
    space = env.action_space
    if isinstance(space, spaces.Discrete):
        return [action, int(gen.integers(space.n))]
    return [action, (gen.normal(0.0, 8.0, space.shape)).astype(np.float32)]


def run_case(case: str) -> Recorder:
    make, n_steps, policy_factory = CASES[case]
    seed = int.from_bytes(hashlib.sha256(case.encode()).digest()[:4], "little")
    env = make()
    base = env.unwrapped
    state = STATE[type(base)]
    what_if = getattr(base, "fairness_what_if", None)
    env.action_space.seed(seed)
    gen = np.random.default_rng(seed + 1)
    policy = policy_factory(env) if policy_factory is not None else None
    rec = Recorder()
    resets = {n_steps // 3: {"seed": seed + 7}, (2 * n_steps) // 3: {}}  # forced mid-episode resets

    def record_reset(step: int, obs: Any, info: Any) -> None:
        rec.add(step, "reset/obs", obs)
        rec.add(step, "reset/info", info)

    obs, info = env.reset(seed=seed)
    record_reset(0, obs, info)
    for t in range(n_steps):
        action = _action(env, gen, policy, obs)
        rec.add(t, "action", action)
        if what_if is not None and gen.random() < 0.3:
            rec.add(t, "what_if", [what_if(q) for q in _what_if_queries(env, gen, action)])
        obs, reward, terminated, truncated, info = env.step(action)
        rec.add(t, "obs", obs)
        rec.add(t, "reward", reward)
        rec.add(t, "terminated", terminated)
        rec.add(t, "truncated", truncated)
        for key in sorted(info):
            rec.add(t, f"info/{key}", info[key])
        rec.add(t, "state", {name: getattr(base, name) for name in state}, returned=False)
        if base.render_mode == "ansi" or (base.render_mode == "rgb_array" and t % 10 == 0):
            rec.add(t, "render", env.render())
        if (t + 1) % BLOCK == 0 or t == n_steps - 1:
            rec.add(t, "rng", base.np_random.bit_generator.state, returned=False)
        if terminated or truncated:
            obs, info = env.reset()
            record_reset(t, obs, info)
        elif t in resets:
            obs, info = env.reset(**resets[t])
            record_reset(t, obs, info)
    env.close()
    return rec


def _blocks(case: str) -> int:
    return (CASES[case][1] + BLOCK - 1) // BLOCK


def _canary() -> str:
    """A digest of the floating-point primitives the envs rest on (NumPy's sums, dot products, exp/log, cumsum, interp,
    and the Generator's draws), on fixed inputs. The goldens hold on a machine that gives these the same bits as the
    one they were recorded on; NumPy and its BLAS pick CPU-specific kernels, which may differ in the last bit."""
    import hashlib

    gen = np.random.default_rng(20261125)
    h = hashlib.sha256()
    for n in (0, 1, 2, 3, 5, 7, 8, 9, 16, 17, 33, 127, 128, 129, 300, 1031):
        x = gen.standard_normal(n) * 10.0 ** gen.uniform(-3, 3, size=n)
        y = gen.standard_normal(n)
        for v in (np.sum(x), np.dot(x, y), np.mean(x) if n else 0.0, np.cumsum(x), np.exp(np.clip(x, -50, 50)),
                  np.log(np.abs(x) + 1e-3), np.sqrt(np.abs(x)), np.abs(x).max(initial=0.0),
                  np.interp(y, np.sort(x), np.arange(n, dtype=float)) if n else 0.0):
            h.update(np.asarray(v, dtype=np.float64).tobytes())
    draws = np.random.default_rng(7)
    for v in (draws.random(50), draws.integers(0, 1000, 50), draws.choice(7, 50, p=np.full(7, 1 / 7)), draws.permutation(40),
              draws.normal(0, 1, 50), draws.uniform(-1, 1, 50), draws.poisson([0.5, 3.0, 40.0, 1e4], size=(20, 4)),
              draws.binomial(10, 0.3, 50)):
        h.update(np.asarray(v).tobytes())
    return h.hexdigest()


#: :func:`_canary` on the machine the goldens were recorded on
CANARY = "8a53f9eeecb50fe77843848a33bc943792598b6eb6141f7c68249b714229a7f8"


@functools.cache
def same_arithmetic() -> bool:
    """Whether this machine's NumPy kernels give the bits of the machine the exact goldens were recorded on
    (:func:`_canary`): only then are the exact digests (``GOLDEN``) compared, on top of the portable records."""
    return _canary() == CANARY


# ------------------------------------------------------------------------------------------ the portable records
#: float64 values: relative and absolute tolerance of the portable comparison (see the module docstring)
F8_RTOL, F8_ATOL = 1e-9, 1e-12
#: float32 (and float16) values: about 8 float32 ulps, relative; absolutely, 8 ulps of 1
F4_RTOL, F4_ATOL = 1e-6, 1e-6

DATA = Path(__file__).parent / "data" / "portable"


def write_references(name: str, records: dict[str, Recorder]) -> None:
    """Write the portable records of ``records`` to ``tests/data/portable/<name>.json`` (the discrete parts, and
    where each case's floats start) and ``<name>.floats.xz`` (the float64 values of every case, then the float32
    values, little-endian, xz-compressed)."""
    cases, f8, f4 = {}, [], []
    n8 = n4 = 0
    for case, rec in records.items():
        discrete, a8, a4 = rec.reference()
        cases[case] = {"f8_at": n8, "f4_at": n4, **discrete}
        f8.append(a8)
        f4.append(a4)
        n8, n4 = n8 + a8.size, n4 + a4.size
    lines = ["{", f'"about": {json.dumps(f"the portable references of tests/test_{name}.py (its docstring)")},',
             f'"n_f8": {n8}, "n_f4": {n4},', '"cases": {']
    for i, (case, entry) in enumerate(cases.items()):
        head = {k: v for k, v in entry.items() if k != "fields"}
        lines.append(f"{json.dumps(case)}: {json.dumps(head)[:-1]}, \"fields\": {{")
        fields = list(entry["fields"].items())
        for j, (field, value) in enumerate(fields):
            lines.append(f"  {json.dumps(field)}: {json.dumps(value)}" + ("," if j < len(fields) - 1 else ""))
        lines.append("}}" + ("," if i < len(cases) - 1 else ""))
    lines.append("}}")
    DATA.mkdir(parents=True, exist_ok=True)
    (DATA / f"{name}.json").write_text("\n".join(lines) + "\n")
    data = np.concatenate(f8).astype("<f8").tobytes() + np.concatenate(f4).astype("<f4").tobytes()
    (DATA / f"{name}.floats.xz").write_bytes(lzma.compress(data, preset=9 | lzma.PRESET_EXTREME))


@functools.cache
def read_references(name: str) -> dict[str, tuple[dict[str, Any], np.ndarray, np.ndarray]]:
    """The portable records written by :func:`write_references`: case -> (discrete part, float64s, float32s)."""
    doc = json.loads((DATA / f"{name}.json").read_text())
    data = lzma.decompress((DATA / f"{name}.floats.xz").read_bytes())
    n8, n4 = doc["n_f8"], doc["n_f4"]
    assert len(data) == 8 * n8 + 4 * n4, f"tests/data/portable/{name}: the floats do not match the index"
    f8 = np.frombuffer(data, dtype="<f8", count=n8)
    f4 = np.frombuffer(data, dtype="<f4", offset=8 * n8, count=n4)
    out = {}
    for case, entry in doc["cases"].items():
        m8 = sum(sum(f["f8"]) for f in entry["fields"].values())
        m4 = sum(sum(f["f4"]) for f in entry["fields"].values())
        out[case] = (entry, f8[entry["f8_at"] : entry["f8_at"] + m8], f4[entry["f4_at"] : entry["f4_at"] + m4])
    return out


Portable = tuple[dict[str, Any], np.ndarray, np.ndarray]


def portable_problems(rec: Recorder, reference: Portable) -> list[str]:
    """How ``rec`` differs from a portable reference (empty: it matches), see :func:`compare_portable`."""
    return compare_portable(rec.reference(), reference)


def compare_portable(record: Portable, reference: Portable) -> list[str]:
    """How a portable record differs from a reference (empty: it matches). Everything but the floats (types, dtypes,
    shapes, lengths, keys, ints, bools, strings, integer and boolean arrays, the random generators' states, the
    number and place of the floats) must be equal exactly; the floats to the tolerances (``F8_*``, ``F4_*``), NaN
    matching NaN and an infinity the same infinity."""
    ref, ref8, ref4 = reference
    got, got8, got4 = record
    if got["digest"] != ref["digest"]:
        names = sorted(set(got["fields"]) | set(ref["fields"]))
        traces = [(got["fields"].get(f, {}).get("trace", ""), ref["fields"].get(f, {}).get("trace", "")) for f in names]
        for b in range(max(max(len(g), len(r)) for g, r in traces) // 4):
            differing = [f for f, (g, r) in zip(names, traces) if g[4 * b : 4 * b + 4] != r[4 * b : 4 * b + 4]]
            if differing:
                return [f"discrete values differ, first in block {b} (steps {b * BLOCK}..{b * BLOCK + BLOCK - 1}), fields "
                        f"{differing}"]
        return ["discrete values differ (in the order of the records, or a 16-bit collision of the blocks' digests)"]
    problems = []
    at = {"f8": 0, "f4": 0}
    for field, entry in ref["fields"].items():
        for kind, g_all, r_all, rtol, atol in (("f8", got8, ref8, F8_RTOL, F8_ATOL), ("f4", got4, ref4, F4_RTOL, F4_ATOL)):
            counts, i = entry[kind], at[kind]
            at[kind] += sum(counts)
            g, r = g_all[i : at[kind]], r_all[i : at[kind]]
            with np.errstate(all="ignore"):
                bad = np.flatnonzero(~np.isclose(g, r, rtol=rtol, atol=atol, equal_nan=True))
            if bad.size:
                j = int(bad[0])
                b = int(np.searchsorted(np.cumsum(counts), j, side="right"))
                problems.append(f"{field}: {bad.size} of {g.size} {('float64', 'float32')[kind == 'f4']} values beyond the "
                                f"tolerance, first in block {b} (steps {b * BLOCK}..{b * BLOCK + BLOCK - 1}): {g[j]!r}, "
                                f"expected {r[j]!r}")
    return problems


@pytest.mark.parametrize("case", list(CASES))
def test_trajectory_is_unchanged(case):
    rec = run_case(case)
    mutated = rec.mutated()
    assert not mutated, f"{case}: values returned by the env changed after they were returned (aliased state): {mutated[:10]}"
    problems = portable_problems(rec, read_references("env_trajectories")[case])
    assert not problems, f"{case}: the trajectory differs from the portable reference: " + "; ".join(problems)
    if not same_arithmetic() or rec.digest() == GOLDEN[case]:
        return  # the exact digest is compared where this machine's kernels are the recording machine's
    trace, golden = rec.trace(_blocks(case)), TRACE[case]
    fields = sorted(set(trace) | set(golden))
    first = None
    for b in range(_blocks(case)):
        differing = [f for f in fields if trace.get(f, "")[4 * b : 4 * b + 4] != golden.get(f, "")[4 * b : 4 * b + 4]]
        if differing:
            first = (b, differing)
            break
    if first is None:
        where = "no 50-step block differs in TRACE (a difference in the order of the records, or a 16-bit collision)"
    else:
        b, differing = first
        where = f"first differing block: steps {b * BLOCK}..{b * BLOCK + BLOCK - 1}, fields {differing}"
    pytest.fail(f"{case}: the trajectory differs from the golden one; {where}")


def test_every_registered_id_is_covered():
    ids = sorted(k for k in gym.registry if k.startswith("sb3_fair/"))
    assert ids and all(f"make:{k}" in CASES for k in ids)
    assert set(CASES) == set(GOLDEN) == set(TRACE) == set(read_references("env_trajectories"))


def test_encoding_is_exact():
    assert encode(0.1) != encode(np.float64(0.1)) != encode(np.float32(0.1))
    assert encode(1) != encode(1.0) != encode(True)
    assert encode(np.zeros(2)) != encode(np.zeros(2, dtype=np.float32)) != encode(np.zeros((1, 2)))
    assert encode(0.0) != encode(-0.0)
    assert encode({"a": 1, "b": 2}) == encode({"b": 2, "a": 1})
    assert encode([1, 2]) != encode((1, 2))


# ------------------------------------------------------------------------------------------ the tolerance, tested
#: a relative change of a few ulps (one ulp of float64 is 1.1e-16 to 2.2e-16 of a value)
NUDGE = 1.0 + 4e-16


def _nudged(value: Any) -> Any:
    """``value`` times :data:`NUDGE` where it is a float64 (a Python float, a NumPy float64 scalar or array)."""
    if type(value) is float or isinstance(value, np.float64) or (isinstance(value, np.ndarray) and value.dtype == np.float64):
        return value * NUDGE
    if type(value) is list and value and all(type(v) is float for v in value):
        return [v * NUDGE for v in value]
    return value


def nudge_arithmetic(monkeypatch: pytest.MonkeyPatch) -> None:
    """Plant a one-ulp-scale change of the arithmetic the envs and wrappers rest on, as another machine's kernels
    would give it: the float64 results of NumPy's and ``math``'s transcendental functions, reductions, dot products,
    norms and ``interp``, of :func:`sb3_fair._exact.pairwise_sum` (wherever it was imported) and of the lending
    env's Python cumulative sums and closed-form W1 are multiplied by :data:`NUDGE` (harsher than a real machine,
    which leaves exact results exact). The epidemic env's memo of health-state gaps is a fresh one meanwhile, so
    that nudged values neither come from nor stay in the memo of the other tests."""
    import importlib
    import math

    same_arithmetic()  # the canary of the real arithmetic, before the change
    monkeypatch.setattr(importlib.import_module("sb3_fair.envs.epidemic"), "_HEALTH_GAPS", {})
    def patch(owner: Any, name: str) -> None:
        fn = getattr(owner, name)
        monkeypatch.setattr(owner, name, functools.wraps(fn)(lambda *a, **k: _nudged(fn(*a, **k))))

    for name in ("exp", "log", "log1p", "sqrt", "sum", "mean", "dot", "interp", "cumsum"):
        patch(np, name)
    patch(np.linalg, "norm")
    for name in ("exp", "log", "log1p", "sqrt", "pow"):
        patch(math, name)
    for module in ("sb3_fair._exact", "sb3_fair.envs.attention", "sb3_fair.metrics._checks",
                   "sb3_fair.common.fairqcm.reward"):
        patch(importlib.import_module(module), "pairwise_sum")
    patch(importlib.import_module("sb3_fair.envs.delayed_impact"), "_cumsum")
    patch(importlib.import_module("sb3_fair.envs.delayed_impact"), "_w1_unit_support")


#: cases that a planted ulp-scale change reaches (their exact digest changes): every registered id and a few more.
#: Not ``attention:proportional``: its policy allocates by comparing shares computed from integer counts
#: (``logits_to_allocation(np.log(seen))``), whose ties in exact arithmetic the last bits of ``exp`` and ``log``
#: break, so a change in the last bit changes its allocations (a machine whose ``exp`` or ``log`` differ may too)
NUDGED_CASES = [*(c for c in CASES if c.startswith("make:")), "class:DelayedImpactLendingEnv", "pursuit:wild_actions_absolute",
                "delayed:pmf_l2_w25", "attention:wide_sites"]


@pytest.mark.parametrize("case", NUDGED_CASES)
def test_a_one_ulp_scale_change_passes_the_portable_comparison(case, monkeypatch):
    """The tolerance admits what another machine's kernels do to a trajectory: with every float64 result of the
    arithmetic changed by a few ulps (:func:`nudge_arithmetic`), the exact digest differs and the portable record
    still matches."""
    nudge_arithmetic(monkeypatch)
    rec = run_case(case)
    assert rec.digest() != GOLDEN[case], f"{case}: the planted change did not reach the records"
    assert portable_problems(rec, read_references("env_trajectories")[case]) == []


def test_a_few_ulps_on_every_recorded_float_pass():
    """The comparison itself: every finite float of every reference moved up by 4 ulps (float64) or 2 ulps (float32;
    a zero to a subnormal) still matches; one float moved by 1e-6 of its value does not."""
    for name in ("env_trajectories", "fairness_goldens"):
        for case, (ref, f8, f4) in read_references(name).items():
            moved8, moved4 = f8, f4
            for _ in range(4):
                moved8 = np.nextafter(moved8, np.inf)
            for _ in range(2):
                moved4 = np.nextafter(moved4, np.float32(np.inf))
            moved8 = np.where(np.isfinite(f8) & np.isfinite(moved8), moved8, f8)  # infinities stay (and MAX stays)
            moved4 = np.where(np.isfinite(f4) & np.isfinite(moved4), moved4, f4)
            assert compare_portable((ref, moved8, moved4), (ref, f8, f4)) == [], (name, case)
            finite = np.flatnonzero(np.isfinite(f8) & (np.abs(f8) > 1e-3))
            if finite.size:
                off = f8.copy()
                off[finite[finite.size // 2]] *= 1.0 + 1e-6
                assert compare_portable((ref, off, f4), (ref, f8, f4)) != [], (name, case)


def _plant(monkeypatch: pytest.MonkeyPatch, cls: type, method: str, change: Callable[..., Any]) -> None:
    original = getattr(cls, method)
    monkeypatch.setattr(cls, method, lambda self, *a, **k: change(original, self, *a, **k))


def _clock_ahead(original: Callable[..., Any], self: Any, *a: Any, **k: Any) -> Any:
    out = original(self, *a, **k)
    self.t += 1  # the episode's clock one step ahead: it ends a step early
    return out


def _neighbour_vaccinated(original: Callable[..., Any], self: Any, action: Any) -> Any:
    a = int(action)
    return original(self, a if a == 34 else (a + 1) % 34)  # the node next to the one chosen


def _reward_plus_one(original: Callable[..., Any], self: Any, action: Any) -> Any:
    obs, reward, terminated, truncated, info = original(self, action)
    return obs, reward + 1.0, terminated, truncated, info


def _faster_evader(original: Callable[..., Any], self: Any, *a: Any, **k: Any) -> None:
    original(self, *a, **k)
    self.evader_speed *= 1.0 + 1e-7  # a constant changed in its 7th digit


#: planted behaviour changes: (case, env class, method, change, what of the record must show it)
PLANTED = {
    "donut_clock_off_by_one": ("class:DonutAllocationEnv", DonutAllocationEnv, "reset", _clock_ahead, "discrete"),
    "epidemic_node_off_by_one": ("class:EpidemicControlEnv", EpidemicControlEnv, "step", _neighbour_vaccinated, "discrete"),
    "delayed_reward_plus_one": ("class:DelayedImpactLendingEnv", DelayedImpactLendingEnv, "step", _reward_plus_one, "reward"),
    "pursuit_evader_speed_1e-7": ("class:PursuitEvasionEnv", PursuitEvasionEnv, "__init__", _faster_evader, "state"),
}


@pytest.mark.parametrize("planted", list(PLANTED))
def test_a_behaviour_change_fails_the_portable_comparison(planted, monkeypatch):
    """The tolerance is no blind spot: an off-by-one in the dynamics (a clock, a node index), a reward + 1 (which
    only the floats show) and a constant changed by 1e-7 of its value (only the float64 state shows it: 1e-7 is
    within the float32 observations' tolerance) each fail the portable comparison, and where expected."""
    case, cls, method, change, where = PLANTED[planted]
    _plant(monkeypatch, cls, method, change)
    problems = portable_problems(run_case(case), read_references("env_trajectories")[case])
    assert problems, f"{planted}: the planted change passed the portable comparison"
    if where == "discrete":
        assert problems[0].startswith("discrete values differ"), problems
    else:
        assert not any(p.startswith("discrete") for p in problems), problems
        assert any(p.startswith(f"{where}:") for p in problems), problems


# ------------------------------------------------------------------------------------------ the envs' exact shortcuts
def test_delayed_impact_shortcuts_match_metrics():
    """The lending env's closed-form W1 and smoothed pmfs equal sb3_fair.metrics' functions bit for bit."""
    from sb3_fair.envs.delayed_impact import _SUPPORT, _w1_unit_support
    from sb3_fair.metrics import smoothed_distribution, true_positive_rates, wasserstein_1

    rng = np.random.default_rng(27)
    for i in range(3000):
        p = rng.random(7) ** rng.uniform(1.0, 6.0) * 10.0 ** rng.uniform(-3.0, 3.0, 7)
        q = rng.dirichlet(np.ones(7)) if i % 2 else rng.integers(0, 40, 7) + rng.random(7)
        p[rng.integers(7)] = 0.0
        assert _w1_unit_support(p.tolist(), q.tolist()) == wasserstein_1(_SUPPORT, p, q)
    env = DelayedImpactLendingEnv(window=40, prior_weight=7.3, cluster_shift_increment=0.037)
    env.reset(seed=5)
    for t in range(400):
        env.step(int(rng.integers(2)))
        for g in range(2):
            expected = smoothed_distribution(env._counts[g], env.credit_pmfs[g], env.prior_weight)
            assert encode(np.array(env._smoothed(g))) == encode(expected)
        assert encode(np.array(env._rates())) == encode(true_positive_rates(env._tp, env._pos))


def sum_matches(got: float, values: Any, expected: float) -> bool:
    """Whether ``got``, a sum of ``values``, matches NumPy's sum of them (``expected``, computed here): bit for bit
    where this machine's kernels are the recording machine's (:func:`same_arithmetic`, where the shortcuts were made
    to reproduce NumPy's order of additions), elsewhere within the error bound of any order of the additions,
    ``(n - 1) * eps * sum(|values|)`` (accepted as it is when that bound overflows)."""
    if same_arithmetic():
        return encode(got) == encode(expected)
    a = np.asarray(values, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        bound = max(a.size - 1, 0) * np.finfo(np.float64).eps * float(np.sum(np.abs(a)))
        if not np.isfinite(bound):
            return True
        return bool(abs(got - expected) <= bound)


def test_pairwise_sum_is_numpys():
    from sb3_fair._exact import pairwise_sum

    rng = np.random.default_rng(28)
    for n in [*range(40), 64, 127, 128, 129, 255, 256, 257, 1000, 1031]:
        for _ in range(40):
            a = rng.standard_normal(n) * 10.0 ** rng.uniform(-8.0, 8.0, n)
            assert sum_matches(pairwise_sum(a.tolist()), a, float(np.sum(a))), a
    assert encode(pairwise_sum([-0.0])) == encode(float(np.sum(np.array([-0.0]))))
    assert encode(pairwise_sum([])) == encode(float(np.sum(np.array([])))) == encode(0.0)


def _old_logits_to_allocation(logits: np.ndarray, n: int) -> np.ndarray:
    """logits_to_allocation before the throughput work (the reference)."""
    z = logits - logits.max()
    e = np.exp(z)
    p = e / e.sum()
    alloc = np.zeros(logits.size, dtype=np.int64)
    for _ in range(n):
        k = int(np.argmax(p))
        alloc[k] += 1
        p[k] -= 1.0 / n
    return alloc


def test_attention_shortcuts_match_metrics():
    """The attention env's allocation, share gap and rate spread equal the reference / metrics bit for bit."""
    from sb3_fair.envs.attention import logits_to_allocation
    from sb3_fair.metrics import allocation_share_gap, max_mean_deviation

    rng = np.random.default_rng(29)
    for i in range(3000):
        k = int(rng.integers(2, 12))
        z = rng.normal(0.0, float(rng.choice([0.01, 1.0, 5.0, 30.0])), k)
        if i % 3 == 0:
            z = np.round(z)  # ties
        n = int(rng.integers(1, 40))
        assert encode(logits_to_allocation(z, n)) == encode(_old_logits_to_allocation(z, n))
        counts = rng.integers(0, 10 ** int(rng.integers(1, 12)), k)
        assert encode(AttentionAllocationEnv._share_gap(counts.tolist())) == encode(allocation_share_gap(counts))
        rates = rng.random(k) * 10.0 ** rng.uniform(-3.0, 6.0)
        assert encode(AttentionAllocationEnv._max_mean_deviation(rates.tolist(), False)) == encode(max_mean_deviation(rates))
        expected = max_mean_deviation(counts.astype(np.float64), normalize=True)
        assert encode(AttentionAllocationEnv._max_mean_deviation([float(c) for c in counts], True)) == encode(expected)
    # one poisson draw per site, in order, is poisson(rates)
    a, b = np.random.default_rng(3), np.random.default_rng(3)
    for _ in range(2000):
        lam = rng.uniform(0.0, 40.0, 5) * (rng.random(5) < 0.9)
        assert a.poisson(lam).tolist() == [int(b.poisson(r)) for r in lam.tolist()]
    assert a.bit_generator.state == b.bit_generator.state


class _OldEpidemic(EpidemicControlEnv):
    """EpidemicControlEnv's step before the throughput work (the reference), on ``self.health`` directly."""

    def _old_disease_step(self) -> np.ndarray:
        infected = self.health == 1
        n_infected_neighbours = self.adjacency @ infected.astype(np.int64)
        p_infect = 1.0 - (1.0 - self.infection_probability) ** n_infected_neighbours
        u = self.np_random.random(34)
        newly = (self.health == 0) & (u < p_infect)
        recovered = infected & (u < self.recovery_probability)
        self.health[newly] = 1
        self.health[recovered] = 2
        return newly

    def step(self, action: Any) -> tuple[Any, ...]:
        from sb3_fair.metrics import health_state_gap, vaccination_gap

        a = int(action)
        benefits = np.zeros(34, dtype=np.float64)
        if a != 34:
            benefits[a] = 1.0
            self.vaccination_counts[a] += 1
            self.vaccinations[self.communities[a]] += 1
            if self.health[a] == 0:
                self.health[a] = 2
        newly = self._old_disease_step()
        self.new_infections += np.bincount(self.communities[newly], minlength=2)
        self.t += 1
        reward = float(np.mean(self.health != 1))
        obs = np.zeros((34, 4), dtype=np.float32)
        obs[np.arange(34), self.health] = 1.0
        obs[:, 3] = np.minimum(self.vaccination_counts, self.horizon)
        info = {
            "health_states": self.health.copy(),
            "vaccinations": self.vaccinations.copy(),
            "new_infections": self.new_infections.copy(),
            "short_term_fairness": vaccination_gap(self.vaccinations, self.new_infections),
            "long_term_fairness": health_state_gap(self.health, self.communities, kind=self.long_term),
            "benefits": benefits,
        }
        return obs.ravel(), reward, False, False, info


@pytest.mark.parametrize("long_term", ["fractions", "counts"])
def test_epidemic_step_matches_the_old_one_when_health_is_set_from_outside(long_term):
    """The env's Python mirror of the health states follows changes made to ``env.health`` between steps."""
    rng = np.random.default_rng(30)
    for beta, rho in ((0.5, 0.005), (0.13, 0.3), (1.0, 0.0), (0.0, 1.0)):
        new, old = (cls(infection_probability=beta, recovery_probability=rho, long_term=long_term, horizon=10**6)
                    for cls in (EpidemicControlEnv, _OldEpidemic))
        new.reset(seed=11)
        old.reset(seed=11)
        for t in range(150):
            if t % 17 == 5:  # an outside change of some states, made in both
                nodes = rng.choice(34, size=int(rng.integers(1, 8)), replace=False)
                states = rng.integers(0, 3, nodes.size)
                new.health[nodes] = states
                old.health[nodes] = states
            if t % 41 == 7:
                new.health = old.health.copy()  # or a new array
            action = int(rng.integers(35))
            a, b = new.step(action), old.step(action)
            assert encode((a[0], a[1], a[4])) == encode((b[0], b[1], b[4])), (beta, rho, t)


def _print_goldens() -> None:
    golden, trace, records = {}, {}, {}
    for case in CASES:
        rec = records[case] = run_case(case)
        golden[case], trace[case] = rec.digest(), rec.trace(_blocks(case))
    write_references("env_trajectories", records)
    sys.stderr.write("wrote tests/data/portable/env_trajectories.json and .floats.xz\n")
    if not same_arithmetic():
        sys.stderr.write("note: this machine's kernels are not the recording machine's (CANARY); GOLDEN is its digests\n")
    print("GOLDEN = {")
    for case, digest in golden.items():
        print(f"    {case!r}: {digest!r},")
    print("}\n\nTRACE = {")
    for case, fields in trace.items():
        print(f"    {case!r}: {{")
        for field, codes in fields.items():
            print(f"        {field!r}: {codes!r},")
        print("    },")
    print("}")


# ------------------------------------------------------------------------------------------ goldens (generated)
GOLDEN: dict[str, str] = {
    'make:sb3_fair/DonutAllocation-v0': '61883e97af8319c16a66a5dbf47a461299a4b1482b384db0858d80e36d83eb98',
    'make:sb3_fair/DonutAllocationTabular-v0': 'ba2598313666302ee0f09273f7e3d5a76b5c71aaf3cc70024dc8b0f4d1c8eaca',
    'make:sb3_fair/LoanApplicants-v0': '3952a1609e6b71f76040f1abc64346c2404c385a8b3f5a856c3a3fd815dbc582',
    'make:sb3_fair/LoanApplicantsGaussian-v0': 'c0e139271b605003dcf7d9a1d97140e1aff7c130beea0ea9b550e0fb5b1d0fc7',
    'make:sb3_fair/PursuitEvasion-v0': 'eb6a929871c416b0fde9a6c44e1a412f3af282175b019ad218f68b11eed5a904',
    'make:sb3_fair/DelayedImpactLending-v0': 'caaf3ce6b9f38b196fb7fa02f7e24598cdb1f6f13beb10297e5e8205bbb0582c',
    'make:sb3_fair/AttentionAllocation-v0': '35d16dce19a4985ae08f55a748fb9d977a98501471e403ac33b757ddae41aafb',
    'make:sb3_fair/EpidemicControl-v0': 'c8108e93db43169a7726121e0f78daf6edc7488760af9c29061afc1b2dc7baee',
    'class:DonutAllocationEnv': 'ba3a43a16ab7fe4fcc82e3156bfd6e636ebd421c3111a7b627cbefb0fe32a7e8',
    'class:LoanApplicantsEnv': '490d495b04d9f6eda3fc540e582e4ae6e2269676c6b65dd7369a189df6e02da3',
    'class:PursuitEvasionEnv': '0befdb4deb1d10837a24f736396aa2fe33134996d2280fcab20d169fa02026b5',
    'class:DelayedImpactLendingEnv': '509a8c714fd480a06e032669b2866cf7267d4d0849d37e61a7c0e60dcb1978e3',
    'class:AttentionAllocationEnv': '9ff7d9a08e7748bc25b2a43b52e9403afc58aa14f7dc8094ed3f9d5e87c14d52',
    'class:EpidemicControlEnv': 'dc8004675f01d6032e81f0722d9806268a00aeada338dc0315fdfc2f4c8baa34',
    'donut:dict_observation': '03513640275c1bbe2ee8a4ce2894668c95a18b9aff478f3deb8674d30cd8dc58',
    'donut:n3_p_ansi': '9aeeb9d8cb5d6e7603894e266682793c1cf1e539931a1eca471e17f7b3327e92',
    'loan:dict_observation': '5f221c0865add7baaa62ceada0698d6302d327b16414056c50a3cd13cb827ba3',
    'loan:gaussian_ansi': '1f221cd51c2fa9e25f0bb519fcb203076fc752b18350c02cc9968ed342017222',
    'pursuit:absolute': 'c826d010ba654a4741f9ad013c5fddf6b439e2f52402837ca0e5ed7eec335b0b',
    'pursuit:greedy_captures': '1235ed933bc616307fad3c559762d458da51e1e6cd1584bdda44acb2db91e176',
    'pursuit:wild_actions_9': '25188c32724aa3eee5c54376e0d4269789cb407e130b6645e3393792b867bff3',
    'pursuit:wild_actions_absolute': '9a9234d9dc1a8c1f03dc19dd2ab4b8aed9c5c4e933ecacb8a492da04df34cec3',
    'delayed:wasserstein_w25_h120_ansi': '601ee5ed820d654c344e08541092b65155bf2ff9d8bc1ccf9c05e299b9fd1bb3',
    'delayed:wasserstein_prior0_w25': 'ac5cfdf4002c1e47bac05e2dab0b7b428723d3ad19d5383bef76e7131f793831',
    'delayed:pmf_wasserstein_w25': '8beaad32dd897767ba6d11ae383480ae00fc150ab2ded14de40a5f0e2c91258c',
    'delayed:pmf_l2_w25': 'a0b6e51cbee4a1e541ce32c188b9643e7aea0a25e63d6d9a25b592e1447c8fab',
    'delayed:counts_sinkhorn_w25': '58cac1198a102648b9c42c297a4111615cd50441c4edfaa499b1435669854445',
    'delayed:terminates_w1_rgb': '2dea606824870ca19c6d4758e982fcc31b563b39fa07706aa9f84db66836f7dc',
    'delayed:eo_policy_shift': 'e2ce1f3c6d18a1e7cf17e913a2c40966e937a131e2efbc8d7de82c46464cb060',
    'delayed:bank_runs_dry': '80ba17df28020372a3d8a1cd7742c354c0010dcc04ad3a9a3a8b299598c70834',
    'attention:counts_w20_h100_ansi': 'db37f8aed83caf5bf810fb2981e864ce4d476051501238eddea3fba1e1ecf6f1',
    'attention:h3_terminates_rgb': 'aac2526ee532fbc78973147ae5ce102659afe9b46855e49f1a8050e7e930655c',
    'attention:proportional': '3a1f0eb4d5eb51980317cb62333202f313c97e190a556264a2bb3c432c5a002a',
    'attention:wide_sites': '099d1c6252aaa34cb553e5e3f5fe79dadc77652633d36886778236b4ff4149a9',
    'epidemic:counts_ansi': '6992dfe777650fca770a665f88fbd3c0e2f466064728f4b60d6006fb72c0f5b5',
    'epidemic:burn_in_terminates_rgb': '6739b0081fcb45b219b5934186a1cb393e29be2dfe54993d4e008899e6e56641',
    'epidemic:max_degree': '2f8069eb22ab1ade864c94961af80685feda98fad408df52791939f55a8f87e7',
}

TRACE: dict[str, dict[str, str]] = {
    'make:sb3_fair/DonutAllocation-v0': {
        'action': '75d106fc25882e514af004d9122b',
        'info/benefits': '328f179f952eb0c759d20508c1d7',
        'info/counts': 'e5cd51c5af385ae9b88838429577',
        'info/fairness_terms': 'c72888be675f668c0dcbb76b6b26',
        'info/memory': '61fedac3ad163112d004c4cf2225',
        'info/wasted': 'a4e9ba39f59660cf619c1c0daff8',
        'obs': '8f03aaf19f13fbc57fae7fc5b901',
        'reset/info': '846ff9cb8905----4c64----c562',
        'reset/obs': 'baf6e741abb6----9139----0a25',
        'reward': '7925b14dfae6d139796fbab43b7d',
        'rng': '39365922df418d0cb2fb4b497bac',
        'state': '4bf64301faab995bebc8caf5aafe',
        'terminated': '6ff32a61c34fd466e3d90571f1ad',
        'truncated': '6ff30d47c34fd4660cfd0571a176',
    },
    'make:sb3_fair/DonutAllocationTabular-v0': {
        'action': '06f5c1cd624dd2bc',
        'info/benefits': 'e4580569384ecee7',
        'info/counts': 'cc602aa42d9eefdb',
        'info/fairness_terms': '25b367cadd25a9a9',
        'info/memory': '6eaf73a97280d07c',
        'info/wasted': '2a0bd3a30e7e89fd',
        'obs': '63ed71c5aaf90d28',
        'reset/info': '75ab1422e42b42ee',
        'reset/obs': '7335c8e52c0002d7',
        'reward': '47c86204e47827b9',
        'rng': 'ab1feb1394808af3',
        'state': '6e439f1a00fe9b1e',
        'terminated': '6ff32a61c34fd466',
        'truncated': '1c63af91600b0940',
    },
    'make:sb3_fair/LoanApplicants-v0': {
        'action': '483e39ab4321ae375ac0ffe0',
        'info/benefits': '66e393ab5897c5042fa4233a',
        'info/fairness_terms': 'e994b908fd4ca40da546ea62',
        'info/margin_met': 'c55ce5179ffb7edb451866f8',
        'info/memory': 'df6fa814f6e0d9e9bafa5e1c',
        'info/profit': 'b7fff85361ff9cf486658087',
        'info/repaid': '12d1a7f53fe764a6b0cd2136',
        'info/valid_loan': 'c3ab0101b82a69833a0eebbb',
        'obs': 'f5c8f11c361d4ff85b037891',
        'reset/info': 'b7d011c336f873a0fc5dacf6',
        'reset/obs': '00ae486d9a5ee9271bc70417',
        'reward': '9cb8dddd480b192182b19478',
        'rng': '14a0abfc6412de19de073c0c',
        'state': 'fe75d8b58fc86d91dae7239b',
        'terminated': '6ff32a61c34fd466e3d90571',
        'truncated': '199c1ef5a43cfef9ca6cbf4b',
    },
    'make:sb3_fair/LoanApplicantsGaussian-v0': {
        'action': 'c5d889b23ebcdc347986639b',
        'info/benefits': '633c94d3073019bf7a729eff',
        'info/fairness_terms': 'e2c33b2440e7e04ce8eb2f42',
        'info/margin_met': '510c66d05bc4748592931dab',
        'info/memory': '5b843e3ae2d2decf67bc3ba0',
        'info/profit': 'b97a2ad08855c2efd9fd7545',
        'info/repaid': '53a352f6ae4dc355293d4df8',
        'info/valid_loan': '80ecaf227063e2204c3ba020',
        'obs': '7e9900ebabbae350dbbf5b58',
        'reset/info': 'b7d011c336f873a0fc5dacf6',
        'reset/obs': 'f638486d051143932bbc6481',
        'reward': '5782054a9b0971a4654bd58e',
        'rng': '9f08957526a38e3174b95c4e',
        'state': 'c6ebeb0ade1f19564eb62678',
        'terminated': '6ff32a61c34fd466e3d90571',
        'truncated': '199c1ef5a43cfef9ca6cbf4b',
    },
    'make:sb3_fair/PursuitEvasion-v0': {
        'action': '46b57b145ec27d706a002d77',
        'info/benefits': '3d60488b7fb8a10e724bd74c',
        'info/captured': '6ff32a61c34fd466e3d90571',
        'obs': '32b1a9b51b86c805f21e3cab',
        'reset/info': '75fc----3361----21a8----',
        'reset/obs': 'd606----b069----096c----',
        'reward': '33cce0394a690df7b9f012fa',
        'rng': '3626aa310857edb56948729d',
        'state': '2b55243e54c76064e7ed8583',
        'terminated': '6ff32a61c34fd466e3d90571',
        'truncated': '6ff32a61c34fd466e3d90571',
    },
    'make:sb3_fair/DelayedImpactLending-v0': {
        'action': 'ff849fda72ec32f5d65a46f7920d5a9b9e5e',
        'info/accepted': '8ae4edd8932bac59694b703e6ebb9d7665f3',
        'info/applicant_cluster': 'bfb34e3cbcc7060b4c2e13b71c4147655589',
        'info/applicant_group': 'fda876224f5ff061966b17e3434df753294d',
        'info/bank_cash': '07d1f8871b26ff46f886b447f252230b71be',
        'info/benefits': '483339505548cf981739ef6f824f79307a48',
        'info/credit_pmfs': '5d8fe7a6d75af878f797ed17e194e21a76af',
        'info/long_term_fairness': 'fbf13ea6b4ab8c10ee710ad962c5aef52404',
        'info/short_term_fairness': '97f0bb419aa6db9e00b6efd557a3f4cf8a1b',
        'info/tpr': 'f8a900c26ebd27db3066b9d2dc0522362190',
        'info/would_repay': 'd07eb5c50fc93b0ab0fafef08b35fca9f2b8',
        'obs': '0ee348feea5d561cfa2334e1c99b3bda42b7',
        'reset/info': '86c9--------8329--------9fe3--------',
        'reset/obs': 'eb7d--------f0ef--------0258--------',
        'reward': 'bbac1898e5a93f8c2926bc8f1dd9ccb0fd3c',
        'rng': '8d279747aeaa6e7938c8a5349147cd6dfe06',
        'state': 'e187612cf10247c418cffadae64cfb845b95',
        'terminated': '6ff32a61c34fd466e3d90571f1ada9d8706c',
        'truncated': '6ff32a61c34fd466e3d90571f1ada9d8706c',
        'what_if': '36c62f3e51e4e5f4d429c73bba19aad143b7',
    },
    'make:sb3_fair/AttentionAllocation-v0': {
        'action': '619ce00d21f901dd4be2ea42cbe0a59b',
        'info/allocation': '524acd44d3aadbeaebf6fda44f2edc85',
        'info/benefits': '9082f49588f044fe5d0135091db19b9b',
        'info/discovered': 'b4ece5cba65d40b32a7ecd64ff14dc85',
        'info/long_term_fairness': '94309b344dc788246f8d13d010f387e8',
        'info/occurred': '535d0f67c22c741d78f43ac8f3d42f4b',
        'info/rates': '80eea0c027a6b75f6d3767b7e968bb61',
        'info/short_term_fairness': '803195fd885ce5c9eb9f7d5ee70a0aa0',
        'obs': 'cd26c40ed7802071566562607045d67e',
        'reset/info': 'e752----790f--------f5e7--------',
        'reset/obs': '8ed8----e517--------c206--------',
        'reward': '224f01e2a6286b9bbd5ce5f6ac2fd6cd',
        'rng': '6a6dfc3f3e4de8b94def1537ea06dd35',
        'state': 'aa30e85acfb87a294c8d4018970fe78c',
        'terminated': '6ff32a61c34fd466e3d90571f1ada9d8',
        'truncated': '6ff32a61c34fd466e3d90571f1ada9d8',
        'what_if': '7415a41508b64abf81cd414023369117',
    },
    'make:sb3_fair/EpidemicControl-v0': {
        'action': '5c37bf316f6a4f60d2e8dda2',
        'info/benefits': '1e1273b82d1be72155046947',
        'info/health_states': '7698b5eb5ad9977b7a160441',
        'info/long_term_fairness': '5b552505136e6464e01fe822',
        'info/new_infections': 'bb575931197d2f0b7d848288',
        'info/short_term_fairness': '769db19d1dff6ab4cf4bdf88',
        'info/vaccinations': '2dc24004057cd04c17280b23',
        'obs': '4a5ac88a6d0a25ca164ff764',
        'reset/info': '9ae84a9b82f79ee2f6e8641f',
        'reset/obs': '270727d174456d3ce73948e9',
        'reward': '69fede3d5c9a4c780b26502a',
        'rng': 'cd99a993381be56bd4bd3d85',
        'state': '6eae93fb9faec66415860e2e',
        'terminated': '6ff32a61c34fd466e3d90571',
        'truncated': 'e73b57c69f7db0da941c6362',
        'what_if': 'b1fb73ae655c18de2dbc9e32',
    },
    'class:DonutAllocationEnv': {
        'action': '2892f8d2c14dc92f7c21f2c9',
        'info/benefits': 'f7caa675dd45388169e3cf1d',
        'info/counts': 'f792e3f526069c0df3d10a1a',
        'info/wasted': '529128322bc5fd5c8656263c',
        'obs': '089bac62a86de785026df092',
        'reset/info': 'f28087d87604----e1c9----',
        'reset/obs': 'e4a201c2e104----8c0e----',
        'reward': '3414650e138a50ab1c0fab3c',
        'rng': 'e4dfd64fc10c66ac7f9a4a62',
        'state': 'ef544eb8559511154422b379',
        'terminated': '6ff32a61c34fd466e3d90571',
        'truncated': '6ff30d47c34fd466ed750571',
    },
    'class:LoanApplicantsEnv': {
        'action': '0d9adba672c4880fe94ccee5',
        'info/benefits': '48e0444129a912864fe99728',
        'info/margin_met': '939d1ce51497c1f261e81190',
        'info/profit': 'd63fa7c3bb1f7ae6d1d0907a',
        'info/repaid': '563f8bc05df4b4fe230647ac',
        'info/valid_loan': '955f04090e5c86abcab72c3e',
        'obs': '39fa442388c1989e8f40a104',
        'reset/info': '320102dc8c61b48bb212f074',
        'reset/obs': '659231e445c2a9e7fa1c8a1f',
        'reward': '62377540bd5c305e07f7feeb',
        'rng': '0b55812c6a1a6f66ce0b056d',
        'state': '60c6ad49ff8467590974cbed',
        'terminated': '6ff32a61c34fd466e3d90571',
        'truncated': '199c1ef5a43cfef9ca6cbf4b',
    },
    'class:PursuitEvasionEnv': {
        'action': '3deaa34c9035b7dd682e569d',
        'info/benefits': '3d60488b7fb8a10e724bd74c',
        'info/captured': '6ff32a61c34fd466e3d90571',
        'obs': '2f659c38345307c531a079a3',
        'reset/info': '75fc----3361----21a8----',
        'reset/obs': '4621----7498----07b3----',
        'reward': '33cce0394a690df7b9f012fa',
        'rng': 'ee529acd894c9b4104405f99',
        'state': 'f8bcbf5cd7ffeed9964bdede',
        'terminated': '6ff32a61c34fd466e3d90571',
        'truncated': '6ff32a61c34fd466e3d90571',
    },
    'class:DelayedImpactLendingEnv': {
        'action': '7febe11d31ecfc1592f84f454be3b756d9f4',
        'info/accepted': '6cda64b9ac0e7b86a1cf98eeb34e1b2cf61f',
        'info/applicant_cluster': 'c3c6e6c6d0aeef3757a44be305954982f02b',
        'info/applicant_group': '70121fa71e43b07a8708674b41fc002f2c76',
        'info/bank_cash': 'e53e102f22f0bda6095f6526ef53f44ebe1b',
        'info/benefits': '3496a35026110f57514f71f659dfe17ef590',
        'info/credit_pmfs': 'b99ee6691e05435250bf468b3145eb0e2c6f',
        'info/long_term_fairness': 'e6df1003d92ee1265833556a0145bbfe2e09',
        'info/short_term_fairness': 'bec407f12bd2988c4c7fd98a5f9c633740ab',
        'info/tpr': 'c69aef609a3f8ee0f9582ee69227c0f1ad8c',
        'info/would_repay': '2545a47606b4932fe53f05f43db24c763877',
        'obs': '0daa0c9f462748eb41002ff78c0e983da0f2',
        'reset/info': '86c9--------8329--------9fe3--------',
        'reset/obs': '8267--------be5e--------bdf2--------',
        'reward': 'a120cad12bfc50a7e34e33c78a9c382d5f2d',
        'rng': '0296ed0e7fd8248b1d5abd81772cc2fedaba',
        'state': '21d5e5940d9c74ae3750385d5fe3163935d4',
        'terminated': '6ff32a61c34fd466e3d90571f1ada9d8706c',
        'truncated': '6ff32a61c34fd466e3d90571f1ada9d8706c',
        'what_if': '8811ce12ca231a2ab2f60aa6083f43f9e4dc',
    },
    'class:AttentionAllocationEnv': {
        'action': 'e48366663a04bae328baf73359d995fa',
        'info/allocation': '36bbfa1384f162a871905302c41359a0',
        'info/benefits': 'ce16308edf4e8536b88f3fa92fec0f4e',
        'info/discovered': '95299ca445888fdd9a49b863a6b8dd4b',
        'info/long_term_fairness': '3be2c0463d22ed68f19964c6a5d41abe',
        'info/occurred': 'c064a296c50c050b438e83f55d64d557',
        'info/rates': 'c76f89e2c28e9f667a37f7b175be944c',
        'info/short_term_fairness': '7fdeea9d19880abc54ad04e6b587f173',
        'obs': 'fe9ff085f7f17643ff674a2fcfe7dff5',
        'reset/info': 'e752----790f--------f5e7--------',
        'reset/obs': '8ed8----e517--------c206--------',
        'reward': '4bf308cc5e556b4c42f63ef8d394904e',
        'rng': '8804108ca6ba9394bc706ffa14876228',
        'state': 'ffc073daffb4c5136276851e75c448d1',
        'terminated': '6ff32a61c34fd466e3d90571f1ada9d8',
        'truncated': '6ff32a61c34fd466e3d90571f1ada9d8',
        'what_if': 'f160b7e1ec99926b721a63a41193ac83',
    },
    'class:EpidemicControlEnv': {
        'action': '20d4c8eb2fd0278be712fc0d',
        'info/benefits': '8b95e7962bc5c00da7138e96',
        'info/health_states': '93a761e4b6ce376ec7b29d5c',
        'info/long_term_fairness': '5c67c558601c53462392eb4a',
        'info/new_infections': '1110251756c641b5ee229261',
        'info/short_term_fairness': '365724f1a86a80708b13dac1',
        'info/vaccinations': '2867aa5ff081af1b2066c033',
        'obs': 'e970f94c69145f61fdf45339',
        'reset/info': 'ef0def5eed21d0adf6fd3d81',
        'reset/obs': '54e1c92db0267287db37d316',
        'reward': 'bcb3c43c9a052d34ae17864b',
        'rng': '58f25d51d6d5452da7186813',
        'state': '7f038d08b78e216b57bc61f1',
        'terminated': '6ff32a61c34fd466e3d90571',
        'truncated': 'e73b57c69f7db0da941c6362',
        'what_if': 'aa5cb69b1e041adcbc29e8f5',
    },
    'donut:dict_observation': {
        'action': '45d9ac44659d9476ef75',
        'info/benefits': '7818eb746cd2f051d4b8',
        'info/counts': 'a7741aca78c862227a69',
        'info/fairness_terms': '70eb9722d466cd891705',
        'info/memory': 'fb1d57ef269d83a7e112',
        'info/wasted': 'f0ebf992b8504ee20442',
        'obs': '0c8fb839581de47a7513',
        'reset/info': '846f8323----444a----',
        'reset/obs': '88514ec1----c0dd----',
        'reward': '2b856880b253ef2636e5',
        'rng': '83a9a93fdb5b6485bcea',
        'state': '817bbdf4e3421b2e7c63',
        'terminated': '6ff32a61c34fd466e3d9',
        'truncated': '6ff32a61c34fd466e3d9',
    },
    'donut:n3_p_ansi': {
        'action': '88f6974426365eb3',
        'info/benefits': 'd169716e2fb43da1',
        'info/counts': 'f2315ddce3a940d2',
        'info/wasted': '1e5780223ea892ff',
        'obs': 'e6fcf43fcddca792',
        'render': '3cee38f7f2b7619a',
        'reset/info': '951a88c902727019',
        'reset/obs': '4a02aa8446f47fd8',
        'reward': '92fb43a548999dd9',
        'rng': 'c7bfc3d8dd4f4a78',
        'state': '58f95ddb447fc88d',
        'terminated': '6ff32a61c34fd466',
        'truncated': '2d17e7809b705e4d',
    },
    'loan:dict_observation': {
        'action': '19e2c5057933834d05d3',
        'info/benefits': 'a53e92b544d8c72a1969',
        'info/fairness_terms': '4bcc18f6c44254ab9329',
        'info/margin_met': '1e8b01af04c317a8caa3',
        'info/memory': 'ae8464b38d1017c2138d',
        'info/profit': '44954e1756e214b038c0',
        'info/repaid': '9ed9bc50d8b1c93861ab',
        'info/valid_loan': '50241ba3dffd8d62f7fa',
        'obs': '96fa86915a748ea0b0ad',
        'reset/info': 'b7d04adca9fc6e66d5ea',
        'reset/obs': 'cfaf37e8c68ffdfc8815',
        'reward': '7af86fde9fc6f8ecfd03',
        'rng': '7d3d20bada5464e74e28',
        'state': '89b2d61d14cabc4e2af7',
        'terminated': '6ff32a61c34fd466e3d9',
        'truncated': '199c1ef5f4dad941b488',
    },
    'loan:gaussian_ansi': {
        'action': 'e8c99e409e235b6a',
        'info/benefits': '18b557939046d3ad',
        'info/margin_met': '4ee1b20d87240b41',
        'info/profit': '61ed228a29caaf27',
        'info/repaid': '2b56fcf768ea799a',
        'info/valid_loan': '886d6082b82a23b8',
        'obs': 'e9da1192c74fe3a3',
        'render': '863f69e1271bacc2',
        'reset/info': '94480f2cc50be486',
        'reset/obs': '6bd05cb57b048b28',
        'reward': 'b2e62713f53ac551',
        'rng': '2b2a6a66c6d2c235',
        'state': '8632004dc50b5eb4',
        'terminated': '6ff32a61c34fd466',
        'truncated': 'f79962bd454589ae',
    },
    'pursuit:absolute': {
        'action': 'fef61ef5c7879d8870aa',
        'info/benefits': '3d60488b7fb8a10e724b',
        'info/captured': '6ff32a61c34fd466e3d9',
        'obs': 'd012cf72d7d67cb98a30',
        'reset/info': '75fcbb6a4acea402040a',
        'reset/obs': '95d942a5bcc1f6fd7ef2',
        'reward': '33cce0394a690df7b9f0',
        'rng': '8f5de9420eef3165ae4e',
        'state': 'c708f150c2f2e279b220',
        'terminated': '6ff32a61c34fd466e3d9',
        'truncated': '6ff3cfb9dfd0d4669c90',
    },
    'pursuit:greedy_captures': {
        'action': 'dd0bc746542471513242063f',
        'info/benefits': '012f29dccc0cefc4499f8ccf',
        'info/captured': '3e69a3ffb922fa14451ffc3e',
        'obs': '419d27605d9e79ea6d3ee35d',
        'render': '979e4c2779d101fe8d345a34',
        'reset/info': '7a992db3875c466cd45f118b',
        'reset/obs': 'de6c84d43e967b913a074c3c',
        'reward': '4ce4070ae676d3f9b9762f47',
        'rng': '4f594c92e5908f4b94521f6d',
        'state': 'b69c2fe0cf63104a0c4ad038',
        'terminated': '3e69a3ffb922fa14451ffc3e',
        'truncated': '6ff32a61c34fd466e3d90571',
    },
    'pursuit:wild_actions_9': {
        'action': '7610827ebbf9e3c649fe8139',
        'info/benefits': '3fb13f1f8a7ba6f81cc58dc6',
        'info/captured': '6ff32a61e7dcd466e3d90571',
        'obs': '9ee81465d209ecbe03b9a24e',
        'reset/info': '3bb6186cbc2cfa0548139bd2',
        'reset/obs': '51bd7081edcbbb572f1eb158',
        'reward': '33cce03946b10df7b9f012fa',
        'rng': '0a79b93f7631ac750a14dbd9',
        'state': 'b7f7a00751787c5dc7520e5d',
        'terminated': '6ff32a61e7dcd466e3d90571',
        'truncated': '199c1ef5c34f37ebca6cbf4b',
    },
    'pursuit:wild_actions_absolute': {
        'action': 'd4ee47d40900cd0c',
        'info/benefits': '6ef986d01d253814',
        'info/captured': '6ff32a61c34fd466',
        'obs': '0d5b77491d2ccf83',
        'reset/info': '630173718ec8c66d',
        'reset/obs': 'f9caabfc50efd2c7',
        'reward': '33cce0394a690df7',
        'rng': 'e7b2d5d5e440b965',
        'state': '1fc09d645539c35c',
        'terminated': '6ff32a61c34fd466',
        'truncated': '2d17e7809b705e4d',
    },
    'delayed:wasserstein_w25_h120_ansi': {
        'action': 'd4599ef96765bc3631509d3b315f36b4',
        'info/accepted': 'fc2887a2e0b5e2d965d94510612fd451',
        'info/applicant_cluster': 'e8c88b42ae10b0d46a6c59bc8e898d78',
        'info/applicant_group': 'a0c1e2291658cb0348d1f5c1ce795c2c',
        'info/bank_cash': 'bc0636a9ecc5d63188d8c6f13034cd4d',
        'info/benefits': 'f4c52126a7f7d001f5e6ec09ccf6577d',
        'info/credit_pmfs': '11d14dfcbcc80ab033ecfda12636eedf',
        'info/long_term_fairness': '1ca871d3ec857f5008025b8b6803f641',
        'info/short_term_fairness': 'd00be5d817fd7b88b10ace8df0f483a4',
        'info/tpr': '320860cf2dd7a4c592ca7e544cfcdbad',
        'info/would_repay': '273d122c44f323ca4a2307ecf9ce2664',
        'obs': 'cabc960bbfc468feb5586512078c6795',
        'render': 'ea705bba06851de14bab4f6554188520',
        'reset/info': '86c9----d2cb--------c46a----5fc2',
        'reset/obs': '5ad2----db58--------978b----007f',
        'reward': 'a2483c69336086f7f1691117e196737f',
        'rng': '2316536f2fef77fa6589a5f395c965ec',
        'state': '04f611a9cf08d950a63131439cea5d9e',
        'terminated': '6ff32a61c34fd466e3d90571f1ada9d8',
        'truncated': '6ff32a6129e0d466e3d97923f1ad250c',
        'what_if': '39a373393bd54c00153991d8cb063cdf',
    },
    'delayed:wasserstein_prior0_w25': {
        'action': 'b6411478ae40c97c5f20b939c54e4d6c',
        'info/accepted': '50b12af690dd079b93d2f7bee7ba3b6e',
        'info/applicant_cluster': '69102a30db813e63ece7b33bf54ae663',
        'info/applicant_group': '96052490377b913c5cb530fa6b7e43c1',
        'info/bank_cash': '75e10ac4487095425ffa44f8dc2617aa',
        'info/benefits': '90c203f18afd091e6fab2b39abba31d7',
        'info/credit_pmfs': 'cebd46884a5e936cf56db402516ed64c',
        'info/long_term_fairness': '83d1b7c6c37af28ebf95b9818e84b308',
        'info/short_term_fairness': '7b258addcc1f432e1a5790f4100ea012',
        'info/tpr': 'dee92e6b4a83028c0801e4e5ee7a6348',
        'info/would_repay': '181241eec92616d88410f20e0f47c770',
        'obs': '080db60a0df141f3bfd459fa843771a6',
        'reset/info': '78f3ab371f9b----13298b3f----ba76',
        'reset/obs': '5ad2e7c52e1a----136f8a70----020f',
        'reward': '46bdf3894390af5f5cedb235c3d51f37',
        'rng': '7811d693b313ab1642196323191e2fde',
        'state': '54dd667bd030d7edcb54f12d5b3d8a14',
        'terminated': '6ff32a61c34fd466e3d90571f1ada9d8',
        'truncated': '6ff3e99cc34fd466b2fb0571f1ad8c95',
        'what_if': 'b069ac954fcfecc432d55fbf8e77c7b7',
    },
    'delayed:pmf_wasserstein_w25': {
        'action': 'db96ac2dac81dd5f994863d1dbff',
        'info/accepted': '30a9ce32eb6f65c9f79a9df880c0',
        'info/applicant_cluster': 'b90f5fb2f5b6377b7a41973a1320',
        'info/applicant_group': '182fa46bf99b63ad3ee5f98a43fd',
        'info/bank_cash': 'c021aad1fa0f8ada6cc89a2b241f',
        'info/benefits': 'bec01269fc7a59b92093b9415c58',
        'info/credit_pmfs': 'ef60a1e50a19945dd14afc9058ca',
        'info/long_term_fairness': 'db455d5699361886e3145b985f19',
        'info/short_term_fairness': '8d1bf04b43d8e5dd6198cd2fb05c',
        'info/tpr': 'f1e42a1d95e1d13b1548ead58ba6',
        'info/would_repay': 'eeec6a0687df63ee8d371a8d0a1e',
        'obs': '4895fd6dc4443539e8519000fd04',
        'reset/info': '86c9d117e3c5----b089----18de',
        'reset/obs': '752bab045fce----9acf----eb22',
        'reward': '6e60d5fdc801491d6f79a8e8bbdc',
        'rng': 'fa44f42252402b0db9009fa760d6',
        'state': '6fb44f3955740ff968b5e3e092d9',
        'terminated': '6ff32a61c34fd466e3d90571f1ad',
        'truncated': '6ff3e99cc34fd466539c0571ab66',
        'what_if': '9f4fb5e16aa45dd31019ce0bcb55',
    },
    'delayed:pmf_l2_w25': {
        'action': 'c3f2bd9e77040f04b5289ec43d82',
        'info/accepted': '7206a3a0aa078c7473b9fa120f95',
        'info/applicant_cluster': 'e7c2c2e2a06686195cc62308dcb8',
        'info/applicant_group': '31423cbc226d9734b303ff29091e',
        'info/bank_cash': 'db16573889631f1963bb8da0d830',
        'info/benefits': 'db37eb96baab640d4a292986ea2c',
        'info/credit_pmfs': 'd030f2e86b8d0c557fd4af074cf6',
        'info/long_term_fairness': 'b2e0ff81b9b3b4f869d33612f436',
        'info/short_term_fairness': '179831a03cd4d0ed1abb355d983f',
        'info/tpr': '5852dc10c93ee08feaea127465a1',
        'info/would_repay': '86de570a389d7494a1cddd9db7bb',
        'obs': 'f5f492862881ba53054e17792e5d',
        'reset/info': '2e4e2f9882a1----accd----b2e9',
        'reset/obs': '3efce7c5bcce----1be9----59f0',
        'reward': '39e343d2846c247d6a43dad9cc38',
        'rng': '5dd47e362d5d98fb1f4888321bec',
        'state': 'ff85c7318272552ba7ee21ef0e14',
        'terminated': '6ff32a61c34fd466e3d90571f1ad',
        'truncated': '6ff3e99cc34fd466539c0571ab66',
        'what_if': '3dd311ccb74123ade1aab8747810',
    },
    'delayed:counts_sinkhorn_w25': {
        'action': '6230757f780f75b7f5ea78d0a031',
        'info/accepted': '84d14c4bc48080c449fd811593e3',
        'info/applicant_cluster': 'e15209d148e460b08dfb56a39f87',
        'info/applicant_group': '32dc75ffe62eee32b2176d6674ca',
        'info/bank_cash': '7cccb45ef3b494697e431db22bb8',
        'info/benefits': 'c700802c0c863d2e882c48c8c6ca',
        'info/credit_pmfs': 'c60387f5bb01fdd2e06029d08b82',
        'info/long_term_fairness': '3ae91b60326984259fb7b74eaafc',
        'info/short_term_fairness': '9e69abfd37529a7c8d1e70d6d2d3',
        'info/tpr': 'd9cdbb3d8fd6d50e997c8bb62c00',
        'info/would_repay': 'e2236c6deb83ffb86b80f4c2a9f4',
        'obs': '583d2f2a87520bed4bc88f594154',
        'reset/info': '78f3ab37107d----3728----b531',
        'reset/obs': 'eb7de7c57928----6e2e----4329',
        'reward': '2cc71deb038da255ab19a44cfde7',
        'rng': '5e352bc6efa167486a0b0456f826',
        'state': 'dfbb3d262639eccc9d0b4bf6972e',
        'terminated': '6ff32a61c34fd466e3d90571f1ad',
        'truncated': '6ff3e99cc34fd466539c0571ab66',
        'what_if': 'dd2cef01b2f9d1e0882aba0ade14',
    },
    'delayed:terminates_w1_rgb': {
        'action': 'e2b9ff9a834134cf',
        'info/accepted': '79852f21d45f65be',
        'info/applicant_cluster': '1780de5f9a40853a',
        'info/applicant_group': '8e866750fc790a7b',
        'info/bank_cash': '2e4dc7edcf00b8ef',
        'info/benefits': 'f1d5754fb8539eae',
        'info/credit_pmfs': 'a82e3e3986eb45b3',
        'info/long_term_fairness': '885a4b521baaf0f9',
        'info/short_term_fairness': 'e79a33619edc755e',
        'info/tpr': '7897f843c671088b',
        'info/would_repay': '9be0a318c96d3ee8',
        'obs': 'b6d5f51a74402eae',
        'render': '7dad474ba74f4e87',
        'reset/info': '86c94e444591a8fe',
        'reset/obs': '781ab06845cd38a6',
        'reward': 'ab632272fe77e752',
        'rng': '4c49d770b9086137',
        'state': '0fbb59a9a9c19961',
        'terminated': '6ff3cfb99b70b87c',
        'truncated': '6ff32a61c34fd466',
        'what_if': 'a035175aa3f3c352',
    },
    'delayed:eo_policy_shift': {
        'action': '441e6b8577546fdb3684768359c5a257',
        'info/accepted': '9b58a9bb45df4802b07098d4da7f91b0',
        'info/applicant_cluster': '15d022765e8217e7bf5de5bd0525aaf0',
        'info/applicant_group': '53999c753d9eaa120c5f1bd603e7eb8a',
        'info/bank_cash': 'af8c0e000f4188aeb793a778cf33ba76',
        'info/benefits': 'd03cebed9cf06d724cc40c5d9adaf142',
        'info/credit_pmfs': 'ec52922606603bbe11244696527c4dbe',
        'info/long_term_fairness': 'faa593cd5f5013e0380208f20a87543c',
        'info/short_term_fairness': 'cd39c55c0f69fa25a119d891740b5bd7',
        'info/tpr': 'b336dd77261051192d96ff2c55140c0b',
        'info/would_repay': 'cae11c5824c82dee433f7f75b4f457f7',
        'obs': '3beebe2e4ca30faf576f59610161975a',
        'reset/info': '86c9----d7a1--------ee1d--------',
        'reset/obs': '781a----7a17--------acfa--------',
        'reward': 'b62ca87de21cec9241f1b9cec0a0247f',
        'rng': 'fc6d5b1779248e980162bcba66c75fb4',
        'state': 'a369c661a34c5c74cd1ec44cce331043',
        'terminated': '6ff32a61c34fd466e3d90571f1ada9d8',
        'truncated': '6ff32a61c34fd466e3d90571f1ada9d8',
        'what_if': '45e48b1100a39a5c5d46c76364d92e05',
    },
    'delayed:bank_runs_dry': {
        'action': '27fd31b2a27e9925fab14396',
        'info/accepted': '2e5b9f1906dc7b2fe32ff813',
        'info/applicant_cluster': '1c7397e5a37568aaa33bcc82',
        'info/applicant_group': 'bb457aa4906242a1b4321503',
        'info/bank_cash': '3f1511aad7bf8363ca6a8ec1',
        'info/benefits': '1f6d877b37ae319332e69d2a',
        'info/credit_pmfs': 'fb25d05f6f5fa5322573f055',
        'info/long_term_fairness': 'c63dd66e6d2a533d61d7ae45',
        'info/short_term_fairness': 'd35af9463191919c21f7f0d6',
        'info/tpr': '79495d47290d0132d115a18f',
        'info/would_repay': '6f83be4cd25a98ca07a50ea1',
        'obs': 'c08139a8931fa05d718ac221',
        'reset/info': 'dcb73a62edabb38cd2006861',
        'reset/obs': 'cf067262873183ed7432e76b',
        'reward': '186a76c20b07354e493c0b55',
        'rng': '5aab737597d0feb4e12bad62',
        'state': 'def302bf3e075318a5757fe9',
        'terminated': '943554626690e84c5aa649ba',
        'truncated': '6ff32a61c34fd466e3d90571',
        'what_if': '6097453fd978c64c1bd8e559',
    },
    'attention:counts_w20_h100_ansi': {
        'action': '2a19a84fed0326ded28680c9',
        'info/allocation': '8f5954fda9484eab492ee18d',
        'info/benefits': '4a16c86e1529cfd199d2e2bc',
        'info/discovered': '454181157d8976bb85b3a04c',
        'info/long_term_fairness': 'a3e45f0c2d732a1c0b3ba3ef',
        'info/occurred': 'cbfc3712ef6bf7048624d37b',
        'info/rates': 'cbf684dc1ea3bcc55ef00579',
        'info/short_term_fairness': '329baf9ee5e6ba8aa6f2fb1c',
        'obs': 'abe487cc81bd2bb5105e344c',
        'render': 'aae75cbc41d37ac780ffdf2a',
        'reset/info': 'a1a205628dba----790f----',
        'reset/obs': '8ed8a63e469f----11c8----',
        'reward': 'cd1ac25581c283ae2457fe9c',
        'rng': 'ef56300a4e4250fac1ab4cc5',
        'state': 'bf43061c241f0fe12b9b7c72',
        'terminated': '6ff32a61c34fd466e3d90571',
        'truncated': '6ff30d47c34fd466ed750571',
        'what_if': '1007fbc11d1d648dbce45985',
    },
    'attention:h3_terminates_rgb': {
        'action': '0f7b121ea7b4ab1af593',
        'info/allocation': 'b636be58948d80837186',
        'info/benefits': 'bdd9df6315a260a6ae05',
        'info/discovered': 'e5a8240f948dcfe37186',
        'info/long_term_fairness': '38070399d8f2732e3e80',
        'info/occurred': 'fdaf0f654f03a5cacb80',
        'info/rates': 'b35db6bb11bcb37e42ba',
        'info/short_term_fairness': '1997d0c741bbe7ce945d',
        'obs': '0ab56209ce761d217f35',
        'render': '3998a728d0153b3249f4',
        'reset/info': 'e752c722----7319bc8c',
        'reset/obs': '15f93628----934fbfcc',
        'reward': '2a25921b02cdb46c7c92',
        'rng': '787ea0afd7af42f81764',
        'state': 'e4750fe243095f25322d',
        'terminated': '6ff31ef5c34fd94122c9',
        'truncated': '6ff32a61c34fd466e3d9',
        'what_if': '1be11da1248afc108747',
    },
    'attention:proportional': {
        'action': 'f6c600d267e8c9fde5a3594f',
        'info/allocation': '8d3999513ae31c56e3f819fa',
        'info/benefits': '7b27b79562321dba0c6d5927',
        'info/discovered': '329c619c13b25960a5c22ac7',
        'info/long_term_fairness': '6ca0f30b74f51e72c4ee801a',
        'info/occurred': '8da1f3b63a84c31e54851a4f',
        'info/rates': '4c3d776652ba10261f22d712',
        'info/short_term_fairness': 'a75c0b8cbc996d6c9600680d',
        'obs': '7e07488ecece33a5b08f190f',
        'reset/info': 'e752----337b----cf3b----',
        'reset/obs': '8ed8----469f----11c8----',
        'reward': 'c4105a62355bd6a18064f4d2',
        'rng': '2d62f48d443e4b1adcc5abc1',
        'state': 'bdc0382eb543fe0b2dd71f46',
        'terminated': '6ff32a61c34fd466e3d90571',
        'truncated': '6ff32a61c34fd466e3d90571',
        'what_if': 'ca506c2aa335daa67c45c07d',
    },
    'attention:wide_sites': {
        'action': '1c4c12db27bf8964baa0',
        'info/allocation': 'c49232a5f28391beb238',
        'info/benefits': 'bde0a4006870235d5acb',
        'info/discovered': 'cf36322edd0d49b9ceef',
        'info/long_term_fairness': 'cb95896e7a7ed0b12b9b',
        'info/occurred': '3fdb3ce96f63a4ed49bf',
        'info/rates': '48ca08fe90274d34be1a',
        'info/short_term_fairness': '7022fa8d6442309dd79b',
        'obs': 'c367c9fcb52a0d5bd5b2',
        'reset/info': '997f508c----b8463171',
        'reset/obs': '278edab3----8984daaf',
        'reward': 'aa1bcb1ce70c3d997ac5',
        'rng': '97882a5a761ffa003024',
        'state': 'c440530ab6d1efdaddc5',
        'terminated': '6ff32a61c34fd466e3d9',
        'truncated': '6ff31338c34f41d5d262',
        'what_if': '1f6df63abae9d54973e7',
    },
    'epidemic:counts_ansi': {
        'action': 'b76a72d2135834604924',
        'info/benefits': 'b037f5da9e6f527e305c',
        'info/health_states': '6b4014fc459aba99cad4',
        'info/long_term_fairness': 'b9481b15d667912307a8',
        'info/new_infections': '2ebfbc8bafa8f5da471a',
        'info/short_term_fairness': '1210fde20d37744dfcb6',
        'info/vaccinations': 'e69eed82a3c697e74d12',
        'obs': 'f74934b78402b994a488',
        'render': '3d8ded136f59afe48824',
        'reset/info': '9e26568f35eb0a5915e2',
        'reset/obs': 'f0cc76aa15573f9ebb65',
        'reward': 'e76fdca9ce526242d31a',
        'rng': '867f845c6a6dc20f8731',
        'state': '1eade412c42ec27e7881',
        'terminated': '6ff32a61c34fd466e3d9',
        'truncated': 'e73b5c0fb7550d7e867f',
        'what_if': '723054a3a1f0fe98de63',
    },
    'epidemic:burn_in_terminates_rgb': {
        'action': 'dffdfbc6641dfc1a1033',
        'info/benefits': '1b07b599d91b06b49a26',
        'info/health_states': '3ee9184a3beeec0a121b',
        'info/long_term_fairness': 'b79db74a462a432a65a9',
        'info/new_infections': '1dbba6742623225a7632',
        'info/short_term_fairness': 'c8cf6dad6cefd15699df',
        'info/vaccinations': '85c8673cfc6381a3704f',
        'obs': '77add759b19195d5e695',
        'render': '6a71b8dafbec6b535a83',
        'reset/info': '2b8113cf9437f211187c',
        'reset/obs': '2709fbc3adad34910be9',
        'reward': '2389ec017922482f87c5',
        'rng': 'c08562ff967364745b89',
        'state': '4876c731ef41856e858f',
        'terminated': 'd21113384a0741d592b5',
        'truncated': '6ff32a61c34fd466e3d9',
        'what_if': 'db3432d313f0fa72bf17',
    },
    'epidemic:max_degree': {
        'action': '2d58d48c83087ac2a0b7',
        'info/benefits': 'd65654995d5dbc1a29bf',
        'info/health_states': 'e8ec9fcc3dcdd782e5e1',
        'info/long_term_fairness': '79ddf718e75c1c33b3e7',
        'info/new_infections': 'a9bd10830628a37181b0',
        'info/short_term_fairness': '613767536dbb803090e4',
        'info/vaccinations': '8678cfdf28d0b18d0399',
        'obs': '905a811d6bb8c948e0aa',
        'reset/info': '4d252c1831e3980b33ba',
        'reset/obs': '0e58415cb6159f4f66c4',
        'reward': 'b04c4a2801f6eade3527',
        'rng': '157955ad393bd874f25c',
        'state': '7401d9a66834643fc848',
        'terminated': '6ff32a61c34fd466e3d9',
        'truncated': 'e73b5c0fb7550d7e867f',
        'what_if': 'ea25b5e5ca130b87ed73',
    },
}


if __name__ == "__main__":
    _print_goldens()
    sys.exit(0)
