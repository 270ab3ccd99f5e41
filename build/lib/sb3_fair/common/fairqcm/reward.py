"""The fairness reward ``R(s_{t+1}) = W(U(s_{t+1})) * B(s_{t+1})`` (Alamdari et al. 2024, Defs. 5.6 and 5.8).

:func:`fairness_reward` is the one function that turns a stakeholder status into a reward; the
:class:`~sb3_fair.wrappers.FairnessReward` wrapper calls it on real transitions and
:class:`~sb3_fair.FairDQN` on counterfactual ones.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from functools import cached_property
from typing import Any

import numpy as np

from sb3_fair import metrics
from sb3_fair._exact import pairwise_sum
from sb3_fair.common.validation import check_choice, check_coef, check_int

SCHEMES = ("anytime", "long_term", "periodic", "bounded")
AGGREGATES = ("individual", "group")
#: named filters B for the bounded scheme: ``"benefit"`` assesses fairness only at steps where
#: some stakeholder received something (Alamdari et al.'s (2024) doughnut reward is 0 when a doughnut is wasted).
NAMED_FILTERS = ("benefit",)

FilterFn = Callable[[int, np.ndarray, dict], bool]


@dataclass(frozen=True)
class RewardSpec:
    """A reward-like fairness scheme ``<U, W_ex, B>`` plus how it is mixed with the task reward.

    :param welfare: the per-timepoint aggregation W, a key of :data:`sb3_fair.metrics.WELFARE_FUNCTIONS`.
    :param welfare_kwargs: extra arguments of W (e.g. ``alpha`` of ``alpha_fair``).
    :param aggregate: ``"individual"``: W sees one status per stakeholder; ``"group"``: W sees the
        status summed within each group (Alamdari et al.'s (2024) relaxed DP score on loans per group).
    :param groups: the stakeholders' groups (needed by ``aggregate="group"``).
    :param scheme: ``"anytime"`` (B = 1 at every step, Def. 4.3), ``"long_term"`` (B = 1 at the
        episode's last step, Def. 4.1), ``"periodic"`` (every ``period`` steps, Def. 4.2) or
        ``"bounded"`` (B given by ``filter``, Def. 4.4 / 5.8).
    :param period: period p of ``"periodic"``.
    :param filter: an extra filter B, required by ``"bounded"`` and optional with the others:
        ``"benefit"`` or a callable ``(t, benefits, info) -> bool``.
    :param fairness_coef: weight of the fairness term.
    :param task_coef: weight of the env's own reward (penalties that do not depend on memory).
    """

    welfare: str = "log_nash"
    welfare_kwargs: dict[str, Any] = field(default_factory=dict)
    aggregate: str = "individual"
    groups: tuple[int, ...] | None = None
    scheme: str = "anytime"
    period: int = 1
    filter: str | FilterFn | None = None
    fairness_coef: float = 1.0
    task_coef: float = 0.0

    def __post_init__(self) -> None:
        if not isinstance(self.welfare, str) or self.welfare not in metrics.WELFARE_FUNCTIONS:
            raise ValueError(f"welfare must be one of {sorted(metrics.WELFARE_FUNCTIONS)}, got {self.welfare!r}")
        check_choice(self.aggregate, "aggregate", AGGREGATES)
        check_choice(self.scheme, "scheme", SCHEMES)
        if self.aggregate == "group" and self.groups is None:
            raise ValueError("aggregate='group' needs the stakeholders' groups")
        check_int(self.period, "period", 1)
        if self.scheme == "bounded" and self.filter is None:
            raise ValueError(
                f"scheme='bounded' needs a filter: one of {list(NAMED_FILTERS)} or a callable (t, benefits, info) -> bool"
            )
        if isinstance(self.filter, str):
            check_choice(self.filter, "filter", NAMED_FILTERS)
        elif self.filter is not None and not callable(self.filter):
            raise ValueError(f"filter must be one of {list(NAMED_FILTERS)}, a callable or None, got {self.filter!r}")
        check_coef(self.fairness_coef, "fairness_coef")
        check_coef(self.task_coef, "task_coef")
        # W sees one entry per stakeholder (per group with aggregate="group"); 2 when the stakeholders are not known
        size = 2 if self.groups is None else (len(set(self.groups)) if self.aggregate == "group" else len(self.groups))
        try:  # bad welfare_kwargs fail here, not at the first step
            metrics.welfare(np.ones(size), self.welfare, **self.welfare_kwargs)
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"welfare_kwargs {self.welfare_kwargs!r} do not fit welfare {self.welfare!r}: {exc}"
            ) from None
        try:  # every episode starts from the all-zero status: W must be defined there
            metrics.welfare(np.zeros(size), self.welfare, **self.welfare_kwargs)
        except ValueError as exc:
            raise ValueError(
                f"welfare {self.welfare!r} with welfare_kwargs {self.welfare_kwargs!r} is undefined at the all-zero status "
                f"every episode starts from ({exc}); use a welfare defined at 0 (e.g. 'log_nash', or 'alpha_fair' with alpha < 1)"
            ) from None

    def welfare_of(self, status: np.ndarray, grouped: bool = False) -> float:
        """W applied to one status vector.

        :param status: one entry per stakeholder, or per group (sorted group ids) when ``grouped``.
        :param grouped: ``status`` already holds per-group totals (a per-group memory).
        """
        u = np.asarray(status, dtype=np.float64)
        if self.aggregate == "group" and not grouped:
            assert self.groups is not None  # __post_init__: aggregate="group" needs them
            if u.shape == (len(self.groups),):
                # each group's total `u[g == k].sum()`, to the bit: the same entries added in NumPy's order, on
                # Python floats (the wrapper's step would otherwise pay two NumPy calls per group)
                values = u.tolist()
                u = np.array([pairwise_sum([values[i] for i in members]) for members in self._group_members])
            else:  # not one status vector: NumPy says what that gives (an IndexError for a wrong length)
                g = np.asarray(self.groups)
                u = np.array([u[g == k].sum() for k in np.unique(g)])
        return metrics.welfare(u, self.welfare, **self.welfare_kwargs)

    def __getstate__(self) -> dict[str, Any]:
        """The fields only: the cached group members are rebuilt on first use, not pickled (a saved FairDQN holds the spec)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @cached_property
    def _group_members(self) -> tuple[list[int], ...]:
        """The stakeholders of each group (ascending), the groups in sorted order: what ``aggregate="group"`` sums.

        The spec is frozen, so this is computed once instead of at every step.
        """
        g = np.asarray(self.groups)
        return tuple(np.flatnonzero(g == k).tolist() for k in np.unique(g))

    def welfare_of_rows(self, status: np.ndarray, grouped: bool = False) -> np.ndarray | float:
        """:meth:`welfare_of` for one status vector (a float) or each row of a batch ``(k, n)`` (an array of k).

        A batch of per-stakeholder statuses, or of per-group totals, is weighed by :func:`sb3_fair.metrics.welfare_rows`
        (the same values as row by row); a batch that needs each row's group totals goes row by row.
        """
        s = np.asarray(status, dtype=np.float64)
        if s.ndim == 1:
            return self.welfare_of(s, grouped)
        if s.ndim == 2 and (self.aggregate != "group" or grouped):
            return metrics.welfare_rows(s, self.welfare, **self.welfare_kwargs)
        return np.array([self.welfare_of(row, grouped) for row in s])


def assessed(spec: RewardSpec, t: int, benefits: np.ndarray, episode_over: bool, info: dict | None = None) -> bool:
    """The filter ``B`` of Alamdari et al. 2024 Def. 5.8 at the state reached after step ``t`` (1-based).

    It depends on time, on what this step handed out and on whether the episode ended, never on the
    memory: a counterfactual transition reuses the real step's value.
    """
    if spec.scheme == "long_term" and not episode_over:
        return False
    if spec.scheme == "periodic" and t % int(spec.period) != 0:
        return False
    if spec.filter == "benefit":
        b = np.asarray(benefits)
        if b.dtype.kind in "biufc":  # numbers: count_nonzero counts the entries != 0 (NaN too), in one cheap call
            return bool(np.count_nonzero(b))
        return bool(np.any(b != 0))
    if callable(spec.filter):
        return bool(spec.filter(t, np.asarray(benefits), info or {}))
    return True


def fairness_reward(
    spec: RewardSpec, status: Any, active: bool, task_reward: float, grouped: bool = False
) -> np.ndarray | float:
    """``fairness_coef * W(status) * B + task_coef * task_reward`` (Alamdari et al. 2024, Defs. 5.6, 5.8).

    ``status`` may be one vector or a batch ``(k, n)`` (counterfactual statuses); the result has
    the batch shape. ``active`` is the filter value B of the step and ``task_reward`` the env's
    own reward for it, both shared by real and counterfactual transitions. ``grouped`` says that
    the status holds per-group totals (see :meth:`RewardSpec.welfare_of`).
    """
    s = np.asarray(status, dtype=np.float64)
    task = spec.task_coef * float(task_reward)
    if s.ndim == 1:
        w = spec.welfare_of(s, grouped) if active else 0.0
        return spec.fairness_coef * w + task
    if not active:
        return np.full(s.shape[0], task)
    return spec.fairness_coef * spec.welfare_of_rows(s, grouped) + task


def potential_shaping(
    spec: RewardSpec, memory: Any, next_memory: Any, gamma: float, terminal: Any = False, grouped: bool = False
) -> np.ndarray | float:
    """The shaping term ``gamma * Phi(m') - Phi(m)`` with ``Phi(m) = fairness_coef * W(m) / (1 - gamma)``.

    Potential-based shaping (Ng, Harada & Russell 1999, "Policy invariance under reward
    transformations", ICML, Theorem 1): adding ``F = gamma * Phi(s') - Phi(s)`` to every reward
    leaves the optimal policies unchanged, since every Q-value only moves by ``-Phi(s)``. With the
    memory in the state, ``Phi(m)`` is the discounted value of the welfare staying where it is, so
    the shaped Q-values measure what an action adds to today's welfare. This takes the large,
    action-independent part ``W(m) / (1 - gamma)`` out of what the network must fit, and leaves the
    small differences between actions that fairness is made of (sb3-fair's addition to Alamdari et
    al. 2024; see :class:`~sb3_fair.FairDQN`'s ``potential_shaping``).

    ``memory`` and ``next_memory`` may be one vector or a batch ``(k, n)`` (counterfactual memories); ``terminal``
    (one flag or one per row) marks a true end of episode, whose potential is 0 (a time-limit cut bootstraps and keeps
    ``Phi(m')``). ``grouped`` says that the memory holds per-group totals (see :meth:`RewardSpec.welfare_of`).
    """
    m, m_next = np.asarray(memory, dtype=np.float64), np.asarray(next_memory, dtype=np.float64)
    _check_gamma(gamma)
    return shaping_from_welfare(
        spec.welfare_of_rows(m, grouped), spec.welfare_of_rows(m_next, grouped), spec.fairness_coef, gamma, terminal
    )


def _check_gamma(gamma: Any) -> float:
    g = float(gamma)
    if not 0.0 <= g < 1.0:
        raise ValueError(f"potential shaping needs a discount gamma in [0, 1), got {gamma!r}")
    return g


def shaping_from_welfare(
    welfare: Any, next_welfare: Any, fairness_coef: float, gamma: float, terminal: Any = False
) -> np.ndarray | float:
    """:func:`potential_shaping`'s term from the welfare of the two memories: ``gamma * Phi' - Phi`` with
    ``Phi = fairness_coef * W / (1 - gamma)``, and ``Phi' = 0`` where ``terminal``.

    The arithmetic of :func:`potential_shaping` (which calls it); :class:`~sb3_fair.FairDQN` calls it
    directly to reuse a memory's welfare across consecutive steps.

    :param welfare: ``W(m)``, one value or one per row.
    :param next_welfare: ``W(m')``, of the same shape.
    :param fairness_coef: the reward's weight of W.
    :param gamma: the discount, in [0, 1).
    :param terminal: one flag or one per row: a true end of episode.
    """
    g = _check_gamma(gamma)
    scale = fairness_coef / (1.0 - g)
    if np.ndim(welfare) == 0 and np.ndim(next_welfare) == 0 and np.ndim(terminal) == 0:
        # one transition (FairDQN's real step, at every env step): the same arithmetic on Python floats
        return g * (1.0 - float(terminal)) * (scale * float(next_welfare)) - scale * float(welfare)
    keep = 1.0 - np.asarray(terminal, dtype=np.float64)
    shaped = g * keep * (scale * np.asarray(next_welfare, dtype=np.float64)) - scale * np.asarray(
        welfare, dtype=np.float64
    )
    return float(shaped) if np.ndim(shaped) == 0 else shaped
