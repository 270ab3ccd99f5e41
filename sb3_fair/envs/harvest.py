"""Allelopathic Harvest (La Malfa et al. 2025 §5, after Leibo et al. 2019): a NumPy-vectorised PettingZoo game.

Two populations of agents, one preferring red berries and one blue, share a bounded grid of berry
bushes. Half of each population is *impaired* (the protected attribute of La Malfa et al. 2025: an impaired
agent acts only every second step). Every agent is a stakeholder; its info carries ``"group"``
(1 = impaired) and ``"factor"`` (0 = prefers red, 1 = prefers blue, the legitimate factor for
conditional statistical parity).
"""

from __future__ import annotations

import operator
import sys
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import ParallelEnv

from sb3_fair.common.protocol import BENEFITS, group_info
from sb3_fair.common.stakeholders import Stakeholders
from sb3_fair.envs.horizon import MAX_HORIZON, MAX_STAKEHOLDERS
from sb3_fair.envs.rendering import check_render_mode

#: Action indices of :class:`AllelopathicHarvestEnv`.
ACTIONS = ("stay", "up", "down", "left", "right", "ripen_or_eat", "recolour", "obstruct")
STAY, UP, DOWN, LEFT, RIGHT, RIPEN_OR_EAT, RECOLOUR, OBSTRUCT = range(8)
# Observation bytes: channel c of a cell is byte c of a uint64 viewed as 8 uint8 (little-endian
# machines; the byte swap below shifts by whole bytes in that order).
_BYTE = np.array([np.uint64(1) << np.uint64(8 * c) for c in range(8)], dtype=np.uint64)
#: bush bytes by ``2 * colour + ripe + 2`` (0 no bush, 2 red unripe, 3 red ripe, 4 blue unripe, 5 blue ripe)
_BUSH_BYTES = np.array([0, 0, _BYTE[0], _BYTE[1], _BYTE[2], _BYTE[3]], dtype=np.uint64)
# masks for swapping own/other colour (bytes 0-1 with 2-3) and own/other team (byte 4 with 5)
_M01, _M4, _M67 = _BYTE[0] | _BYTE[1], _BYTE[4], _BYTE[6] | _BYTE[7]
_S8, _S16 = np.uint64(8), np.uint64(16)
_MOVES = np.array([[0, 0], [-1, 0], [1, 0], [0, -1], [0, 1], [0, 0], [0, 0], [0, 0]], dtype=np.int64)
#: Observation channels of the egocentric window, relative to the observing agent's preference.
CHANNELS = (
    "own_colour_unripe",
    "own_colour_ripe",
    "other_colour_unripe",
    "other_colour_ripe",
    "same_preference_agents",
    "other_preference_agents",
    "wall",
    "impaired_agents",
)
#: Per-agent scalar features appended after the window.
FEATURES = ("impaired", "can_act_now", "frozen", "row", "col", "time")

#: the longest side of the grid accepted: the grid's arrays (colours, ripeness, ages, the padded channel table)
#: are allocated at construction and scanned every step; 10^4 cells a side is 10^8 cells, the paper's 25 x 15
#: 2.7e5 times over (a side of 10**30 would fail inside NumPy at construction)
MAX_SIDE = 10_000
#: the largest view radius: each agent's observation holds (2 r + 1)^2 cells of every channel (r = 100: 40,401
#: cells; the paper's r is 3)
MAX_VIEW_RADIUS = 100

#: Ready-made sizes. ``"paper"`` is La Malfa et al.'s (2025) game; the others keep its densities
#: roughly (agents and bushes per cell) for quick runs.
PRESETS: dict[str, dict[str, Any]] = {
    "paper": dict(n_agents=40, width=25, height=15, n_bushes=60, max_steps=3000),
    "medium": dict(n_agents=16, width=15, height=10, n_bushes=24, max_steps=1000),
    "small": dict(n_agents=8, width=10, height=8, n_bushes=14, max_steps=300),
    "tiny": dict(n_agents=4, width=6, height=5, n_bushes=6, max_steps=60),
}


