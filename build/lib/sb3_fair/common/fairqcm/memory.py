"""Memory augmentation (Alamdari et al. 2024, Def. 5.2): the memory state, its update and its encoding.

:class:`MemorySpec` fixes *what* is remembered; :func:`update_memory` is the memory update
``mu(m, a, s')`` (here a function of the step's benefits), used alike by the
:class:`~sb3_fair.wrappers.MemoryAugmentation` wrapper on real transitions and by
:class:`~sb3_fair.FairDQN` on counterfactual ones. Every function accepts a batch of memories
(leading axes) so that counterfactual sets are computed in one call.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, fields
from functools import cached_property, lru_cache
from typing import Any, cast

import numpy as np

from sb3_fair._exact import SHORT
from sb3_fair.common.validation import check_choice, check_int, check_weights

MEMORY_KINDS = ("full", "min", "reset")
ENCODINGS = ("raw", "scaled", "binary")

#: the largest ``max_value`` whose binary rows :class:`MemorySpec` tabulates (at most 1025 rows of ``n_bits`` floats)
_MAX_TABLE = 1024


@dataclass(frozen=True)
class MemorySpec:
    """What the memory holds and how it is written into the observation.

    :param kind: ``"full"`` (cumulative status ``U``), ``"min"`` (``U - min_i U_i``) or ``"reset"``
        (``U``, set back to zero whenever all entries are equal); Alamdari et al. 2024 §6.
    :param groups: if given, the memory holds per-group totals of the status (one entry per
        distinct group, in sorted order) instead of one entry per stakeholder (Alamdari et al. 2024 A.4.2).
    :param encoding: ``"raw"`` values, ``"scaled"`` to [0, 1] by ``max_value``, or ``"binary"``
        (each entry as ``ceil(log2(max_value + 1))`` bits, most significant first; the
        encoding of the paper's experiments).
    :param max_value: the largest value an entry can take (e.g. the horizon when each step gives
        at most one unit). Needed by ``"scaled"`` and ``"binary"``, and caps counterfactual memories.
    :param n_stakeholders: number of stakeholders.
    :param period: if set, a one-hot ``t mod period`` counter is appended after the memory, which
        makes periodic fairness Markovian (Alamdari et al. 2024, Def. 5.8).
    """

    n_stakeholders: int
    kind: str = "full"
    encoding: str = "raw"
    max_value: float | None = None
    groups: tuple[int, ...] | None = None
    period: int | None = None

    def __post_init__(self) -> None:
        check_choice(self.kind, "memory kind", MEMORY_KINDS)
        check_choice(self.encoding, "encoding", ENCODINGS)
        if self.max_value is not None:
            check_weights(self.max_value, "max_value", allow_zero=False)
        if self.encoding != "raw" and self.max_value is None:
            raise ValueError(f"encoding={self.encoding!r} needs a finite max_value > 0, got None")
        check_int(self.period, "period", 1, allow_none=True)
        if self.groups is not None and len(self.groups) != self.n_stakeholders:
            raise ValueError(f"groups must have one entry per stakeholder ({self.n_stakeholders})")

    def __getstate__(self) -> dict[str, Any]:
        """The fields only: the cached layout below is rebuilt on first use, not pickled (a saved FairDQN holds the spec)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    # ---- shapes ---------------------------------------------------------------------------
    # The spec is frozen, so what follows from its fields is computed once (``cached_property``): the wrappers read
    # it at every step. ``group_ids`` is an array whenever ``groups`` is set, and ``max_value`` a number whenever the
    # encoding is not "raw" (__post_init__): the casts below say so to the type checker.
    @property
    def group_ids(self) -> np.ndarray | None:
        return None if self.groups is None else np.unique(np.asarray(self.groups))

    @cached_property
    def size(self) -> int:
        """Number of memory entries (stakeholders, or groups when ``groups`` is set)."""
        return self.n_stakeholders if self.groups is None else int(cast(np.ndarray, self.group_ids).size)

    @cached_property
    def n_bits(self) -> int:
        return math.ceil(math.log2(float(cast(float, self.max_value)) + 1)) if self.encoding == "binary" else 1

    @cached_property
    def encoded_size(self) -> int:
        """Length of the encoded memory in the observation (without the period counter)."""
        return self.size * self.n_bits

    @cached_property
    def counter_size(self) -> int:
        return int(self.period) if self.period else 0

    @cached_property
    def _group_onehot(self) -> np.ndarray | None:
        """``(n_stakeholders, size)``: 1.0 where stakeholder i is in the k-th group of :attr:`group_ids`; ``None`` without groups."""
        if self.groups is None:
            return None
        g = np.asarray(self.groups)
        return (g[:, None] == cast(np.ndarray, self.group_ids)[None, :]).astype(np.float64)

    @cached_property
    def _bit_shifts(self) -> np.ndarray:
        """The shift of each bit of a binary entry, most significant first."""
        return np.arange(self.n_bits - 1, -1, -1, dtype=np.int64)

    @cached_property
    def _bit_weights(self) -> np.ndarray:
        """The value of each bit of a binary entry, most significant first (what :func:`decode_memory` sums)."""
        return 2.0 ** np.arange(self.n_bits - 1, -1, -1)

    @cached_property
    def _bit_rows(self) -> tuple[tuple[float, ...], ...] | None:
        """The binary encoding of each integer ``0..max_value`` (``None`` beyond :data:`_MAX_TABLE`), by the same
        shifts as :func:`encode_memory`'s NumPy path: what its Python path looks up."""
        if self.encoding != "binary" or float(cast(float, self.max_value)) > _MAX_TABLE:
            return None
        values = np.arange(int(cast(float, self.max_value)) + 1, dtype=np.int64)
        return tuple(map(tuple, ((values[:, None] >> self._bit_shifts) & 1).astype(np.float32).tolist()))


def initial_memory(spec: MemorySpec) -> np.ndarray:
    """The initial memory ``m_init``: all zeros."""
    return np.zeros(spec.size, dtype=np.float64)


def memory_increment(spec: MemorySpec, benefits: Any) -> np.ndarray:
    """What one step adds to the memory: the benefits, summed per group when ``spec.groups`` is set."""
    b = np.asarray(benefits, dtype=np.float64)
    if spec.groups is None:
        return b
    assert spec._group_onehot is not None  # set with groups
    return b @ spec._group_onehot


def update_memory(spec: MemorySpec, memory: Any, benefits: Any) -> np.ndarray:
    """The memory update ``m_{t+1} = mu(m_t, a_t, s_{t+1})`` of Alamdari et al. 2024, Def. 5.2.

    The action and next state enter through the step's benefits (``info["benefits"]``).
    ``memory`` may carry leading batch axes (a set of counterfactual memories); ``benefits`` is
    broadcast against them.
    """
    m = np.asarray(memory, dtype=np.float64) + memory_increment(spec, benefits)
    if spec.kind == "min":
        m = m - m.min(axis=-1, keepdims=True)
    elif spec.kind == "reset":
        equal = np.all(m == m[..., :1], axis=-1, keepdims=True)
        m = np.where(equal, 0.0, m)
    return m


def encode_memory(spec: MemorySpec, memory: Any) -> np.ndarray:
    """Encode a memory (or a batch of memories) for the observation, as float32.

    A binary encoding of one short memory (a wrapper's step) runs on Python ints and looks each entry's bits up in
    the spec's table, with the very same result as the NumPy computation that encodes batches (counterfactual
    memories); a NumPy call costs about a microsecond, and this path would take a dozen of them.
    """
    m = np.asarray(memory, dtype=np.float64)
    if spec.encoding == "raw":
        return m.astype(np.float32)
    if spec.encoding == "scaled":
        assert spec.max_value is not None  # __post_init__: "scaled" needs it
        return np.clip(m / float(spec.max_value), 0.0, 1.0).astype(np.float32)
    # binary
    rows = spec._bit_rows
    if (
        rows is not None and m.ndim == 1 and m.size == spec.size and m.size <= SHORT
    ):  # else NumPy's path (and its errors)
        values = m.tolist()
        if all(map(math.isfinite, values)):  # NaN and inf take NumPy's path below, which decides what they give
            out: list[float] = []
            for x in values:
                r = round(x)  # an int, rounded to nearest with ties to even, as np.rint
                if abs(r - x) > 1e-6 or r < 0 or r > spec.max_value:
                    raise _not_binary(spec, m)
                out += rows[r]
            return np.array(out, dtype=np.float32)
    ints = np.rint(m)
    if ((np.abs(ints - m) > 1e-6) | (ints < 0) | (ints > spec.max_value)).any():
        raise _not_binary(spec, m)
    bits = (ints.astype(np.int64)[..., None] >> spec._bit_shifts) & 1
    return bits.reshape(*m.shape[:-1], spec.encoded_size).astype(np.float32)


def _not_binary(spec: MemorySpec, m: np.ndarray) -> ValueError:
    """The error of a memory that the binary encoding cannot hold."""
    return ValueError(
        f"binary memory encoding needs integer entries in [0, max_value={spec.max_value}], got {m}; "
        "use encoding='scaled' or 'raw' for real-valued benefits, or raise max_value"
    )


def decode_memory(spec: MemorySpec, encoded: Any) -> np.ndarray:
    """Inverse of :func:`encode_memory` (exact for raw and binary; scaled up to float rounding)."""
    e = np.asarray(encoded, dtype=np.float64)
    if spec.encoding == "raw":
        return e.copy()
    if spec.encoding == "scaled":
        assert spec.max_value is not None  # __post_init__: "scaled" needs it
        return e * float(spec.max_value)
    bits = np.rint(e).reshape(*e.shape[:-1], spec.size, spec.n_bits)
    return bits @ spec._bit_weights


def observed_memory(spec: MemorySpec, memory: Any) -> np.ndarray:
    """``decode_memory(spec, encode_memory(spec, memory))``: the memory as an agent reads it back from its observation.

    For a binary encoding (of a memory that :func:`encode_memory` accepts) that is each entry rounded to the nearest
    integer, which is computed directly; FairQCM needs it for every counterfactual memory it shapes.
    """
    m = np.asarray(memory, dtype=np.float64)
    if spec.encoding == "binary":
        return np.rint(m) + 0.0  # + 0.0: a -0.0 reads back as 0.0, as the bits' weighted sum gives it
    return decode_memory(spec, encode_memory(spec, m))


def encode_counter(spec: MemorySpec, t: int) -> np.ndarray:
    """One-hot ``t mod period`` counter (Alamdari et al. 2024, Def. 5.8); empty when no period is set."""
    out = np.zeros(spec.counter_size, dtype=np.float32)
    if spec.period:
        out[int(t) % int(spec.period)] = 1.0
    return out


def counterfactual_memories(
    spec: MemorySpec,
    memory: Any,
    offsets: tuple[float, ...] = (1.0, 2.0),
    max_members: int | None = None,
    rng: np.random.Generator | None = None,
) -> np.ndarray:
    """The counterfactual memory set ``M'_t`` of FairQCM (Alamdari et al. 2024, Eq. 2, Alg. 1, A.4.1).

    The default is the paper's set: every memory ``m'`` with ``m'_i in {m_i + 1, m_i + 2}`` for each
    entry i (``2^n`` members, 32 for n = 5), candidates with an entry at or above ``max_value``
    dropped (as the authors do), normalised as the memory kind requires (``min`` subtracts the minimum; ``reset`` zeroes equal vectors),
    duplicates and ``m_t`` itself removed (``M'_t ⊆ M \\ {m_t}``). For large n the product is
    not enumerated: ``max_members`` members are drawn at random instead.

    The set depends only on ``m_t`` (and ``rng``), never on the step's outcome, so it is chosen
    before the outcome is seen, as Thm. 5.7 requires.

    :return: an array of shape ``(k, spec.size)``.
    """
    m = np.asarray(memory, dtype=np.float64).reshape(spec.size)
    offs = np.asarray(offsets, dtype=np.float64)
    if offs.size == 0:
        return np.zeros((0, spec.size))
    n_total = offs.size**spec.size
    if max_members is not None and n_total > max_members:
        if rng is None:
            rng = np.random.default_rng()
        choice = rng.integers(0, offs.size, size=(max_members, spec.size))
        cand = m[None, :] + offs[choice]
    else:
        cand = m[None, :] + _offset_grid(offs.tobytes(), spec.size)  # the bytes: -0.0 and 0.0 are distinct keys
    # a memory entry can only reach max_value at the last step: keep candidates below it; scaled and binary memories
    # (which always have a max_value) hold non-negative entries
    if spec.max_value is not None:
        inside = cand < float(spec.max_value)
        if spec.encoding != "raw":
            inside &= cand >= 0
        cand = cand[inside.all(axis=1)]
    if spec.kind == "min":
        cand = cand - cand.min(axis=1, keepdims=True)
    elif spec.kind == "reset":
        cand = np.where(np.all(cand == cand[:, :1], axis=1, keepdims=True), 0.0, cand)
    cand = unique_rows(cand)
    keep = ~np.all(cand == m[None, :], axis=1)
    return cand[keep]


@lru_cache(maxsize=64)
def _offset_grid(offsets: bytes, size: int) -> np.ndarray:
    """Every combination of the float64 ``offsets`` (their bytes) over ``size`` entries, in ``itertools.product``
    order, as a read-only ``(len(offsets) ** size, size)`` array.

    FairQCM adds it to the memory at every step; the grid depends on the offsets and the memory's size only.
    """
    values = np.frombuffer(offsets, dtype=np.float64)
    grid = np.array(list(itertools.product(values, repeat=size)), dtype=np.float64).reshape(len(values) ** size, size)
    grid.flags.writeable = False
    return grid


def unique_rows(rows: np.ndarray) -> np.ndarray:
    """``np.unique(rows, axis=0)`` of a 2-D float array without NaN: its distinct rows in lexicographic order.

    The counterfactual set of a full memory with increasing offsets is already in that order, with no row twice
    (the offset grid is in ``itertools.product`` order and adding the memory keeps it): checked in a few array
    operations, it is returned as it is; anything else goes to ``np.unique``, which sorts. Rows are compared as
    ``np.unique`` compares them, by value (``0.0 == -0.0``).
    """
    if len(rows) > 1 and rows.shape[1]:
        before, after = rows[:-1], rows[1:]
        differs = before != after
        first = differs.argmax(axis=1)  # the first column where consecutive rows differ (0 where none does)
        pick = np.arange(len(first))
        if differs[pick, first].all() and (after[pick, first] > before[pick, first]).all():
            return rows
    return np.unique(rows, axis=0)
