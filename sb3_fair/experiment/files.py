"""Writing a run's files so that no run's output is lost, half-written or overwritten by another run.

Four tools, used by :func:`~sb3_fair.experiment.train` and its checkpoints (and by the command line, for its paths):

* :func:`atomic_path`: every model zip, replay buffer, VecNormalize file and config is written to a hidden
  temporary name beside its destination and renamed into place once complete (``os.replace``, atomic on one file
  system), so a reader never sees a partial file, whether the writer is interrupted (Ctrl+C, ``kill``), runs out of
  disk or crashes. A failed write leaves the destination as it was.
* :class:`RunLock`: one writer per run. ``train`` holds an exclusive lock (``fcntl.flock``) on a hidden file beside
  the run's folder (``runs/.m.lock`` for ``--save runs/m.zip``) while it trains and saves; a second process that
  would write the same run is refused at once, naming the first one's process id. The operating system releases the
  lock when its process ends, however it ends, so a crashed run never blocks the next.
* :func:`check_free_space`: the bytes a run will write, estimated from the model's parameters and optimizer state
  and the rows its replay buffer will fill, checked against the free space of the destination before training.
* :func:`check_output_path`: a file can be written at a path (not a folder; its folder made and written to),
  checked before training: a model whose save fails has trained for nothing.

Example::

    from sb3_fair.experiment.files import RunLock, atomic_path

    with RunLock("runs/.m.lock", "save_path"):
        with atomic_path("runs/m.zip") as tmp:
            model.save(tmp)          # runs/m.zip appears only once complete
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

#: the suffix of the temporary files :func:`atomic_path` writes (``.<name>.<pid>.partial``)
PARTIAL_SUFFIX = ".partial"


@contextlib.contextmanager
def atomic_path(path: str | Path, fsync: bool = True) -> Iterator[Path]:
    """A temporary path beside ``path`` to write to; renamed onto ``path`` when the block ends without an error,
    removed otherwise (the destination keeps what it had).

    :param path: the destination file.
    :param fsync: flush the file to disk before the rename, so that a crash of the machine does not leave an empty
        file under the final name either.
    """
    final = Path(path)
    tmp = final.with_name(f".{final.name}.{os.getpid()}{PARTIAL_SUFFIX}")
    try:
        yield tmp
        if fsync and tmp.is_file():
            with open(tmp, "rb+") as f:
                os.fsync(f.fileno())
        os.replace(tmp, final)
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()


def zip_path(path: str | Path) -> Path:
    """The file SB3's ``model.save(path)`` writes: ``path`` itself if it ends in ``.zip``, else ``path`` + ``.zip``."""
    p = Path(path)
    return p if p.suffix == ".zip" else p.with_name(p.name + ".zip")


class ModelNotSavedError(OSError):
    """A run trained but its model could not be written (a full disk, a removed folder, ...): the trained model is
    kept on the error (``err.model``), so that the caller can save it elsewhere (the command line writes it to the
    system's temporary folder and says where).

    :param message: what could not be written, and why.
    :param model: the trained model.
    :param path: the file that could not be written.
    """

    def __init__(self, message: str, model: Any, path: str | Path) -> None:
        super().__init__(message)
        self.model = model
        self.path = str(path)


class RunLockedError(ValueError):
    """Another process holds the lock of the run this one would write."""


class RunLock:
    """An exclusive, non-blocking lock on ``path`` for as long as it is held (a context manager).

    The lock file holds the holder's process id, for the message a second writer gets; it is removed on release.
    Where ``fcntl`` does not exist (Windows) the lock is an exclusively created file, which a crashed run leaves
    behind (its message says to delete it).

    :param path: the lock file.
    :param what: what the lock protects, for the error message (e.g. ``"save_path 'runs/m.zip'"``).
    :raises RunLockedError: on :meth:`acquire` while another process holds it.
    """

    def __init__(self, path: str | Path, what: str) -> None:
        self.path = Path(path)
        self.what = what
        self._fd: int | None = None

    def _holder(self) -> str:
        try:
            pid = self.path.read_text().strip()
        except OSError:
            pid = ""
        return f"process {pid}" if pid.isdigit() else "another process"

    def _refuse(self) -> RunLockedError:
        return RunLockedError(
            f"{self.what} is being written by {self._holder()} now (lock {self.path}): two runs must not write the "
            "same files; wait for it to finish, or give this run another save path or name"
        )

    def acquire(self) -> RunLock:
        if self._fd is not None:
            return self
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            import fcntl
        except ImportError:  # Windows: an exclusively created file
            try:
                self._fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_RDWR)
            except FileExistsError:
                raise RunLockedError(
                    f"{self.what} is locked by {self.path} (another run, or one that crashed: delete the file if no "
                    "run is writing)"
                ) from None
        else:
            while True:
                fd = os.open(self.path, os.O_CREAT | os.O_RDWR)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    os.close(fd)
                    raise self._refuse() from None
                try:  # the file may have been removed by a holder that released it before we locked: lock again
                    same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
                except FileNotFoundError:
                    same = False
                if same:
                    self._fd = fd
                    break
                os.close(fd)
        os.ftruncate(self._fd, 0)
        os.write(self._fd, str(os.getpid()).encode())
        return self

    def release(self) -> None:
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            self.path.unlink()
        os.close(self._fd)
        self._fd = None

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(self, *exc: Any) -> None:
        self.release()


