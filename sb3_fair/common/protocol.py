"""Every name that an environment and sb3-fair exchange, with its getters and ``is_..._supported`` checks.

Modelled on sb3-contrib's action-masking protocol (``sb3_contrib.common.maskable.utils``: one
name, a getter, an ``is_masking_supported``). No other module of sb3-fair spells these strings.

**The stakeholder contract** (what every part of sb3-fair relies on). An environment honours it when

* ``stakeholders`` (:data:`STAKEHOLDERS`), an attribute of the env or of one of its wrappers (found as
  Gymnasium's ``env.get_wrapper_attr`` finds it, by :func:`get_env_attr`), is a :class:`~sb3_fair.Stakeholders`, and
* every ``step`` puts ``info["benefits"]`` (:data:`BENEFITS`), a float array with one entry per
  stakeholder: what each received at this step.

A multi-agent (PettingZoo parallel) game honours it the same way: its ``stakeholders`` are its
agents in ``possible_agents`` order, and every agent's info holds the whole ``benefits`` vector of
the step. Where the protected attribute of an agent changes between episodes, the agent's info
also carries :data:`GROUP` (and :data:`FACTOR`, the legitimate factor, and :data:`TWIN`, its
counterfactual twin, where they apply), read at every step.

**Optional env attributes**, each enabling one feature:

* :data:`SYMMETRY` (an :class:`~sb3_fair.common.symmetry.AgentSymmetry`): Fair-ER / Fair-E.
* :data:`MEMORY_SPEC`, :data:`REWARD_SPEC`, :data:`BASE_OBS_SIZE`, :data:`MEMORY_KEY`: set by
  :class:`~sb3_fair.wrappers.MemoryAugmentation` and :class:`~sb3_fair.wrappers.FairnessReward`;
  FairQCM counterfactual replay.

**Long-term fairness signals** (F-PPO; Hu, Lear, Zhang 2024, arXiv:2401.06318): an env that
supports them puts :data:`SHORT_TERM_FAIRNESS` (its short-term gap Δs after the step, Eqs. 8-10 of
the paper) and :data:`LONG_TERM_FAIRNESS` (its long-term gap Δl after the step) in every step's
info, where they survive a VecEnv's auto-reset (and in the reset info, for the first step's
change). An env that also answers :data:`WHAT_IF` (``env.fairness_what_if(action) ->
(candidates, short_term)``: the candidate replacements of ``action``, the action itself first, and
the Δs each would leave if executed now, with no side effect) supports action massaging (Eq. 6).
Where the step is random, the answer may be an estimate; the env's docstring says which.

**Info keys written by sb3-fair's own wrappers**: :data:`FAIRNESS` (the episode's figures, by
:class:`~sb3_fair.common.monitor.FairnessMonitor`), :data:`FAIRNESS_TERMS` (the parts of the
fairness reward that do not depend on memory, by :class:`~sb3_fair.wrappers.FairnessReward`) and
:data:`MEMORY` (by :class:`~sb3_fair.wrappers.MemoryAugmentation`).
"""

from __future__ import annotations

import math
import weakref
from typing import TYPE_CHECKING, Any, SupportsInt

import gymnasium as gym
import numpy as np
from stable_baselines3.common.vec_env import DummyVecEnv, VecEnv, VecEnvWrapper

from sb3_fair._exact import all_finite
from sb3_fair.common.stakeholders import Stakeholders
from sb3_fair.common.symmetry import AgentSymmetry

if TYPE_CHECKING:
    from sb3_fair.common.fairqcm.memory import MemorySpec
    from sb3_fair.common.fairqcm.reward import RewardSpec

# ---------------------------------------------------------------------------------------- env attributes
#: ``env.stakeholders`` (the env's or a wrapper's, :func:`get_env_attr`): a :class:`~sb3_fair.Stakeholders`
STAKEHOLDERS = "stakeholders"
#: ``env.symmetry`` (the env's or a wrapper's): an :class:`~sb3_fair.common.symmetry.AgentSymmetry`
SYMMETRY = "symmetry"
#: a :class:`~sb3_fair.common.fairqcm.memory.MemorySpec`, set by ``MemoryAugmentation``
MEMORY_SPEC = "memory_spec"
#: a :class:`~sb3_fair.common.fairqcm.reward.RewardSpec`, set by ``FairnessReward``
REWARD_SPEC = "reward_spec"
#: the size of the observation before ``MemoryAugmentation`` appended the memory (0 with a Dict observation)
BASE_OBS_SIZE = "base_obs_size"
#: the key of the memory in a Dict observation of ``MemoryAugmentation`` (``None``: a flat observation)
MEMORY_KEY = "memory_key"

