"""Multi-agent adapters: PettingZoo ``ParallelEnv`` -> SB3 ``VecEnv`` and the counterfactual twin pair.

``make_multiagent_vec_env`` is the one call: one VecEnv slot per agent (parameter
sharing), several game instances side by side, every agent's info kept. The conversion itself is
SuperSuit's (``pettingzoo_env_to_vec_env_v1`` + ``concat_vec_envs_v1``); :class:`PettingZooVecEnv`
only adapts its Gymnasium vector API to SB3's (seeding, reset infos, ``TimeLimit.truncated``) and
records which slots belong to which game instance.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeAlias

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv
from pettingzoo.utils.wrappers import BaseParallelWrapper
from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper, VecMonitor
from stable_baselines3.common.vec_env.base_vec_env import VecEnvIndices, VecEnvObs, VecEnvStepReturn

from sb3_fair.common.monitor import ParallelFairnessMonitor
from sb3_fair.common.protocol import (
    ACTIVE,
    BENEFITS,
    COST,
    LONG_TERM_FAIRNESS,
    SHORT_TERM_FAIRNESS,
    TWIN,
    env_name,
    get_group_info,
    is_stakeholders_supported,
)
from sb3_fair.common.stakeholders import Stakeholders

#: a PettingZoo parallel game, or a function building one
ParallelEnvLike: TypeAlias = "ParallelEnv | Callable[[], ParallelEnv]"


def _is_wrapped(env: Any, wrapper_class: type) -> bool:
    """Whether a PettingZoo game is ``wrapper_class`` or wrapped in it at any depth (through ``.env``)."""
    while env is not None:
        if isinstance(env, wrapper_class):
            return True
        env = env.__dict__.get("env") if hasattr(env, "__dict__") else None
    return False


def _build(env: ParallelEnvLike) -> ParallelEnv:
    par = env() if callable(env) and not isinstance(env, ParallelEnv) else env
    if not isinstance(par, ParallelEnv):
        raise TypeError(f"env must be a PettingZoo ParallelEnv or a function returning one, got {type(par).__name__}")
    return par


class PettingZooVecEnv(VecEnv):
    """An SB3 ``VecEnv`` with one slot per agent of ``n_instances`` copies of a PettingZoo game.

    Slots are instance-major: slot ``i * agents_per_instance + j`` is agent ``possible_agents[j]``
    of instance ``i``. An instance resets by itself when its episode ends (SuperSuit's
    ``MarkovVectorEnv``); at that step the slot's info holds ``terminal_observation``,
    ``TimeLimit.truncated`` and, merged over the last step's info, the new episode's reset info.

    ``get_attr``, ``set_attr`` and ``env_method`` reach the slot's game instance, except that the
    methods named in :attr:`PER_AGENT_METHODS` answer per agent: such a method is called once per
    instance and each slot gets its own agent's entry. So ``env_method("action_masks")`` has one
    row per slot, and sb3-contrib's ``MaskablePPO`` trains on a game with an ``action_masks``
    method (as :class:`~sb3_fair.envs.AllelopathicHarvestEnv` has), also under ``VecMonitor``.

    :param env: a ``ParallelEnv`` (copied per instance) or a function that builds one.
    :param n_instances: game instances side by side.
    :param black_death: for games whose agents die (or join) during an episode: wrap each game in
        :class:`BlackDeath` (an agent that is not in the game has a zero observation, reward 0 and benefit 0 until
        the episode ends). Without it such a game is refused at the step where an agent leaves, naming this argument.
    :param pad: for games whose agents have different observation or action spaces: pad them to one space with
        SuperSuit's ``pad_observations_v0`` and ``pad_action_space_v0`` (one policy acts for every agent). Without it
        such a game is refused at construction, naming this argument.
    """

    #: Game methods that answer for all the instance's agents at once: they return an array or a
    #: list with one entry per agent, in ``possible_agents`` order (sb3-contrib's ``action_masks``:
    #: one mask row per agent). :meth:`env_method` gives each slot its agent's entry.
    PER_AGENT_METHODS: tuple[str, ...] = ("action_masks",)

    def __init__(
        self, env: ParallelEnvLike, n_instances: int = 1, black_death: bool = False, pad: bool = False
    ) -> None:
        import supersuit as ss

        if not isinstance(n_instances, (int, np.integer)) or n_instances < 1:
            raise ValueError(f"n_instances must be an int >= 1, got {n_instances!r}")
        for name, value in (("black_death", black_death), ("pad", pad)):
            if not isinstance(value, (bool, np.bool_)):
                raise ValueError(f"{name} must be True or False, got {value!r}")
        par = _build(env)
        if not hasattr(par.unwrapped, "render_mode"):  # SuperSuit reads it; PettingZoo's API lets a game leave it out
            par.unwrapped.render_mode = None
        self.agent_names = list(par.possible_agents)
        self.agents_per_instance = len(self.agent_names)
        self.n_instances = int(n_instances)
        self.black_death, self.pad = bool(black_death), bool(pad)
        par = _homogenized(par, self.pad)
        if self.black_death:
            par = BlackDeath(par)
        markov = ss.pettingzoo_env_to_vec_env_v1(par)
        declared = is_stakeholders_supported(par)
        self.venv = ss.concat_vec_envs_v1(markov, self.n_instances, num_cpus=0, base_class="gymnasium")
        if declared and not all(is_stakeholders_supported(g) for g in self.par_envs):
            raise ValueError(
                f"env: the game's stakeholders were lost when SuperSuit copied it for the VecEnv (with cloudpickle: "
                f"{env_name(par)} rebuilds itself from its constructor arguments, as PettingZoo's EzPickle games do, "
                "which drops an attribute set on it afterwards): declare them with "
                "sb3_fair.wrappers.ParallelDeclareStakeholders(game, stakeholders=...), which holds them, or make "
                "`stakeholders` part of the game's class"
            )
        #: the game instance of each slot
        self.slot_instance = np.repeat(np.arange(self.n_instances), self.agents_per_instance)
        self.render_mode = getattr(par, "render_mode", None)
        super().__init__(self.n_instances * self.agents_per_instance, markov.observation_space, markov.action_space)
        self._actions: np.ndarray | None = None
        self._started = False

    @property
    def par_envs(self) -> list[ParallelEnv]:
        """The PettingZoo game of each instance."""
        return [v.par_env for v in self.venv.vec_envs]

    def reset(self) -> VecEnvObs:
        seed = self._seeds[0] if self._seeds and self._seeds[0] is not None else None
        if seed is None and not self._started:
            # never share one random stream between the instances' copies
            seed = int(np.random.randint(0, 2**31 - 1))
        self._started = True
        options = self._options[0] if self._options and self._options[0] else None
        with self._agents_must_stay():
            obs, infos = self.venv.reset(seed=seed, options=options)
        self.reset_infos = list(infos)
        self._reset_seeds()
        self._reset_options()
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        if isinstance(self.action_space, (spaces.MultiBinary, spaces.MultiDiscrete)):
            # SB3's PPO samples these as floats, which SuperSuit's integer action buffer does not take
            actions = np.asarray(actions).astype(self.action_space.dtype, copy=False)
        self._actions = actions

    def step_wait(self) -> VecEnvStepReturn:
        with self._agents_must_stay():
            obs, rewards, terms, truncs, infos = self.venv.step(self._actions)
        terms, truncs = np.asarray(terms, dtype=bool), np.asarray(truncs, dtype=bool)
        dones = terms | truncs
        for i in np.flatnonzero(dones):
            infos[i]["TimeLimit.truncated"] = bool(truncs[i] and not terms[i])
        return obs, np.asarray(rewards, dtype=np.float32), dones, list(infos)

    def close(self) -> None:
        self.venv.close()

    @contextlib.contextmanager
    def _agents_must_stay(self) -> Iterator[None]:
        """SuperSuit's assertion that a game's agents stay for the whole episode, as an error that names the fix."""
        try:
            yield
        except AssertionError as err:
            if self.black_death or "agent" not in str(err):
                raise
            raise ValueError(
                f"env: the game's agents changed during an episode (an agent died, left or joined; possible agents "
                f"{self.agent_names}), which one VecEnv slot per agent cannot follow: pass black_death=True to "
                "make_multiagent_vec_env (an agent that is not in the game gets a zero observation, reward 0 and "
                f"benefit 0 until the episode ends). SuperSuit said: {err}"
            ) from None

    def _instances(self, indices: VecEnvIndices) -> list[ParallelEnv]:
        envs = self.par_envs
        return [envs[self.slot_instance[i]] for i in self._get_indices(indices)]

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        return [getattr(e, attr_name) for e in self._instances(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        for e in self._instances(indices):
            setattr(e, attr_name, value)

    def env_method(
        self, method_name: str, *method_args: Any, indices: VecEnvIndices = None, **method_kwargs: Any
    ) -> list[Any]:
        """Call a method of each slot's game instance; one result per slot.

        A method named in :attr:`PER_AGENT_METHODS` is called once per instance involved, and each
        slot gets the entry of its agent (``result[j]`` for agent ``possible_agents[j]``); any
        other method is called once per slot and its whole result is the slot's.

        :param method_name: the method's name.
        :param method_args: positional arguments of the call.
        :param indices: the slots (all by default).
        :param method_kwargs: keyword arguments of the call.
        :return: one result per slot of ``indices``.
        """
        if method_name not in self.PER_AGENT_METHODS:
            return [getattr(e, method_name)(*method_args, **method_kwargs) for e in self._instances(indices)]
        envs, n = self.par_envs, self.agents_per_instance
        per_instance: dict[int, Any] = {}
        out = []
        for i in self._get_indices(indices):
            k = int(self.slot_instance[i])
            if k not in per_instance:
                result = getattr(envs[k], method_name)(*method_args, **method_kwargs)
                if len(result) != n:
                    raise ValueError(
                        f"{method_name}() of a game instance must return one entry per agent ({n}), got {len(result)}"
                    )
                per_instance[k] = result
            out.append(per_instance[k][i % n])
        return out

    def env_is_wrapped(self, wrapper_class: type, indices: VecEnvIndices = None) -> list[bool]:
        """Whether each slot's game is (wrapped in) ``wrapper_class``, e.g. :class:`~sb3_fair.wrappers.ParallelFairnessMonitor`."""
        return [_is_wrapped(e, wrapper_class) for e in self._instances(indices)]

    def get_images(self) -> Sequence[np.ndarray | None]:
        return [e.render() for e in self.par_envs]

    def render(self, mode: str | None = None) -> np.ndarray | None:
        return self.par_envs[0].render()


