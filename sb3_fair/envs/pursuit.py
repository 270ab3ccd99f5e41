"""Toroidal pursuit-evasion (Grupen et al. 2022, §5 and App. C): n pursuers chase one evader on a torus."""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from stable_baselines3.common.callbacks import BaseCallback

from sb3_fair.common.protocol import BENEFITS
from sb3_fair.common.stakeholders import Stakeholders
from sb3_fair.common.symmetry import AgentSymmetry
from sb3_fair.common.validation import check_choice, check_weights
from sb3_fair.envs.horizon import check_count, check_horizon
from sb3_fair.envs.rendering import RENDER_MODES, check_render_mode

#: the most pursuers ``PursuitEvasionEnv`` accepts: its agent symmetry (Fair-E, Fair-ER) enumerates and checks all n!
#: permutations of the pursuers at construction: 9! = 362,880 take seconds, 10! about a minute and 11! gigabytes
#: (a count such as 10^5 would allocate 2 n^2 observation entries and never finish)
MAX_PURSUERS = 9

#: the smallest torus side accepted: reset places every pursuer at least 0.5 from the evader by rejection
#: sampling, and no point of a torus of side < 1/sqrt(2) is that far (reset would never end); at side 1 about a
#: fifth of the torus qualifies, so reset ends quickly
MIN_SIZE = 1.0

OBSERVATIONS = ("relative", "absolute")


def torus_delta(src: np.ndarray, dst: np.ndarray, size: float) -> np.ndarray:
    """Minimum-image displacement ``dst - src`` on a square torus of side ``size``."""
    d = np.asarray(dst, dtype=np.float64) - np.asarray(src, dtype=np.float64)
    return (d + size / 2.0) % size - size / 2.0


def _torus_1d(d: float, half: float, size: float) -> float:
    """:func:`torus_delta` of one coordinate's difference ``d`` on Python floats (``half = size / 2``): the same
    operations, so the same bits (Python's ``%`` is NumPy's ``remainder``)."""
    return (d + half) % size - half


def evader_heading(evader: np.ndarray, pursuers: np.ndarray, size: float) -> np.ndarray:
    """The evader's unit heading: the closed-form minimiser of Grupen et al.'s (2022) Eq. 7.

    ``U(theta_e) = sum_i (1 / r_i) cos(theta_e - theta_i)`` with ``r_i`` and ``theta_i`` the distance
    and bearing from the evader to pursuer i. Writing ``Z = sum_i (1 / r_i) e^{i theta_i} =
    sum_i d_i / r_i^2`` (``d_i`` the toroidal displacement to pursuer i), ``U = |Z| cos(theta_e -
    arg Z)``, minimised by heading along ``-Z``: away from the pursuers, the nearer ones weighing
    more. When ``Z = 0`` the evader stays put.
    """
    d = torus_delta(evader[None, :], pursuers, size)
    r2 = np.maximum(np.sum(d * d, axis=1, keepdims=True), 1e-12)
    z = np.sum(d / r2, axis=0)
    norm = np.linalg.norm(z)
    return -z / norm if norm > 1e-12 else np.zeros(2)


