"""Argument checks shared by every constructor: each error names the argument, the accepted values and what it got."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, overload

import numpy as np

from sb3_fair.common.registration import factory_env_class

#: the largest loss or reward weight accepted (:func:`check_coef`). A fairness weight of 1e18 (or an
#: equivariance weight of 1e300) passes "finite" but turns every network weight into NaN at the first
#: update, or makes the loss inf; 1e6 leaves six orders of magnitude between the fairness term and a
#: reward of order 1 and stays far from float32's limits (3.4e38). Rescale the reward for more.
MAX_COEF = 1e6


def check_weights(value: Any, name: str, allow_zero: bool = True, maximum: float | None = None) -> float:
    """``value`` as a float, checked to be a finite number >= 0 (> 0 if ``allow_zero`` is False), at most ``maximum``."""
    if isinstance(value, (str, bytes, bool, np.bool_)):
        raise ValueError(f"{name} must be a number, got {value!r}")
    try:
        v = float(value)
    except OverflowError:  # an int beyond float's range (10**400): not a finite number
        v = float("inf")
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if not np.isfinite(v) or v < 0 or (not allow_zero and v == 0):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be a finite number {bound}, got {value!r}")
    if maximum is not None and v > maximum:
        raise ValueError(
            f"{name} must be a number in [0, {maximum:g}], got {value!r}: a weight this large turns the network's "
            "weights into NaN or the loss into inf; rescale the rewards instead"
        )
    return v


def check_coef(value: Any, name: str) -> float:
    """A loss or reward weight: a finite number in ``[0, MAX_COEF]`` (:data:`MAX_COEF`)."""
    return check_weights(value, name, maximum=MAX_COEF)


def as_float_array(value: Any, name: str, accepted: str) -> np.ndarray:
    """``value`` as a float64 array; anything NumPy cannot read as numbers is a ValueError naming ``name`` and ``accepted``."""
    try:
        return np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be {accepted}, got {value!r}") from None


def check_choice(value: Any, name: str, choices: Sequence[str]) -> str:
    """``value``, checked to be one of ``choices``."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {list(choices)}, got {value!r}")
    return value


@overload
def check_int(value: Any, name: str, minimum: int, allow_none: Literal[False] = False) -> int: ...
@overload
def check_int(value: Any, name: str, minimum: int, allow_none: bool) -> int | None: ...
def check_int(value: Any, name: str, minimum: int, allow_none: bool = False) -> int | None:
    """``value`` as an int, checked to be >= ``minimum`` (or ``None`` where ``allow_none``)."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        suffix = " or None" if allow_none else ""
        raise ValueError(f"{name} must be an int >= {minimum}{suffix}, got {value!r}")
    return int(value)


def check_probability(value: Any, name: str) -> float:
    """``value`` as a float, checked to be a probability in [0, 1] (a number, not a string)."""
    if isinstance(value, (str, bytes, bool, np.bool_)):
        raise ValueError(f"{name} must be a probability in [0, 1], got {value!r}")
    try:
        v = float(value)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{name} must be a probability in [0, 1], got {value!r}") from None
    if isinstance(value, bool) or not 0.0 <= v <= 1.0:
        raise ValueError(f"{name} must be a probability in [0, 1], got {value!r}")
    return v


def check_bool(value: Any, name: str) -> bool:
    """``value``, checked to be a bool (``numpy.bool_`` too)."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_wandb(wandb: Any) -> bool | dict[str, Any]:
    """``wandb``, checked to be ``True``/``False`` or a dict of :func:`wandb.init` arguments (``"yes"`` is not True)."""
    if not isinstance(wandb, (bool, np.bool_, dict)):
        raise ValueError(f"wandb must be True, False or a dict of wandb.init arguments, got {wandb!r}")
    return wandb if isinstance(wandb, dict) else bool(wandb)