def make_multiagent_vec_env(
    env: ParallelEnvLike, n_instances: int = 1, monitor: bool = True, black_death: bool = False, pad: bool = False
) -> VecEnv:
    """One call from a PettingZoo ``ParallelEnv`` to an SB3 ``VecEnv``: one slot per agent.

    Parameter sharing as SB3 trains it: every agent of every instance is one slot of the VecEnv,
    so one policy acts for all. Each slot's info keeps the agent's info (``"benefits"``, ``"group"``,
    ``"factor"``, …), which is what :class:`sb3_fair.FairPPO` reads.

    Example::

        from sb3_fair import FairPPO
        from sb3_fair.envs import AllelopathicHarvestEnv
        from sb3_fair.wrappers import make_multiagent_vec_env

        vec_env = make_multiagent_vec_env(AllelopathicHarvestEnv.from_preset("small"), n_instances=4)
        model = FairPPO("MlpPolicy", vec_env, fairness="dp", alpha=0.5, beta=0.5).learn(1_000_000)

    :param env: a ``ParallelEnv`` (copied per instance) or a function that builds one.
    :param n_instances: game instances side by side.
    :param monitor: wrap a game that honours the stakeholder contract in
        :class:`~sb3_fair.wrappers.ParallelFairnessMonitor` (``info["fairness"]`` once per finished
        game, logged as ``fairness/*``) and the VecEnv in SB3's ``VecMonitor`` (per-agent episode
        return and length in ``info["episode"]``, ``rollout/ep_rew_mean`` in the logs).
    :param black_death: for games whose agents die or join during an episode (see :class:`BlackDeath`); the
        monitor sees the game itself, so each agent's episode return is what it received while it was in the game.
    :param pad: for games whose agents have different observation or action spaces (SuperSuit's padding).
    """
    if monitor:
        par = _build(env)
        if is_stakeholders_supported(par) and not _is_wrapped(par, ParallelFairnessMonitor):
            par = ParallelFairnessMonitor(par)
        env = par
    vec: VecEnv = PettingZooVecEnv(env, n_instances, black_death=black_death, pad=pad)
    return VecMonitor(vec) if monitor else vec


