"""What every Fair* algorithm shares: the stakeholder check, the FairnessMonitor wrap and fairness logging."""

from __future__ import annotations

from typing import Any

import numpy as np
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.callbacks import BaseCallback, CallbackList, ConvertCallback
from stable_baselines3.common.type_aliases import GymEnv, MaybeCallback
from stable_baselines3.common.vec_env import VecEnv

from sb3_fair.common.callbacks import FairnessCallback
from sb3_fair.wrappers.monitor import FairnessMonitor


def env_attr(env: VecEnv, name: str) -> Any:
    """An attribute of the first sub-env, looked up through its wrappers; ``None`` if absent."""
    try:
        return env.get_attr(name, indices=[0])[0]
    except AttributeError:
        return None


def has_wrapper(env: Any, wrapper_cls: type) -> bool:
    """Whether ``env`` (a gym env) is wrapped, at any depth, in ``wrapper_cls``."""
    while env is not None:
        if isinstance(env, wrapper_cls):
            return True
        env = getattr(env, "env", None)
    return False


class FairAlgorithmMixin:
    """Mixed into SB3 algorithms: wraps gym envs in :class:`FairnessMonitor`, checks the stakeholder
    contract and adds :class:`FairnessCallback` (``fairness/*`` logs, optional W&B) to ``learn``.

    The class using it sets ``fairness_window`` and ``wandb`` before calling the SB3 constructor.
    """

    fairness_window: int | None
    wandb: bool | dict[str, Any]
    fairness_callback: FairnessCallback | None

    @staticmethod
    def _wrap_env(env: GymEnv, verbose: int = 0, monitor_wrapper: bool = True) -> VecEnv:
        if not isinstance(env, VecEnv) and monitor_wrapper and not has_wrapper(env, FairnessMonitor):
            env = FairnessMonitor(env)
        return BaseAlgorithm._wrap_env(env, verbose, monitor_wrapper)

    def _setup_model(self) -> None:
        super()._setup_model()  # type: ignore[misc]
        if self.env is not None:  # type: ignore[attr-defined]
            self._check_stakeholders(self.env, type(self).__name__)  # type: ignore[attr-defined]
            self._setup_fairness(self.env)  # type: ignore[attr-defined]

    def set_env(self, env: GymEnv, force_reset: bool = True) -> None:
        super().set_env(env, force_reset)  # type: ignore[misc]
        self._check_stakeholders(self.env, type(self).__name__)  # type: ignore[attr-defined]
        self._setup_fairness(self.env)  # type: ignore[attr-defined]

    def _setup_fairness(self, env: VecEnv) -> None:
        """Read the fairness configuration from the env (memory, reward, symmetry); raise on a misfit."""

    @staticmethod
    def _check_stakeholders(env: VecEnv, algo: str) -> None:
        if env_attr(env, "stakeholders") is None:
            raise ValueError(
                f"env: {algo} needs an env honouring the stakeholder contract: `env.unwrapped.stakeholders` "
                "(an sb3_fair.Stakeholders) and `info['benefits']` at every step"
            )

    def _with_fairness_callback(self, callback: MaybeCallback) -> CallbackList:
        """``callback`` preceded by a fresh :class:`FairnessCallback` (kept as ``self.fairness_callback``)."""
        fairness_cb = FairnessCallback(window=self.fairness_window, wandb=self.wandb)
        self.fairness_callback = fairness_cb
        callbacks: list[BaseCallback] = [fairness_cb]
        if isinstance(callback, list):
            callbacks.extend(callback)
        elif isinstance(callback, BaseCallback):
            callbacks.append(callback)
        elif callback is not None:
            callbacks.append(ConvertCallback(callback))
        return CallbackList(callbacks)


def check_fairness_window(fairness_window: Any) -> None:
    """Raise a clear error unless ``fairness_window`` is None or an int >= 1."""
    if fairness_window is not None and (not isinstance(fairness_window, (int, np.integer)) or fairness_window < 1):
        raise ValueError(f"fairness_window must be an int >= 1 or None, got {fairness_window!r}")
