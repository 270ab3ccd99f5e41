"""FairnessMonitor: per-stakeholder episode returns and fairness figures, as SB3's ``Monitor`` adds ``info["episode"]``.

It lives in ``common/`` beside what uses it (the Fair algorithms wrap gym envs in it), as SB3 keeps
``Monitor`` in ``stable_baselines3.common.monitor``; :mod:`sb3_fair.wrappers` re-exports it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np
from pettingzoo import ParallelEnv
from pettingzoo.utils.wrappers import BaseParallelWrapper

from sb3_fair.common.figure_table import FIGURE_NAMES, check_figure_names, episode_figures
from sb3_fair.common.protocol import (
    FAIRNESS,
    get_benefits,
    get_game_stakeholders,
    get_group_info,
    get_stakeholders,
    is_group_info_supported,
)
from sb3_fair.common.stakeholders import Stakeholders

MetricFn = Callable[[np.ndarray, Stakeholders], float]


#: sb3-fair's notices, through Python's logging (as the Fair algorithms' "no fairness figures" notice): a user who
#: turns warnings into errors must not have training stopped by an episode with a negative return
LOGGER = logging.getLogger("sb3_fair")


class _DomainWarnings:
    """Warns once per figure (per monitor) that an episode's returns were outside the figure's domain."""

    def __init__(self) -> None:
        self.warned: set[str] = set()

    def __call__(self, name: str, reason: str) -> None:
        if name not in self.warned:
            self.warned.add(name)
            LOGGER.warning(
                "fairness figure %r is left out of the episodes whose returns are outside its domain: %s "
                "(said once per monitor; episodes inside the domain still report it)",
                name,
                reason,
            )


class FairnessMonitor(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Accumulate each stakeholder's episode return from ``info["benefits"]`` and report fairness.

    At the end of an episode ``info["fairness"]`` holds ``returns`` (one per stakeholder) and one
    float per figure of :mod:`sb3_fair.common.figure_table` that applies to the env's stakeholders
    (``group_<g>_mean``, ``dp_abs``, ...), plus your own. A figure whose domain the episode's returns
    leave (``log_nash`` with a return <= -1, ``gini`` with a negative one) is left out of that
    episode's figures, never NaN, with a warning the first time (through the ``"sb3_fair"`` logger of
    Python's :mod:`logging`). Fair* algorithms and
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
        print(info["fairness"]["dp_abs"])

    :param env: an env honouring the stakeholder contract.
    :param metrics: figure names from :data:`~sb3_fair.common.figure_table.FIGURE_NAMES` (those that do
        not apply to the env's stakeholders, e.g. ``dp`` without a protected group, are left out),
        or a dict of your own ``name -> fn(returns, stakeholders) -> float`` (then the summary holds
        ``returns`` and these only). Default: every figure that applies.
    """

    def __init__(self, env: gym.Env, metrics: Sequence[str] | dict[str, MetricFn] | None = None) -> None:
        gym.utils.RecordConstructorArgs.__init__(self, metrics=metrics)
        gym.Wrapper.__init__(self, env)
        # kept under a private name: `stakeholders` is the env's, found through this wrapper (get_env_attr), so that an
        # env whose stakeholders change between episodes is never seen through a stale copy
        self._stakeholders = get_stakeholders(env)
        extra = dict(metrics) if isinstance(metrics, dict) else {}
        if metrics is None:
            names: Iterable[str] = FIGURE_NAMES
        elif extra:
            names = ()
        else:
            names = metrics
        self.figure_names = check_figure_names(names)
        for name, fn in extra.items():
            if name == "returns" or name in FIGURE_NAMES:
                raise ValueError(
                    f"metrics: {name!r} is a name of the figure table or of the summary itself; choose another name"
                )
            if not callable(fn):
                raise ValueError(f"metrics[{name!r}] must be callable (returns, stakeholders) -> float")
        self.metric_fns: dict[str, MetricFn] = extra
        self._returns = np.zeros(self._stakeholders.n)
        self._domain_warnings = _DomainWarnings()

    def reset(self, **kwargs: Any) -> tuple[Any, dict]:
        out = self.env.reset(**kwargs)
        self._stakeholders = get_stakeholders(self.env)  # the new episode's (an env may redraw its groups)
        self._returns = np.zeros(self._stakeholders.n)
        return out

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        self._returns = self._returns + get_benefits(info, self._stakeholders, self.env)
        if terminated or truncated:
            info[FAIRNESS] = self.summary(self._returns)
        return obs, reward, terminated, truncated, info

    def summary(self, returns: np.ndarray) -> dict[str, Any]:
        """The fairness figures of one episode's per-stakeholder returns (and ``returns`` itself)."""
        sh = self._stakeholders
        out: dict[str, Any] = {"returns": returns.copy()}
        out.update(
            episode_figures(
                returns, sh.groups, sh.factors, names=self.figure_names, on_out_of_domain=self._domain_warnings
            )
        )
        for name, fn in self.metric_fns.items():
            out[name] = float(fn(returns, sh))
        return out