#: the info entries of a game's step that are the same for every agent (a game's benefits vector, the fairness signals
#: and the cost of :class:`~sb3_fair.wrappers.ParallelFairnessSignals`): :class:`BlackDeath` gives them to absent agents
GAME_KEYS = (BENEFITS, SHORT_TERM_FAIRNESS, LONG_TERM_FAIRNESS, COST)


def _same(spaces_: list[spaces.Space]) -> bool:
    return all(space == spaces_[0] for space in spaces_)


def _homogenized(par: ParallelEnv, pad: bool) -> ParallelEnv:
    """``par``, its agents' spaces padded to one (``pad``), or a clear refusal of agents with different spaces."""
    import supersuit as ss

    agents = list(par.possible_agents)
    obs_spaces = [par.observation_space(a) for a in agents]
    act_spaces = [par.action_space(a) for a in agents]
    differ = [kind for kind, sp in (("observation", obs_spaces), ("action", act_spaces)) if not _same(sp)]
    if not differ:
        return par
    if not pad:
        shown = "; ".join(
            f"{kind} spaces " + ", ".join(f"{a}: {sp}" for a, sp in zip(agents, sps))
            for kind, sps in (("observation", obs_spaces), ("action", act_spaces))
            if kind in differ
        )
        raise ValueError(
            f"env: the game's agents have different {' and '.join(differ)} spaces ({shown}), and one policy acts for "
            "every slot: pass pad=True to make_multiagent_vec_env (SuperSuit's pad_observations_v0 / "
            "pad_action_space_v0 pad each to the largest), or train one learner per kind of agent"
        )
    try:
        if "observation" in differ:
            par = ss.pad_observations_v0(par)
        if "action" in differ:
            par = ss.pad_action_space_v0(par)
    except AssertionError as err:
        raise ValueError(f"pad=True: SuperSuit cannot pad these spaces ({err})") from None
    return par