def _one_per_key(order: np.ndarray, key: np.ndarray, scratch: np.ndarray) -> np.ndarray:
    """One member of ``order`` (indices into ``key``, in random order) per distinct key: the one whose
    assignment to ``scratch`` stays. Whichever of the repeated assignments NumPy keeps, ``order``
    is a random permutation, so the winner is uniform among those sharing the key. ``scratch`` is a
    work array indexed by key."""
    k = key[order]
    scratch[k] = order  # with repeated keys the last assignment stays
    return order[scratch[k] == order]


class AllelopathicHarvestEnv(ParallelEnv):
    """Allelopathic Harvest as a PettingZoo ``ParallelEnv`` (La Malfa et al. 2025 §5).

    Rules (paper defaults; every number is a constructor argument):

    * ``height x width`` bounded grid (15 x 25), ``n_agents`` agents (40): the first half prefer
      red, the rest blue; each reset redraws which half of each colour is impaired (or takes it from
      ``reset(options={"groups": ...})``) and the agents' start cells.
    * ``n_bushes`` (60) bushes start on distinct random cells, colour red or blue with probability
      1/2, unripe, with a random age so that they do not all die together. A bush dies at age
      ``bush_lifetime`` (120). Every ``spawn_interval`` (2) steps one bush spawns on a random
      bush-free cell, red with probability ``n_red / (n_red + n_blue)`` (1/2 when there are none).
    * Actions (:data:`ACTIONS`): stay, four moves (clipped at the border), ``ripen_or_eat`` on the
      bush under the agent (an unripe bush ripens: reward 3 if it has the agent's colour, 1
      otherwise; a ripe bush is eaten and becomes unripe: reward 5 / 1), ``recolour`` the bush under
      the agent to the agent's colour (reward 5 when the colour changes, 0 otherwise), ``obstruct``
      the nearest not-frozen agent of the other preference within ``obstruct_range`` cells
      (Chebyshev) (reward 3): it is frozen (its actions ignored) for ``freeze_steps`` (8) steps. The
      authors' code freezes for ever, a bug.
    * Impaired agents act only on even steps; on odd steps their action is ignored (``stay``).
    * :meth:`action_masks` gives, for sb3-contrib's ``MaskablePPO``, each agent's actions that can
      have an effect in the current state (the state the next action is taken in); the others
      would act exactly as ``stay``.
    * The game ends after ``max_steps`` (3000) steps with ``terminated=True`` (not ``truncated``):
      La Malfa et al. 2025 plays games of a fixed length and scores each game's returns, the observation
      shows the time left (feature ``t / max_steps``), so the end is part of the task and nothing is
      earned after it; the authors' code, too, treats the last step as terminal (its GAE gives the
      state after the last step value 0).

    Simultaneous actions are resolved at once from the positions at the start of the step: agents
    may share a cell (no collisions); among the agents acting on the same bush (ripen/eat or
    recolour) one, drawn uniformly, succeeds and the others get nothing; among the agents
    obstructing the same target one, drawn uniformly, is rewarded; bush actions and obstructions
    are applied before moves. Deviations from Leibo et al.'s game (which is a DMLab-2D level): no
    orientation or beams (agents act on their own cell; obstruction picks the nearest opponent in
    range), no collisions.

    Observation (``Box(0, 1)``, float32): a ``(2 * view_radius + 1)^2`` egocentric window of the
    :data:`CHANNELS` (bush colours relative to the agent's preference, so red and blue agents can
    share one policy), then the :data:`FEATURES`. Every agent is a stakeholder whose benefit is its
    own reward (the stakeholder contract): each info holds ``"benefits"`` (every agent's reward of the step),
    ``"group"`` (1 = impaired, the protected attribute) and ``"factor"`` (0 red, 1 blue).

    Example::

        from sb3_fair.envs import AllelopathicHarvestEnv

        env = AllelopathicHarvestEnv.from_preset("small", seed=0)
        obs, infos = env.reset(seed=0)
        actions = {a: env.action_space(a).sample() for a in env.agents}
        obs, rewards, terms, truncs, infos = env.step(actions)
        infos["agent_0"]["group"], infos["agent_0"]["factor"]

    :param n_agents: number of agents, even (half prefer red, half blue), >= 4, at most :data:`~sb3_fair.envs.horizon.MAX_STAKEHOLDERS`.
    :param width: grid width (columns).
    :param height: grid height (rows).
    :param n_bushes: bushes at the start.
    :param max_steps: episode length.
    :param bush_lifetime: a bush dies at this age.
    :param spawn_interval: one bush spawns every this many steps.
    :param obstruct_range: Chebyshev distance within which ``obstruct`` reaches.
    :param freeze_steps: how long an obstructed agent is frozen.
    :param impaired_fraction: fraction of each colour that is impaired.
    :param view_radius: the observation window is ``2 * view_radius + 1`` cells wide.
    :param render_mode: ``"rgb_array"``, ``"ansi"`` or None.
    :param seed: seed of the first reset (a later ``reset(seed=...)`` reseeds).
    """

    metadata = {
        "name": "allelopathic_harvest_v0",
        "render_modes": ["ansi", "rgb_array"],
        "is_parallelizable": True,
        "render_fps": 10,
    }

    def __init__(
        self,
        n_agents: int = 40,
        width: int = 25,
        height: int = 15,
        n_bushes: int = 60,
        max_steps: int = 3000,
        bush_lifetime: int = 120,
        spawn_interval: int = 2,
        obstruct_range: int = 2,
        freeze_steps: int = 8,
        impaired_fraction: float = 0.5,
        view_radius: int = 3,
        render_mode: str | None = None,
        seed: int | None = None,
    ) -> None:
        for name, value, low in (
            ("n_agents", n_agents, 4),
            ("width", width, 2),
            ("height", height, 2),
            ("n_bushes", n_bushes, 0),
            ("max_steps", max_steps, 1),
            ("bush_lifetime", bush_lifetime, 1),
            ("spawn_interval", spawn_interval, 1),
            ("obstruct_range", obstruct_range, 1),
            ("freeze_steps", freeze_steps, 1),
            ("view_radius", view_radius, 0),
        ):
            if not isinstance(value, (int, np.integer)) or value < low:
                raise ValueError(f"{name} must be an int >= {low}, got {value!r}")
        # upper bounds: sizes are allocated at construction and timers meet int64 arrays and draws
        for name, value, high in (
            ("max_steps", max_steps, MAX_HORIZON),
            ("bush_lifetime", bush_lifetime, MAX_HORIZON),
            ("spawn_interval", spawn_interval, MAX_HORIZON),
            ("freeze_steps", freeze_steps, MAX_HORIZON),
            ("obstruct_range", obstruct_range, MAX_HORIZON),
            ("n_agents", n_agents, MAX_STAKEHOLDERS),
            ("width", width, MAX_SIDE),
            ("height", height, MAX_SIDE),
            ("view_radius", view_radius, MAX_VIEW_RADIUS),
        ):
            if value > high:
                raise ValueError(
                    f"{name} must be an int in [{ {'view_radius': 0, 'n_agents': 4}.get(name, 1) }, {high:g}], got {value!r}"
                )
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
            raise ValueError(f"seed must be an int >= 0 or None, got {seed!r}")
        seed = None if seed is None else int(seed)  # gymnasium's seeding takes Python ints only
        if sys.byteorder != "little":  # pragma: no cover
            raise RuntimeError(
                "AllelopathicHarvestEnv packs observation channels into uint64 bytes and needs a little-endian machine"
            )
        if n_agents % 2:
            raise ValueError(f"n_agents must be even (half prefer red, half blue), got {n_agents}")
        if n_bushes > width * height:
            raise ValueError(f"n_bushes must be at most width * height = {width * height}, got {n_bushes}")
        if (
            isinstance(impaired_fraction, (bool, str, bytes))
            or not isinstance(impaired_fraction, (int, float, np.integer, np.floating))
            or not 0.0 < impaired_fraction < 1.0
        ):
            raise ValueError(
                f"impaired_fraction must be a number in (0, 1) so that both groups exist, got {impaired_fraction!r}"
            )
        self.n_agents, self.width, self.height, self.n_bushes = int(n_agents), int(width), int(height), int(n_bushes)
        self.max_steps, self.bush_lifetime, self.spawn_interval = (
            int(max_steps),
            int(bush_lifetime),
            int(spawn_interval),
        )
        self.obstruct_range, self.freeze_steps, self.view_radius = (
            int(obstruct_range),
            int(freeze_steps),
            int(view_radius),
        )
        self.impaired_fraction = float(impaired_fraction)
        self.render_mode = check_render_mode(render_mode)

        self.possible_agents = [f"agent_{i}" for i in range(self.n_agents)]
        self.agents: list[str] = []
        half = self.n_agents // 2
        #: Berry preference per agent: 0 red, 1 blue (the legitimate factor).
        self.preferences = np.repeat(np.array([0, 1], dtype=np.int64), half)
        n_impaired = max(1, min(half - 1, round(self.impaired_fraction * half)))
        self._n_impaired_per_colour = n_impaired
        side = 2 * self.view_radius + 1
        n_obs = len(CHANNELS) * side * side + len(FEATURES)
        self._obs_space = spaces.Box(0.0, 1.0, shape=(n_obs,), dtype=np.float32)
        self._act_space = spaces.Discrete(len(ACTIONS))
        self._get_actions = operator.itemgetter(*self.possible_agents)
        self._obs_spaces = {a: self._obs_space for a in self.possible_agents}
        self._act_spaces = {a: self._act_space for a in self.possible_agents}
        r = self.view_radius
        self._padded_width = self.width + 2 * r
        offs = np.arange(-r, r + 1)
        self._window = (offs[:, None] * self._padded_width + offs[None, :]).ravel()
        padded = np.full((self.height + 2 * r, self._padded_width), _BYTE[6], dtype=np.uint64)
        padded[r : r + self.height, r : r + self.width] = 0
        self._wall_table = padded.ravel()
        self._inner = (
            np.arange(r, r + self.height)[:, None] * self._padded_width + np.arange(r, r + self.width)[None, :]
        ).ravel()
        self._max_pos = np.array([self.height - 1, self.width - 1])
        self._cell_owner = np.zeros(self.width * self.height, dtype=np.int64)
        self._agent_owner = np.zeros(self.n_agents, dtype=np.int64)
        self._np_random, _ = seeding.np_random(seed)
        self._seed_next = seed
        self.groups = np.zeros(self.n_agents, dtype=np.int64)
        self.t = 0

    # ------------------------------------------------------------------ construction helpers
    @classmethod
    def from_preset(cls, preset: str = "paper", **overrides: Any) -> AllelopathicHarvestEnv:
        """The env at one of the :data:`PRESETS` sizes, with any argument overridden."""
        if preset not in PRESETS:
            raise ValueError(f"preset must be one of {sorted(PRESETS)}, got {preset!r}")
        return cls(**{**PRESETS[preset], **overrides})

    def observation_space(self, agent: str) -> spaces.Box:
        return self._obs_spaces[agent]

    def action_space(self, agent: str) -> spaces.Discrete:
        return self._act_spaces[agent]

    @property
    def stakeholders(self) -> Stakeholders:
        """The stakeholder contract: every agent, its current group (1 = impaired) and preference."""
        return Stakeholders(
            names=tuple(self.possible_agents),
            groups=self.groups.copy(),
            factors=self.preferences.copy(),
            group_names={0: "unimpaired", 1: "impaired"},
        )

    # ------------------------------------------------------------------ dynamics
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict, dict]:
        if seed is None and self._seed_next is not None:
            seed = self._seed_next
        self._seed_next = None
        if seed is not None:
            self._np_random, _ = seeding.np_random(seed)
        rng = self._np_random
        # the groups are always drawn, so that a reset with given groups (a counterfactual twin)
        # lays out bushes and agents exactly like one without
        half = self.n_agents // 2
        self.groups = np.zeros(self.n_agents, dtype=np.int64)
        for start in (0, half):
            self.groups[start + rng.choice(half, self._n_impaired_per_colour, replace=False)] = 1
        given = (options or {}).get("groups")
        if given is not None:
            groups = np.asarray(given)
            if groups.shape != (self.n_agents,) or not np.isin(groups, (0, 1)).all():
                raise ValueError(f"options['groups'] must be {self.n_agents} values in {{0, 1}}, got {given!r}")
            self.groups = groups.astype(np.int64)
        cells = self.width * self.height
        self.pos = np.stack(
            np.divmod(rng.choice(cells, self.n_agents, replace=cells < self.n_agents), self.width), axis=1
        )
        self.colour = np.full((self.height, self.width), -1, dtype=np.int64)
        self.ripe = np.zeros((self.height, self.width), dtype=bool)
        self.age = np.zeros((self.height, self.width), dtype=np.int64)
        bush_cells = rng.choice(cells, self.n_bushes, replace=False)
        self.colour.flat[bush_cells] = rng.integers(0, 2, self.n_bushes)
        self.age.flat[bush_cells] = rng.integers(0, self.bush_lifetime, self.n_bushes)
        self.frozen_until = np.zeros(self.n_agents, dtype=np.int64)
        self.t = 0
        self.agents = list(self.possible_agents)
        obs = self._observe()
        self._infos = [group_info(g, f) for g, f in zip(self.groups, self.preferences)]
        return dict(zip(self.agents, obs)), dict(zip(self.agents, map(dict, self._infos)))

    def step_array(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool]:
        """The game's step on arrays: ``actions`` (n_agents,) ints -> (observations, rewards, game over).

        :meth:`step` (the PettingZoo API) wraps this; it is exposed for fast vectorised use.
        """
        rng = self._np_random
        a = np.asarray(actions, dtype=np.int64)
        if a.shape != (self.n_agents,):
            raise ValueError(f"actions must hold one action per agent ({self.n_agents}), got shape {a.shape}")
        t = self.t
        a = np.where(self._can_act(t), a, STAY)
        rewards = np.zeros(self.n_agents, dtype=np.float64)
        rows, cols = self.pos[:, 0], self.pos[:, 1]
        cell = rows * self.width + cols
        colour_here = self.colour.flat[cell]

        # bush actions: one uniformly drawn winner per bush
        bush_idx = np.flatnonzero(((a == RIPEN_OR_EAT) | (a == RECOLOUR)) & (colour_here >= 0))
        if bush_idx.size:
            win = _one_per_key(rng.permutation(bush_idx), cell, self._cell_owner)
            wc = cell[win]
            own = self.colour.flat[wc] == self.preferences[win]
            ripen = a[win] == RIPEN_OR_EAT
            was_ripe = self.ripe.flat[wc]
            rewards[win] = np.where(
                ripen, np.where(was_ripe, np.where(own, 5.0, 1.0), np.where(own, 3.0, 1.0)), np.where(own, 0.0, 5.0)
            )
            rc = wc[ripen]
            self.ripe.flat[rc] = ~self.ripe.flat[rc]
            recol = win[~ripen & ~own]
            self.colour.flat[cell[recol]] = self.preferences[recol]

        # obstruction: nearest not-frozen opponent in range; one uniformly drawn winner per target
        obs_idx = np.flatnonzero(a == OBSTRUCT)
        if obs_idx.size:
            src_pos = self.pos[obs_idx]
            d = np.maximum(
                np.abs(src_pos[:, 0, None] - self.pos[None, :, 0]), np.abs(src_pos[:, 1, None] - self.pos[None, :, 1])
            ).astype(np.float64)
            valid = (
                (self.preferences[None, :] != self.preferences[obs_idx, None])
                & (self.frozen_until[None, :] <= t)
                & (d <= self.obstruct_range)
            )
            d = np.where(valid, d + rng.random(d.shape) * 0.5, np.inf)
            target = np.argmin(d, axis=1)
            ok = np.isfinite(d[np.arange(obs_idx.size), target])
            src, target = obs_idx[ok], target[ok]
            if src.size:
                win = _one_per_key(rng.permutation(src.size), target, self._agent_owner)
                rewards[src[win]] += 3.0
                self.frozen_until[target[win]] = t + 1 + self.freeze_steps

        # moves, clipped at the border
        self.pos = np.minimum(np.maximum(self.pos + _MOVES[a], 0), self._max_pos)

        # bushes age, die and spawn
        alive = self.colour >= 0
        self.age += alive
        dead = self.age >= self.bush_lifetime
        if dead.any():
            self.colour[dead] = -1
            self.ripe[dead] = False
            self.age[dead] = 0
        if (t + 1) % self.spawn_interval == 0:
            free = np.flatnonzero(self.colour.ravel() < 0)
            if free.size:
                c = free[rng.integers(free.size)]
                n_red = int(np.count_nonzero(self.colour == 0))
                n_blue = int(np.count_nonzero(self.colour == 1))
                p_red = n_red / (n_red + n_blue) if n_red + n_blue else 0.5
                self.colour.flat[c] = int(rng.random() >= p_red)
                self.ripe.flat[c] = False
                self.age.flat[c] = 0
        self.t = t + 1
        return self._observe(), rewards, self.t >= self.max_steps

    def step(self, actions: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        try:
            a = np.array(self._get_actions(actions), dtype=np.int64)
        except KeyError:  # some agents sent no action: they stay
            a = np.array([actions.get(agent, STAY) for agent in self.possible_agents], dtype=np.int64)
        obs, rewards, over = self.step_array(a)
        agents = self.agents
        out = (
            dict(zip(agents, obs)),
            dict(zip(agents, rewards.tolist())),
            dict.fromkeys(agents, over),
            dict.fromkeys(agents, False),
            {a: {**i, BENEFITS: rewards} for a, i in zip(agents, self._infos)},
        )
        if over:
            self.agents = []
        return out

    def _can_act(self, t: int) -> np.ndarray:
        """Which agents' actions count at step ``t``: not frozen, and impaired ones on even steps only."""
        return (self.frozen_until <= t) & ((t % 2 == 0) | (self.groups == 0))

    def action_masks(self) -> np.ndarray:
        """Which actions can have an effect now: a bool ``(n_agents, len(ACTIONS))`` array, rows in
        ``possible_agents`` order (sb3-contrib's invalid-action-masking protocol, Huang & Ontañón
        2020, arXiv:2006.14171).

        The mask describes the current state, the one the next :meth:`step` starts from (after an
        automatic reset, the new episode's first state). A ``False`` entry marks an action that
        :meth:`step_array` would resolve exactly as ``stay``: same positions, bushes, freezes and
        rewards for everybody, the same distribution of the next state (only the draws taken from
        the env's random stream may differ, so a masked action is not seed-for-seed identical).
        ``stay`` is never masked, so no row is empty. The rules, with the code that makes them hold:

        * An agent that cannot act at step ``t`` (frozen, or impaired on an odd step) has only
          ``stay``: :meth:`step_array` replaces its action by ``stay``.
        * ``up`` / ``down`` / ``left`` / ``right`` are masked on the first / last row / first /
          last column: moves are clipped at the border, so the agent stays where it is; a move
          enters no other rule.
        * ``ripen_or_eat`` is masked where there is no bush under the agent: only agents on a bush
          take part in the bush actions.
        * ``recolour`` is masked where there is no bush under the agent, and where the bush already
          has the agent's colour and no other agent able to act stands on the cell: recolouring an
          own-colour bush pays 0 and changes nothing, and with no rival on the cell it wins its
          (one-entrant) draw, so it takes no bush action from anybody (with a rival it may win the
          draw and block the rival's action, which is an effect, so it stays valid).
        * ``obstruct`` is masked when no agent of the other preference, not frozen, stands within
          ``obstruct_range`` cells (Chebyshev) of the agent: it then finds no target.

        Before the first :meth:`reset` there is no state and nothing is masked.

        :return: the mask, ``True`` where the action is valid.
        """
        masks = np.ones((self.n_agents, len(ACTIONS)), dtype=bool)
        if not hasattr(self, "pos"):
            return masks
        t = self.t
        rows, cols = self.pos[:, 0], self.pos[:, 1]
        masks[:, UP], masks[:, DOWN] = rows > 0, rows < self.height - 1
        masks[:, LEFT], masks[:, RIGHT] = cols > 0, cols < self.width - 1
        cell = rows * self.width + cols
        colour_here = self.colour.flat[cell]
        bush = colour_here >= 0
        can_act = self._can_act(t)
        acting_here = np.bincount(cell[can_act], minlength=self.width * self.height)[cell]
        masks[:, RIPEN_OR_EAT] = bush
        masks[:, RECOLOUR] = bush & ((colour_here != self.preferences) | (acting_here > 1))
        d = np.maximum(np.abs(rows[:, None] - rows[None, :]), np.abs(cols[:, None] - cols[None, :]))
        targets = (
            (self.preferences[:, None] != self.preferences[None, :])
            & (self.frozen_until[None, :] <= t)
            & (d <= self.obstruct_range)
        )
        masks[:, OBSTRUCT] = targets.any(axis=1)
        masks[~can_act] = False
        masks[:, STAY] = True
        return masks

    def action_mask(self, agent: str) -> np.ndarray:
        """One agent's row of :meth:`action_masks`: a bool ``(len(ACTIONS),)`` array.

        :param agent: a name from ``possible_agents``.
        :return: the agent's mask, ``True`` where the action is valid.
        """
        try:
            i = self.possible_agents.index(agent)
        except ValueError:
            raise KeyError(f"unknown agent {agent!r}; the agents are {self.possible_agents}") from None
        return self.action_masks()[i]

    def _observe(self) -> np.ndarray:
        # Each cell of the padded grid is one uint64 whose byte c is channel c, so an agent's
        # window is one gather; a blue-preferring observer reads a byte-swapped copy.
        H, W = self.height, self.width
        table = self._wall_table.copy()
        table[self._inner] = _BUSH_BYTES[(2 * self.colour + self.ripe + 2).ravel()]
        at = (self.pos[:, 0] + self.view_radius) * self._padded_width + self.pos[:, 1] + self.view_radius
        red_pref = self.preferences == 0
        table[at[red_pref]] |= _BYTE[4]
        table[at[~red_pref]] |= _BYTE[5]
        table[at[self.groups == 1]] |= _BYTE[7]
        swapped = (
            ((table & _M01) << _S16)
            | ((table >> _S16) & _M01)
            | ((table & _M4) << _S8)
            | ((table >> _S8) & _M4)
            | (table & _M67)
        )
        both = np.concatenate([table, swapped])
        idx = (at + table.size * self.preferences)[:, None] + self._window
        n = self.n_agents
        out = np.empty((n, self._obs_space.shape[0]), dtype=np.float32)
        out[:, : -len(FEATURES)] = both[idx].view(np.uint8).reshape(n, -1)
        feats = out[:, -len(FEATURES) :]
        feats[:, 0] = self.groups
        feats[:, 1] = self._can_act(self.t)
        feats[:, 2] = self.frozen_until > self.t
        feats[:, 3] = self.pos[:, 0] / max(H - 1, 1)
        feats[:, 4] = self.pos[:, 1] / max(W - 1, 1)
        feats[:, 5] = self.t / self.max_steps
        return out

    # ------------------------------------------------------------------ rendering
    def render(self) -> Any:
        if self.render_mode is None:
            return None
        if self.render_mode == "ansi":
            grid = np.full((self.height, self.width), ".", dtype="<U1")
            grid[self.colour == 0] = "r"
            grid[self.colour == 1] = "b"
            grid[(self.colour == 0) & self.ripe] = "R"
            grid[(self.colour == 1) & self.ripe] = "B"
            for i, (y, x) in enumerate(self.pos):
                grid[y, x] = (
                    ("x" if self.groups[i] else "o") if self.preferences[i] == 0 else ("X" if self.groups[i] else "O")
                )
            return f"t={self.t}\n" + "\n".join("".join(row) for row in grid) + "\n"
        return self.render_rgb()

    def render_rgb(self, cell: int = 16) -> np.ndarray:
        """An ``(height * cell, width * cell, 3)`` uint8 picture: bushes (pale unripe, full ripe) and
        agents (a square in their preferred colour, with a dark centre when impaired)."""
        H, W = self.height, self.width
        img = np.full((H, W, 3), 235, dtype=np.uint8)
        palette = {
            (0, False): (240, 170, 170),
            (0, True): (200, 30, 30),
            (1, False): (170, 190, 240),
            (1, True): (30, 60, 200),
        }
        for (c, ripe), rgb in palette.items():
            img[(self.colour == c) & (self.ripe == ripe)] = rgb
        img = np.repeat(np.repeat(img, cell, axis=0), cell, axis=1)
        q = cell // 4
        for i, (y, x) in enumerate(self.pos):
            y0, x0 = y * cell, x * cell
            img[y0 + q : y0 + cell - q, x0 + q : x0 + cell - q] = (
                (150, 0, 0) if self.preferences[i] == 0 else (0, 0, 150)
            )
            if self.groups[i]:
                img[y0 + cell // 2 - 2 : y0 + cell // 2 + 2, x0 + cell // 2 - 2 : x0 + cell // 2 + 2] = 20
        return img

    def close(self) -> None:
        pass

    def state(self) -> np.ndarray:
        """Global state: bush colour (+1, so 0 = none), ripeness, agent positions and groups, flattened."""
        return np.concatenate([(self.colour + 1).ravel(), self.ripe.ravel(), self.pos.ravel(), self.groups]).astype(
            np.float32
        )