class PursuitEvasionEnv(gym.Env):
    """n pursuers (one joint Gymnasium env) chase an evader on a torus (Grupen et al. 2022, §5, App. C).

    Each step every pursuer moves ``pursuer_speed * dt`` along its heading (the joint action holds
    one 2-D heading vector per pursuer, normalised; a zero vector stands still) and the evader moves
    ``evader_speed * dt`` along the closed-form minimiser of Eq. 7 (:func:`evader_heading`), both
    from the positions at the start of the step. A pursuer within ``capture_radius`` (toroidal
    distance) of the evader captures it: the episode ends, the team reward is ``+50`` (the mutual
    reward of Grupen et al. 2022) on top of the ``-0.1`` paid every step, and ``info["benefits"]`` credits
    each capturing pursuer with 1 (Grupen et al.'s (2022) reward vector r, e.g. ``[0, 0, 1]``). A capture is
    terminal (``terminated=True``). Without a capture the episode is cut after ``max_steps`` with
    ``truncated=True``: the chase has no natural end and the observation shows no clock, so the cut
    is a time limit and SB3 bootstraps the last step. (The authors' code stores ``done = 1`` at the
    500-step cut as well as at a capture, and masks the DDPG target with it; sb3-fair does not
    follow that.)

    Observation (``observation="relative"``, default): for each pursuer i, in order, its egocentric
    view: the toroidal displacement to the evader, then to the other pursuers sorted by distance
    (nearest first), all divided by ``size / 2`` so they lie in [-1, 1]. Sorting makes a view depend on
    the geometry only, not on the other pursuers' labels, so permuting the pursuers permutes the views
    as whole blocks (and a shared per-view network, Fair-E, is exactly equivariant). With ``"absolute"``: every pursuer's position,
    then the evader's, divided by ``size``. ``env.unwrapped.symmetry`` describes how a permutation of
    the pursuers acts on both (the stakeholder contract), and for relative observations which entries form each
    pursuer's view (Fair-E).

    Start: the evader at the centre (plus 1e-2 noise), pursuers uniform on the torus at least 0.5
    away from it. Constants (6 x 6 torus, dt 0.1, capture 0.125, 500 steps, evader speed 1.0) are
    sb3-fair's choice; the paper leaves them to its code. Deviation from that code: capture is measured across
    the seam too (toroidal distance).

    :param n_pursuers: number of pursuers (paper: 3), at most :data:`MAX_PURSUERS` (9: the symmetry enumerates n! permutations).
    :param pursuer_speed: pursuer speed ``|v_p|`` (the skill knob; paper trains from 1.2 to 0.4).
    :param evader_speed: evader speed (paper: 1.0).
    :param size: side of the torus, at least :data:`MIN_SIZE` (1).
    :param dt: time step (``speed * dt`` must be finite).
    :param capture_radius: capture distance.
    :param max_steps: episode length before truncation, at most :data:`~sb3_fair.envs.horizon.MAX_HORIZON`.
    :param observation: ``"relative"`` or ``"absolute"``.
    """

    metadata = {"render_modes": RENDER_MODES, "render_fps": 10}

    def __init__(
        self,
        n_pursuers: int = 3,
        pursuer_speed: float = 1.2,
        evader_speed: float = 1.0,
        size: float = 6.0,
        dt: float = 0.1,
        capture_radius: float = 0.125,
        max_steps: int = 500,
        observation: str = "relative",
        render_mode: str | None = None,
    ) -> None:
        self.n = check_count(
            n_pursuers,
            "n_pursuers",
            2,
            MAX_PURSUERS,
            "MAX_PURSUERS",
            "the agent symmetry enumerates all n! permutations",
        )
        self.pursuer_speed = check_weights(pursuer_speed, "pursuer_speed")
        self.evader_speed = check_weights(evader_speed, "evader_speed")
        self.size = check_weights(size, "size", allow_zero=False)
        if self.size < MIN_SIZE:
            raise ValueError(
                f"size must be a finite number >= {MIN_SIZE} (MIN_SIZE: pursuers start 0.5 or more from the "
                f"evader), got {size!r}"
            )
        self.dt = check_weights(dt, "dt", allow_zero=False)
        for name, speed in (("pursuer_speed", self.pursuer_speed), ("evader_speed", self.evader_speed)):
            if not np.isfinite(speed * self.dt):  # an infinite move puts every position at NaN (inf % size)
                raise ValueError(
                    f"{name} * dt must be finite (the distance moved per step), got {name}={speed!r} and dt={dt!r}"
                )
        self.capture_radius = check_weights(capture_radius, "capture_radius")
        self.max_steps = check_horizon(max_steps, "max_steps")
        check_choice(observation, "observation", OBSERVATIONS)
        self.observation = observation
        self.render_mode = check_render_mode(render_mode)
        self.stakeholders = Stakeholders(names=tuple(f"pursuer_{i}" for i in range(self.n)), groups=np.arange(self.n))
        if observation == "relative":
            obs_dim = 2 * self.n * self.n
            self.observation_space = spaces.Box(-1.0, 1.0, (obs_dim,), np.float32)
            agent_obs = np.arange(obs_dim).reshape(self.n, 2 * self.n)
        else:
            obs_dim = 2 * (self.n + 1)
            self.observation_space = spaces.Box(0.0, 1.0, (obs_dim,), np.float32)
            agent_obs = None
        self.action_space = spaces.Box(-1.0, 1.0, (2 * self.n,), np.float32)
        self.symmetry = AgentSymmetry(
            n_agents=self.n, obs_dim=obs_dim, action_dim=2 * self.n, obs_index=self._obs_index, agent_obs=agent_obs
        )
        self.pursuers = np.zeros((self.n, 2))
        self.evader = np.zeros(2)
        self.t = 0

    # ---------------------------------------------------------------- symmetry
    def _obs_index(self, perm: tuple[int, ...]) -> np.ndarray:
        """``(perm . obs) = obs[index]`` where pursuer i of the new state stands where pursuer perm[i] stood."""
        n = self.n
        if self.observation == "absolute":
            blocks = [np.arange(2 * p, 2 * p + 2) for p in perm] + [np.arange(2 * n, 2 * n + 2)]
            return np.concatenate(blocks)
        # views list the others by distance, so the new pursuer i's view is old pursuer perm[i]'s view
        view = 2 * n
        return np.concatenate([np.arange(p * view, (p + 1) * view) for p in perm])

    # ---------------------------------------------------------------- dynamics
    # The step and the observation work on Python floats: a few 2-D vectors, for which NumPy's per-call cost
    # dominates. The arithmetic is NumPy's, operation by operation: x % size is np.remainder (fmod, then the
    # divisor's sign), a row's x*x + y*y is np.sum over two entries, sums over the pursuers run from 0.0 in order
    # (np.sum over axis 0), and np.linalg.norm of a 2-vector is kept as NumPy's dot (tests/test_env_trajectories.py).
    def _obs(self) -> np.ndarray:
        return self._obs_from(self.pursuers.tolist(), self.evader.tolist())

    def _obs_from(self, pursuers: list[list[float]], evader: list[float]) -> np.ndarray:
        size = self.size
        if self.observation == "absolute":
            return np.array([v / size for p in pursuers for v in p] + [v / size for v in evader], dtype=np.float32)
        half = size / 2.0
        ex, ey = evader
        values = []
        for i, (px, py) in enumerate(pursuers):
            values.append(_torus_1d(ex - px, half, size))
            values.append(_torus_1d(ey - py, half, size))
            others = [
                (_torus_1d(qx - px, half, size), _torus_1d(qy - py, half, size))
                for j, (qx, qy) in enumerate(pursuers)
                if j != i
            ]
            keys = [dx * dx + dy * dy for dx, dy in others]
            if any(math.isnan(k) for k in keys):  # NaN positions: np.argsort puts NaN keys last (stable)
                order = sorted(
                    range(len(others)), key=lambda j: (math.isnan(keys[j]), 0.0 if math.isnan(keys[j]) else keys[j])
                )
            else:
                order = sorted(range(len(others)), key=keys.__getitem__)  # stable, as argsort(kind="stable")
            for j in order:
                values.extend(others[j])
        # np.clip(values / half, -1, 1): NaN stays NaN
        return np.array([min(max(v / half, -1.0), 1.0) for v in values], dtype=np.float32)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.t = 0
        self.evader = np.full(2, self.size / 2.0) + self.np_random.normal(0.0, 1e-2, 2)
        self.pursuers = np.zeros((self.n, 2))
        for i in range(self.n):
            while True:
                p = self.np_random.uniform(0.0, self.size, 2)
                if np.linalg.norm(torus_delta(p, self.evader, self.size)) >= 0.5:
                    break
            self.pursuers[i] = p
        return self._obs(), {}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        moves = np.asarray(action, dtype=np.float64).reshape(self.n, 2).tolist()
        size = self.size
        half = size / 2.0
        pursuers = self.pursuers.tolist()
        ex, ey = self.evader.tolist()
        # the evader's heading (evader_heading) from the positions at the start of the step
        zx = zy = 0.0
        for px, py in pursuers:
            dx = _torus_1d(px - ex, half, size)
            dy = _torus_1d(py - ey, half, size)
            r2 = max(dx * dx + dy * dy, 1e-12)
            zx += dx / r2
            zy += dy / r2
        z = np.array([zx, zy])
        norm = math.sqrt(z.dot(z))  # np.linalg.norm(z)
        hx, hy = (-zx / norm, -zy / norm) if norm > 1e-12 else (0.0, 0.0)
        # the pursuers move along their normalised headings (a zero vector stands still)
        step = self.pursuer_speed * self.dt
        moved = []
        for (px, py), (ax, ay) in zip(pursuers, moves):
            length = math.sqrt(ax * ax + ay * ay)
            if length > 1e-8:
                ax, ay = ax / length, ay / length
            else:
                ax = ay = 0.0
            moved.append([(px + step * ax) % size, (py + step * ay) % size])
        step = self.evader_speed * self.dt
        ex, ey = (ex + step * hx) % size, (ey + step * hy) % size
        self.pursuers = np.array(moved)
        self.evader = np.array([ex, ey])
        self.t += 1
        radius = self.capture_radius
        captured = []
        for px, py in moved:  # torus_delta(pursuer, evader), its length against the capture radius
            dx = _torus_1d(ex - px, half, size)
            dy = _torus_1d(ey - py, half, size)
            captured.append(math.sqrt(dx * dx + dy * dy) < radius)
        benefits = np.array(captured, dtype=np.float64)
        terminated = any(captured)
        reward = -0.1 + (50.0 if terminated else 0.0)
        truncated = (not terminated) and self.t >= self.max_steps
        return (
            self._obs_from(moved, [ex, ey]),
            reward,
            terminated,
            truncated,
            {BENEFITS: benefits, "captured": terminated},
        )

    def render(self) -> str | np.ndarray | None:
        if self.render_mode == "ansi":
            return (
                f"t={self.t} pursuers={np.round(self.pursuers, 2).tolist()} evader={np.round(self.evader, 2).tolist()}"
            )
        if self.render_mode == "rgb_array":
            px = 120
            img = np.full((px, px, 3), 245, dtype=np.uint8)
            colours = [(66, 135, 245), (245, 130, 48), (60, 180, 75), (145, 30, 180), (240, 50, 230)]

            def dot(pos: np.ndarray, colour: tuple[int, int, int], r: int = 3) -> None:
                cx, cy = (np.asarray(pos) / self.size * px).astype(int)
                ys, xs = np.ogrid[:px, :px]
                img[(xs - cx) ** 2 + (ys - cy) ** 2 <= r * r] = colour

            for i, p in enumerate(self.pursuers):
                dot(p, colours[i % len(colours)])
            dot(self.evader, (200, 30, 30), r=4)
            return img
        return None


