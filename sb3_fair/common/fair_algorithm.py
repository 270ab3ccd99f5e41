"""What every Fair* algorithm shares: the fairness keyword arguments, the FairnessMonitor wrap and fairness logging.

Its finite-input guard is :mod:`sb3_fair.common.finite_checks`, its ``load`` checks :mod:`sb3_fair.common.load_checks`.

:class:`FairAlgorithmMixin` enters at SB3's seams only: ``__init__`` (its own keyword arguments,
then the parent's constructor untouched), ``_wrap_env`` (as SB3 adds ``Monitor``), ``_setup_model``
and ``set_env`` (the algorithm's :meth:`~FairAlgorithmMixin._setup_fairness`),
``_init_callback`` (the fairness callbacks before the user's) and ``train`` (the parent's update,
then a check that the network is still finite). No Fair class overrides ``learn``.
"""

from __future__ import annotations

import io
import logging
import pathlib
from collections import deque
from typing import TYPE_CHECKING, Any, ClassVar

import torch as th
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.callbacks import BaseCallback, CallbackList, ConvertCallback
from stable_baselines3.common.env_util import is_wrapped
from stable_baselines3.common.on_policy_algorithm import OnPolicyAlgorithm
from stable_baselines3.common.type_aliases import GymEnv, MaybeCallback
from stable_baselines3.common.vec_env import VecEnv

from sb3_fair.common.callbacks import FairnessCallback
from sb3_fair.common.finite_checks import FiniteInputCheck, all_finite
from sb3_fair.common.load_checks import (  # constructor_arguments and fairness_parameters: re-exported
    check_load_keywords,
    check_load_settings,
    check_saved_class,
    constructor_arguments,
    fairness_parameters,
    saved_data,
)
from sb3_fair.common.monitor import FairnessMonitor, ParallelFairnessMonitor
from sb3_fair.common.protocol import CONTRACT_HINT, is_stakeholders_supported
from sb3_fair.common.validation import check_fairness_window, check_wandb

#: sb3-fair's notices (e.g. "no fairness figures can be logged"), through Python's logging
LOGGER = logging.getLogger("sb3_fair")

if TYPE_CHECKING:
    # the type checker sees the mixin as the SB3 algorithm it is mixed into (its attributes, its methods that
    # super() reaches); at run time it is a plain class, mixed in before the algorithm
    _AlgorithmBase = BaseAlgorithm
else:
    _AlgorithmBase = object


def fairness_figures_logged(env: VecEnv) -> bool:
    """Whether ``env``'s sub-envs report episode figures (a :class:`FairnessMonitor` or :class:`ParallelFairnessMonitor`)."""
    return any(env.env_is_wrapped(FairnessMonitor)) or any(env.env_is_wrapped(ParallelFairnessMonitor))


def _is_game_vec_env(env: VecEnv) -> bool:
    """Whether ``env`` is a PettingZoo game made a VecEnv (sb3-fair's or SuperSuit's), under any VecEnv wrappers."""
    from stable_baselines3.common.vec_env import VecEnvWrapper

    while isinstance(env, VecEnvWrapper):
        env = env.venv
    # sb3_fair.wrappers.PettingZooVecEnv holds its games as par_envs (read by name: common/ imports no wrapper)
    return hasattr(env, "par_envs") or type(env).__module__.startswith("supersuit")


