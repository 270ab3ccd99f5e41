"""Checkpoints whose size follows what the run has stored.

SB3's :class:`~stable_baselines3.common.callbacks.CheckpointCallback` with ``save_replay_buffer=True``
pickles the whole replay buffer at every checkpoint, and its arrays are allocated for ``buffer_size``
rows from the start (1,000,000 by default): about 340 MB per checkpoint on the doughnut task however
few steps were taken, and every checkpoint keeps its own. :class:`CompactCheckpointCallback` saves the
model and the VecNormalize statistics as SB3's does, and the replay buffer with
:func:`save_replay_buffer`, which writes each array only up to its last non-zero row: the rows after
it are zeros, as the buffer allocated them, and come back as zeros when the file is loaded, so the
loaded buffer is the saved one bit for bit (same class, same ``buffer_size``). The file is an ordinary
pickle that SB3's ``model.load_replay_buffer(path)`` reads.

Only the newest ``keep_buffers`` checkpoints (default 1) keep their replay buffers; older buffers are
deleted when a new one is written, since a buffer holds up to ``buffer_size`` rows (FairQCM's fills its
1,000,000 rows within 30,000 steps) and every checkpoint would otherwise keep a copy. A run resumed
from a checkpoint with its buffer is exact; one resumed from a checkpoint without goes on with an
empty buffer. Example::

    from sb3_fair.experiment.checkpoints import CompactCheckpointCallback

    checkpoints = CompactCheckpointCallback(10_000, "checkpoints/run", name_prefix="model", save_replay_buffer=True)
    model.learn(100_000, callback=checkpoints)
    print(checkpoints.bytes_on_disk())  # the model zips, and the newest replay buffer
"""

from __future__ import annotations

import os
import pickle
from pathlib import Path
from typing import Any

import numpy as np
from stable_baselines3.common.buffers import ReplayBuffer
from stable_baselines3.common.callbacks import CheckpointCallback

from sb3_fair.experiment.files import atomic_path


def _filled(array: np.ndarray) -> int:
    """The rows of ``array`` up to its last row whose bytes are not all zero (so ``-0.0`` counts as written)."""
    if not array.size:
        return 0
    raw = np.ascontiguousarray(array).reshape(len(array), -1).view(np.uint8)
    nonzero = np.flatnonzero(raw.any(axis=1))
    return int(nonzero[-1]) + 1 if len(nonzero) else 0


def _compact(value: Any, rows: int) -> tuple[Any, Any]:
    """``value`` cut after its last non-zero row where it is a numeric array of ``rows`` rows (or a dict of them),
    and the full lengths to restore (None where nothing was cut). Object arrays (HER's ``infos``) are kept whole."""
    if isinstance(value, np.ndarray) and value.ndim >= 1 and len(value) == rows and value.dtype != object:
        n = _filled(value)
        return (value[:n], rows) if n < rows else (value, None)
    if isinstance(value, dict) and value and all(isinstance(v, np.ndarray) for v in value.values()):
        cut = {k: _compact(v, rows) for k, v in value.items()}
        full = {k: c[1] for k, c in cut.items() if c[1] is not None}
        return ({k: c[0] for k, c in cut.items()}, full) if full else (value, None)
    return value, None


def _expand(value: Any, full: Any) -> Any:
    if isinstance(full, dict):
        return {k: _expand(v, full.get(k)) for k, v in value.items()}
    if full is None:
        return value
    out = np.zeros((full, *value.shape[1:]), dtype=value.dtype)
    out[: len(value)] = value
    return out


def _restore_buffer(cls: type[ReplayBuffer], state: dict[str, Any], lengths: dict[str, Any]) -> Any:
    """The buffer :func:`save_replay_buffer` wrote: its arrays back at their full length (called by ``pickle.load``)."""
    buffer = cls.__new__(cls)
    state = {k: _expand(v, lengths[k]) if k in lengths else v for k, v in state.items()}
    setstate = getattr(buffer, "__setstate__", None)
    if setstate is not None:
        setstate(state)
    else:
        buffer.__dict__.update(state)
    return buffer


class _CompactPickler(pickle.Pickler):
    def __init__(self, file: Any, buffer: ReplayBuffer) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self._buffer = buffer

    def reducer_override(self, obj: Any) -> Any:
        if obj is not self._buffer:
            return NotImplemented
        state = obj.__getstate__() if hasattr(obj, "__getstate__") else obj.__dict__
        compact, lengths = {}, {}
        for key, value in dict(state).items():
            compact[key], full = _compact(value, obj.buffer_size)
            if full is not None:
                lengths[key] = full
        return _restore_buffer, (type(obj), compact, lengths)


