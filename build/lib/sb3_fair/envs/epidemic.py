"""Epidemic control by vaccination on a social network (Hu, Lear, Zhang 2024, arXiv:2401.06318, §VI-C).

The dynamics are those of ml-fairness-gym's infectious-disease environment (D'Amour et al. 2020,
"Fairness is not static", FAT* 2020), as configured by Hu et al. (2024): an SIR epidemic on
Zachary's karate club, split into two communities by Girvan-Newman.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env import VecEnv

from sb3_fair.common.protocol import BENEFITS, LONG_TERM_FAIRNESS, SHORT_TERM_FAIRNESS
from sb3_fair.common.stakeholders import Stakeholders
from sb3_fair.common.validation import check_bool, check_choice, check_discrete_action, check_int, check_probability
from sb3_fair.envs.horizon import check_horizon, horizon_end
from sb3_fair.envs.rendering import RENDER_MODES, bars_rgb, check_render_mode
from sb3_fair.metrics import health_state_gap, vaccination_gap

#: the longest burn-in accepted: it runs at every reset (one SIR step on the 34 nodes each); 10^4 steps take a
#: fraction of a second, 10^4 times the paper's 1, and a larger count (10**30) would hang every reset
MAX_BURN_IN = 10_000

#: health states
SUSCEPTIBLE, INFECTED, RECOVERED = 0, 1, 2
N_NODES = 34
#: observation columns per node: one-hot S, I, R, then the node's vaccination count
N_FEATURES = 4
#: the action that vaccinates nobody
NO_OP = N_NODES
#: the accepted values of ``long_term``
LONG_TERM_MEASURES = ("fractions", "counts")
#: community 0 of the first Girvan-Newman split of the karate club (the one holding node 0), as Hu et al. (2024) use it
PAPER_COMMUNITY_0 = frozenset({0, 1, 3, 4, 5, 6, 7, 10, 11, 12, 13, 16, 17, 19, 21})
#: the one-hot rows of the observation, by health state (the count column is filled in afterwards)
_ONE_HOT = np.eye(3, N_FEATURES, dtype=np.float32)
#: :func:`~sb3_fair.metrics.health_state_gap` by (kind, the two communities' S/I/R counts): it depends on nothing else,
#: and the karate club's 15 + 19 members allow 136 x 190 count pairs per kind
_HEALTH_GAPS: dict[tuple[str, tuple[int, ...]], float] = {}


@lru_cache(maxsize=1)
def _karate() -> tuple[np.ndarray, np.ndarray]:
    import networkx as nx
    from networkx.algorithms.community import girvan_newman

    graph = nx.karate_club_graph()
    adjacency = np.zeros((N_NODES, N_NODES), dtype=np.int64)
    for u, v in graph.edges():
        adjacency[u, v] = adjacency[v, u] = 1
    first, second = next(girvan_newman(graph))
    community_0 = set(first) if 0 in first else set(second)
    if community_0 != PAPER_COMMUNITY_0:
        raise RuntimeError(
            f"networkx {nx.__version__} split the karate club into {sorted(community_0)} and the rest, not the "
            f"communities of Hu et al. (2024) ({sorted(PAPER_COMMUNITY_0)} and the rest)"
        )
    communities = np.array([0 if i in community_0 else 1 for i in range(N_NODES)], dtype=np.int64)
    adjacency.setflags(write=False)
    communities.setflags(write=False)
    return adjacency, communities


def karate_graph() -> tuple[np.ndarray, np.ndarray]:
    """``(adjacency, communities)`` of Zachary's karate club (34 nodes, 78 edges), computed once.

    ``adjacency`` is the 34 x 34 0/1 matrix of ``networkx.karate_club_graph()`` (weights ignored);
    ``communities[i]`` is node i's community in the first level of
    ``networkx.algorithms.community.girvan_newman``: 0 for the 15 nodes of the part that holds node 0,
    1 for the other 19. Both arrays are read-only.

    :raises RuntimeError: if networkx ever splits the graph differently from the paper.
    """
    return _karate()


class EpidemicControlEnv(gym.Env):
    """Vaccinate one person per step to slow an SIR epidemic on the karate club (Hu, Lear, Zhang 2024, §VI-C).

    **Dynamics** (ml-fairness-gym's infectious-disease env with Hu et al.'s (2024) constants). The 34
    members of Zachary's karate club are each susceptible (S, 0), infected (I, 1) or recovered (R,
    2). At reset only node 0 (the hub, degree 16; ``initial_infected``) is infected, then ``burn_in``
    steps of disease dynamics run without treatment before the first observation. Each step:

    1. **Treatment first.** Action ``j < 34`` vaccinates node j: S becomes R; I and R stay as they are.
       Action 34 is the no-op.
    2. **Disease, synchronously** (from the states after treatment): each S node with n infected
       neighbours becomes I with probability ``1 - (1 - infection_probability) ** n`` (Hu et al. 2024,
       §VI-C); each I node becomes R with probability ``recovery_probability``; R is absorbing.

    The reward is the fraction of the 34 nodes that are not infected after the step.

    **Observation**: per node, the one-hot of its state (S, I, R) and the number of times it has been
    vaccinated this episode (a raw count, as the authors' network received it), node by node, flattened
    to 136 float32 values. The Box bounds the count by ``horizon``, and the observed count is clipped at
    ``horizon`` so that stepping past the horizon without a reset still observes inside the Box (the
    ``"vaccinations"`` info and ``env.vaccination_counts`` are not clipped). The authors' wrapper
    counted vaccinating node j on row j - 1 (and the no-op on row 33): here it counts on row j, and the
    no-op nowhere.

    **Episode end**: after ``horizon`` steps (paper: 20), with ``truncated=True`` by default:
    the epidemic goes on, so the cut is a time limit and SB3 bootstraps the last value (the
    observation shows no clock, but the vaccination counts sum to the step number).
    ``horizon_terminates=True`` reports ``terminated=True`` instead, as the authors' code did (no
    bootstrap at the horizon).

    **Stakeholders**: the 34 nodes, each with its community as group (0: the 15 nodes of the
    Girvan-Newman part holding node 0; 1: the other 19), as in :class:`~sb3_fair.envs.LoanApplicantsEnv`.
    ``info["benefits"]`` is 1 for the vaccinated node (whatever its state), 0 else: the community totals
    are ``env.stakeholders.group_totals(benefits)``, and the per-node returns keep who got the vaccines.

    **Fairness signals**, in the reset info and in every step's info (they survive a VecEnv's auto-reset):

    * ``info[SHORT_TERM_FAIRNESS]``: Δs after the step, Hu et al.'s (2024) Eq. 10 with episode-cumulative
      counts (:func:`~sb3_fair.metrics.vaccination_gap`): ``|V_0 / (N_0 + 1) - V_1 / (N_1 + 1)|``, V_c the
      vaccinations given to community c (counted by the treated node's community even when it was
      already I or R, as the authors' code counts them), N_c its new infections (nodes that became I
      during the agent's steps; burn-in infections do not count).
    * ``info[LONG_TERM_FAIRNESS]``: Δl after the step (:func:`~sb3_fair.metrics.health_state_gap`), the
      Euclidean distance between the two communities' S/I/R vectors: their *fractions* with
      ``long_term="fractions"`` (default; 0 when both communities are in the same proportions), or their
      raw *counts* with ``long_term="counts"`` (the authors' code, for reproducing their figures; it can
      never fall below 4 / sqrt(3) ~ 2.31 because the communities have 15 and 19 members; with whole
      counts the least it reaches is sqrt(6) ~ 2.45, and it is 4 when everybody is susceptible).

    Other info entries: ``"health_states"`` (the 34 states, int), ``"vaccinations"`` and
    ``"new_infections"`` (episode-cumulative, per community).

    :meth:`fairness_what_if` answers action-massaging queries (:data:`~sb3_fair.common.protocol.WHAT_IF`):
    the candidates are the no-op and the susceptible members of each community (all its members when none
    is susceptible), as in the authors' code.

    Deviations from the authors' code: the off-by-one count column (above); the horizon is a time limit
    unless ``horizon_terminates``; random streams (NumPy ``Generator``) differ.

    Example::

        env = EpidemicControlEnv()
        obs, info = env.reset(seed=0)
        policy = MaxDegreePolicy()
        done = False
        while not done:
            action, _ = policy.predict(obs)
            obs, reward, terminated, truncated, info = env.step(action)
            done = terminated or truncated
        print(info["short_term_fairness"], info["long_term_fairness"])

    :param infection_probability: β, the chance that one infected neighbour infects (paper: 0.5).
    :param recovery_probability: ρ, the chance that an infected node recovers at a step (paper: 0.005).
    :param burn_in: disease steps without treatment after the initial infection (paper: 1), at most
        :data:`MAX_BURN_IN`.
    :param horizon: agent steps per episode (paper: 20), also ``gym.make(..., horizon=n)``. Not
        called ``max_episode_steps``: ``gym.make`` takes that name for its own ``TimeLimit``, which the
        env would never see.
    :param horizon_terminates: report the horizon as ``terminated`` (authors' code) rather than ``truncated``.
    :param long_term: the Δl reported, one of :data:`LONG_TERM_MEASURES`: ``"fractions"`` or ``"counts"``.
    :param initial_infected: the nodes infected at reset (paper: node 0 only).
    :param render_mode: ``"ansi"``, ``"rgb_array"`` or None.
    """

    metadata = {"render_modes": RENDER_MODES, "render_fps": 4}

    def __init__(
        self,
        infection_probability: float = 0.5,
        recovery_probability: float = 0.005,
        burn_in: int = 1,
        horizon: int = 20,
        horizon_terminates: bool = False,
        long_term: str = "fractions",
        initial_infected: Sequence[int] = (0,),
        render_mode: str | None = None,
    ) -> None:
        self.infection_probability = check_probability(infection_probability, "infection_probability")
        self.recovery_probability = check_probability(recovery_probability, "recovery_probability")
        self.burn_in = check_int(burn_in, "burn_in", 0)
        if self.burn_in > MAX_BURN_IN:
            raise ValueError(
                f"burn_in must be an int in [0, {MAX_BURN_IN}] (MAX_BURN_IN: it runs at every reset), got {burn_in!r}"
            )
        self.horizon = check_horizon(horizon)
        self.horizon_terminates = check_bool(horizon_terminates, "horizon_terminates")
        self.long_term = check_choice(long_term, "long_term", LONG_TERM_MEASURES)
        infected = np.asarray(initial_infected).reshape(-1)
        if (
            (infected.size and not np.issubdtype(infected.dtype, np.integer))
            or np.any(infected < 0)
            or np.any(infected >= N_NODES)
            or np.unique(infected).size != infected.size
        ):
            raise ValueError(f"initial_infected must be distinct node ids in [0, {N_NODES}), got {initial_infected!r}")
        self.initial_infected = infected.astype(np.int64)
        self.render_mode = check_render_mode(render_mode)
        self.adjacency, self.communities = karate_graph()
        self.degrees = self.adjacency.sum(axis=1)
        self.stakeholders = Stakeholders(
            names=tuple(f"node_{i}" for i in range(N_NODES)),
            groups=self.communities.copy(),
            group_names={0: "community 0", 1: "community 1"},
        )
        high = np.tile(np.array([1.0, 1.0, 1.0, self.horizon], dtype=np.float32), N_NODES)
        self.observation_space = spaces.Box(low=np.zeros_like(high), high=high, dtype=np.float32)
        self.action_space = spaces.Discrete(N_NODES + 1)
        self.health = np.zeros(N_NODES, dtype=np.int64)
        self.vaccination_counts = np.zeros(N_NODES, dtype=np.int64)
        self.vaccinations = np.zeros(2, dtype=np.int64)
        self.new_infections = np.zeros(2, dtype=np.int64)
        self.t = 0
        # the disease step works on Python lists: the graph as neighbour lists, the communities, and a mirror of
        # self.health with what derives from it (re-derived whenever self.health was changed from outside)
        self._neighbours = [np.flatnonzero(row).tolist() for row in self.adjacency]
        self._community = self.communities.tolist()
        self._infection_table: tuple[float, list[float]] | None = None
        self._sync(self.health.tolist())

    # ---------------------------------------------------------------- the Python mirror of the state
    def _sync(self, health: list[int]) -> None:
        """Take ``health`` (``self.health`` as a list) as the mirror, and count from it each node's infected
        neighbours and each community's S/I/R members (``3 * community + state``)."""
        self._h = health
        infected_neighbours = [0] * N_NODES
        state_counts = [0] * 6
        for j, state in enumerate(health):
            if state == INFECTED:
                for k in self._neighbours[j]:
                    infected_neighbours[k] += 1
            state_counts[3 * self._community[j] + state] += 1
        self._infected_neighbours = infected_neighbours
        self._state_counts = state_counts

    def _set_state(self, node: int, state: int) -> None:
        """Move ``node`` to ``state`` in the mirror (not in ``self.health``)."""
        h, counts, c = self._h, self._state_counts, 3 * self._community[node]
        old = h[node]
        h[node] = state
        counts[c + old] -= 1
        counts[c + state] += 1
        if old == INFECTED or state == INFECTED:
            delta = 1 if state == INFECTED else -1
            infected_neighbours = self._infected_neighbours
            for k in self._neighbours[node]:
                infected_neighbours[k] += delta

    def _p_infect(self) -> list[float]:
        """``1 - (1 - infection_probability) ** n`` for n = 0 .. 34 infected neighbours, computed by NumPy as the
        per-node array used to be (the same power function, elementwise), once per probability."""
        beta = self.infection_probability
        if self._infection_table is None or self._infection_table[0] != beta:
            table = 1.0 - (1.0 - beta) ** np.arange(N_NODES + 1, dtype=np.int64)
            self._infection_table = (beta, table.tolist())
        return self._infection_table[1]

    # ---------------------------------------------------------------- dynamics
    def _disease_step(self) -> list[int]:
        """One synchronous SIR update (of the mirror and of ``self.health``); returns the nodes that became infected.

        Node i, susceptible with n infected neighbours, becomes infected when its uniform draw u_i is below
        ``1 - (1 - infection_probability) ** n`` (never for n = 0: that probability is 0); an infected node recovers
        when u_i is below ``recovery_probability``. One draw per node, all from the states before the update.
        """
        h, infected_neighbours = self._h, self._infected_neighbours
        u = self.np_random.random(N_NODES).tolist()
        p_infect = self._p_infect()
        rho = self.recovery_probability
        newly = [
            i
            for i in range(N_NODES)
            if h[i] == SUSCEPTIBLE and infected_neighbours[i] and u[i] < p_infect[infected_neighbours[i]]
        ]
        recovered = [i for i in range(N_NODES) if h[i] == INFECTED and u[i] < rho]
        for i in newly:
            self._set_state(i, INFECTED)
        for i in recovered:
            self._set_state(i, RECOVERED)
        if newly:
            self.health[newly] = INFECTED
        if recovered:
            self.health[recovered] = RECOVERED
        return newly

    def _obs(self) -> np.ndarray:
        obs = _ONE_HOT[self.health]
        # clipped at the horizon (the Box's bound): only stepping past the horizon without reset exceeds it
        obs[:, 3] = np.minimum(self.vaccination_counts, self.horizon)
        return obs.ravel()

    def _short_term(self, vaccinations: np.ndarray) -> float:
        return vaccination_gap(vaccinations, self.new_infections)

    def _long_term(self) -> float:
        key = (self.long_term, tuple(self._state_counts))
        gap = _HEALTH_GAPS.get(key)
        if gap is None:
            if len(_HEALTH_GAPS) > 200_000:
                _HEALTH_GAPS.clear()
            gap = _HEALTH_GAPS[key] = health_state_gap(self.health, self.communities, kind=self.long_term)
        return gap

    def _info(self) -> dict[str, Any]:
        (v0, v1), (n0, n1) = self.vaccinations.tolist(), self.new_infections.tolist()
        # vaccination_gap of the two communities, in its arithmetic (v / (n + 1.0), largest minus smallest)
        r0, r1 = v0 / (n0 + 1.0), v1 / (n1 + 1.0)
        return {
            "health_states": self.health.copy(),
            "vaccinations": self.vaccinations.copy(),
            "new_infections": self.new_infections.copy(),
            SHORT_TERM_FAIRNESS: max(r0, r1) - min(r0, r1),
            LONG_TERM_FAIRNESS: self._long_term(),
        }

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.health = np.full(N_NODES, SUSCEPTIBLE, dtype=np.int64)
        self.health[self.initial_infected] = INFECTED
        self.vaccination_counts = np.zeros(N_NODES, dtype=np.int64)
        self.vaccinations = np.zeros(2, dtype=np.int64)
        self.new_infections = np.zeros(2, dtype=np.int64)
        self.t = 0
        self._sync(self.health.tolist())
        for _ in range(self.burn_in):
            self._disease_step()
        return self._obs(), self._info()

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        a = check_discrete_action(action, N_NODES + 1)
        health = self.health.tolist()
        if health != self._h:  # self.health was changed from outside since the last step
            self._sync(health)
        benefits = np.zeros(N_NODES, dtype=np.float64)
        if a != NO_OP:
            benefits[a] = 1.0
            self.vaccination_counts[a] += 1
            self.vaccinations[self._community[a]] += 1
            if self._h[a] == SUSCEPTIBLE:
                self._set_state(a, RECOVERED)
                self.health[a] = RECOVERED
        newly = self._disease_step()
        if newly:
            in_1 = sum(self._community[i] for i in newly)
            self.new_infections += (len(newly) - in_1, in_1)
        self.t += 1
        counts = self._state_counts
        # np.mean(health != INFECTED): the count of the others (exact in float64) divided by the 34 nodes
        reward = (N_NODES - counts[INFECTED] - counts[3 + INFECTED]) / N_NODES
        terminated, truncated = horizon_end(self.t, self.horizon, self.horizon_terminates)
        info = self._info()
        info[BENEFITS] = benefits
        return self._obs(), reward, terminated, truncated, info

    # ---------------------------------------------------------------- action massaging
    def fairness_what_if(self, action: Any) -> tuple[np.ndarray, np.ndarray]:
        """The Δs (Eq. 10) that ``action`` and its candidate replacements would leave if executed now.

        The candidates follow the authors' massaging rule (Hu et al. 2024, §VI-C; their
        ``modify_data.py``), which replaces an action only by the no-op or by a *susceptible* member of
        the other community: ``action`` first, then the no-op (34), then the susceptible members of each
        community (for a community with no susceptible member, all its members), in increasing node
        order; ``action`` appears once. So massaging never swaps a vaccine onto an I or R node while a
        susceptible node of the same community is left (the proposed ``action`` itself is kept as it
        is, whatever its node's state). Where the authors pick the best community's highest-probability
        member, :func:`~sb3_fair.common.long_term.massaging_choice` breaks ties among equally fair
        candidates by the highest policy probability.

        ``short_term[k]`` counts one more vaccination for ``candidates[k]``'s community (none for the
        no-op). As in the authors' massaging, the infection dynamics are not simulated: the
        new-infection counts stay as they are now (before the step), so the answer is
        ``vaccination_gap(vaccinations after the vaccination, new infections before the step)``, which
        equals the step's Δs when the step infects nobody. No side effect: the state, the counts and
        the random generator are untouched.

        :param action: the proposed action, an int in ``[0, 34]`` (34 = no vaccination) or a
            one-element integer array.
        :return: ``(candidates, short_term)``: the candidate actions (int64, ``action`` first, between 2
            and 35 of them) and the Δs each would leave (float64, same length).
        :raises ValueError: if ``action`` is not a valid action.
        """
        a = check_discrete_action(action, N_NODES + 1)
        members = np.zeros(N_NODES, dtype=bool)
        for c in (0, 1):
            in_c = self.communities == c
            susceptible = in_c & (self.health == SUSCEPTIBLE)
            members |= susceptible if susceptible.any() else in_c
        others = np.concatenate([[NO_OP], np.flatnonzero(members)])
        candidates = np.concatenate([[a], others[others != a]]).astype(np.int64)
        # only three outcomes: one more vaccine for community 0, for community 1, or none (the last, index -1)
        outcomes = []
        for c in (0, 1):
            v = self.vaccinations.copy()
            v[c] += 1
            outcomes.append(self._short_term(v))
        outcomes.append(self._short_term(self.vaccinations))
        target = np.where(candidates == NO_OP, -1, self.communities[np.minimum(candidates, N_NODES - 1)])
        short_term = np.array(outcomes, dtype=np.float64)[target]
        return candidates, short_term

    def render(self) -> str | np.ndarray | None:
        if self.render_mode == "ansi":
            letters = "".join("SIR"[s] for s in self.health)
            return (
                f"t={self.t} states={letters} vaccinations={self.vaccinations.tolist()} "
                f"new_infections={self.new_infections.tolist()}"
            )
        if self.render_mode == "rgb_array":
            return bars_rgb(self.health + 1.0, 3.0, self.communities, self.vaccination_counts > 0, bar_width=8)
        return None


class MaxDegreePolicy:
    """The "Max" baseline of Hu et al. (2024, §VI-C): vaccinate the susceptible node with the highest degree.

    As in the authors' code (which ranks by degree, although the paper's text says "most infected
    neighbours"): among the nodes whose S column is set in the observation, the one with the most
    neighbours in the karate club; if nobody is susceptible, the highest-degree node overall. Ties go to
    the lowest index. ``predict`` follows SB3's signature and takes one observation or a batch.

    Example::

        policy = MaxDegreePolicy()
        action, _ = policy.predict(obs)  # 33 at the start (degree 17; node 0 is infected)

    :param env: optional and not needed (the policy only uses the karate club, which is module-level):
        an :class:`EpidemicControlEnv` (possibly wrapped), checked for its type, or a VecEnv of them,
        checked for its spaces (``Box`` of shape (136,) and ``Discrete(35)``).
    :raises ValueError: if ``env`` is neither.
    """

    def __init__(self, env: gym.Env | VecEnv | None = None) -> None:
        if isinstance(env, VecEnv):
            obs_space, act_space = env.observation_space, env.action_space
            if not (
                isinstance(obs_space, spaces.Box)
                and obs_space.shape == (N_NODES * N_FEATURES,)
                and isinstance(act_space, spaces.Discrete)
                and int(act_space.n) == N_NODES + 1
            ):
                raise ValueError(
                    f"env must be an EpidemicControlEnv or a VecEnv of them (observation Box of shape "
                    f"({N_NODES * N_FEATURES},), action Discrete({N_NODES + 1})), got a {type(env).__name__} with "
                    f"observation space {obs_space} and action space {act_space}"
                )
        elif env is not None and not isinstance(getattr(env, "unwrapped", None), EpidemicControlEnv):
            base = getattr(env, "unwrapped", env)
            raise ValueError(f"env must be an EpidemicControlEnv or a VecEnv of them, got {type(base).__name__}")
        adjacency, _ = karate_graph()
        degrees = adjacency.sum(axis=1)
        # rank 0 = highest degree, ties by lowest index
        self.order = np.lexsort((np.arange(N_NODES), -degrees))
        self.rank = np.empty(N_NODES, dtype=np.int64)
        self.rank[self.order] = np.arange(N_NODES)

    def _single(self, obs: np.ndarray) -> int:
        susceptible = obs.reshape(N_NODES, N_FEATURES)[:, SUSCEPTIBLE] > 0.5
        if not susceptible.any():
            return int(self.order[0])
        return int(np.argmin(np.where(susceptible, self.rank, N_NODES)))

    def predict(
        self, observation: np.ndarray, state: Any = None, episode_start: Any = None, deterministic: bool = True
    ) -> tuple[np.ndarray, None]:
        """The node to vaccinate for one observation or a batch (SB3's ``predict`` signature).

        :param observation: one observation of shape (136,), or a batch of shape (batch, 136).
        :param state: ignored (no recurrent state).
        :param episode_start: ignored.
        :param deterministic: ignored (the policy is deterministic).
        :return: ``(action, None)``: an int64 action of shape () for one observation, (batch,) for a batch.
        :raises ValueError: if the observation has another shape.
        """
        obs = np.asarray(observation, dtype=np.float64)
        if obs.shape == (N_NODES * N_FEATURES,):
            return np.asarray(self._single(obs), dtype=np.int64), None
        if obs.ndim != 2 or obs.shape[1] != N_NODES * N_FEATURES:
            size = N_NODES * N_FEATURES
            raise ValueError(f"observation must have shape ({size},) or (batch, {size}), got {obs.shape}")
        return np.array([self._single(o) for o in obs], dtype=np.int64), None


__all__ = ["EpidemicControlEnv", "MaxDegreePolicy", "karate_graph"]