# ---------------------------------------------------------------------------------------- info keys
#: what each stakeholder received at this step (one float per stakeholder)
BENEFITS = "benefits"
#: an agent's protected attribute (int), in multi-agent games whose groups change between episodes
GROUP = "group"
#: an agent's legitimate factor (int), for conditional statistical parity
FACTOR = "factor"
#: the index of an agent's counterfactual twin within its game, as ``CounterfactualPair`` reports
TWIN = "twin"
#: Δs, the env's short-term fairness gap after this step (a float; lower is fairer)
SHORT_TERM_FAIRNESS = "short_term_fairness"
#: Δl, the env's long-term fairness gap after this step (a float; lower is fairer)
LONG_TERM_FAIRNESS = "long_term_fairness"
#: the constraint cost of this step (a float; Safety-Gymnasium's ``info["cost"]`` convention), CPO's
#: ``cost_signal="cost"``: a Safety-Gymnasium env's own cost, or the one ``FairnessSignals(cost=...)`` writes
COST = "cost"
#: the episode's fairness figures, at the last step of an episode (``FairnessMonitor``)
FAIRNESS = "fairness"
#: ``{"active": bool, "task_reward": float}``: the memory-free parts of the fairness reward (``FairnessReward``)
FAIRNESS_TERMS = "fairness_terms"
#: the memory after this step (``MemoryAugmentation``)
MEMORY = "memory"
#: ``False`` in the info of an agent that is not in the game at the observation this step returns (it has left, or
#: not yet joined), written by :class:`~sb3_fair.wrappers.BlackDeath`; absent (or ``True``) for an agent that is
ACTIVE = "active"

# ---------------------------------------------------------------------------------------- env methods
#: ``env.fairness_what_if(action) -> (candidates, short_term)``, for action massaging
WHAT_IF = "fairness_what_if"

CONTRACT_HINT = (
    "the stakeholder contract: `stakeholders` (an sb3_fair.Stakeholders) on the env or one of its wrappers, as "
    "sb3_fair.wrappers.DeclareStakeholders adds it to an env you did not write, and "
    "`info['benefits']` (one float per stakeholder) at every step"
)


# ---------------------------------------------------------------------------------------- attribute look-up
def get_vec_env_attr(env: VecEnv, name: str) -> Any:
    """The attribute ``name`` of ``env``'s first sub-env (through its wrappers), ``None`` if absent.

    Asks :meth:`VecEnv.has_attr` first, so a missing attribute never raises inside a
    ``SubprocVecEnv`` worker (which would kill it).
    """
    try:
        if not env.has_attr(name):
            return None
        return env.get_attr(name, indices=[0])[0]
    except AttributeError:
        return None


def get_env_attr(env: gym.Env | VecEnv | Any, name: str) -> Any:
    """The contract attribute ``name`` of ``env``, ``None`` if absent: the one look-up every part of sb3-fair uses.

    Searched as Gymnasium's ``env.get_wrapper_attr(name)`` does: the outermost wrapper first, then each wrapper
    inwards, then the bare env; so an attribute declared by a wrapper (such as
    :class:`~sb3_fair.wrappers.DeclareStakeholders`) is found as well as one of the env itself. A VecEnv is asked
    through ``get_attr`` (its first sub-env, searched the same way by SB3's ``DummyVecEnv`` and ``SubprocVecEnv``,
    and by :class:`~sb3_fair.wrappers.PettingZooVecEnv`); a PettingZoo game through its wrappers (PettingZoo's
    wrappers pass an attribute they lack on to the game they wrap), then its ``unwrapped`` game.
    """
    if isinstance(env, VecEnv):
        return get_vec_env_attr(env, name)
    if isinstance(env, gym.Env):
        try:
            return env.get_wrapper_attr(name)
        except AttributeError:
            return None
    value = getattr(env, name, None)
    if value is None:
        bare = getattr(env, "unwrapped", None)
        if bare is not None and bare is not env:
            value = getattr(bare, name, None)
    return value


