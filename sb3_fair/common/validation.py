"""Argument checks shared by every constructor: each error names the argument, the accepted values and what it got."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

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
    except (TypeError, ValueError):
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
    a = np.asarray(action)
    if a.size != 1 or not (np.issubdtype(a.dtype, np.integer) or (np.issubdtype(a.dtype, np.floating) and float(a.flat[0]).is_integer())):
        raise ValueError(f"action must be an int in [0, {n}), got {action!r}")
    i = int(a.flat[0])
    if not 0 <= i < n:
        raise ValueError(f"action must be an int in [0, {n}), got {action!r}")
    return i


def check_fairness_window(fairness_window: Any) -> None:
    """Raise a clear error unless ``fairness_window`` is None or an int >= 1."""
    check_int(fairness_window, "fairness_window", 1, allow_none=True)