class FairAlgorithmMixin(_AlgorithmBase):
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

    An observation that is NaN or inf (the env's, after any wrapper and ``VecNormalize``) stops
    training with a ``ValueError`` at the step that returned it, before the policy sees it (SB3 would
    pass it on, and a categorical policy would fail inside torch). The check is one
    ``np.isfinite`` per step on the observations the rollout already holds (floating-point ones
    only); it draws no random number and changes nothing for finite observations.

    ``load`` refuses a zip saved by an algorithm whose policy this class cannot use (e.g.
    ``FairDQN.load`` of a FairPPO zip) with a ``ValueError`` naming both classes, checks the fairness
    settings given beside the zip with the constructor's rules, and loads a zip of the SB3 parent as
    the parent (its fairness weights at zero, :attr:`PARENT_ZIP_SETTINGS`).

    A network that turns NaN or inf stops training with a ``FloatingPointError`` that names the
    likely cause (non-finite observations or rewards in the buffer, large fairness weights when a
    fairness term is on, or the learning rate), rather than
    training on silently as SB3 would: once a parameter is NaN every later update is NaN too, so
    skipping the update could not recover. The check (each tensor's largest magnitude) runs
    after every update of an on-policy algorithm and after every :attr:`FINITE_CHECK_EVERY`-th of
    an off-policy one, whose updates are small and many.
    """

    #: off-policy algorithms check their parameters after every this many ``train`` calls
    FINITE_CHECK_EVERY = 100
    #: the settings a zip of the SB3 parent loads with (unless given to ``load``): those that make the class its parent
    #: where its defaults do not (e.g. ``{"fairness_coef": 0.0}`` for the group penalty, which is on by default)
    PARENT_ZIP_SETTINGS: ClassVar[dict[str, Any]] = {}

    def __init__(
        self, *args: Any, fairness_window: int | None = None, wandb: bool | dict[str, Any] = False, **kwargs: Any
    ) -> None:
        check_fairness_window(fairness_window)
        self.fairness_window = fairness_window
        self.wandb = check_wandb(wandb)
        self.fairness_callback: FairnessCallback | None = None
        self._warned_no_figures = False
        self._train_calls = 0
        self._continues_learning = False
        #: the recent episodes' fairness figures behind ``fairness/*`` (saved with the model, so a resumed run keeps them)
        self.fairness_episodes: deque[dict[str, float]] | None = None
        #: the class that saved the model, stored in its zip (``load`` names it when another class is used)
        self._saved_by = type(self).__name__
        super().__init__(*args, **kwargs)

    def train(self, *args: Any, **kwargs: Any) -> None:
        """The parent's update, then a check that the policy's parameters are still finite."""
        self._train_calls += 1
        try:
            super().train(*args, **kwargs)  # type: ignore[misc]  # BaseAlgorithm declares no train(); the parent algorithm (On/OffPolicyAlgorithm) does
        except ValueError as exc:  # e.g. torch's distribution check meets NaN logits in a later minibatch
            if not self._parameters_finite():
                self._raise_non_finite(exc)
            raise
        if (
            isinstance(self, OnPolicyAlgorithm) or self._train_calls % self.FINITE_CHECK_EVERY == 0
        ) and not self._parameters_finite():
            self._raise_non_finite()

    def _parameters_finite(self) -> bool:
        # the largest magnitude per tensor: NaN and inf propagate, and unlike a norm it cannot overflow
        with th.no_grad():
            peaks = [p.abs().max() for p in self.policy.parameters() if p.numel()]
        return not peaks or bool(th.isfinite(th.stack(peaks)).all())

    def fairness_active(self) -> bool:
        """Whether a fairness term of this model changes its training (a weight > 0, massaging, counterfactual replay ...).

        Read from the attributes the fairness mixins own; ``False`` for a Fair class that behaves as its parent.
        """
        return bool(
            getattr(
                getattr(self, "fairness_term", None), "active", False
            )  # an on-policy term (group penalty, F-PPO ...)
            or getattr(self, "massaging", False)  # F-PPO's action massaging
            or getattr(self, "counterfactual", False)  # FairQCM's counterfactual replay
            or getattr(self, "potential_shaping", False)
            or getattr(self, "constrained", False)  # CPO's constraint
            or float(getattr(self, "equivariance_coef", 0.0) or 0.0) > 0  # Fair-ER / Fair-E
        )

    def _non_finite_inputs(self) -> str | None:
        """What in the training buffer is NaN or inf (observations, rewards), in words; ``None`` if all is finite."""
        buffer = getattr(self, "rollout_buffer", None) or getattr(self, "replay_buffer", None)
        if buffer is None:
            return None
        found = []
        for attr, what in (
            ("observations", "observations"),
            ("next_observations", "next observations"),
            ("rewards", "rewards"),
        ):
            if not all_finite(getattr(buffer, attr, None)):
                found.append(what)
        if not found:
            return None
        return (
            f"the env's {' and '.join(found)} (as stored in the buffer) hold NaN or inf; check the env and any wrapper "
            "(or VecNormalize)"
        )

    def _raise_non_finite(self, exc: BaseException | None = None) -> None:
        name = type(self).__name__
        inputs = self._non_finite_inputs()
        if inputs is not None:
            cause = inputs
        elif self.fairness_active():
            cause = (
                f"a fairness weight too large for the reward scale, or the learning rate (the observations and "
                f"rewards in the buffer are finite); the fairness settings were {self.fairness_config()}"
            )
        else:
            cause = (
                "the learning rate or the reward scale is too large for this network (fairness is off and the "
                "observations and rewards in the buffer are finite)"
            )
        raise FloatingPointError(
            f"{name}: the policy's parameters became NaN or inf during training (update {self._train_calls}, "
            f"{self.num_timesteps} timesteps). Likely cause: {cause}. Training stopped."
        ) from exc

    @classmethod
    def load(
        cls,
        path: str | pathlib.Path | io.BufferedIOBase,
        env: GymEnv | None = None,
        device: th.device | str = "auto",
        custom_objects: dict[str, Any] | None = None,
        print_system_info: bool = False,
        force_reset: bool = True,
        **kwargs: Any,
    ) -> Any:
        """SB3's ``load``, after checks of the zip and of the settings given beside it.

        * The zip must have been saved by an algorithm whose policy this class can use.
        * The fairness settings given as keyword arguments or ``custom_objects`` are checked with the constructor's
          rules, together with the zip's own (``FairPPO.load(path, alpha=-1.0)`` is refused as ``FairPPO(...,
          alpha=-1.0)`` is), and the fairness method the model was trained with is kept: ``fairness=`` may only
          repeat it (the method's state, e.g. F-PPO's terms, is not in a zip of another method).
        * The zip's own saved settings go through the same checks: a zip whose ``data`` was edited to
          ``alpha=-1`` or ``batch_size=0`` is refused (``FairPPO.load: alpha must be a finite number >= 0, got -1.0
          (as saved in the zip)``); SB3's hyper-parameters, given or saved, are checked against the ranges a config's
          are (:data:`sb3_fair.common.hyperparams.SB3_RANGES`).
        * A keyword argument that is neither a setting saved in the zip nor an argument of the class is refused
          (SB3 would set it as an attribute nothing reads); one that is sb3-fair's but unused by the saved fairness
          method is refused as the constructor refuses it.
        * A zip saved by the SB3 / sb3-contrib parent loads as the parent: with the fairness weights at zero
          (:attr:`PARENT_ZIP_SETTINGS`, e.g. ``fairness_coef=0.0`` for FairPPO), unless you give them.

        :raises ValueError: naming the class that saved the zip and this one, e.g. for
            ``FairDQN.load`` of a FairPPO zip (SB3 would fail later inside the policy's constructor); naming the
            setting a keyword argument gives wrongly.
        """
        data = saved_data(path)  # read once, for every check
        overrides = {**(custom_objects or {}), **kwargs}
        if data is not None:
            cls._check_load_change(data, overrides)
        check_saved_class(cls, path, data, custom_objects)
        check_load_keywords(cls, data, kwargs)
        check_load_settings(cls, data, overrides)
        if data is not None and "fairness_window" not in data:  # the parent's zip: the parent, unless told otherwise
            kwargs = {**{k: v for k, v in cls.PARENT_ZIP_SETTINGS.items() if k not in overrides}, **kwargs}
        model = super().load(
            path,
            env=env,
            device=device,
            custom_objects=custom_objects,
            print_system_info=print_system_info,
            force_reset=force_reset,
            **kwargs,
        )
        model._saved_by = type(model).__name__  # saved again, it is this class's zip
        return model

    @classmethod
    def _check_load_change(cls, data: dict[str, Any], overrides: dict[str, Any]) -> None:
        """Refuse a setting given to ``load`` that the saved model's state cannot serve (``data``: the zip's JSON,
        ``overrides``: the keyword arguments and ``custom_objects``); none by default."""

    @classmethod
    def _wrap_env(cls, env: GymEnv, verbose: int = 0, monitor_wrapper: bool = True) -> VecEnv:
        if (
            not isinstance(env, VecEnv)
            and monitor_wrapper
            and is_stakeholders_supported(env)
            and not is_wrapped(env, FairnessMonitor)
        ):
            env = FairnessMonitor(env)
        return super()._wrap_env(
            env, verbose, monitor_wrapper
        )  # the parent's (a classmethod, so it chains as SB3 calls it)

    def _setup_model(self) -> None:
        super()._setup_model()  # type: ignore[safe-super]  # abstract in BaseAlgorithm; the parent algorithm implements it
        if self.env is not None:
            self._check_figures(self.env)
            self._setup_fairness(self.env)

    def set_env(self, env: GymEnv, force_reset: bool = True) -> None:
        super().set_env(env, force_reset)
        assert self.env is not None  # SB3's set_env has just set it (wrapped)
        self._check_figures(self.env)
        self._setup_fairness(self.env)

    def _check_figures(self, env: VecEnv) -> None:
        if not self._warned_no_figures and not fairness_figures_logged(env):
            self._warned_no_figures = True
            # said through `logging` (printed to stderr without any set-up), not `warnings`: SB3's own tests and
            # users who turn warnings into errors must see the parent's warnings and no others
            if _is_game_vec_env(env):  # a PettingZoo game: its own contract and its own VecEnv builder
                LOGGER.warning(
                    "%s: this game reports no fairness figures, so none will be logged; for them, declare the game's "
                    "`stakeholders` (an sb3_fair.Stakeholders, one per agent) and give each agent's "
                    "`infos[agent]['benefits']` at every step, and build the VecEnv with "
                    "sb3_fair.wrappers.make_multiagent_vec_env (its monitor=True wraps the game in "
                    "ParallelFairnessMonitor)",
                    type(self).__name__,
                )
            else:
                LOGGER.warning(
                    "%s: this env reports no fairness figures, so none will be logged; for them, honour %s and wrap gym "
                    "envs in sb3_fair.wrappers.FairnessMonitor (done automatically for a single env; for a VecEnv pass "
                    "wrapper_class=FairnessMonitor to make_vec_env)",
                    type(self).__name__,
                    CONTRACT_HINT,
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
        callbacks = [FiniteInputCheck(), *self._fairness_callbacks(), self.fairness_callback, *user]
        return super()._init_callback(SharedLocalsCallbackList(callbacks), progress_bar)

    def _setup_learn(
        self,
        total_timesteps: int,
        callback: MaybeCallback = None,
        reset_num_timesteps: bool = True,
        tb_log_name: str = "run",
        progress_bar: bool = False,
    ) -> Any:
        # SB3 calls _init_callback from here; SB3 clears its ep_info_buffer exactly when reset_num_timesteps holds
        self._continues_learning = not reset_num_timesteps
        return super()._setup_learn(total_timesteps, callback, reset_num_timesteps, tb_log_name, progress_bar)

    def _excluded_save_params(self) -> list[str]:
        return [
            *super()._excluded_save_params(),
            "fairness_callback",
            "_warned_no_figures",
            "_train_calls",
            "_continues_learning",
        ]

    def fairness_config(self) -> dict[str, Any]:
        """The fairness hyperparameters (stored in the W&B run config)."""
        return {}


class SharedLocalsCallbackList(CallbackList):
    """SB3's :class:`~stable_baselines3.common.callbacks.CallbackList` without a redundant copy at every step.

    At training start SB3 hands every child the list's own ``locals`` dict; at every step the list
    then updates that dict and, again, each child's, which is the same dict. This skips the second
    update for a child that holds the list's dict and updates locals as ``BaseCallback`` does (a
    child that overrides ``update_locals`` or ``update_child_locals``, e.g. a nested list, is
    updated as SB3 does). What each child sees is unchanged.
    """

    def update_child_locals(self, locals_: dict[str, Any]) -> None:
        for callback in self.callbacks:
            cls = type(callback)
            if (
                callback.locals is self.locals
                and cls.update_locals is BaseCallback.update_locals
                and cls.update_child_locals is BaseCallback.update_child_locals
            ):
                continue
            callback.update_locals(locals_)


if TYPE_CHECKING:

    class OnPolicyFairAlgorithm(FairAlgorithmMixin, OnPolicyAlgorithm):
        """What an on-policy fairness mixin (the group penalty, the long-term regularisation, massaging) is mixed
        into, as the type checker sees it: ``FairAlgorithmMixin`` and an SB3 on-policy algorithm."""


__all__ = [
    "FairAlgorithmMixin",
    "FiniteInputCheck",
    "SharedLocalsCallbackList",
    "constructor_arguments",
    "fairness_figures_logged",
    "fairness_parameters",
]
