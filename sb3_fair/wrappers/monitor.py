"""FairnessMonitor: per-stakeholder episode returns and fairness figures, as SB3's Monitor adds ``info["episode"]``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np

from sb3_fair import metrics
from sb3_fair.common.stakeholders import Stakeholders, get_benefits, get_stakeholders

MetricFn = Callable[[np.ndarray, Stakeholders], float]


def _two_groups(sh: Stakeholders) -> bool:
    return sh.n_groups == 2 and 1 in sh.group_ids


#: the metrics the monitor knows by name: ``name -> (applies to these stakeholders?, function)``
KNOWN_METRICS: dict[str, tuple[Callable[[Stakeholders], bool], MetricFn]] = {
    "utilitarian": (lambda sh: True, lambda r, sh: metrics.utilitarian(r)),
    "egalitarian": (lambda sh: True, lambda r, sh: metrics.egalitarian(r)),
    "log_nash": (lambda sh: True, lambda r, sh: metrics.log_nash(r) if np.all(r > -1) else float("nan")),
    "gini": (lambda sh: True, lambda r, sh: metrics.gini(r) if np.all(r >= 0) else float("nan")),
    "max_unfairness": (lambda sh: True, lambda r, sh: float(np.max(np.abs(metrics.unfairness(r))))),
    "group_gap": (
        lambda sh: sh.n_groups >= 2,
        lambda r, sh: -metrics.parity(list(metrics.group_means(r, sh.groups).values())),
    ),
    "dp": (_two_groups, lambda r, sh: metrics.demographic_parity(r, sh.groups)),
    "abs_dp": (_two_groups, lambda r, sh: abs(metrics.demographic_parity(r, sh.groups))),
    "normalized_dp": (_two_groups, lambda r, sh: metrics.normalized_demographic_parity(r, sh.groups)),
    "csp": (
        lambda sh: _two_groups(sh) and sh.factors is not None,
        lambda r, sh: metrics.conditional_statistical_parity(r, sh.groups, sh.factors)["mean"],
    ),
}
DEFAULT_METRICS = tuple(KNOWN_METRICS)


class FairnessMonitor(gym.Wrapper):
    """Accumulate each stakeholder's episode return from ``info["benefits"]`` and report fairness.

    At the end of an episode ``info["fairness"]`` holds ``returns`` (one per stakeholder),
    ``group_means`` (``{group: mean return}``) and one float per configured metric, all computed by
    :mod:`sb3_fair.metrics`. Fair* algorithms and
    :class:`~sb3_fair.common.callbacks.FairnessCallback` log their mean over recent episodes as
    ``fairness/<name>``.

    Example::

        from sb3_fair.envs import LoanApplicantsEnv
        from sb3_fair.wrappers import FairnessMonitor

        env = FairnessMonitor(LoanApplicantsEnv())
        obs, info = env.reset(seed=0)
        done = False
        while not done:
            obs, r, terminated, truncated, info = env.step(env.action_space.sample())
            done = terminated or truncated
        print(info["fairness"]["abs_dp"])

    :param env: an env honouring the stakeholder contract.
    :param metrics: names from :data:`KNOWN_METRICS` (those that do not apply to the env's
        stakeholders, e.g. ``dp`` with more than two groups, are skipped) and/or a dict of extra
        ``name -> fn(returns, stakeholders)``. Default: every known metric that applies.
    """

    def __init__(self, env: gym.Env, metrics: Sequence[str] | dict[str, MetricFn] | None = None) -> None:
        super().__init__(env)
        self.stakeholders = get_stakeholders(env)
        selected: dict[str, MetricFn] = {}
        names: Sequence[str] = DEFAULT_METRICS if metrics is None else [m for m in metrics if isinstance(m, str)]
        extra = metrics if isinstance(metrics, dict) else {}
        for name in names:
            if name in extra:
                continue
            if name not in KNOWN_METRICS:
                raise ValueError(f"metrics: unknown metric {name!r}; accepted values: {sorted(KNOWN_METRICS)} or a dict name -> callable")
            applies, fn = KNOWN_METRICS[name]
            if applies(self.stakeholders):
                selected[name] = fn
        for name, fn in extra.items():
            if name in ("returns", "group_means"):
                raise ValueError(f"metrics: {name!r} is reserved for the summary itself; choose another name")
            if not callable(fn):
                raise ValueError(f"metrics[{name!r}] must be callable (returns, stakeholders) -> float")
            selected[name] = fn
        self.metric_fns = selected
        self._returns = np.zeros(self.stakeholders.n)
        self._length = 0

    def reset(self, **kwargs: Any) -> tuple[Any, dict]:
        self._returns = np.zeros(self.stakeholders.n)
        self._length = 0
        return self.env.reset(**kwargs)

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        self._returns = self._returns + get_benefits(info, self.stakeholders.n)
        self._length += 1
        if terminated or truncated:
            info["fairness"] = self.summary(self._returns)
        return obs, reward, terminated, truncated, info

    def summary(self, returns: np.ndarray) -> dict[str, Any]:
        """The fairness figures of one episode's per-stakeholder returns."""
        out: dict[str, Any] = {
            "returns": returns.copy(),
            "group_means": metrics.group_means(returns, self.stakeholders.groups),
        }
        for name, fn in self.metric_fns.items():
            out[name] = float(fn(returns, self.stakeholders))
        return out