class GreedyPursuitPolicy:
    """Grupen et al.'s (2022) greedy baseline (App. C, Eqs. 12-13): every pursuer heads straight at the evader.

    The attractive potential ``U_att = k/2 d(q_i, q_goal)^2`` with the evader as goal gives the force
    ``F = -k (q_i - q_goal)``; the action is its direction (toroidal shortest way). It is equivariant,
    hence fair, but does not coordinate. ``predict`` follows SB3's signature.

    :param env: the :class:`PursuitEvasionEnv` (possibly wrapped) whose observations are read.
    """

    def __init__(self, env: gym.Env) -> None:
        base = env.unwrapped
        if not isinstance(base, PursuitEvasionEnv):
            raise ValueError(f"env must be a PursuitEvasionEnv, got {type(base).__name__}")
        self.env = base

    def _single(self, obs: np.ndarray) -> np.ndarray:
        n, size = self.env.n, self.env.size
        if self.env.observation == "relative":
            d = obs.reshape(n, 2 * n)[:, :2] * (size / 2.0)
        else:
            pos = obs * size
            d = torus_delta(pos[: 2 * n].reshape(n, 2), pos[2 * n :][None, :], size)
        norms = np.maximum(np.linalg.norm(d, axis=1, keepdims=True), 1e-12)
        return (d / norms).ravel().astype(np.float32)

    def predict(
        self, observation: np.ndarray, state: Any = None, episode_start: Any = None, deterministic: bool = True
    ) -> tuple[np.ndarray, None]:
        obs = np.asarray(observation, dtype=np.float64)
        if obs.ndim == 1:
            return self._single(obs), None
        return np.stack([self._single(o) for o in obs]), None


