"""The whole-batch shortcuts of FairQCM's per-step work give what the row-by-row code gives, bit for bit.

FairQCM (``FairDQN(counterfactual=True)``) builds 32 counterfactual transitions at every step. Their welfare, their
counterfactual set, the memory their observations hold and their rows in the replay buffer are computed for the whole
batch at once (:func:`sb3_fair.metrics.welfare_rows`, :func:`sb3_fair.common.fairqcm.memory.unique_rows`,
:func:`sb3_fair.common.fairqcm.memory.observed_memory`, ``CounterfactualRows.add_batch``). Each is checked here against the
computation it replaces, on random and edge inputs, including the errors.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from gymnasium import spaces

from sb3_fair import metrics
from sb3_fair.common.fairqcm.buffers import CounterfactualReplayBuffer
from sb3_fair.common.fairqcm.reward import RewardSpec
from sb3_fair.common.fairqcm.memory import (
    MemorySpec,
    counterfactual_memories,
    decode_memory,
    encode_memory,
    observed_memory,
    unique_rows,
)


def _bits(a: np.ndarray) -> bytes:
    return np.ascontiguousarray(a, dtype=np.float64).tobytes()


def _row_by_row(u: np.ndarray, name: str, **kwargs) -> np.ndarray:
    return np.array([metrics.welfare(row, name, **kwargs) for row in u], dtype=np.float64)


@pytest.mark.parametrize("name", sorted(metrics.WELFARE_FUNCTIONS))
def test_welfare_rows_is_row_by_row_welfare_bit_for_bit(name):
    rng = np.random.default_rng(3)
    for trial in range(300):
        n, k = int(rng.choice([1, 2, 3, 5, 7, 8, 9, 16, 17, 130, 300])), int(rng.integers(1, 40))
        kind = trial % 4
        if kind == 0:  # counts, as the memories hold them
            u = rng.integers(0, 100, size=(k, n)).astype(np.float64)
        elif kind == 1:  # real values of many magnitudes, where the order of a sum matters
            u = np.abs(rng.standard_normal((k, n))) * 10.0 ** rng.uniform(-6, 6, size=(k, n))
        elif kind == 2:
            u = rng.uniform(0.01, 5.0, size=(k, n))
        else:  # zeros of both signs
            u = rng.choice([0.0, -0.0, 1.0], size=(k, n))
        try:
            expected = _row_by_row(u, name)
        except ValueError as exc:  # outside the welfare's domain (nash of a zero row, ...): the same error
            with pytest.raises(ValueError, match=str(exc)[:40].replace("(", r"\(").replace("[", r"\[")):
                metrics.welfare_rows(u, name)
            continue
        assert _bits(metrics.welfare_rows(u, name)) == _bits(expected), (name, n, k, kind)


def test_welfare_rows_errors_are_those_of_the_first_bad_row():
    u = np.array([[1.0, 2.0], [0.5, -1.0], [-3.0, 1.0]])
    with pytest.raises(ValueError, match=r"log_nash needs every u_i > -1 .* got \[0.5, -1.0\]"):
        metrics.welfare_rows(u, "log_nash")
    with pytest.raises(ValueError, match=r"u must be finite .* got \[1.0, nan\]"):
        metrics.welfare_rows([[0.0, 0.0], [1.0, np.nan]], "utilitarian")
    with pytest.raises(ValueError, match=r"u must be finite"):
        metrics.welfare_rows([[0.0, np.inf]], "parity")
    with pytest.raises(ValueError, match="unknown welfare 'nope'"):
        metrics.welfare_rows(np.zeros((0, 2)), "nope")
    with pytest.raises(ValueError, match="2-D array"):
        metrics.welfare_rows([1.0, 2.0], "log_nash")
    with pytest.raises(ValueError, match="does not take the arguments"):
        metrics.welfare_rows([[1.0, 2.0]], "log_nash", alpha=2.0)
    assert metrics.welfare_rows(np.zeros((0, 3)), "log_nash").shape == (0,)
    assert _bits(metrics.welfare_rows([[1.0, 2.0]], "alpha_fair", alpha=0.5)) == _bits([metrics.alpha_fair([1.0, 2.0], 0.5)])


def test_reward_spec_weighs_a_batch_as_row_by_row_with_groups_too():
    rng = np.random.default_rng(5)
    u = rng.uniform(0, 3, size=(20, 6))
    for spec in (RewardSpec(welfare="log_nash"), RewardSpec(welfare="parity", aggregate="group", groups=(0, 0, 0, 1, 1, 2))):
        expected = np.array([spec.welfare_of(row) for row in u])
        assert _bits(spec.welfare_of_rows(u)) == _bits(expected)
    grouped = RewardSpec(welfare="parity", aggregate="group", groups=(0, 1, 1))
    totals = rng.uniform(0, 3, size=(9, 2))
    assert _bits(grouped.welfare_of_rows(totals, grouped=True)) == _bits([grouped.welfare_of(t, True) for t in totals])


def test_unique_rows_is_numpys_unique():
    rng = np.random.default_rng(1)
    for trial in range(3000):
        k, n = int(rng.integers(0, 12)), int(rng.integers(1, 5))
        a = rng.integers(-2, 3, size=(k, n)).astype(np.float64)
        if trial % 3 == 0 and k:
            a = np.unique(a, axis=0)  # sorted and distinct: the shortcut
        if trial % 7 == 0 and a.size:
            a[rng.random(a.shape) < 0.3] = -0.0  # equal to 0.0 for np.unique
        got, expected = unique_rows(a), np.unique(a, axis=0)
        assert got.shape == expected.shape and _bits(got) == _bits(expected)


def _counterfactual_memories_by_unique(spec: MemorySpec, m: np.ndarray, offsets: tuple[float, ...]) -> np.ndarray:
    """The enumerated set as the code before the shortcut computed it: every candidate, filtered, np.unique, minus m."""
    cand = m[None, :] + np.array(list(itertools.product(offsets, repeat=spec.size)), dtype=np.float64)
    if spec.encoding != "raw":
        cand = cand[np.all(cand >= 0, axis=1)]
    if spec.max_value is not None:
        cand = cand[np.all(cand < float(spec.max_value), axis=1)]
    if spec.kind == "min":
        cand = cand - cand.min(axis=1, keepdims=True)
    elif spec.kind == "reset":
        cand = np.where(np.all(cand == cand[:, :1], axis=1, keepdims=True), 0.0, cand)
    cand = np.unique(cand, axis=0)
    return cand[~np.all(cand == m[None, :], axis=1)]


def test_counterfactual_memories_are_those_of_np_unique():
    assert counterfactual_memories(MemorySpec(0), np.zeros(0)).shape == (0, 0)  # no stakeholder: nothing to vary
    rng = np.random.default_rng(0)
    choices = [-2.0, -1.0, 0.0, -0.0, 0.5, 1.0, 2.0, 3.0, 1e-300]
    for trial in range(1500):
        n = int(rng.integers(1, 5))
        offsets = tuple(sorted(rng.choice(choices, size=int(rng.integers(1, 4)), replace=False).tolist()))
        if trial % 5 == 0:
            offsets = offsets[::-1]  # decreasing: not the grid's order
        if trial % 9 == 0:
            offsets = offsets + offsets[:1]  # an offset twice: duplicate rows
        encoding = ("raw", "scaled", "binary")[trial % 3]
        if encoding == "binary":
            offsets = tuple(float(round(o)) for o in offsets)
        max_value = None if (encoding == "raw" and trial % 2) else 10.0
        spec = MemorySpec(n, kind=("full", "min", "reset")[trial % 7 % 3], encoding=encoding, max_value=max_value)
        m = rng.integers(0, 9, size=n).astype(np.float64)
        if trial % 11 == 0:
            m *= 1e17  # adding a small offset rounds back to m
        if trial % 4 == 0:
            m[m == 0] = -0.0  # with a -0.0 offset: -0.0, not 0.0
        got = counterfactual_memories(spec, m, offsets)
        expected = _counterfactual_memories_by_unique(spec, m, offsets)
        assert got.shape == expected.shape and _bits(got) == _bits(expected), (spec, m, offsets)


@pytest.mark.parametrize("encoding", ["raw", "scaled", "binary"])
def test_observed_memory_is_the_memory_read_back_from_the_observation(encoding):
    rng = np.random.default_rng(2)
    spec = MemorySpec(4, encoding=encoding, max_value=None if encoding == "raw" else 15.0)
    for _ in range(200):
        m = rng.integers(0, 16, size=(7, 4)).astype(np.float64)
        if encoding != "binary":
            m = m * rng.uniform(0, 1.3, size=m.shape) + 1e-9  # not representable in float32; beyond max_value too
        else:
            m += rng.choice([0.0, 4e-7, -4e-7], size=m.shape) * (m > 0)  # within encode's tolerance of an integer
            m[0, 0] = -0.0
        assert _bits(observed_memory(spec, m)) == _bits(decode_memory(spec, encode_memory(spec, m)))


def test_add_batch_writes_the_rows_a_wrapping_index_writes():
    """Rows written as one slice, or wrapped around the buffer's end, land where the index (pos + arange(k)) % size
    puts them."""
    space = spaces.Box(-1.0, 1.0, (3,), dtype=np.float32)
    buffer = CounterfactualReplayBuffer(10, space, spaces.Discrete(2), device="cpu")
    expected = {name: np.zeros_like(getattr(buffer, name)) for name in ("observations", "next_observations", "actions",
                                                                          "rewards", "dones")}
    rng = np.random.default_rng(4)
    pos = 0
    for k in (3, 4, 2, 5, 0, 7, 10, 13):
        obs, nxt = rng.standard_normal((k, 3)).astype(np.float32), rng.standard_normal((k, 3)).astype(np.float32)
        act, rew, done = rng.integers(0, 2, size=(k, 1)), rng.standard_normal(k).astype(np.float32), np.zeros(k, np.float32)
        buffer.add_batch(obs, nxt, act, rew, done)
        last = max(k - 10, 0)  # more rows than the buffer holds: the last 10
        idx = (pos + np.arange(k - last)) % 10
        expected["observations"][idx, 0], expected["next_observations"][idx, 0] = obs[last:], nxt[last:]
        expected["actions"][idx, 0], expected["rewards"][idx, 0], expected["dones"][idx, 0] = act[last:], rew[last:], done[last:]
        pos = (pos + k - last) % 10
        assert buffer.pos == pos
        for name, value in expected.items():
            np.testing.assert_array_equal(getattr(buffer, name), value, err_msg=name)
    assert buffer.full