def save_replay_buffer(buffer: ReplayBuffer, path: str | Path) -> int:
    """Pickle ``buffer`` with each array cut after its last non-zero row; return the file's size in bytes.

    ``pickle.load`` (and SB3's ``load_replay_buffer``) gives back a buffer equal to ``buffer`` array for array.

    :param buffer: an SB3 replay buffer (or a subclass, e.g. sb3-fair's counterfactual buffers, HER's).
    :param path: the file.
    """
    if not isinstance(buffer, ReplayBuffer):
        raise ValueError(f"buffer must be an SB3 ReplayBuffer, got {type(buffer).__name__}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp, open(tmp, "wb") as f:  # a reader never sees a partial buffer
        _CompactPickler(f, buffer).dump(buffer)
    return path.stat().st_size


class CompactCheckpointCallback(CheckpointCallback):
    """SB3's :class:`~stable_baselines3.common.callbacks.CheckpointCallback` (same arguments, same file names)
    whose replay buffers are written by :func:`save_replay_buffer` and kept for the newest checkpoint only, and whose
    files are each written to a temporary name and renamed into place (:func:`~sb3_fair.experiment.files.atomic_path`),
    the model's zip last: an interrupted checkpoint leaves no partial file, only the previous checkpoints.

    :param save_freq: save every ``save_freq`` calls (VecEnv steps).
    :param save_path: the folder.
    :param name_prefix: the files' prefix (``<prefix>_<N>_steps.zip``, ``<prefix>_replay_buffer_<N>_steps.pkl``).
    :param save_replay_buffer: save the replay buffer of an off-policy model.
    :param save_vecnormalize: save the VecNormalize statistics.
    :param keep_buffers: how many of the newest checkpoints keep their replay buffers (0: none is kept).
    :param verbose: 2 prints each file written, with its size.

    A checkpoint that cannot be written (``OSError``: a full disk, a removed folder) stops training (``learn``
    returns) and is kept in :attr:`failed`; the files of the earlier checkpoints stay as they were.
    """

    def __init__(
        self,
        save_freq: int,
        save_path: str,
        name_prefix: str = "rl_model",
        save_replay_buffer: bool = False,
        save_vecnormalize: bool = False,
        keep_buffers: int = 1,
        verbose: int = 0,
    ) -> None:
        if isinstance(keep_buffers, bool) or not isinstance(keep_buffers, int) or keep_buffers < 0:
            raise ValueError(f"keep_buffers must be an int >= 0, got {keep_buffers!r}")
        super().__init__(
            save_freq,
            save_path,
            name_prefix=name_prefix,
            save_replay_buffer=False,
            save_vecnormalize=save_vecnormalize,
            verbose=verbose,
        )
        self.save_compact_replay_buffer = save_replay_buffer
        self.keep_buffers = keep_buffers
        self.written: list[str] = []
        self._buffers: list[str] = []
        #: the error that stopped training when a checkpoint could not be written (None while all were written)
        self.failed: OSError | None = None

    def _on_step(self) -> bool:
        if self.n_calls % self.save_freq != 0:
            return True
        try:
            self._save_checkpoint()
        except OSError as err:  # a full disk, a removed folder: stop training, the model is still in memory
            self.failed = err
            return False
        return True

    def _save_checkpoint(self) -> None:
        # Each file goes to a temporary name and is renamed into place once complete; the model's zip comes last, so a
        # checkpoint's zip on disk means its replay buffer and VecNormalize statistics were written before it.
        buffer = getattr(self.model, "replay_buffer", None)
        if self.save_compact_replay_buffer and buffer is not None and self.keep_buffers > 0:
            path = self._checkpoint_path("replay_buffer_", extension="pkl")
            size = save_replay_buffer(buffer, path)
            if self.verbose >= 2:
                print(f"Saving model replay buffer checkpoint to {path} ({size / 1e6:.1f} MB)")
            self._buffers.append(path)
            self.written.append(path)
        norm = self.model.get_vec_normalize_env()
        if self.save_vecnormalize and norm is not None:
            path = self._checkpoint_path("vecnormalize_", extension="pkl")
            with atomic_path(path) as tmp:
                norm.save(str(tmp))
            self.written.append(path)
            if self.verbose >= 2:
                print(f"Saving model VecNormalize to {path}")
        path = self._checkpoint_path(extension="zip")
        with atomic_path(path) as tmp, open(tmp, "wb") as f:
            self.model.save(f)
        self.written.append(path)
        if self.verbose >= 2:
            print(f"Saving model checkpoint to {path}")
        while len(self._buffers) > self.keep_buffers:  # only the newest checkpoints keep their buffers
            old = self._buffers.pop(0)
            if os.path.isfile(old):
                os.remove(old)
            self.written.remove(old)

    def bytes_on_disk(self) -> int:
        """The size of the files this callback wrote that are still on disk."""
        return sum(os.path.getsize(p) for p in self.written if os.path.isfile(p))


__all__ = ["CompactCheckpointCallback", "save_replay_buffer"]
