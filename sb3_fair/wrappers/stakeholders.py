"""Declare the stakeholders of an env that sb3-fair did not write: :class:`DeclareStakeholders` (Gymnasium) and
:class:`ParallelDeclareStakeholders` (PettingZoo).

Each adds the two things of the stakeholder contract (:mod:`sb3_fair.common.protocol`) to an env from another
package without editing it: the ``stakeholders`` attribute, held by the wrapper (so it survives every copy that
SB3's ``SubprocVecEnv``, SuperSuit or :mod:`pickle` makes: a PettingZoo game that rebuilds itself from its
constructor arguments when copied, as PettingZoo's ``EzPickle`` games do, loses an attribute set on it afterwards, but
not one of its wrapper), and ``info["benefits"]`` at every step, read from where the env already reports what each
stakeholder received: its vector reward (MO-Gymnasium: one objective per stakeholder), its agents' rewards
(PettingZoo: one agent per stakeholder), an info key, or a function of the step.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np
from pettingzoo import ParallelEnv
from pettingzoo.utils.wrappers import BaseParallelWrapper

from sb3_fair.common.protocol import BENEFITS, STAKEHOLDERS, get_benefits, get_env_attr, is_stakeholders_supported
from sb3_fair.common.stakeholders import Stakeholders

#: the keys of the mapping form of ``stakeholders`` (a config file's), as :class:`~sb3_fair.Stakeholders` names them
STAKEHOLDER_KEYS = ("names", "groups", "factors", "group_names")
#: the named sources of the benefits of :class:`DeclareStakeholders` (besides ``"info:<key>"`` and a function)
GYM_SOURCES = ("reward",)
#: the named sources of the benefits of :class:`ParallelDeclareStakeholders` (besides ``"info:<key>"`` and a function)
GAME_SOURCES = ("rewards",)
INFO_PREFIX = "info:"


def as_stakeholders(value: Any, names: Sequence[str] | None = None, argument: str = "stakeholders") -> Stakeholders:
    """``value`` as a :class:`~sb3_fair.Stakeholders`.

    :param value: a ``Stakeholders``; a mapping with the keys of :data:`STAKEHOLDER_KEYS` (``groups`` required,
        ``names`` defaulting to ``names``), the form a config file gives; or a sequence of groups, one int per
        stakeholder, named by ``names``.
    :param names: the default names (a game's ``possible_agents``), or ``None`` for ``stakeholder_<i>``.
    :param argument: the argument's name, for the messages.
    :raises ValueError: naming ``argument`` and the accepted forms.
    """
    accepted = (
        "an sb3_fair.Stakeholders, a mapping {groups: [...], names: [...], factors: [...], group_names: {...}} "
        "(groups required), or a list of groups (one int per stakeholder)"
    )
    if isinstance(value, Stakeholders):
        return value
    if isinstance(value, Mapping):
        unknown = sorted(str(k) for k in value if k not in STAKEHOLDER_KEYS)
        if unknown or "groups" not in value:
            why = f"unknown keys {unknown}" if unknown else "no 'groups'"
            raise ValueError(f"{argument}: {why}; accepted keys: {list(STAKEHOLDER_KEYS)} (groups required)")
        fields = dict(value)
        groups = fields.pop("groups")
        given_names = fields.pop("names", None)
        return _build(argument, groups, given_names if given_names is not None else names, **fields)
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence | np.ndarray):
        raise ValueError(f"{argument} must be {accepted}, got {value!r}")
    return _build(argument, value, names)


def _build(argument: str, groups: Any, names: Sequence[str] | None, **fields: Any) -> Stakeholders:
    try:
        n = len(groups)
    except TypeError:
        raise ValueError(f"{argument}: groups must be one int per stakeholder, got {groups!r}") from None
    if names is None:
        names = [f"stakeholder_{i}" for i in range(n)]
    elif len(names) != n:
        raise ValueError(
            f"{argument}: {n} groups for {len(names)} stakeholders {list(names)}: give one group per stakeholder"
        )
    try:
        return Stakeholders(names=tuple(names), groups=np.asarray(groups), **fields)
    except ValueError as err:
        raise ValueError(f"{argument}: {err}") from None


def _source(benefits: Any, named: tuple[str, ...], signature: str) -> tuple[str, str | Callable[..., Any]]:
    """``(kind, what)`` of a ``benefits`` argument: ``("named", name)``, ``("info", key)`` or ``("function", fn)``."""
    if callable(benefits):
        return "function", benefits
    if isinstance(benefits, str):
        if benefits in named:
            return "named", benefits
        if benefits.startswith(INFO_PREFIX) and len(benefits) > len(INFO_PREFIX):
            return "info", benefits[len(INFO_PREFIX) :]
    raise ValueError(
        f"benefits must be one of {list(named)}, 'info:<key>' (an info key holding them) or a function {signature}, "
        f"got {benefits!r}"
    )


def _refuse_declared(env: Any, wrapper: str) -> None:
    if is_stakeholders_supported(env):
        raise ValueError(
            f"env: {wrapper} declares the stakeholders of an env that has none, but this env already declares "
            f"{get_env_attr(env, STAKEHOLDERS).n} (its `stakeholders` attribute): use the env as it is, or wrap the "
            "env without them"
        )


def _checked(value: Any, n: int | Stakeholders, source: str, env: Any) -> np.ndarray:
    """The benefits read from ``source``, checked as every wrapper checks ``info["benefits"]`` (one finite float per
    stakeholder), the message naming the ``benefits`` argument and its source."""
    try:
        return get_benefits({BENEFITS: value}, n, env)
    except ValueError as err:
        raise ValueError(f"benefits={source}: {err}") from None


class DeclareStakeholders(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Declare the stakeholders of a Gymnasium env, and read their benefits from what the env reports.

    The wrapper holds ``stakeholders`` (found by every part of sb3-fair through
    :func:`~sb3_fair.common.protocol.get_env_attr`, as Gymnasium's ``get_wrapper_attr`` finds it) and puts
    ``info["benefits"]`` into every step's info. It changes nothing else: the reward, the observation and the
    spaces stay the env's. ``gym.make(env.spec)`` rebuilds it, and a config file gives it as an ``env_wrapper``
    entry (``stakeholders`` then in its mapping form).

    Example (MO-Gymnasium's ``fishwood-v0``: its two objectives, fish and wood, as two stakeholders; MO-Gymnasium's
    ``LinearReward`` gives SB3 the scalar reward it trains on)::

        import mo_gymnasium as mo_gym
        from mo_gymnasium.wrappers import LinearReward
        from stable_baselines3 import DQN

        from sb3_fair.wrappers import DeclareStakeholders

        env = DeclareStakeholders(mo_gym.make("fishwood-v0"), stakeholders={"names": ["fish", "wood"], "groups": [0, 1]})
        model = DQN("MlpPolicy", LinearReward(env, weight=[0.5, 0.5]))  # fairness/* figures logged with a callback

    :param env: the env (it must not declare stakeholders itself).
    :param stakeholders: an :class:`~sb3_fair.Stakeholders`; a mapping ``{"groups": [...], "names": [...],
        "factors": [...], "group_names": {...}}`` (``groups`` required; a config file's form); or a list of groups,
        one int per stakeholder (named ``stakeholder_<i>``).
    :param benefits: where each step's benefits are: ``"reward"`` (the env's vector reward, one entry per
        stakeholder: MO-Gymnasium's convention; its ``reward_space`` must have one entry per stakeholder),
        ``"info:<key>"`` (``info[key]`` holds them), or a function ``fn(obs, reward, terminated, truncated, info)``
        returning one float per stakeholder.
    :raises ValueError: at construction for a malformed ``stakeholders`` or ``benefits``, or a stakeholder count
        other than the env's objectives; at a step whose benefits have the wrong length or are not finite, naming
        ``benefits``.
    """

    def __init__(self, env: gym.Env, stakeholders: Any, benefits: str | Callable[..., Any] = "reward") -> None:
        gym.utils.RecordConstructorArgs.__init__(self, stakeholders=stakeholders, benefits=benefits)
        _refuse_declared(env, "DeclareStakeholders")
        gym.Wrapper.__init__(self, env)
        self.stakeholders = as_stakeholders(stakeholders)
        self._kind, self._what = _source(benefits, GYM_SOURCES, "(obs, reward, terminated, truncated, info) -> floats")
        self._label = benefits if isinstance(benefits, str) else getattr(benefits, "__name__", "function")
        if self._kind == "named":
            self._check_objectives(env)

    def _check_objectives(self, env: gym.Env) -> None:
        """Refuse a stakeholder count other than the env's objectives, where the env says how many it has."""
        space = get_env_attr(env, "reward_space")
        shape = getattr(space, "shape", None)
        if shape is None:
            return
        count = int(np.prod(shape)) if len(shape) else 1
        if count != self.stakeholders.n:
            raise ValueError(
                f"stakeholders: {self.stakeholders.n} stakeholders, but the env's reward has {count} objectives "
                f"(its reward_space {space}): benefits='reward' reads one objective per stakeholder"
            )

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        if self._kind == "named":
            value: Any = reward
        elif self._kind == "info":
            if self._what not in info:
                raise ValueError(f"benefits={self._label!r}: the step's info has no key {self._what!r}")
            value = info[self._what]
        else:
            assert callable(self._what)
            value = self._what(obs, reward, terminated, truncated, info)
        info[BENEFITS] = _checked(np.asarray(value).reshape(-1), self.stakeholders, repr(self._label), self.env)
        return obs, reward, terminated, truncated, info


class ParallelDeclareStakeholders(BaseParallelWrapper):
    """Declare the stakeholders of a PettingZoo parallel game (its agents, in ``possible_agents`` order), and read
    their benefits from what the game reports.

    The wrapper holds ``stakeholders`` and puts the whole benefits vector, one float per agent of
    ``possible_agents`` (0 for an agent that is not in the step), into every agent's info, as the contract asks of a
    game. Held by the wrapper, the declaration survives the copies that
    :func:`~sb3_fair.wrappers.make_multiagent_vec_env` (SuperSuit) makes, which an attribute set on a PettingZoo game
    that rebuilds itself from its constructor arguments does not.

    Example (mpe2's ``simple_spread_v3``: its first two agents as the protected group)::

        from mpe2 import simple_spread_v3
        from stable_baselines3 import PPO

        from sb3_fair.wrappers import ParallelDeclareStakeholders, make_multiagent_vec_env

        game = ParallelDeclareStakeholders(simple_spread_v3.parallel_env(N=4), stakeholders=[1, 1, 0, 0])
        model = PPO("MlpPolicy", make_multiagent_vec_env(game, n_instances=2)).learn(2_000)

    :param env: the game (it must not declare stakeholders itself).
    :param stakeholders: an :class:`~sb3_fair.Stakeholders` whose names are the game's ``possible_agents``; a
        mapping ``{"groups": [...], "factors": [...], "group_names": {...}}`` (``names`` default to
        ``possible_agents``); or a list of groups, one int per agent of ``possible_agents``.
    :param benefits: where each step's benefits are: ``"rewards"`` (each agent's reward is its benefit),
        ``"info:<key>"`` (each agent's ``info[key]``, one float), or a function ``fn(rewards, infos)`` of the step's
        dicts returning one float per agent of ``possible_agents``.
    :raises ValueError: at construction for a malformed ``stakeholders`` or ``benefits``, or stakeholders that are not
        the game's agents; at a step whose benefits have the wrong length or are not finite, naming ``benefits``.
    """

    def __init__(self, env: ParallelEnv, stakeholders: Any, benefits: str | Callable[..., Any] = "rewards") -> None:
        _refuse_declared(env, "ParallelDeclareStakeholders")
        super().__init__(env)
        agents = [str(a) for a in env.possible_agents]
        sh = as_stakeholders(stakeholders, names=agents)
        if list(sh.names) != agents:
            raise ValueError(
                f"stakeholders: a game's stakeholders are its agents, in possible_agents order ({agents}), got names "
                f"{list(sh.names)}"
            )
        self.stakeholders = sh
        self._agents = list(env.possible_agents)
        self._kind, self._what = _source(benefits, GAME_SOURCES, "(rewards, infos) -> one float per agent")
        self._label = benefits if isinstance(benefits, str) else getattr(benefits, "__name__", "function")

    def _benefits(self, rewards: dict[Any, Any], infos: dict[Any, dict[str, Any]]) -> np.ndarray:
        if self._kind == "function":
            assert callable(self._what)
            value: Any = self._what(rewards, infos)
        elif self._kind == "named":
            value = [float(rewards.get(a, 0.0)) for a in self._agents]
        else:
            value = []
            for a in self._agents:
                info = infos.get(a)
                if info is None:
                    value.append(0.0)
                elif self._what not in info:
                    raise ValueError(f"benefits={self._label!r}: agent {a!r}'s info has no key {self._what!r}")
                else:
                    value.append(_float(info[self._what]))
        return _checked(value, self.stakeholders, repr(self._label), self.env)

    def step(self, actions: dict[Any, Any]) -> tuple[dict, dict, dict, dict, dict]:
        obs, rewards, terms, truncs, infos = self.env.step(actions)
        benefits = self._benefits(rewards, infos)
        infos = {a: {**(infos.get(a) or {}), BENEFITS: benefits} for a in {*infos, *rewards}}
        return obs, rewards, terms, truncs, infos


def _float(value: Any) -> float:
    """One agent's benefit as a float (NaN where it is not one number: refused by the check that follows)."""
    try:
        return float(np.asarray(value, dtype=np.float64).reshape(()))
    except (TypeError, ValueError):
        return math.nan


__all__ = ["DeclareStakeholders", "ParallelDeclareStakeholders", "as_stakeholders"]
