"""The static description of an environment's stakeholders.

Together with ``info["benefits"]`` it forms the stakeholder contract that every part of sb3-fair
relies on; the contract, its names and getters are in :mod:`sb3_fair.common.protocol`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Stakeholders:
    """Static description of an environment's stakeholders.

    :param names: one distinct name per stakeholder (a sequence: a single string is refused, not split into characters).
    :param groups: the protected attribute of each stakeholder (int >= 0). Group ``1`` is treated as
        the protected group by the group-fairness metrics.
    :param factors: optional legitimate factor per stakeholder (int), for conditional statistical
        parity.
    """

    names: tuple[str, ...]
    groups: np.ndarray
    factors: np.ndarray | None = None
    group_names: dict[int, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # a string is iterable: "ab" would become the stakeholders 'a' and 'b', and "01" the groups 0 and 1
        for arg in ("names", "groups", "factors"):
            value = getattr(self, arg)
            if isinstance(value, (str, bytes)):
                accepted = (
                    "a sequence of names, one per stakeholder (e.g. ('a', 'b'))"
                    if arg == "names"
                    else "a sequence of ints, one per stakeholder"
                )
                raise ValueError(f"stakeholders: {arg} must be {accepted}, not a string: got {value!r}")
        try:
            names = tuple(str(n) for n in self.names)
        except TypeError:
            raise ValueError(
                f"stakeholders: names must be a sequence of names, one per stakeholder, got {self.names!r}"
            ) from None
        object.__setattr__(self, "names", names)
        n = len(names)
        if n == 0:
            raise ValueError("stakeholders: names must not be empty")
        if len(set(names)) != n:
            repeated = sorted({x for x in names if names.count(x) > 1})
            raise ValueError(
                f"stakeholders: names must be distinct (one per stakeholder), got {repeated} more than once"
            )
        groups = np.asarray(self.groups)
        if groups.shape != (n,):
            raise ValueError(f"stakeholders: groups must have one int per stakeholder ({n}), got shape {groups.shape}")
        if not np.issubdtype(groups.dtype, np.integer):
            raise ValueError(f"stakeholders: groups must be integers, got dtype {groups.dtype}")
        if (groups < 0).any():
            raise ValueError(
                f"stakeholders: groups must be ints >= 0 (group 1 is the protected one), got {groups.tolist()}"
            )
        object.__setattr__(self, "groups", groups.astype(np.int64))
        if not isinstance(self.group_names, dict):
            raise ValueError(f"stakeholders: group_names must be a dict {{group: name}}, got {self.group_names!r}")
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
