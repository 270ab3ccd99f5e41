"""Weights & Biases as one more SB3 logger output, so every ``logger.record`` (rewards, ``fairness/*``,
``train/*``) streams to W&B.

W&B trouble never stops training and never touches the other outputs (stdout, CSV, TensorBoard):

* a run that cannot start online within :data:`WANDB_INIT_TIMEOUT` seconds (an API key but no
  network) is started offline instead, said once per process, and later runs of the process go
  offline at once (a ``settings`` of your own in the ``wandb`` dict keeps its own ``init_timeout``,
  W&B's default being 90 s);
* a failed ``run.log`` keeps its dump in a buffer that is sent, in order, before the next dump;
  when training ends the buffer is drained, retrying until :data:`WANDB_DRAIN_FAILURES` calls in a
  row have failed; every failure is counted, and a summary is warned at the end of training when
  anything failed or was lost;
* a failing ``run.finish`` is warned about, not swallowed, and the run is let go: it is no longer
  the process's active run, so the next model starts a run of its own instead of joining the
  stale one;
* steps stay monotonic across ``learn`` calls on one run: a call that restarts the timestep count
  (``reset_num_timesteps=True``) logs after the run's last step, so W&B neither drops its dumps nor
  overwrites the previous call's last values.
"""

from __future__ import annotations

import netrc
import os
import time
import warnings
from collections import deque
from typing import Any
from urllib.parse import urlparse

import numpy as np
from stable_baselines3.common.logger import KVWriter


def wandb_has_credentials() -> bool:
    """True when an API key is available (``WANDB_API_KEY`` or a ``~/.netrc`` entry for the W&B host)."""
    if os.environ.get("WANDB_API_KEY"):
        return True
    host = urlparse(os.environ.get("WANDB_BASE_URL", "https://api.wandb.ai")).hostname or "api.wandb.ai"
    try:
        return netrc.netrc().authenticators(host) is not None
    except (FileNotFoundError, netrc.NetrcParseError, OSError):
        return False


def wandb_mode(mode: str | None = None) -> str:
    """The W&B mode to use: ``mode`` if given, else ``$WANDB_MODE``, else online with credentials and offline without."""
    if mode is not None:
        return mode
    return os.environ.get("WANDB_MODE") or ("online" if wandb_has_credentials() else "offline")


#: seconds :func:`wandb.init` may take online before the run is started offline instead (W&B's own default is 90)
WANDB_INIT_TIMEOUT = 15.0
#: dumps kept for a retry while ``run.log`` fails; older ones are dropped (and counted as lost) beyond this
WANDB_RETRY_BUFFER = 10_000
#: at the end of training, the buffer is retried until this many run.log calls in a row have failed
WANDB_DRAIN_FAILURES = 10
#: seconds between two failed calls while draining (at most WANDB_DRAIN_FAILURES of them are waited)
WANDB_DRAIN_PAUSE = 0.2
# set when an online start failed in this process: later runs start offline without waiting again
_ONLINE_FAILED = False
# the runs whose finish raised (held, so that no new run can take the id of a freed one): W&B may still hold them
# as active, but they are never joined again
_STALE_RUNS: list[Any] = []
# a run started beside a stale one (reinit="create_new"): W&B does not make it ``wandb.run``, so it is remembered here
_CREATED_RUN: Any = None


def _is_stale(run: Any) -> bool:
    return run is not None and any(stale is run for stale in _STALE_RUNS)


def active_wandb_run() -> Any | None:
    """The W&B run active in this process, if any (``None`` also when wandb cannot be imported, and for a run
    whose ``finish`` failed: it is never joined again)."""
    try:
        import wandb

        run = wandb.run
    except Exception:  # noqa: BLE001
        return None
    if run is None and _CREATED_RUN is not None and not getattr(_CREATED_RUN, "_is_finished", False):
        run = _CREATED_RUN
    return None if _is_stale(run) else run