# ---------------------------------------------------------------------------------------- stakeholders
def is_stakeholders_supported(env: gym.Env | VecEnv | Any) -> bool:
    """Whether ``env`` (a Gymnasium env, a VecEnv or a PettingZoo game) declares its stakeholders."""
    return isinstance(get_env_attr(env, STAKEHOLDERS), Stakeholders)


def get_stakeholders(env: gym.Env | VecEnv | Any) -> Stakeholders:
    """The :class:`~sb3_fair.Stakeholders` of ``env`` (a Gymnasium env, possibly wrapped, a VecEnv or a game).

    :raises ValueError: naming the contract when the env does not honour it.
    """
    sh = get_env_attr(env, STAKEHOLDERS)
    if sh is None:
        raise ValueError(f"env {env_name(env)} does not honour {CONTRACT_HINT}")
    if not isinstance(sh, Stakeholders):
        raise ValueError(f"env.{STAKEHOLDERS} must be an sb3_fair.Stakeholders, got {type(sh).__name__}")
    return sh


def get_game_stakeholders(game: Any) -> Stakeholders:
    """The :class:`~sb3_fair.Stakeholders` of a PettingZoo parallel game, checked to be its agents (one per agent of
    ``possible_agents``).

    :raises ValueError: as :func:`get_stakeholders`, or when their number is not the game's number of agents.
    """
    sh = get_stakeholders(game)
    if sh.n != len(game.possible_agents):
        raise ValueError(
            f"env: the game declares {sh.n} stakeholders for {len(game.possible_agents)} possible agents; "
            "a parallel game's stakeholders are its agents, in possible_agents order"
        )
    return sh


def env_name(env: Any) -> str:
    """The class name of the bare env behind ``env`` for a message: a wrapped env's ``unwrapped``, a VecEnv's first
    sub-env's (not ``DummyVecEnv``), a game's own."""
    if isinstance(env, VecEnv):
        try:
            return type(env.get_attr("unwrapped", indices=[0])[0]).__name__
        except (AttributeError, IndexError):
            return type(env).__name__
    return type(getattr(env, "unwrapped", env)).__name__


def _of_env(env: Any) -> str:
    """`` of env X`` for an error message (``X`` the class of the bare env), or nothing without an env."""
    return "" if env is None else f" of env {env_name(env)}"


def get_benefits(info: dict[str, Any], stakeholders: int | Stakeholders, env: Any = None) -> np.ndarray:
    """``info["benefits"]``, checked to hold one finite float per stakeholder.

    :param info: one step's info dict.
    :param stakeholders: the env's :class:`~sb3_fair.Stakeholders` (its names go into the error
        messages), or their number.
    :param env: the env that reported ``info``, named in the error messages (optional).
    :raises ValueError: when the key is missing, has the wrong length, or holds NaN or inf (the
        message names the env and the stakeholder).
    """
    n = stakeholders.n if isinstance(stakeholders, Stakeholders) else int(stakeholders)
    if BENEFITS not in info:
        raise ValueError(
            f"info[{BENEFITS!r}]{_of_env(env)} is missing: environments used with sb3-fair must report, at every step, "
            "what each stakeholder received (one float per stakeholder)"
        )
    try:
        b = np.asarray(info[BENEFITS], dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            f"info[{BENEFITS!r}]{_of_env(env)} must be one float per stakeholder, got {info[BENEFITS]!r}"
        ) from None
    if b.shape != (n,):
        raise ValueError(
            f"info[{BENEFITS!r}]{_of_env(env)} must have one entry per stakeholder ({n}), got shape {b.shape}"
        )
    if not all_finite(b):  # every wrapper checks the benefits at every step: Python floats for a few stakeholders
        where = _of_env(env)
        i = int(np.flatnonzero(~np.isfinite(b))[0])
        who = f"{stakeholders.names[i]!r} (index {i})" if isinstance(stakeholders, Stakeholders) else f"index {i}"
        raise ValueError(f"info[{BENEFITS!r}]{where} must be finite: stakeholder {who} received {b[i]}")
    return b


