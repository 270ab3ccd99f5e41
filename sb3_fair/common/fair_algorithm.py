"""What every Fair* algorithm shares: the fairness keyword arguments, the FairnessMonitor wrap and fairness logging.

:class:`FairAlgorithmMixin` enters at SB3's seams only: ``__init__`` (its own keyword arguments,
then the parent's constructor untouched), ``_wrap_env`` (as SB3 adds ``Monitor``), ``_setup_model``
and ``set_env`` (the algorithm's :meth:`~FairAlgorithmMixin._setup_fairness`),
``_init_callback`` (the fairness callbacks before the user's) and ``train`` (the parent's update,
then a check that the network is still finite). No Fair class overrides ``learn``.
"""

from __future__ import annotations

import logging
from collections import deque
from typing import Any

import numpy as np
import torch as th
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.callbacks import BaseCallback, ConvertCallback
from stable_baselines3.common.env_util import is_wrapped
from stable_baselines3.common.on_policy_algorithm import OnPolicyAlgorithm
from stable_baselines3.common.type_aliases import GymEnv, MaybeCallback
from stable_baselines3.common.vec_env import VecEnv

from sb3_fair.common.callbacks import FairnessCallback
from sb3_fair.common.monitor import FairnessMonitor, ParallelFairnessMonitor
from sb3_fair.common.protocol import CONTRACT_HINT, is_stakeholders_supported
from sb3_fair.common.validation import check_fairness_window, check_wandb

#: sb3-fair's notices (e.g. "no fairness figures can be logged"), through Python's logging
LOGGER = logging.getLogger("sb3_fair")


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

    A network that turns NaN or inf stops training with a ``FloatingPointError`` that names the
    likely cause (non-finite rewards, large fairness weights, or the learning rate), rather than
    training on silently as SB3 would: once a parameter is NaN every later update is NaN too, so
    skipping the update could not recover. The check (each tensor's largest magnitude) runs
    after every update of an on-policy algorithm and after every :attr:`FINITE_CHECK_EVERY`-th of
    an off-policy one, whose updates are small and many.
    """

    #: off-policy algorithms check their parameters after every this many ``train`` calls
    FINITE_CHECK_EVERY = 100

    def __init__(self, *args: Any, fairness_window: int | None = None, wandb: bool | dict[str, Any] = False, **kwargs: Any) -> None:
        check_fairness_window(fairness_window)
        self.fairness_window = fairness_window
        self.wandb = check_wandb(wandb)
        self.fairness_callback: FairnessCallback | None = None
        self._warned_no_figures = False
        self._train_calls = 0
        self._continues_learning = False
        #: the recent episodes' fairness figures behind ``fairness/*`` (saved with the model, so a resumed run keeps them)
        self.fairness_episodes: deque[dict[str, float]] | None = None
        super().__init__(*args, **kwargs)

    def train(self, *args: Any, **kwargs: Any) -> None:
        """The parent's update, then a check that the policy's parameters are still finite."""
        self._train_calls += 1
        try:
            super().train(*args, **kwargs)  # type: ignore[misc]
        except ValueError as exc:  # e.g. torch's distribution check meets NaN logits in a later minibatch
            if not self._parameters_finite():
                self._raise_non_finite(exc)
            raise
        if isinstance(self, OnPolicyAlgorithm) or self._train_calls % self.FINITE_CHECK_EVERY == 0:
            if not self._parameters_finite():
                self._raise_non_finite()

    def _parameters_finite(self) -> bool:
        # the largest magnitude per tensor: NaN and inf propagate, and unlike a norm it cannot overflow
        with th.no_grad():
            peaks = [p.abs().max() for p in self.policy.parameters() if p.numel()]  # type: ignore[attr-defined]
        return not peaks or bool(th.isfinite(th.stack(peaks)).all())

    def _raise_non_finite(self, exc: BaseException | None = None) -> None:
        name = type(self).__name__
        buffer = getattr(self, "rollout_buffer", None) or getattr(self, "replay_buffer", None)
        rewards = getattr(buffer, "rewards", None)
        config = self.fairness_config()
        if rewards is not None and not np.all(np.isfinite(rewards)):
            cause = "the env's rewards (as stored in the buffer) hold NaN or inf; check the env and any reward wrapper"
        elif config:
            cause = (f"a fairness weight too large for the reward scale, or the learning rate; the fairness settings were "
                     f"{config}")
        else:
            cause = "the learning rate or the reward scale is too large for this network"
        raise FloatingPointError(
            f"{name}: the policy's parameters became NaN or inf during training (update {self._train_calls}, "
            f"{self.num_timesteps} timesteps). Likely cause: {cause}. Training stopped."  # type: ignore[attr-defined]
        ) from exc

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
        # a learn() that goes on (reset_num_timesteps=False, e.g. after a load) keeps the figures of the earlier episodes,
        # as SB3 keeps its ep_info_buffer then; the callback sets fairness_episodes to its own
        episodes = self.fairness_episodes if self._continues_learning else None
        self.fairness_callback = FairnessCallback(window=self.fairness_window, wandb=self.wandb, episodes=episodes)
        if isinstance(callback, list):
            user = list(callback)
        elif isinstance(callback, BaseCallback):
            user = [callback]
        else:
            user = [] if callback is None else [ConvertCallback(callback)]
        return super()._init_callback([*self._fairness_callbacks(), self.fairness_callback, *user], progress_bar)  # type: ignore[misc]

    def _setup_learn(self, total_timesteps: int, callback: MaybeCallback = None, reset_num_timesteps: bool = True,
                     tb_log_name: str = "run", progress_bar: bool = False) -> Any:
        # SB3 calls _init_callback from here; SB3 clears its ep_info_buffer exactly when reset_num_timesteps holds
        self._continues_learning = not reset_num_timesteps
        return super()._setup_learn(total_timesteps, callback, reset_num_timesteps, tb_log_name, progress_bar)  # type: ignore[misc]

    def _excluded_save_params(self) -> list[str]:
        return [*super()._excluded_save_params(), "fairness_callback", "_warned_no_figures", "_train_calls", "_continues_learning"]  # type: ignore[misc]

    def fairness_config(self) -> dict[str, Any]:
        """The fairness hyperparameters (stored in the W&B run config)."""
        return {}
