"""What every Fair* algorithm shares: the fairness keyword arguments, the FairnessMonitor wrap and fairness logging.

:class:`FairAlgorithmMixin` enters at SB3's seams only: ``__init__`` (its own keyword arguments,
then the parent's constructor untouched), ``_wrap_env`` (as SB3 adds ``Monitor``), ``_setup_model``
and ``set_env`` (the algorithm's :meth:`~FairAlgorithmMixin._setup_fairness`) and
``_init_callback`` (the fairness callbacks before the user's). No Fair class overrides ``learn``.
"""

from __future__ import annotations

import logging
from typing import Any

from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.callbacks import BaseCallback, ConvertCallback
from stable_baselines3.common.env_util import is_wrapped
from stable_baselines3.common.type_aliases import GymEnv, MaybeCallback
from stable_baselines3.common.vec_env import VecEnv

from sb3_fair.common.callbacks import FairnessCallback
from sb3_fair.common.monitor import FairnessMonitor, ParallelFairnessMonitor
from sb3_fair.common.protocol import CONTRACT_HINT, is_stakeholders_supported
from sb3_fair.common.validation import check_fairness_window

#: sb3-fair's notices (e.g. "no fairness figures can be logged"), through Python's logging
LOGGER = logging.getLogger("sb3_fair")


def check_wandb(wandb: Any) -> bool | dict[str, Any]:
    """``wandb``, checked to be ``True``/``False`` or a dict of :func:`wandb.init` arguments."""
    if not isinstance(wandb, (bool, dict)):
        raise ValueError(f"wandb must be True, False or a dict of wandb.init arguments, got {wandb!r}")
    return wandb


def fairness_figures_logged(env: VecEnv) -> bool:
    """Whether ``env``'s sub-envs report episode figures (a :class:`FairnessMonitor` or :class:`ParallelFairnessMonitor`)."""
    return any(env.env_is_wrapped(FairnessMonitor)) or any(env.env_is_wrapped(ParallelFairnessMonitor))  # type: ignore[arg-type]


class FairAlgorithmMixin:
    """Mixed in before an SB3 / sb3-contrib algorithm: ``class FairX(..., FairAlgorithmMixin, X)``.

    Owns the keyword arguments every Fair class shares and takes them out before the parent's
    constructor sees the rest; wraps gym envs that honour the stakeholder contract in
    :class:`~sb3_fair.common.monitor.FairnessMonitor`; adds a
    :class:`~sb3_fair.common.callbacks.FairnessCallback` (``fairness/*`` logs, optional W&B) to
    every ``learn`` through SB3's ``_init_callback``. On an env without the contract the algorithm
    trains like its parent and says once, through the ``"sb3_fair"`` logger of Python's
    :mod:`logging` (not :mod:`warnings`, so that the parent's warnings are the only ones), that no
    fairness figures can be logged.

    A fairness mixin (the group penalty, Fair-ER) sits before this one and implements
    :meth:`_setup_fairness` (read what its fairness needs from the env, raise on a misfit) and
    :meth:`_fairness_callbacks` (callbacks that must see each step before the logging one).

    :param fairness_window: episodes averaged in ``fairness/*`` (default: the model's
        ``stats_window_size``).
    :param wandb: stream the logs to Weights & Biases: ``True`` or a dict of :func:`wandb.init`
        arguments (offline without credentials; a W&B failure never stops training).
    """

    def __init__(self, *args: Any, fairness_window: int | None = None, wandb: bool | dict[str, Any] = False, **kwargs: Any) -> None:
        check_fairness_window(fairness_window)
        self.fairness_window = fairness_window
        self.wandb = check_wandb(wandb)
        self.fairness_callback: FairnessCallback | None = None
        self._warned_no_figures = False
        super().__init__(*args, **kwargs)

    @staticmethod
    def _wrap_env(env: GymEnv, verbose: int = 0, monitor_wrapper: bool = True) -> VecEnv:
        if (not isinstance(env, VecEnv) and monitor_wrapper and is_stakeholders_supported(env)
                and not is_wrapped(env, FairnessMonitor)):  # type: ignore[arg-type]
            env = FairnessMonitor(env)
        return BaseAlgorithm._wrap_env(env, verbose, monitor_wrapper)

    def _setup_model(self) -> None:
        super()._setup_model()  # type: ignore[misc]
        if self.env is not None:  # type: ignore[attr-defined]
            self._check_figures(self.env)  # type: ignore[attr-defined]
            self._setup_fairness(self.env)  # type: ignore[attr-defined]

    def set_env(self, env: GymEnv, force_reset: bool = True) -> None:
        super().set_env(env, force_reset)  # type: ignore[misc]
        self._check_figures(self.env)  # type: ignore[attr-defined]
        self._setup_fairness(self.env)  # type: ignore[attr-defined]

    def _check_figures(self, env: VecEnv) -> None:
        if not self._warned_no_figures and not fairness_figures_logged(env):
            self._warned_no_figures = True
            # said through `logging` (printed to stderr without any set-up), not `warnings`: SB3's own tests and
            # users who turn warnings into errors must see the parent's warnings and no others
            LOGGER.warning(
                "%s: this env reports no fairness figures, so none will be logged; for them, honour %s and wrap gym envs "
                "in sb3_fair.wrappers.FairnessMonitor (done automatically for a single env; for a VecEnv pass "
                "wrapper_class=FairnessMonitor to make_vec_env)", type(self).__name__, CONTRACT_HINT,
            )

    def _setup_fairness(self, env: VecEnv) -> None:
        """Read what the fairness needs from the env; raise a clear error if it is missing."""

    def _fairness_callbacks(self) -> list[BaseCallback]:
        """Callbacks that must see every step before the logging callback (e.g. a penalty's tracker)."""
        return []

    def _init_callback(self, callback: MaybeCallback, progress_bar: bool = False) -> BaseCallback:
        """SB3's ``_init_callback`` with the fairness callbacks in front of ``callback``."""
        self.fairness_callback = FairnessCallback(window=self.fairness_window, wandb=self.wandb)
        if isinstance(callback, list):
            user = list(callback)
        elif isinstance(callback, BaseCallback):
            user = [callback]
        else:
            user = [] if callback is None else [ConvertCallback(callback)]
        return super()._init_callback([*self._fairness_callbacks(), self.fairness_callback, *user], progress_bar)  # type: ignore[misc]

    def _excluded_save_params(self) -> list[str]:
        return [*super()._excluded_save_params(), "fairness_callback", "_warned_no_figures"]  # type: ignore[misc]

    def fairness_config(self) -> dict[str, Any]:
        """The fairness hyperparameters (stored in the W&B run config)."""
        return {}