# ---------------------------------------------------------------------------------------- multi-agent group infos
def is_group_info_supported(info: dict[str, Any]) -> bool:
    """Whether an agent's info carries its protected attribute (:data:`GROUP`)."""
    return GROUP in info


def get_group_info(info: dict[str, Any]) -> tuple[int, int | None, int | None]:
    """``(group, factor, twin)`` of one agent's info; ``factor`` and ``twin`` are ``None`` when absent.

    :raises ValueError: when the info has no :data:`GROUP`.
    """
    if GROUP not in info:
        raise ValueError(f"info[{GROUP!r}] is missing: every agent's info must carry its protected attribute")
    factor, twin = info.get(FACTOR), info.get(TWIN)
    return int(info[GROUP]), None if factor is None else int(factor), None if twin is None else int(twin)


def group_info(
    group: SupportsInt, factor: SupportsInt | None = None, twin: SupportsInt | None = None
) -> dict[str, int]:
    """The info entries of one agent: ``{"group": g}`` plus ``factor`` and ``twin`` when given."""
    out = {GROUP: int(group)}
    if factor is not None:
        out[FACTOR] = int(factor)
    if twin is not None:
        out[TWIN] = int(twin)
    return out


# ---------------------------------------------------------------------------------------- symmetry (Fair-ER)
def is_symmetry_supported(env: gym.Env | VecEnv | Any) -> bool:
    """Whether ``env`` describes its agent symmetry (:data:`SYMMETRY`), which Fair-ER and Fair-E need."""
    return get_env_attr(env, SYMMETRY) is not None


def get_symmetry(env: gym.Env | VecEnv | Any) -> AgentSymmetry | None:
    """``env.symmetry`` (the env's or a wrapper's), checked to be an :class:`~sb3_fair.common.symmetry.AgentSymmetry`; ``None`` if absent."""
    sym = get_env_attr(env, SYMMETRY)
    if sym is not None and not isinstance(sym, AgentSymmetry):
        raise ValueError(f"env.{SYMMETRY} must be an AgentSymmetry, got {type(sym).__name__}")
    return sym


# ---------------------------------------------------------------------------------------- FairQCM (memory + reward)
def is_fairqcm_supported(env: gym.Env | VecEnv | Any) -> bool:
    """Whether ``env`` carries the memory and the memory-based fairness reward FairQCM replays."""
    return get_env_attr(env, MEMORY_SPEC) is not None and get_env_attr(env, REWARD_SPEC) is not None


def get_memory_key(env: gym.Env | VecEnv | Any) -> str | None:
    """The key of the memory in ``env``'s Dict observation (:data:`MEMORY_KEY`), or ``None`` for a flat observation."""
    return get_env_attr(env, MEMORY_KEY)


def get_fairqcm_spec(env: gym.Env | VecEnv | Any) -> tuple[MemorySpec | None, RewardSpec | None, slice | None]:
    """``(memory_spec, reward_spec, memory_slice)`` of ``env``; each ``None`` when absent.

    ``memory_slice`` is where the encoded memory sits in the flat observation, or in the
    observation's :func:`get_memory_key` entry for a Dict observation.
    """
    memory_spec = get_env_attr(env, MEMORY_SPEC)
    reward_spec = get_env_attr(env, REWARD_SPEC)
    base = get_env_attr(env, BASE_OBS_SIZE)
    memory_slice = (
        None if memory_spec is None or base is None else slice(int(base), int(base) + memory_spec.encoded_size)
    )
    return memory_spec, reward_spec, memory_slice


def get_fairness_terms(info: dict[str, Any]) -> dict[str, Any]:
    """``info["fairness_terms"]``, written by :class:`~sb3_fair.wrappers.FairnessReward`.

    :raises RuntimeError: when it is missing (the wrapper is not on the env).
    """
    terms = info.get(FAIRNESS_TERMS)
    if terms is None:
        raise RuntimeError(f"info[{FAIRNESS_TERMS!r}] is missing: the env's FairnessReward wrapper must be present")
    return terms