def start_wandb_run(config: dict[str, Any], **init_kwargs: Any) -> Any | None:
    """Start (or reuse) a W&B run whose config holds ``config``; ``None`` if W&B fails.

    :param config: hyperparameters to store in the run's config (merged into an active run).
    :param init_kwargs: passed to :func:`wandb.init` (``project``, ``name``, ``mode``, ``dir`` ...).
        ``mode`` defaults to :func:`wandb_mode`.
    """
    global _ONLINE_FAILED, _CREATED_RUN
    try:
        import wandb

        active = active_wandb_run()
        if active is not None:
            active.config.update(config, allow_val_change=True)
            return active
        kwargs = {"project": "sb3-fair", **init_kwargs}
        created = bool(_STALE_RUNS) and "reinit" not in kwargs
        if created:
            # W&B may still list a run whose finish failed as active, and would hand it back: start a new one beside it
            kwargs["reinit"] = "create_new"
        kwargs["mode"] = wandb_mode(kwargs.get("mode"))
        if "dir" not in kwargs and os.environ.get("WANDB_DIR"):  # read now: wandb reads it once per process
            kwargs["dir"] = os.environ["WANDB_DIR"]
        if kwargs["mode"] == "online" and _ONLINE_FAILED:
            kwargs["mode"] = "offline"
        our_settings = kwargs["mode"] == "online" and "settings" not in kwargs
        if our_settings:
            kwargs["settings"] = wandb.Settings(init_timeout=WANDB_INIT_TIMEOUT)
        try:
            run = wandb.init(config=config, **kwargs)
            if created:  # the process's active run from now on, for the models and train() that join it
                _CREATED_RUN = run
            return run
        except Exception as exc:
            if kwargs["mode"] != "online":
                raise
            _ONLINE_FAILED = True
            warnings.warn(
                f"Weights & Biases could not start an online run within {WANDB_INIT_TIMEOUT:g} s ({exc!r}); logging offline "
                "instead for the rest of this process (upload later with `wandb sync`)",
                stacklevel=2,
            )
            kwargs["mode"] = "offline"
            if our_settings:  # a user's own settings go to the offline run too
                kwargs.pop("settings")
            run = wandb.init(config=config, **kwargs)
            if created:
                _CREATED_RUN = run
            return run
    except Exception as exc:  # noqa: BLE001 - W&B must never stop training
        warnings.warn(f"Weights & Biases could not start a run ({exc!r}); training goes on without it", stacklevel=2)
        return None


class WandbOutputFormat(KVWriter):
    """An SB3 logger output that sends each dump to a W&B run with :meth:`wandb.Run.log`.

    Add it to a logger with ``model.logger.output_formats.append(WandbOutputFormat(run, start))``.
    The W&B step is SB3's ``num_timesteps`` plus an offset fixed here: 0 when ``start`` (the
    model's ``num_timesteps`` when this ``learn`` began) is past the run's last step, else what puts
    this call's steps after it. A failed ``run.log`` is retried with the next dump (module
    docstring); :meth:`report` says what failed.

    :param run: the W&B run.
    :param start: ``num_timesteps`` when training started.
    """

    def __init__(self, run: Any, start: int = 0) -> None:
        self.run = run
        last = _last_step(run)
        self.offset = 0 if last is None or int(start) >= last else last + 1 - int(start)
        self.pending: deque[tuple[dict[str, float], int]] = deque()
        self.failures = 0  # failed run.log calls
        self.lost = 0  # dumps dropped from a full retry buffer
        self.sent = 0  # dumps that reached the run
        self._warned = False

    def write(self, key_values: dict[str, Any], key_excluded: dict[str, tuple[str, ...]], step: int = 0) -> None:
        if self.run is None:
            return
        data = {}
        for key, value in key_values.items():
            excluded = key_excluded.get(key) or ()
            if "wandb" in excluded:
                continue
            if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
                data[key] = float(value)
        if len(self.pending) >= WANDB_RETRY_BUFFER:
            self.pending.popleft()
            self.lost += 1
        self.pending.append((data, int(step) + self.offset))
        self.flush()

    def flush(self) -> bool:
        """Send the buffered dumps in order; True when none is left."""
        while self.pending:
            data, step = self.pending[0]
            try:
                self.run.log(data, step=step)
            except Exception as exc:  # noqa: BLE001 - W&B must never stop training
                self.failures += 1
                if not self._warned:
                    self._warned = True
                    warnings.warn(
                        f"Weights & Biases logging failed ({exc!r}); the dump is kept and retried with the next one",
                        stacklevel=2,
                    )
                return False
            self.pending.popleft()
            self.sent += 1
        return True

    def drain(self) -> bool:
        """Retry the buffered dumps until none is left or :data:`WANDB_DRAIN_FAILURES` calls in a row failed."""
        failed_in_a_row = 0
        while self.pending and failed_in_a_row < WANDB_DRAIN_FAILURES:
            before = len(self.pending)
            if self.flush():
                return True
            failed_in_a_row = 1 if len(self.pending) < before else failed_in_a_row + 1
            time.sleep(WANDB_DRAIN_PAUSE)
        return not self.pending

    def report(self) -> str | None:
        """A one-line account of W&B failures during this training (``None`` when nothing failed)."""
        if not self.failures and not self.lost and not self.pending:
            return None
        return (
            f"Weights & Biases: {self.failures} failed run.log call(s) during training; {self.sent} dump(s) sent, "
            f"{len(self.pending) + self.lost} lost ({len(self.pending)} still failing at the end, {self.lost} beyond the "
            f"retry buffer). stdout/CSV/TensorBoard have every record"
        )

    def close(self) -> None:
        """The run is finished by whoever started it (``run.finish()``), not by the logger."""


