"""Δs, Δl and a constraint cost from the stakeholder contract alone, for F-PPO, A-PPO and CPO on any env.

F-PPO's advantage regularisation, A-PPO's and CPO's constraint read a short-term gap Δs and a long-term gap Δl from
every step's info (:data:`~sb3_fair.common.protocol.SHORT_TERM_FAIRNESS`,
:data:`~sb3_fair.common.protocol.LONG_TERM_FAIRNESS`; Hu, Lear, Zhang 2024, arXiv:2401.06318, §V), which only the
case-study envs of :mod:`sb3_fair.envs` write. :class:`FairnessSignals` (Gymnasium) and
:class:`ParallelFairnessSignals` (PettingZoo) derive both from the stakeholders' groups and each step's benefits,
the two things the contract asks: the group gap (:func:`sb3_fair.metrics.benefit_gap`) of the benefits summed over
a sliding window of the episode's steps, as Hu et al. measure short-term fairness on a sliding window (§V-B).
"""

from __future__ import annotations

from collections import deque
from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np
from pettingzoo import ParallelEnv
from pettingzoo.utils.wrappers import BaseParallelWrapper

from sb3_fair.common.protocol import (
    BENEFITS,
    COST,
    LONG_TERM_FAIRNESS,
    SHORT_TERM_FAIRNESS,
    env_name,
    get_benefits,
    get_game_stakeholders,
    get_group_info,
    get_stakeholders,
    is_group_info_supported,
    is_what_if_supported,
)
from sb3_fair.common.validation import check_choice, check_int
from sb3_fair.metrics.signals import BENEFIT_GAPS, benefit_gap, check_benefit_gap

#: the signals :class:`FairnessSignals` can also write as ``info["cost"]`` (``cost=``)
COST_SOURCES = ("short_term", "long_term")
#: ``long_term="episode"``: Δl is the gap of the benefits summed since the episode's start
EPISODE = "episode"


def _check_long_term(long_term: Any, window: int) -> int | None:
    """``long_term`` as the number of steps Δl sums over, ``None`` for the whole episode."""
    if isinstance(long_term, str) and long_term == EPISODE:
        return None
    if isinstance(long_term, bool) or not isinstance(long_term, (int, np.integer)) or long_term < window:
        raise ValueError(
            f"long_term must be {EPISODE!r} (Δl: the gap of the benefits summed since the episode's start) or an int "
            f">= window ({window}: Δl over the last long_term steps, no shorter than Δs's window), got {long_term!r}"
        )
    return int(long_term)


class _WindowSum:
    """Each stakeholder's benefits summed over the last ``size`` steps of the episode (all of them with ``None``).

    A running sum; with a window, the oldest row is subtracted as it leaves, and the sum is recomputed from the rows
    kept once every ``size`` subtractions, so rounding never builds up over a long episode.
    """

    def __init__(self, size: int | None, n: int) -> None:
        self.size, self.n = size, n
        self.reset()

    def reset(self) -> None:
        self.total = np.zeros(self.n)
        self.rows: deque[np.ndarray] = deque()
        self._dropped = 0

    def add(self, benefits: np.ndarray) -> np.ndarray:
        self.total = self.total + benefits
        if self.size is not None:
            self.rows.append(benefits)
            if len(self.rows) > self.size:
                oldest = self.rows.popleft()
                self._dropped += 1
                if self._dropped >= self.size:
                    self.total, self._dropped = np.sum(np.array(self.rows), axis=0), 0
                else:
                    self.total = self.total - oldest
        return self.total