# ---------------------------------------------------------------------------------------- F-PPO signals
def is_fairness_signals_supported(info: dict[str, Any]) -> bool:
    """Whether a step's info carries both long-term fairness signals (Δs and Δl)."""
    return SHORT_TERM_FAIRNESS in info and LONG_TERM_FAIRNESS in info


def get_fairness_signals(infos: list[dict[str, Any]] | tuple[dict[str, Any], ...]) -> tuple[np.ndarray, np.ndarray]:
    """``(Δs, Δl)`` of one VecEnv step: two float arrays with one entry per sub-env.

    Every value is checked at the step that reported it: a NaN or inf gap would otherwise pass
    into the rollout buffer and stop training only at the next update, far from its cause.

    :raises ValueError: naming the info keys when a sub-env does not report them, and naming the
        info key and the sub-env when a value is not a finite number.
    """
    short_term, long_term = get_fairness_signal_lists(infos)
    return np.array(short_term, dtype=np.float64), np.array(long_term, dtype=np.float64)


def get_fairness_signal_lists(
    infos: list[dict[str, Any]] | tuple[dict[str, Any], ...],
) -> tuple[list[float], list[float]]:
    """:func:`get_fairness_signals` as two lists of Python floats (the same values, the same checks), for a caller
    that collects a rollout's steps and builds one array at its end.

    :raises ValueError: as :func:`get_fairness_signals`.
    """
    missing = [i for i, info in enumerate(infos) if not is_fairness_signals_supported(info)]
    if missing:
        raise ValueError(
            f"info[{SHORT_TERM_FAIRNESS!r}] and info[{LONG_TERM_FAIRNESS!r}] are missing (sub-envs {missing}): "
            "long-term fairness needs an env that reports its short- and long-term fairness gaps at every step (an "
            "env honouring the stakeholder contract gets them from sb3_fair.wrappers.FairnessSignals, a PettingZoo "
            "game from ParallelFairnessSignals)"
        )
    return _signal(infos, SHORT_TERM_FAIRNESS), _signal(infos, LONG_TERM_FAIRNESS)


def is_cost_supported(info: dict[str, Any]) -> bool:
    """Whether a step's info carries a constraint cost (:data:`COST`, Safety-Gymnasium's ``info["cost"]``)."""
    return COST in info


def get_costs(infos: list[dict[str, Any]] | tuple[dict[str, Any], ...]) -> list[float]:
    """``info["cost"]`` of every sub-env of one VecEnv step, as Python floats, each checked to be one finite number.

    :raises ValueError: naming the key, the sub-envs and the wrappers that write it, when a sub-env reports no cost;
        naming the key and the sub-env when a value is not a finite number.
    """
    missing = [i for i, info in enumerate(infos) if not is_cost_supported(info)]
    if missing:
        raise ValueError(
            f"info[{COST!r}] is missing (sub-envs {missing}): a constraint cost needs an env that reports it at every "
            "step, as Safety-Gymnasium's envs do (through safety_gymnasium.wrappers.SafetyGymnasium2Gymnasium), or "
            "sb3_fair.wrappers.FairnessSignals(env, cost='short_term' or 'long_term') on an env honouring the "
            "stakeholder contract"
        )
    return _signal(infos, COST)


def _signal(infos: list[dict[str, Any]] | tuple[dict[str, Any], ...], key: str) -> list[float]:
    """``info[key]`` of every sub-env as a Python float, each checked to be one finite number."""
    out = []
    for i, info in enumerate(infos):
        value = info[key]
        if type(value) is float and math.isfinite(value):  # what the shipped envs report, without a conversion
            out.append(value)
            continue
        try:
            x = float(value) if not isinstance(value, (str, bytes)) else math.nan
        except (TypeError, ValueError):
            x = math.nan
        if not math.isfinite(x):
            raise ValueError(
                f"info[{key!r}] of sub-env {i} must be a finite number "
                f"({'a constraint cost' if key == COST else 'a fairness gap, lower is fairer'}), got {value!r}: "
                "the env reported it at this step"
            )
        out.append(x)
    return out