def _last_step(run: Any) -> int | None:
    """The run's last step holding data, or None for a run with nothing logged yet."""
    try:
        step = int(run.step)
    except Exception:  # noqa: BLE001 - a stand-in run without a step counter
        return None
    return step if step > 0 else None


def finish_wandb_run(run: Any) -> None:
    """``run.finish()``, with a failure warned about (the run's data may not be complete) instead of swallowed.

    After a failed finish the run is let go: it stops being the process's active run
    (:func:`active_wandb_run`), so that the next :func:`start_wandb_run` starts a new run instead of
    joining the stale one.
    """
    try:
        run.finish()
    except Exception as exc:  # noqa: BLE001 - W&B must never stop training
        _STALE_RUNS.append(run)
        _let_go(run)
        warnings.warn(
            f"Weights & Biases could not finish the run ({exc!r}); its data may be incomplete (see its ./wandb folder). "
            "The run is let go: the next model starts a new run",
            stacklevel=2,
        )


def _let_go(run: Any) -> None:
    """Clear W&B's global ``wandb.run`` if it is ``run`` (as a successful finish does)."""
    try:
        import wandb

        if wandb.run is run:
            from wandb.sdk.lib import module as wandb_module

            wandb_module.unset_globals()
    except Exception:  # noqa: BLE001 - an older or newer wandb: active_wandb_run still skips the run
        pass


def log_results(
    run: Any, images: dict[str, Any] | None = None, tables: dict[str, tuple[list[str], list[list[Any]]]] | None = None
) -> bool:
    """Log plots (``wandb.Image`` of a PNG path) and tables (``wandb.Table(columns, data)``) to ``run``, with
    W&B's own types, so that they show as media and tables in the run's page; False (and a warning) if W&B fails.

    :param run: the W&B run.
    :param images: ``{key: PNG path}``.
    :param tables: ``{key: (columns, rows)}``.
    """
    if run is None:
        return False
    try:
        import wandb

        data: dict[str, Any] = {}
        for key, path in (images or {}).items():
            data[key] = wandb.Image(str(path))
        for key, (columns, rows) in (tables or {}).items():
            data[key] = wandb.Table(
                columns=[str(c) for c in columns], data=[[_table_cell(v) for v in row] for row in rows]
            )
        if data:
            run.log(data)
        return True
    except Exception as exc:  # noqa: BLE001 - W&B must never stop an experiment
        warnings.warn(f"Weights & Biases could not log the results ({exc!r})", stacklevel=2)
        return False


def _table_cell(value: Any) -> Any:
    if isinstance(value, (np.floating, np.integer)):
        return value.item()
    if isinstance(value, (list, tuple, dict)):
        return str(value)
    return value


def log_summary_run(
    name: str,
    group: str,
    config: dict[str, Any],
    images: dict[str, Any] | None = None,
    tables: dict[str, tuple[list[str], list[list[Any]]]] | None = None,
    **init_kwargs: Any,
) -> None:
    """One short W&B run (``job_type="summary"``) in ``group`` that holds a comparison's or a sweep's plot and table."""
    run = start_wandb_run(config, name=name, group=group, job_type="summary", reinit="finish_previous", **init_kwargs)
    if run is None:
        return
    try:
        log_results(run, images, tables)
    finally:
        finish_wandb_run(run)
