"""Pursuit at low skill: can any team of pursuers no faster than the evader capture it in sb3-fair's env?

Grupen, Selman, Lee (2022), *Cooperative Multi-Agent Fairness and Equivariant Policies*, AAAI 2022,
arXiv:2106.05727, §5.1 and Fig. 2: pursuers trained with the mutual reward keep capturing down to
|v_p| = 0.5 (half the evader's speed), which needs coordination; the straight chase fails from |v_p| = 1.0.
Every learner sb3-fair trained (``python benchmarks/fair_er.py``) captures nothing at |v_p| <= 1.0 on its
4 x 4 and 6 x 6 tori. This script asks whether the env allows it at all, with two scripted teams (no learning):

- ``greedy``: :class:`sb3_fair.envs.GreedyPursuitPolicy`, the paper's App. C baseline (every pursuer straight at
  the evader);
- ``encircle``: :class:`EncirclingPursuers`, a hand-made coordination: the pursuers spread to equal bearings
  around the evader, in their current angular order, on a circle that shrinks as they close in. Equal bearings at
  equal distances cancel the evader's potential field (Eq. 7), which then stands still.

Each is played greedily on ``--episodes`` episodes (seeded 10,000 + episode) at each pursuer speed and torus side,
with the env's 500-step episodes, scored by :func:`sb3_fair.common.evaluation.evaluate_team_fairness` (capture
success and I(R;Z)). A capture by a scripted team says the regime is reachable in that env; no capture by these two
does not prove it unreachable.

Usage::

    python benchmarks/pursuit_low_skill.py            # sides 2, 3, 4, 6; speeds 1.2 to 0.5; 30 episodes (~2 min)
    python benchmarks/pursuit_low_skill.py --quick    # smoke run (seconds)

Writes its section of ``<out>/RESULTS.md`` (``--out``, default: the repository's ``benchmarks/``).
"""

from __future__ import annotations

import time
from typing import Any

import gymnasium as gym
import numpy as np
from fair_er import evaluate_speeds
from reproduction import Output, reproduce_parser

from sb3_fair.experiment.config import int_at_least, number_in

SIZES = (2.0, 3.0, 4.0, 6.0)
SPEEDS = (1.2, 1.0, 0.9, 0.8, 0.6, 0.5)
MAX_STEPS = 500  # the env's default episode length


class EncirclingPursuers:
    """A scripted coordinated team: each pursuer heads for its slot on a circle around the evader.

    The slots are at equal bearings, ``2 pi k / n`` apart, anchored on the bearing of the first pursuer in angular
    order, so that no pursuer crosses another; the circle's radius is the pursuers' mean distance minus ``shrink``.
    Reads the relative observation (each pursuer's displacement to the evader, :class:`~sb3_fair.envs.PursuitEvasionEnv`)
    only; ``predict`` follows SB3's signature.

    :param env: the pursuit env (possibly wrapped), with ``observation="relative"``.
    :param shrink: how much closer than the pursuers' mean distance the circle is drawn.
    """

    def __init__(self, env: gym.Env, shrink: float = 0.3) -> None:
        self.n, self.size = env.unwrapped.n, env.unwrapped.size
        if env.unwrapped.observation != "relative":
            raise ValueError("env: EncirclingPursuers reads the relative observation, got observation="
                             f"{env.unwrapped.observation!r}")
        self.shrink = shrink

    def _single(self, obs: np.ndarray) -> np.ndarray:
        to_evader = obs.reshape(self.n, 2 * self.n)[:, :2] * (self.size / 2.0)
        d = -to_evader  # the evader -> pursuer displacements
        bearing = np.arctan2(d[:, 1], d[:, 0])
        order = np.argsort(bearing)
        slot = np.empty(self.n)
        slot[order] = bearing[order[0]] + 2.0 * np.pi * np.arange(self.n) / self.n
        radius = max(0.0, float(np.linalg.norm(d, axis=1).mean()) - self.shrink)
        target = radius * np.stack([np.cos(slot), np.sin(slot)], axis=1)
        return (target - d).ravel().astype(np.float32)

    def predict(self, observation: np.ndarray, state: Any = None, episode_start: Any = None,
                deterministic: bool = True) -> tuple[np.ndarray, None]:
        obs = np.asarray(observation, dtype=np.float64)
        if obs.ndim == 1:
            return self._single(obs), None
        return np.stack([self._single(o) for o in obs]), None


def main(argv: list[str] | None = None) -> None:
    from sb3_fair.envs import GreedyPursuitPolicy

    parser = reproduce_parser("pursuit_low_skill", __doc__)
    parser.add_argument("--episodes", type=int_at_least(1), default=30)
    parser.add_argument("--sizes", type=number_in(1.0), nargs="+", default=list(SIZES), help="torus sides")
    parser.add_argument("--speeds", type=number_in(0.0, strict=True), nargs="+", default=list(SPEEDS))
    parser.add_argument("--quick", action="store_true", help="2 episodes, sides 2 and 4, speeds 1.2 and 0.8")
    args = parser.parse_args(argv)
    if args.quick:
        args.episodes, args.sizes, args.speeds = 2, [2.0, 4.0], [1.2, 0.8]
    output = Output(args.out, "pursuit_low_skill")
    teams = {"greedy (App. C)": GreedyPursuitPolicy, "encircle (scripted)": EncirclingPursuers}
    t0 = time.perf_counter()
    scores = {(team, size): evaluate_speeds(cls, MAX_STEPS, args.episodes, 10_000, tuple(args.speeds), size)
              for team, cls in teams.items() for size in args.sizes}
    cmd = "python benchmarks/pursuit_low_skill.py" + (" --quick" if args.quick else "")
    speeds = " | ".join(f"@ {v:g}" for v in args.speeds)
    lines = [f"## Pursuit at low skill, scripted teams{', smoke run' if args.quick else ''}: `{cmd}`", "",
             f"Capture success (I(R;Z) in bits, in brackets) of two scripted pursuer teams, no learning, over {args.episodes} "
             f"episodes of up to {MAX_STEPS} steps per torus side and pursuer speed |v_p| (evader speed 1.0; 3 pursuers; "
             "capture radius 0.125). `encircle` spreads the pursuers to equal bearings on a shrinking circle around the "
             f"evader (`EncirclingPursuers`). {time.perf_counter() - t0:.0f} s on one core.", "",
             f"| team | torus side | {speeds} |", "|---|---|" + "---|" * len(args.speeds)]
    for (team, size), by_speed in scores.items():
        cells = [f"{r['capture_success']:.2f} ({r['team_fairness']:.2f})" for r in (by_speed[str(v)] for v in args.speeds)]
        lines.append(f"| {team} | {size:g} | " + " | ".join(cells) + " |")
    output.write_section(f"Pursuit at low skill, scripted teams{', smoke run' if args.quick else ''}:", "\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