def is_what_if_supported(env: gym.Env | VecEnv | Any) -> bool:
    """Whether ``env`` answers :data:`WHAT_IF` queries (action massaging), as sb3-contrib's ``is_masking_supported``."""
    if isinstance(env, VecEnv):
        try:
            return bool(env.has_attr(WHAT_IF))
        except AttributeError:
            return False
    return callable(get_env_attr(env, WHAT_IF))


#: the VecEnvs that have answered a what-if query: a sub-env's method does not go away, so they are not asked again
#: whether they support it (a VecEnv's ``has_attr`` walks every sub-env's wrappers, and massaging asks at every step)
_ANSWERING: weakref.WeakSet[VecEnv] = weakref.WeakSet()


def _in_process_sub_envs(env: VecEnv) -> list[gym.Env] | None:
    """The sub-envs whose methods ``env.env_method`` calls in this process: a DummyVecEnv's (also under VecEnvWrappers
    that pass ``env_method`` on), looked up anew at each call; ``None`` for any other VecEnv."""
    base = env
    while isinstance(base, VecEnvWrapper) and type(base).env_method is VecEnvWrapper.env_method:
        base = base.venv
    if isinstance(base, DummyVecEnv) and type(base).env_method is DummyVecEnv.env_method:
        return base.envs
    return None


def get_what_if(env: gym.Env | VecEnv | Any, actions: Any) -> list[tuple[np.ndarray, np.ndarray]]:
    """For each sub-env and its proposed action, ``(candidates, short_term)``: the candidate actions
    (the proposed one first, one row each) and the Δs each would leave if executed now.

    ``env`` is a VecEnv (``actions`` has one row per sub-env) or a single env (one action, one pair
    returned in a list). Asks the env; never reaches into wrappers. A VecEnv is asked through its
    ``env_method``, or, for a DummyVecEnv, as its ``env_method`` asks (each sub-env's ``get_wrapper_attr``, called
    here without the index handling of ``env_method``: massaging asks at every rollout step).

    :raises ValueError: when the env does not answer what-if queries.
    """
    if not (isinstance(env, VecEnv) and env in _ANSWERING) and not is_what_if_supported(env):
        raise ValueError(
            f"env {env_name(env)} has no {WHAT_IF}(action) method: action massaging needs the env to list "
            "an action's candidate replacements and the short-term fairness gap each would leave"
        )
    if isinstance(env, VecEnv):
        if len(actions) != env.num_envs:
            raise ValueError(f"actions must have one row per sub-env ({env.num_envs}), got {len(actions)}")
        subs = _in_process_sub_envs(env)
        if subs is None:
            answers = [env.env_method(WHAT_IF, actions[i], indices=[i])[0] for i in range(env.num_envs)]
        else:
            answers = [sub.get_wrapper_attr(WHAT_IF)(actions[i]) for i, sub in enumerate(subs)]
        _ANSWERING.add(env)
    else:
        answers = [get_env_attr(env, WHAT_IF)(actions)]
    return [(np.asarray(c), np.asarray(d, dtype=np.float64)) for c, d in answers]


__all__ = [
    "ACTIVE",
    "BASE_OBS_SIZE",
    "BENEFITS",
    "COST",
    "FACTOR",
    "FAIRNESS",
    "FAIRNESS_TERMS",
    "GROUP",
    "LONG_TERM_FAIRNESS",
    "MEMORY",
    "MEMORY_KEY",
    "MEMORY_SPEC",
    "REWARD_SPEC",
    "SHORT_TERM_FAIRNESS",
    "STAKEHOLDERS",
    "SYMMETRY",
    "TWIN",
    "WHAT_IF",
    "env_name",
    "get_benefits",
    "get_costs",
    "get_env_attr",
    "get_fairness_signal_lists",
    "get_fairness_signals",
    "get_fairness_terms",
    "get_fairqcm_spec",
    "get_game_stakeholders",
    "get_group_info",
    "get_memory_key",
    "get_stakeholders",
    "get_symmetry",
    "get_vec_env_attr",
    "get_what_if",
    "group_info",
    "is_cost_supported",
    "is_fairness_signals_supported",
    "is_fairqcm_supported",
    "is_group_info_supported",
    "is_stakeholders_supported",
    "is_symmetry_supported",
    "is_what_if_supported",
]
