"""Worker processes that end with the run that started them.

:func:`~sb3_fair.experiment.training.train_all` (``sb3-fair compare --jobs N``) and the method benchmarks train in worker
processes. Three pieces make sure no worker goes on training alone after its parent stops:

* :func:`terminate_raises`: while the block runs, SIGTERM (``kill``) raises :class:`Terminated`, a
  ``KeyboardInterrupt``, so that ``finally`` blocks run as on Ctrl+C (locks released, temporary files removed,
  workers ended) instead of the process vanishing at once;
* :func:`end_workers`: ends the worker processes of a ``ProcessPoolExecutor`` now, without waiting for their runs;
* :func:`worker_dies_with_parent`, a pool's ``initializer``: on Linux the kernel ends the worker when its parent
  ends, however that ends (``kill -9`` included).

Example::

    import multiprocessing as mp

    from sb3_fair.experiment.processes import terminate_raises, worker_dies_with_parent

    with terminate_raises(), mp.get_context("spawn").Pool(2, initializer=worker_dies_with_parent) as pool:
        results = pool.map(run_one, trials)  # Ctrl+C or kill: Pool.__exit__ terminates the workers
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Iterator
from typing import Any


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the process is (inside :func:`terminate_raises`)."""


def _raise_terminated(signum: int, frame: Any) -> None:
    raise Terminated()


@contextlib.contextmanager
def terminate_raises() -> Iterator[None]:
    """SIGTERM raises :class:`Terminated` inside the block (the previous handler comes back after it). Only the main
    thread can set a signal handler: elsewhere the block runs unchanged."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def worker_dies_with_parent() -> None:
    """In a worker process: ask Linux to send it SIGTERM when the process that started it ends (``PR_SET_PDEATHSIG``);
    elsewhere nothing (the parent's :func:`end_workers` or ``Pool.terminate`` ends it)."""
    import ctypes
    import multiprocessing
    import os

    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGTERM))  # 1: PR_SET_PDEATHSIG
    parent = multiprocessing.parent_process()
    if parent is not None and os.getppid() != parent.pid:  # the parent ended before the line above: end now
        os.kill(os.getpid(), signal.SIGTERM)


def end_workers(pool: Any) -> int:
    """End the worker processes of a :class:`~concurrent.futures.ProcessPoolExecutor` now (runs in progress are
    lost), without waiting for the runs they hold; the number of processes ended."""
    processes = list((getattr(pool, "_processes", None) or {}).values())  # the executor has no public way to kill
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        if process.is_alive():
            process.terminate()
    for process in processes:
        process.join(5)
        if process.is_alive():
            process.kill()
    return len(processes)


__all__ = ["Terminated", "end_workers", "terminate_raises", "worker_dies_with_parent"]
