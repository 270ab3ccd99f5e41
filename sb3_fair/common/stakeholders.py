"""The stakeholder contract, the one description every part of sb3-fair relies on.

An environment honours the contract when

* ``env.unwrapped.stakeholders`` is a :class:`Stakeholders` (names, protected attribute
  ``groups`` per stakeholder, optional legitimate ``factors``), and
* every ``step`` puts ``info["benefits"]``, a float array with one entry per stakeholder: what each
  received at this step.

Everything else (metrics, monitor, memory, fairness rewards, counterfactuals, logging) is computed
from these two, never from env internals.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np


@dataclass(frozen=True)
class Stakeholders:
    """Static description of an environment's stakeholders.

    :param names: one name per stakeholder.
    :param groups: the protected attribute of each stakeholder (int). Group ``1`` is treated as
        the protected group by the group-fairness metrics.
    :param factors: optional legitimate factor per stakeholder (int), for conditional statistical
        parity.
    """

    names: tuple[str, ...]
    groups: np.ndarray
    factors: np.ndarray | None = None
    group_names: dict[int, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        names = tuple(str(n) for n in self.names)
        object.__setattr__(self, "names", names)
        n = len(names)
        if n == 0:
            raise ValueError("stakeholders: names must not be empty")
        groups = np.asarray(self.groups)
        if groups.shape != (n,):
            raise ValueError(f"stakeholders: groups must have one int per stakeholder ({n}), got shape {groups.shape}")
        if not np.issubdtype(groups.dtype, np.integer):
            raise ValueError(f"stakeholders: groups must be integers, got dtype {groups.dtype}")
        object.__setattr__(self, "groups", groups.astype(np.int64))
        if self.factors is not None:
            factors = np.asarray(self.factors)
            if factors.shape != (n,) or not np.issubdtype(factors.dtype, np.integer):
                raise ValueError(f"stakeholders: factors must be one int per stakeholder ({n}), got {factors!r}")
            object.__setattr__(self, "factors", factors.astype(np.int64))

    @property
    def n(self) -> int:
        """Number of stakeholders."""
        return len(self.names)

    @property
    def group_ids(self) -> np.ndarray:
        """The distinct groups, sorted."""
        return np.unique(self.groups)

    @property
    def n_groups(self) -> int:
        return int(self.group_ids.size)

    def group_totals(self, values: Any) -> np.ndarray:
        """Sum ``values`` (one entry per stakeholder, leading axes allowed) within each group.

        Returns an array with the last axis indexed like :attr:`group_ids`.
        """
        v = np.asarray(values, dtype=np.float64)
        onehot = (self.groups[:, None] == self.group_ids[None, :]).astype(np.float64)
        return v @ onehot

    @classmethod
    def individuals(cls, n: int, prefix: str = "stakeholder") -> Stakeholders:
        """``n`` stakeholders, each in a group of their own."""
        return cls(names=tuple(f"{prefix}_{i}" for i in range(n)), groups=np.arange(n))


def get_stakeholders(env: gym.Env | Any) -> Stakeholders:
    """Return the :class:`Stakeholders` of ``env`` (a Gymnasium env, possibly wrapped).

    :raises ValueError: naming the argument when the env does not honour the contract.
    """
    base = getattr(env, "unwrapped", env)
    sh = getattr(base, "stakeholders", None)
    if sh is None:
        raise ValueError(
            f"env {type(base).__name__} does not honour the stakeholder contract: it needs "
            "`env.unwrapped.stakeholders` (an sb3_fair.Stakeholders) and `info['benefits']` at every step"
        )
    if not isinstance(sh, Stakeholders):
        raise ValueError(f"env.unwrapped.stakeholders must be an sb3_fair.Stakeholders, got {type(sh).__name__}")
    return sh


def get_benefits(info: dict[str, Any], n: int) -> np.ndarray:
    """Read ``info["benefits"]`` and check it has one float per stakeholder.

    :raises ValueError: when the key is missing or has the wrong length.
    """
    if "benefits" not in info:
        raise ValueError(
            "info['benefits'] is missing: environments used with sb3-fair must report, at every step, "
            "what each stakeholder received (one float per stakeholder)"
        )
    b = np.asarray(info["benefits"], dtype=np.float64)
    if b.shape != (n,):
        raise ValueError(f"info['benefits'] must have one entry per stakeholder ({n}), got shape {b.shape}")
    return b


def check_weights(value: Any, name: str, allow_zero: bool = True) -> float:
    """Check that a scalar weight is a finite number >= 0 (> 0 if ``allow_zero`` is False)."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if not np.isfinite(v) or v < 0 or (not allow_zero and v == 0):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be a finite number {bound}, got {value!r}")
    return v


def check_choice(value: Any, name: str, choices: Sequence[str]) -> str:
    """Check that ``value`` is one of ``choices``; the error names the argument and the accepted values."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {list(choices)}, got {value!r}")
    return value
