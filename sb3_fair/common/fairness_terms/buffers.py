"""The rollout buffer of a fairness term: the parent's own buffer class (SB3's, MaskablePPO's, RecurrentPPO's) with
the term's per-step signal arrays, a per-minibatch advantage transformation and the last minibatch it handed out."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, cast

import numpy as np

if TYPE_CHECKING:
    from stable_baselines3.common.buffers import RolloutBuffer

    _BufferBase = RolloutBuffer
else:
    _BufferBase = object

#: ``fn(rows)``: a minibatch's advantages transformed, from its rows stacked (its advantages first, then each of the
#: rows given to :meth:`FairnessBufferMixin.transform_minibatches`, in the minibatch's order)
MinibatchTransform = Callable[[np.ndarray], np.ndarray]


class FairnessBufferMixin(_BufferBase):
    """Mixed into an on-policy rollout buffer class: the arrays of :attr:`signals` (float64, ``(n_steps, n_envs)``,
    flattened with the buffer's own when it hands out minibatches), an optional per-minibatch advantage
    transformation, and :attr:`last_minibatch`.

    :meth:`transform_minibatches` gives rows of every step of the rollout (each of the signals' shape) and ``fn``;
    every minibatch then gets ``fn(rows)`` as its advantages, where ``rows`` holds its advantages first and then its
    entries of each given row. The buffer's own advantages are left as they are (each minibatch's are put back after
    it is sampled). F-PPO's regulariser scales each minibatch this way, as its authors' code does.
    """

    #: the names of the per-step arrays (set per generated class by :func:`fairness_buffer_class`)
    signals: ClassVar[tuple[str, ...]] = ()
    #: the minibatch transformation of the current update (``None``: the advantages as they are)
    minibatch_transform: MinibatchTransform | None = None
    #: the samples of the last minibatch handed out (a term's extra loss reads them)
    last_minibatch: Any = None
    _term_rows: np.ndarray | None = None

    def reset(self) -> None:
        super().reset()
        shape = (self.buffer_size, self.n_envs)
        for name in self.signals:  # float64: a signal exactly at a threshold must compare as the env reported it
            setattr(self, name, np.zeros(shape, dtype=np.float64))
        self._term_rows = None
        self.last_minibatch = None

    def transform_minibatches(self, rows: Sequence[np.ndarray], fn: MinibatchTransform | None) -> None:
        """From the next minibatch on, hand out ``fn(stacked rows)`` as each minibatch's advantages (``fn=None``:
        stop). ``rows``: one array per term for every step of the rollout (before or after :meth:`get` flattened the
        buffer), kept stacked in the order :meth:`get` hands the rows out."""
        if fn is None:
            self.minibatch_transform, self._term_rows = None, None
            return
        flat = [(self.swap_and_flatten(t) if not self.generator_ready else t).reshape(-1) for t in rows]
        self._term_rows = np.stack(flat).astype(np.float64, copy=False)
        self.minibatch_transform = fn

    def get(self, batch_size: int | None = None) -> Any:
        if not self.generator_ready:
            for name in self.signals:  # flattened exactly as the parent flattens its own arrays
                setattr(self, name, self.swap_and_flatten(getattr(self, name)))
        yield from super().get(batch_size)

    def _get_samples(self, batch_inds: np.ndarray, *args: Any, **kwargs: Any) -> Any:
        if self.minibatch_transform is None:
            self.last_minibatch = super()._get_samples(batch_inds, *args, **kwargs)
            return self.last_minibatch
        assert self._term_rows is not None  # set with the transformation
        advantages = self.advantages
        raw = advantages[batch_inds]  # a copy (fancy indexing): the rows are put back after sampling
        # one (1 + terms, batch) array: the transformation scales all its rows in one pass
        rows = np.empty((1 + len(self._term_rows), raw.size))
        rows[0] = raw.reshape(-1)
        rows[1:] = self._term_rows[:, np.asarray(batch_inds).reshape(-1)]
        advantages[batch_inds] = self.minibatch_transform(rows).astype(advantages.dtype).reshape(raw.shape)
        try:
            self.last_minibatch = super()._get_samples(batch_inds, *args, **kwargs)
            return self.last_minibatch
        finally:
            advantages[batch_inds] = raw


_BUFFER_CLASSES: dict[tuple[type, tuple[str, ...]], type] = {}


def fairness_buffer_class(buffer_class: type[RolloutBuffer], signals: tuple[str, ...] = ()) -> type[RolloutBuffer]:
    """``buffer_class`` with :class:`FairnessBufferMixin` mixed in, holding the arrays ``signals`` (one class per
    parent class and signals)."""
    if issubclass(buffer_class, FairnessBufferMixin):
        if tuple(buffer_class.signals) == tuple(signals):
            return buffer_class
        buffer_class = cast(
            "type[RolloutBuffer]", next(c for c in buffer_class.__mro__ if not issubclass(c, FairnessBufferMixin))
        )
    key = (buffer_class, tuple(signals))
    if key not in _BUFFER_CLASSES:
        _BUFFER_CLASSES[key] = type(
            f"Fairness{buffer_class.__name__}",
            (FairnessBufferMixin, buffer_class),
            {"__module__": __name__, "signals": tuple(signals)},
        )
    return _BUFFER_CLASSES[key]


__all__ = ["FairnessBufferMixin", "MinibatchTransform", "fairness_buffer_class"]