class _Signals:
    """The state both wrappers share: the two window sums and the gap between the groups."""

    def __init__(self, n: int, window: Any, gap: Any, long_term: Any, cost: Any) -> None:
        self.window = check_int(window, "window", 1)
        self.long_term = long_term if isinstance(long_term, str) else int(long_term)
        self._long_steps = _check_long_term(long_term, self.window)
        self.gap = check_choice(gap, "gap", BENEFIT_GAPS)
        if cost is not None and cost not in COST_SOURCES:
            raise ValueError(f"cost must be one of {[*COST_SOURCES, None]}, got {cost!r}")
        self.cost: str | None = cost
        self._short = _WindowSum(self.window, n)
        self._long = _WindowSum(self._long_steps, n)

    def reset(self) -> dict[str, float]:
        self._short.reset()
        self._long.reset()
        return {SHORT_TERM_FAIRNESS: 0.0, LONG_TERM_FAIRNESS: 0.0}

    def step(self, benefits: np.ndarray, groups: np.ndarray) -> dict[str, float]:
        short = benefit_gap(self._short.add(benefits), groups, self.gap)
        long = benefit_gap(self._long.add(benefits), groups, self.gap)
        out = {SHORT_TERM_FAIRNESS: float(short), LONG_TERM_FAIRNESS: float(long)}
        if self.cost is not None:
            out[COST] = out[SHORT_TERM_FAIRNESS if self.cost == "short_term" else LONG_TERM_FAIRNESS]
        return out


def _refuse_reported(info: dict[str, Any], who: str, cost: str | None) -> None:
    """Refuse an info that already holds the signals (or a cost, where ``cost`` is given)."""
    own = [k for k in (SHORT_TERM_FAIRNESS, LONG_TERM_FAIRNESS) if k in info]
    if own:
        raise ValueError(
            f"FairnessSignals: env {who} already reports info{own}: it has fairness signals of its own (as the case "
            "studies of sb3_fair.envs do), which the wrapper would overwrite; train on the env without FairnessSignals"
        )
    if cost is not None and COST in info:
        raise ValueError(
            f"FairnessSignals(cost={cost!r}): env {who} already reports info[{COST!r}] (a cost of its own, as "
            f"Safety-Gymnasium's envs do), which the wrapper would overwrite; give cost=None to keep the env's cost "
            f"(CPO's cost_signal='cost' reads it), or remove the env's"
        )


def _refuse_own_signals(env: Any, layers: list[Any], wrapper: str) -> None:
    """Refuse, at construction, an env that reports the signals itself: one already wrapped in a signals wrapper,
    or one that answers what-if queries (the case studies, whose own Δs the answers are in terms of)."""
    for layer in layers:
        if isinstance(layer, (FairnessSignals, ParallelFairnessSignals)):
            raise ValueError(
                f"{wrapper}: the env already has a {type(layer).__name__}, which writes info[{SHORT_TERM_FAIRNESS!r}] "
                f"and info[{LONG_TERM_FAIRNESS!r}]; an env takes one: set its window, gap and long_term instead"
            )
    if is_what_if_supported(env):
        raise ValueError(
            f"{wrapper}: env {env_name(env)} reports info[{SHORT_TERM_FAIRNESS!r}] and info[{LONG_TERM_FAIRNESS!r}] "
            "itself (it answers what-if queries for action massaging, as the case studies of sb3_fair.envs do); the "
            "wrapper would overwrite the env's own fairness signals: train on the env without it"
        )