class SpeedCurriculum(BaseCallback):
    """Lower the pursuers' speed linearly over training (Grupen et al. 2022 trains from ``|v_p| = 1.2`` to ``0.4``).

    Sets ``pursuer_speed`` on every sub-env (through Gymnasium's ``set_wrapper_attr``, so wrapped envs
    work) from ``start`` at the beginning of ``learn`` to ``end`` at its last step, in steps of at most
    0.001; records ``fairness/pursuer_speed``.

    :param start: speed at the start of training.
    :param end: speed at the end of training.
    """

    def __init__(self, start: float = 1.2, end: float = 0.4, verbose: int = 0) -> None:
        super().__init__(verbose)
        for name, v in (("start", start), ("end", end)):
            if not np.isfinite(v) or v < 0:
                raise ValueError(f"{name} must be a finite speed >= 0, got {v!r}")
        self.start, self.end = float(start), float(end)
        self._first = 0
        self._total = 1
        self._current: float | None = None

    def _set(self, v: float) -> None:
        self.training_env.env_method("set_wrapper_attr", "pursuer_speed", v)
        self._current = v

    def _on_training_start(self) -> None:
        self._first = self.num_timesteps
        self._total = max(int(self.locals.get("total_timesteps", 1)) - self._first, 1)
        self._set(self.start)

    def speed(self) -> float:
        frac = min(max((self.num_timesteps - self._first) / self._total, 0.0), 1.0)
        return self.start + frac * (self.end - self.start)

    def _on_step(self) -> bool:
        v = self.speed()
        if self._current is None or abs(v - self._current) >= 1e-3:
            self._set(v)
        self.logger.record("fairness/pursuer_speed", self._current)
        return True