class BlackDeath(BaseParallelWrapper):
    """Keep every agent of a PettingZoo parallel game in every step of an episode, as one VecEnv slot per agent needs.

    From the step at which it leaves the game (dies) until the episode ends, and until it joins, an agent gets a
    zero observation, reward 0 (its reward of the step it leaves is the game's), no termination and an info with
    the step's entries that describe the whole game (:data:`GAME_KEYS`: ``info["benefits"]``, its own entry 0 since
    the game gives it nothing, and the fairness signals and cost of ``ParallelFairnessSignals``) and ``"active": False``
    (:data:`~sb3_fair.common.protocol.ACTIVE`: whether the agent is in the game at the observation the step
    returns); its action is not passed to the game. The episode ends for every
    agent at the step after which the game has no agent left: truncated if any agent of that step was truncated,
    else terminated. (SuperSuit's ``black_death_v3`` ends it only a step later, stepping the finished game once
    more; this wrapper is used instead.) Observation spaces must be ``Box``.
    :func:`make_multiagent_vec_env` applies it with ``black_death=True``.

    :param env: the game.
    """

    def __init__(self, env: ParallelEnv) -> None:
        super().__init__(env)
        for a in env.possible_agents:
            if not isinstance(env.observation_space(a), spaces.Box):
                raise ValueError(
                    f"black_death=True gives an absent agent a zero observation, which needs Box observation spaces; "
                    f"agent {a!r} has {env.observation_space(a)}"
                )
        self.possible_agents = list(env.possible_agents)
        self.agents: list[Any] = []
        self._zeros = {
            a: np.zeros(env.observation_space(a).shape, env.observation_space(a).dtype) for a in self.possible_agents
        }

    def _absent(self, info: dict[str, Any] | None) -> dict[str, Any]:
        """An absent agent's info: the game's entries of the step (the same for every agent), marked inactive."""
        out: dict[str, Any] = {ACTIVE: False}
        if info is not None:
            out.update({k: info[k] for k in GAME_KEYS if k in info})
        return out

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict, dict]:
        obs, infos = self.env.reset(seed=seed, options=options)
        self.agents = list(self.possible_agents)
        # every reset info says whether its agent is in the game: SuperSuit merges a new episode's reset info over
        # the last step's info, whose "active" may say otherwise
        return {a: obs[a] if a in obs else self._zeros[a] for a in self.agents}, {
            a: {**infos.get(a, {}), ACTIVE: a in obs} for a in self.agents
        }

    def step(self, actions: dict[Any, Any]) -> tuple[dict, dict, dict, dict, dict]:
        live = set(self.env.agents)
        obs, rewards, _terms, truncs, infos = self.env.step({a: v for a, v in actions.items() if a in live})
        some = next(iter(infos.values()), None)
        done = not self.env.agents
        truncated = done and any(bool(v) for v in truncs.values())
        # an agent that left at this step while the game goes on is absent from the next observation on: a zero
        # observation (its value is that of an agent that receives nothing more) and "active": False; at the game's
        # last step every agent's observation is the game's (the terminal observation a time limit bootstraps from)
        present = set(self.env.agents)
        out_obs = {a: obs[a] if a in obs and (done or a in present) else self._zeros[a] for a in self.possible_agents}
        out_rewards = {a: rewards.get(a, 0.0) for a in self.possible_agents}
        out_infos = {
            a: {**infos[a], ACTIVE: done or a in present} if a in infos else self._absent(some)
            for a in self.possible_agents
        }
        out_terms = {a: done and not truncated for a in self.possible_agents}
        out_truncs = {a: truncated for a in self.possible_agents}
        if done:
            self.agents = []
        return out_obs, out_rewards, out_terms, out_truncs, out_infos


