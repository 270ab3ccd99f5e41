"""A tiny two-group multi-agent game whose reward disparity is set by one number (for tests and demos)."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import ParallelEnv

from sb3_fair.common.protocol import BENEFITS, group_info
from sb3_fair.common.stakeholders import Stakeholders
from sb3_fair.common.validation import MAX_COEF, check_probability
from sb3_fair.envs.horizon import MAX_HORIZON, MAX_STAKEHOLDERS


class DisparityGame(ParallelEnv):
    """n agents in two groups; each step every agent either *works* or *rests*.

    Working pays ``1.0`` to a group-1 agent and ``1.0 - disparity`` to a group-0 agent; resting
    pays ``rest_reward`` to anybody. A reward-maximising policy works all the time and leaves a
    demographic-parity gap of ``disparity`` per step between the groups; the gap can only shrink if
    group-1 agents give up reward (or, with ``rest_reward > 1 - disparity``, never for group 0).
    The groups (half of the agents each) are redrawn at every reset unless
    ``reset(options={"groups": ...})`` fixes them; the legitimate factor is the agent's index
    parity. Observation: ``[group, step / max_steps]``. The game ends after ``max_steps`` steps
    with ``terminated=True``: its length is part of the game and the observation shows the time.

    Example::

        from sb3_fair.envs import DisparityGame
        from sb3_fair.wrappers import make_multiagent_vec_env

        vec_env = make_multiagent_vec_env(DisparityGame(n_agents=8, disparity=0.5), n_instances=2)

    :param n_agents: number of agents (even, >= 2, at most :data:`~sb3_fair.envs.horizon.MAX_STAKEHOLDERS`).
    :param disparity: how much less a group-0 agent earns for working, in [0, 1].
    :param rest_reward: reward for resting.
    :param max_steps: episode length.
    :param render_mode: only ``None`` or ``"ansi"``.
    """

    metadata = {"name": "disparity_game_v0", "render_modes": ["ansi"], "is_parallelizable": True}

    def __init__(
        self,
        n_agents: int = 8,
        disparity: float = 0.5,
        rest_reward: float = 0.2,
        max_steps: int = 20,
        render_mode: str | None = None,
    ) -> None:
        if not isinstance(n_agents, (int, np.integer)) or n_agents < 2 or n_agents % 2:
            raise ValueError(f"n_agents must be an even int >= 2, got {n_agents!r}")
        if n_agents > MAX_STAKEHOLDERS:
            raise ValueError(
                f"n_agents must be an even int in [2, {MAX_STAKEHOLDERS}] (MAX_STAKEHOLDERS: the game allocates arrays of "
                f"this size), got {n_agents!r}"
            )
        check_probability(disparity, "disparity")
        if isinstance(rest_reward, (bool, str, bytes)) or not isinstance(
            rest_reward, (int, float, np.integer, np.floating)
        ):
            raise ValueError(f"rest_reward must be a finite number, got {rest_reward!r}")
        try:
            rest = float(rest_reward)
        except OverflowError:  # a Python int beyond float64
            rest = np.inf
        if not np.isfinite(rest) or abs(rest) > MAX_COEF:
            raise ValueError(
                f"rest_reward must be a finite number in [-{MAX_COEF:g}, {MAX_COEF:g}] (a reward weight, bounded as "
                f"every reward weight of sb3-fair), got {rest_reward!r}"
            )
        if not isinstance(max_steps, (int, np.integer)) or max_steps < 1:
            raise ValueError(f"max_steps must be an int >= 1, got {max_steps!r}")
        if max_steps > MAX_HORIZON:
            raise ValueError(
                f"max_steps must be an int in [1, {MAX_HORIZON:.0e}] (MAX_HORIZON, steps), got {max_steps!r}"
            )
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        self.n_agents, self.disparity, self.rest_reward, self.max_steps = (
            int(n_agents),
            float(disparity),
            rest,
            int(max_steps),
        )
        self.render_mode = render_mode
        self.possible_agents = [f"agent_{i}" for i in range(self.n_agents)]
        self.agents: list[str] = []
        self._obs_space = spaces.Box(0.0, 1.0, shape=(2,), dtype=np.float32)
        self._act_space = spaces.Discrete(2)
        self._np_random, _ = seeding.np_random(None)
        self.groups = np.zeros(self.n_agents, dtype=np.int64)
        self.factors = np.arange(self.n_agents) % 2
        self.t = 0
        self.last_actions = np.zeros(self.n_agents, dtype=np.int64)

    def observation_space(self, agent: str) -> spaces.Box:
        return self._obs_space

    def action_space(self, agent: str) -> spaces.Discrete:
        return self._act_space

    @property
    def stakeholders(self) -> Stakeholders:
        return Stakeholders(names=tuple(self.possible_agents), groups=self.groups.copy(), factors=self.factors.copy())

    def _obs(self) -> dict[str, np.ndarray]:
        o = np.stack([self.groups, np.full(self.n_agents, self.t / self.max_steps)], axis=1).astype(np.float32)
        return dict(zip(self.agents, o))

    def _infos(self, benefits: np.ndarray | None = None) -> dict[str, dict[str, Any]]:
        extra = {} if benefits is None else {BENEFITS: benefits}
        return {a: {**group_info(g, f), **extra} for a, g, f in zip(self.agents, self.groups, self.factors)}

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict, dict]:
        if seed is not None:
            self._np_random, _ = seeding.np_random(seed)
        drawn = np.zeros(self.n_agents, dtype=np.int64)
        drawn[self._np_random.permutation(self.n_agents)[: self.n_agents // 2]] = 1
        given = (options or {}).get("groups")
        if given is not None:
            g = np.asarray(given)
            if g.shape != (self.n_agents,) or not np.isin(g, (0, 1)).all():
                raise ValueError(f"options['groups'] must be {self.n_agents} values in {{0, 1}}, got {given!r}")
            drawn = g.astype(np.int64)
        self.groups = drawn
        self.t = 0
        self.agents = list(self.possible_agents)
        return self._obs(), self._infos()

    def step(self, actions: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        a = np.array([int(actions.get(agent, 1)) for agent in self.possible_agents])
        self.last_actions = a
        work = np.where(self.groups == 1, 1.0, 1.0 - self.disparity)
        r = np.where(a == 0, work, self.rest_reward)
        self.t += 1
        done = self.t >= self.max_steps
        agents = self.agents
        out = (
            self._obs(),
            dict(zip(agents, r.tolist())),
            dict.fromkeys(agents, done),
            dict.fromkeys(agents, False),
            self._infos(r),
        )
        if done:
            self.agents = []
        return out

    def render(self) -> str | None:
        if self.render_mode != "ansi":
            return None
        return f"t={self.t} groups={self.groups.tolist()} actions={self.last_actions.tolist()}\n"