class FairnessSignals(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Δs, Δl and optionally a constraint cost in every step's info, from the stakeholders' groups and benefits.

    After each step, with ``B`` each stakeholder's benefits (``info["benefits"]``) summed over some of the episode's
    steps and ``gap`` one of :data:`~sb3_fair.metrics.BENEFIT_GAPS` (:func:`~sb3_fair.metrics.benefit_gap`):

    * ``info["short_term_fairness"]`` (Δs) is the gap of ``B`` over the last ``window`` steps of the episode (all of
      its steps while it has fewer);
    * ``info["long_term_fairness"]`` (Δl) is the gap of ``B`` over the episode so far (``long_term="episode"``) or
      over its last ``long_term`` steps;
    * with ``cost="short_term"`` or ``"long_term"``, ``info["cost"]`` is that signal (Safety-Gymnasium's convention,
      which CPO's ``cost_signal="cost"`` reads).

    The reset info gets both signals of the reset state, where no benefit has been received yet: ``0.0`` (so the first
    step's changes, which F-PPO and A-PPO use, are its own gaps). The gaps are unsigned, ``>= 0``, lower is fairer.
    So ``FairPPO(fairness="long_term")``, ``FairPPO(fairness="a_ppo")`` and ``CPO(cost_limit=...)`` train on any
    env that honours the stakeholder contract. Action massaging needs the env's own what-if answers and still
    refuses the env.

    Example::

        from sb3_fair import FairPPO
        from sb3_fair.envs import DonutAllocationEnv
        from sb3_fair.wrappers import FairnessSignals

        env = FairnessSignals(DonutAllocationEnv(), window=10, gap="group_gap")
        model = FairPPO("MlpPolicy", env, fairness="long_term", n_steps=64, batch_size=32).learn(128)

    :param env: an env honouring the stakeholder contract, that reports no fairness signals of its own.
    :param window: the number of steps Δs sums the benefits over (an int >= 1).
    :param gap: the group gap, one of :data:`~sb3_fair.metrics.BENEFIT_GAPS`: ``"dp_abs"`` (the default: exactly two
        groups, one of them the protected group 1), ``"dp_norm_abs"`` (the same two groups) or ``"group_gap"`` (the
        largest group mean minus the smallest, two groups or more).
    :param long_term: ``"episode"`` (Δl over the episode so far) or an int >= ``window`` (Δl over the last
        ``long_term`` steps).
    :param cost: ``None`` (no cost; an env's own ``info["cost"]`` is left as it is), ``"short_term"`` or
        ``"long_term"``: the signal written as ``info["cost"]`` too.
    :raises ValueError: at construction, naming the argument and the accepted values, for a bad argument or
        stakeholders without the groups ``gap`` needs; for an env that reports the signals itself (the case studies of
        :mod:`sb3_fair.envs`, an env already wrapped in one); at a step, for an env that writes ``info["cost"]`` of
        its own while ``cost`` is given.
    """

    def __init__(
        self,
        env: gym.Env,
        window: int = 10,
        gap: str = "dp_abs",
        long_term: str | int = EPISODE,
        cost: str | None = None,
    ) -> None:
        gym.utils.RecordConstructorArgs.__init__(self, window=window, gap=gap, long_term=long_term, cost=cost)
        layers, current = [], env
        while isinstance(current, gym.Wrapper):
            layers.append(current)
            current = current.env
        _refuse_own_signals(env, layers, "FairnessSignals")
        gym.Wrapper.__init__(self, env)
        stakeholders = self._stakeholders = get_stakeholders(env)
        self._signals = _Signals(stakeholders.n, window, gap, long_term, cost)
        check_benefit_gap(gap, stakeholders.groups)
        self.window, self.gap, self.long_term, self.cost = (
            self._signals.window,
            self._signals.gap,
            self._signals.long_term,
            self._signals.cost,
        )

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(seed=seed, options=options)
        _refuse_reported(info, env_name(self.env), None)
        info.update(self._signals.reset())
        return obs, info

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        _refuse_reported(info, env_name(self.env), self.cost)
        benefits = get_benefits(info, self._stakeholders, self.env)
        info.update(self._signals.step(benefits, self._stakeholders.groups))
        return obs, reward, terminated, truncated, info


class ParallelFairnessSignals(BaseParallelWrapper):
    """:class:`FairnessSignals` for a PettingZoo parallel game: every agent's info gets the same Δs and Δl (and cost).

    The game's stakeholders are its agents in ``possible_agents`` order, and each agent's info holds the whole
    ``benefits`` vector of the step (the stakeholder contract); the signals are those of :class:`FairnessSignals`,
    computed from the benefits of the first agent's info that has them (an agent that is done reports nothing),
    and written into the info of every agent the step reports. The groups of an episode are the game's
    ``stakeholders`` at reset, or, where every agent's reset info carries ``"group"`` (a game that redraws them, such
    as :class:`~sb3_fair.envs.DisparityGame`), those; they are checked against ``gap`` at every reset, since they
    can change between episodes. After :func:`~sb3_fair.wrappers.make_multiagent_vec_env` every slot carries the
    signals, so ``FairPPO(fairness="long_term")`` and ``"a_ppo"`` train on the game.

    Unlike :class:`FairnessSignals`, the reset info carries no signals: when a game's episode ends, SuperSuit's
    conversion resets it at once and merges the new episode's reset info over the last step's info, where reset
    values would replace the last step's Δs and Δl. So F-PPO's and A-PPO's tracker gives the first step of each
    episode changes of 0 (its rule for a reset info without signals).

    Example::

        from sb3_fair import FairPPO
        from sb3_fair.envs import DisparityGame
        from sb3_fair.wrappers import ParallelFairnessSignals, make_multiagent_vec_env

        vec_env = make_multiagent_vec_env(ParallelFairnessSignals(DisparityGame(n_agents=4), window=5))
        FairPPO("MlpPolicy", vec_env, fairness="a_ppo", n_steps=32, batch_size=64).learn(128)

    :param env: a parallel game honouring the stakeholder contract, that reports no fairness signals of its own.
    :param window: as :class:`FairnessSignals`.
    :param gap: as :class:`FairnessSignals`.
    :param long_term: as :class:`FairnessSignals`.
    :param cost: as :class:`FairnessSignals`.
    """

    def __init__(
        self,
        env: ParallelEnv,
        window: int = 10,
        gap: str = "dp_abs",
        long_term: str | int = EPISODE,
        cost: str | None = None,
    ) -> None:
        layers, current = [], env
        while isinstance(current, BaseParallelWrapper):
            layers.append(current)
            current = current.env
        _refuse_own_signals(env, layers, "ParallelFairnessSignals")
        super().__init__(env)
        sh = get_game_stakeholders(env)
        self._signals = _Signals(sh.n, window, gap, long_term, cost)
        self.window, self.gap, self.long_term, self.cost = (
            self._signals.window,
            self._signals.gap,
            self._signals.long_term,
            self._signals.cost,
        )
        self._n = sh.n
        #: the protected attribute of each agent in the current episode
        self.episode_groups = sh.groups

    def _groups(self, infos: dict[str, dict[str, Any]]) -> np.ndarray:
        groups = get_stakeholders(self.env).groups.copy()
        agents = list(self.env.possible_agents)
        if all(is_group_info_supported(infos.get(a) or {}) for a in agents):
            groups = np.array([get_group_info(infos[a])[0] for a in agents], dtype=np.int64)
        check_benefit_gap(self.gap, groups)
        return groups

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict, dict]:
        obs, infos = self.env.reset(seed=seed, options=options)
        who = env_name(self.env)
        for info in infos.values():
            _refuse_reported(info, who, None)
        self.episode_groups = self._groups(infos)
        self._signals.reset()  # the reset info carries no signals (see the class's docstring)
        return obs, infos

    def step(self, actions: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        obs, rewards, terms, truncs, infos = self.env.step(actions)
        if infos:
            who = env_name(self.env)
            for info in infos.values():
                _refuse_reported(info, who, self.cost)
            first = next((info for info in infos.values() if BENEFITS in info), next(iter(infos.values())))
            benefits = get_benefits(first, self._n, self.env)
            values = self._signals.step(benefits, self.episode_groups)
            infos = {a: {**info, **values} for a, info in infos.items()}
        return obs, rewards, terms, truncs, infos


__all__ = ["COST_SOURCES", "EPISODE", "FairnessSignals", "ParallelFairnessSignals"]