def unwrap_vec_env(env: VecEnv) -> VecEnv:
    """The innermost VecEnv under SB3 ``VecEnvWrapper`` layers."""
    while isinstance(env, VecEnvWrapper):
        env = env.venv
    return env


class CounterfactualPair(ParallelEnv):
    """A factual and a counterfactual copy of a multi-agent game, played side by side (La Malfa et al. 2025 §5.1).

    Both copies are reset with the same seed; in the counterfactual copy the protected attribute is
    flipped (``mode="flip"``: every agent gets the other group), or, as La Malfa et al. 2025 evaluates
    counterfactual fairness, nobody holds the attribute in the factual copy and everybody in the
    counterfactual one (``mode="extreme"``). The pair is itself a ``ParallelEnv`` whose agents are
    ``"factual/<agent>"`` then ``"counterfactual/<agent>"``; every info carries ``"twin"``, the
    index (in ``possible_agents``) of the agent's twin, and ``"world"`` (0 factual, 1
    counterfactual), and ``"benefits"`` is both copies' benefits side by side, so slots are matched one to one after :func:`make_multiagent_vec_env`. The
    wrapped env must take the groups as ``reset(options={"groups": array})`` (as the sb3-fair games
    do). The pair ends when either copy's episode ends.

    Example::

        from sb3_fair.envs import AllelopathicHarvestEnv
        from sb3_fair.wrappers import CounterfactualPair, make_multiagent_vec_env

        pair = CounterfactualPair(lambda: AllelopathicHarvestEnv.from_preset("small"))
        vec_env = make_multiagent_vec_env(pair, n_instances=2)   # FairPPO(..., fairness="cf")

    :param env: a ``ParallelEnv`` (deep-copied for the twin) or a function that builds one.
    :param mode: ``"flip"`` or ``"extreme"``.
    """

    MODES = ("flip", "extreme")

    def __init__(self, env: ParallelEnvLike, mode: str = "flip") -> None:
        if mode not in self.MODES:
            raise ValueError(f"mode must be one of {list(self.MODES)}, got {mode!r}")
        self.mode = mode
        self._rng = np.random.default_rng()
        self.factual = _build(env)
        self.counterfactual = (
            _build(env) if callable(env) and not isinstance(env, ParallelEnv) else copy.deepcopy(self.factual)
        )
        base = list(self.factual.possible_agents)
        self._base = base
        self.possible_agents = [f"factual/{a}" for a in base] + [f"counterfactual/{a}" for a in base]
        self.agents: list[str] = []
        n = len(base)
        self._twin = {a: (i + n) % (2 * n) for i, a in enumerate(self.possible_agents)}
        self.metadata = {**getattr(self.factual, "metadata", {}), "name": "counterfactual_pair"}
        self.render_mode = getattr(self.factual, "render_mode", None)
        for a in base:
            if self.factual.observation_space(a) != self.counterfactual.observation_space(a):
                raise ValueError("env: the two copies disagree on observation spaces")

    def observation_space(self, agent: str) -> spaces.Space:
        return self.factual.observation_space(agent.split("/", 1)[1])

    def action_space(self, agent: str) -> spaces.Space:
        return self.factual.action_space(agent.split("/", 1)[1])

    @staticmethod
    def _groups(infos: dict[str, dict], agents: list[str]) -> np.ndarray:
        try:
            return np.array([get_group_info(infos[a])[0] for a in agents])
        except (KeyError, ValueError) as e:
            raise ValueError(
                f"env: CounterfactualPair needs every agent's info to carry 'group' (missing: {e})"
            ) from None

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict, dict]:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        # both copies always get the same seed: the next one of the pair's own stream
        seed = int(self._rng.integers(2**31 - 1))
        n = len(self._base)
        opts = dict(options or {})
        if self.mode == "extreme":
            opts["groups"] = np.zeros(n, dtype=np.int64)
        obs_f, info_f = self.factual.reset(seed=seed, options=opts or None)
        groups = self._groups(info_f, self._base)
        twin_groups = 1 - groups if self.mode == "flip" else np.ones(n, dtype=np.int64)
        obs_c, info_c = self.counterfactual.reset(seed=seed, options={**opts, "groups": twin_groups})
        got = self._groups(info_c, self._base)
        if not np.array_equal(got, twin_groups):
            raise ValueError("env: CounterfactualPair needs an env whose reset takes options={'groups': array}")
        self.agents = list(self.possible_agents)
        return self._merge(obs_f, obs_c), self._merge_infos(info_f, info_c)

    def _merge(self, f: dict, c: dict) -> dict:
        return {**{f"factual/{a}": v for a, v in f.items()}, **{f"counterfactual/{a}": v for a, v in c.items()}}

    def _merge_infos(self, f: dict, c: dict) -> dict:
        out = self._merge(f, c)
        n = len(self._base)
        b_f = next((i[BENEFITS] for i in f.values() if BENEFITS in i), None)
        b_c = next((i[BENEFITS] for i in c.values() if BENEFITS in i), None)
        # the pair's stakeholders are both copies' agents: its benefits, both copies' benefits
        benefits = (
            None
            if b_f is None and b_c is None
            else np.concatenate(
                [
                    np.zeros(n) if b_f is None else np.asarray(b_f, dtype=np.float64),
                    np.zeros(n) if b_c is None else np.asarray(b_c, dtype=np.float64),
                ]
            )
        )
        for a in out:
            out[a] = {**out[a], TWIN: self._twin[a], "world": int(a.startswith("counterfactual/"))}
            if benefits is not None:
                out[a][BENEFITS] = benefits
        return out

    def step(self, actions: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        act_f = {a.split("/", 1)[1]: v for a, v in actions.items() if a.startswith("factual/")}
        act_c = {a.split("/", 1)[1]: v for a, v in actions.items() if a.startswith("counterfactual/")}
        of, rf, tf, uf, inf_f = self.factual.step(act_f)
        oc, rc, tc, uc, inf_c = self.counterfactual.step(act_c)
        terms, truncs = self._merge(tf, tc), self._merge(uf, uc)
        if not self.factual.agents or not self.counterfactual.agents:
            # the pair ends with the first copy that ends
            truncs = {a: truncs[a] or not terms[a] for a in truncs}
            self.agents = []
        return self._merge(of, oc), self._merge(rf, rc), terms, truncs, self._merge_infos(inf_f, inf_c)

    @property
    def stakeholders(self) -> Stakeholders:
        f, c = self.factual.stakeholders, self.counterfactual.stakeholders
        factors = None if f.factors is None else np.concatenate([f.factors, c.factors])
        return Stakeholders(
            names=tuple(self.possible_agents), groups=np.concatenate([f.groups, c.groups]), factors=factors
        )

    def render(self) -> Any:
        return self.factual.render()

    def close(self) -> None:
        self.factual.close()
        self.counterfactual.close()
