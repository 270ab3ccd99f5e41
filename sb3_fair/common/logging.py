"""Weights & Biases as one more SB3 logger output, so every ``logger.record`` (rewards, ``fairness/*``,
``train/*``) streams to W&B. W&B trouble never stops training: a failure is warned about once and
the output switches itself off.
"""

from __future__ import annotations

import netrc
import os
import warnings
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


def active_wandb_run() -> Any | None:
    """The W&B run active in this process, if any (``None`` also when wandb cannot be imported)."""
    try:
        import wandb

        return wandb.run
    except Exception:  # noqa: BLE001
        return None


def start_wandb_run(config: dict[str, Any], **init_kwargs: Any) -> Any | None:
    """Start (or reuse) a W&B run whose config holds ``config``; ``None`` if W&B fails.

    :param config: hyperparameters to store in the run's config (merged into an active run).
    :param init_kwargs: passed to :func:`wandb.init` (``project``, ``name``, ``mode``, ``dir`` ...).
        ``mode`` defaults to :func:`wandb_mode`.
    """
    try:
        import wandb

        if wandb.run is not None:
            wandb.run.config.update(config, allow_val_change=True)
            return wandb.run
        kwargs = {"project": "sb3-fair", **init_kwargs}
        kwargs["mode"] = wandb_mode(kwargs.get("mode"))
        return wandb.init(config=config, **kwargs)
    except Exception as exc:  # noqa: BLE001 - W&B must never stop training
        warnings.warn(f"Weights & Biases could not start a run ({exc!r}); training goes on without it", stacklevel=2)
        return None


class WandbOutputFormat(KVWriter):
    """An SB3 logger output that sends each dump to a W&B run with :meth:`wandb.Run.log`.

    Add it to a logger with ``model.logger.output_formats.append(WandbOutputFormat(run))``; the
    step is SB3's ``num_timesteps``. Any W&B error disables the output with one warning.
    """

    def __init__(self, run: Any) -> None:
        self.run = run
        self._failed = False

    def write(self, key_values: dict[str, Any], key_excluded: dict[str, tuple[str, ...]], step: int = 0) -> None:
        if self._failed or self.run is None:
            return
        data = {}
        for key, value in key_values.items():
            excluded = key_excluded.get(key) or ()
            if "wandb" in excluded:
                continue
            if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
                data[key] = float(value)
        try:
            self.run.log(data, step=int(step))
        except Exception as exc:  # noqa: BLE001
            self._failed = True
            warnings.warn(f"Weights & Biases logging failed ({exc!r}); training goes on without it", stacklevel=2)

    def close(self) -> None:
        """The run is finished by whoever started it (``run.finish()``), not by the logger."""