class ParallelFairnessMonitor(BaseParallelWrapper):
    """:class:`FairnessMonitor` for a PettingZoo parallel game: each agent's episode return from
    ``info["benefits"]`` and, when the game ends, the episode's fairness figures.

    When the last agent is done, the info of the first agent of ``possible_agents`` gets
    ``info["fairness"]`` (one summary per game, so that after
    :func:`~sb3_fair.wrappers.make_multiagent_vec_env` each finished game is logged once). The
    groups and factors of the episode are the game's ``stakeholders`` at reset (games that redraw
    the protected attribute between episodes also report it in each agent's info, as
    :data:`~sb3_fair.common.protocol.GROUP`, which wins); counterfactual twins come from
    :data:`~sb3_fair.common.protocol.TWIN` (as :class:`~sb3_fair.wrappers.CounterfactualPair`
    reports) and add the CF figures. :func:`~sb3_fair.wrappers.make_multiagent_vec_env` adds it
    to every game that honours the stakeholder contract.

    Example::

        from sb3_fair.common.monitor import ParallelFairnessMonitor
        from sb3_fair.envs import DisparityGame

        game = ParallelFairnessMonitor(DisparityGame())
        obs, infos = game.reset(seed=0)
        while game.agents:
            obs, rewards, terms, truncs, infos = game.step({a: 0 for a in game.agents})
        print(infos["agent_0"]["fairness"]["dp_abs"])

    :param env: a parallel game honouring the stakeholder contract.
    :param metrics: figure names from :data:`~sb3_fair.common.figure_table.FIGURE_NAMES` (default: all that apply).
    :param protected: the group value of the protected agents.
    """

    _twins: np.ndarray | None  # each agent's counterfactual twin in the current episode, where every agent has one

    def __init__(self, env: ParallelEnv, metrics: Sequence[str] | None = None, protected: int = 1) -> None:
        super().__init__(env)
        sh = get_game_stakeholders(env)
        self.figure_names = check_figure_names(FIGURE_NAMES if metrics is None else metrics)
        self.protected = int(protected)
        self._n = sh.n
        self._returns = np.zeros(self._n)
        #: the protected attribute of each agent in the current episode
        self.episode_groups = sh.groups
        self._factors, self._twins = sh.factors, None
        self._domain_warnings = _DomainWarnings()

    def _read(self, infos: dict[str, dict[str, Any]]) -> None:
        sh = get_stakeholders(self.env)
        groups, factors = sh.groups.copy(), None if sh.factors is None else sh.factors.copy()
        twins = np.full(self._n, -1, dtype=np.int64)
        for i, agent in enumerate(self.env.possible_agents):
            info = infos.get(agent) or {}
            if is_group_info_supported(info):
                group, factor, twin = get_group_info(info)
                groups[i] = group
                if factor is not None and factors is not None:
                    factors[i] = factor
                if twin is not None:
                    twins[i] = twin
        self.episode_groups, self._factors = groups, factors
        self._twins = twins if np.all(twins >= 0) else None

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict, dict]:
        obs, infos = self.env.reset(seed=seed, options=options)
        self._returns = np.zeros(self._n)
        self._read(infos)
        return obs, infos

    def step(self, actions: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        obs, rewards, terms, truncs, infos = self.env.step(actions)
        if infos:
            self._returns = self._returns + get_benefits(next(iter(infos.values())), self._n, self.env)
        if not self.env.agents and infos:
            first = next(a for a in self.env.possible_agents if a in infos)
            summary: dict[str, Any] = {"returns": self._returns.copy()}
            summary.update(
                episode_figures(
                    self._returns,
                    self.episode_groups,
                    self._factors,
                    self._twins,
                    self.protected,
                    self.figure_names,
                    on_out_of_domain=self._domain_warnings,
                )
            )
            infos[first] = {**infos[first], FAIRNESS: summary}
        return obs, rewards, terms, truncs, infos