def model_bytes(model: Any) -> int:
    """An upper estimate of the size of ``model``'s zip: its policy's tensors, its optimizers' state (Adam keeps two
    moments per parameter) and 256 kB for the rest (settings, spaces, the zip's own records)."""
    total = 0
    policy = getattr(model, "policy", None)
    if policy is not None:
        for tensor in policy.state_dict().values():
            total += tensor.numel() * tensor.element_size()
        trainable = sum(p.numel() * p.element_size() for p in policy.parameters() if p.requires_grad)
        total += 2 * trainable
    return int(total * 1.1) + 256_000


def replay_buffer_bytes(model: Any, n_timesteps: int) -> int:
    """The bytes of ``model``'s replay buffer once ``n_timesteps`` steps have filled it, as
    :func:`~sb3_fair.experiment.checkpoints.save_replay_buffer` writes it (0 without a replay buffer)."""
    import numpy as np

    buffer = getattr(model, "replay_buffer", None)
    if buffer is None:
        return 0
    size = int(buffer.buffer_size)
    rows = min(size, max(n_timesteps // max(int(getattr(buffer, "n_envs", 1)), 1), 1))
    total = 0
    for value in vars(buffer).values():
        arrays = value.values() if isinstance(value, dict) else [value]
        for a in arrays:
            if isinstance(a, np.ndarray) and a.ndim >= 1 and len(a) == size:
                total += a.nbytes // size * rows
    return total + 64_000


def existing_ancestor(path: str | Path) -> Path:
    """``path`` itself if it exists, else its nearest ancestor that does (the folder a new path would be made in)."""
    ancestor = Path(path)
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    return ancestor


def check_free_space(folder: str | Path, needed: int, what: str) -> None:
    """Refuse to start a run whose files (``needed`` bytes) do not fit on the file system of ``folder``.

    :raises ValueError: naming ``what``, the bytes needed and the bytes free.
    """
    place = existing_ancestor(folder)
    free = shutil.disk_usage(place).free
    if needed > free:
        raise ValueError(
            f"{what}: the run will write about {needed / 1e6:.1f} MB (model, checkpoints, replay buffer) but "
            f"{place} has {free / 1e6:.1f} MB free; free some space or choose another folder"
        )


def check_output_path(path: str | Path, what: str = "save_path") -> None:
    """Check, before anything trains, that a file can be written at ``path``: not a folder, and its folder made (if
    needed) and written to (a file is created and removed there, which also holds for root, whom ``os.access``
    always answers yes).

    :raises ValueError: naming ``what`` and the reason.
    """
    import tempfile

    target = Path(path)
    if target.is_dir():
        raise ValueError(f"{what}: {str(path)!r} is a directory; give a file path")
    ancestor = existing_ancestor(target.parent)
    if not ancestor.is_dir():
        raise ValueError(f"{what}: cannot write {str(path)!r} ({ancestor} is a file, not a folder)")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=target.parent):
            pass
    except OSError as err:
        raise ValueError(f"{what}: cannot write {str(path)!r} ({err.strerror or err})") from None


__all__ = [
    "PARTIAL_SUFFIX",
    "ModelNotSavedError",
    "RunLock",
    "RunLockedError",
    "atomic_path",
    "check_free_space",
    "check_output_path",
    "existing_ancestor",
    "model_bytes",
    "replay_buffer_bytes",
    "zip_path",
]