def check_discrete_action(action: Any, n: int) -> int:
    """A ``Discrete(n)`` action (an int, or a 0-d / one-element integer array) as an int in [0, n).

    :raises ValueError: for a fractional, out-of-range or many-element action.
    """
    if type(action) is int or isinstance(action, np.integer):  # the common case (a step's action) without an array
        i = int(action)
        if 0 <= i < n:
            return i
        raise ValueError(f"action must be an int in [0, {n}), got {action!r}")
    a = np.asarray(action)
    if a.size != 1 or not (
        np.issubdtype(a.dtype, np.integer) or (np.issubdtype(a.dtype, np.floating) and float(a.flat[0]).is_integer())
    ):
        raise ValueError(f"action must be an int in [0, {n}), got {action!r}")
    i = int(a.flat[0])
    if not 0 <= i < n:
        raise ValueError(f"action must be an int in [0, {n}), got {action!r}")
    return i


def is_default(value: Any, default: Any) -> bool:
    """Whether an argument's ``value`` equals its ``default`` (numbers, strings, ``None``, tuples; NumPy scalars too)."""
    if value is default:
        return True
    if value is None or default is None or isinstance(value, (str, bytes)) != isinstance(default, (str, bytes)):
        return False
    try:
        return bool(np.shape(value) == np.shape(default) and np.all(np.asarray(value) == np.asarray(default)))
    except (TypeError, ValueError):
        return False


def check_unused(name: str, value: Any, default: Any, setting: str, used_with: str) -> None:
    """Refuse an argument that the chosen setting ignores: ``value`` must be ``default`` unless ``used_with`` is chosen.

    :param name: the argument's name.
    :param value: what was given.
    :param default: its default (given unchanged, it is accepted: ``Class.load`` and drop-in use pass it).
    :param setting: the chosen setting that does not use the argument, e.g. ``"fairness='dp'"``.
    :param used_with: the settings that do, e.g. ``"fairness='long_term'"``.
    :raises ValueError: naming the argument, the setting and the settings that use it.
    """
    if not is_default(value, default):
        raise ValueError(
            f"{name}={value!r} is not used with {setting}: only {used_with} uses it; leave {name} out or choose {used_with}"
        )


def env_class(env: Any) -> type | None:
    """The class of the bare env behind ``env``, or ``None`` where it cannot be told without building the env.

    ``env`` may be a registered id (its entry point, when that is a class or a factory function registered with
    :func:`~sb3_fair.common.registration.register_env_factory`, as sb3-fair's are), a gym env or PettingZoo game
    with any wrappers (``env.unwrapped``), or a VecEnv (its first sub-env, read in-process for a ``DummyVecEnv``,
    else through the sub-env's registered ``spec``).
    """
    from stable_baselines3.common.vec_env import VecEnv

    if isinstance(env, str):
        import gymnasium as gym
        from gymnasium.envs.registration import load_env_creator

        try:
            entry = gym.spec(env).entry_point
            creator = load_env_creator(entry) if isinstance(entry, str) else entry
        except Exception:  # noqa: BLE001 - an id gym cannot resolve: SB3 says why when it makes the env
            return None
        return creator if isinstance(creator, type) else factory_env_class(creator)
    if isinstance(env, VecEnv):
        try:
            sub_envs = getattr(env.unwrapped, "envs", None)
        except Exception:  # noqa: BLE001 - a VecEnv wrapper of another library that does not forward `unwrapped`
            sub_envs = None
        if sub_envs:
            return env_class(sub_envs[0])
        try:
            spec = env.get_attr("spec", [0])[0]
        except Exception:  # noqa: BLE001 - a sub-env without a spec (or one that fails to send it): not identified
            return None
        return env_class(spec.id) if getattr(spec, "id", None) else None
    bare = getattr(env, "unwrapped", env)
    return type(bare) if bare is not None else None


def check_fairness_window(fairness_window: Any) -> None:
    """Raise a clear error unless ``fairness_window`` is None or an int >= 1."""
    check_int(fairness_window, "fairness_window", 1, allow_none=True)
