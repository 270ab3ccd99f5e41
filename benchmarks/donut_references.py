"""Reference policies on paper 003's doughnut task (Alamdari et al. 2024, arXiv:2312.04772, §6.1).

The scale that `sb3-fair compare --task donut` is read against: the accumulated log-Nash welfare
per episode (the env's reward) and the egalitarian welfare (fewest doughnuts to one customer,
:func:`sb3_fair.metrics.egalitarian`) of three rules that need no training:

- random: any customer, present or not;
- random among present: a uniformly random customer at the counter (never wastes a doughnut);
- greedy: the present customer who has had the fewest so far (:func:`sb3_fair.envs.greedy_allocation`).

Usage::

    python benchmarks/donut_references.py [--episodes 200]
"""

from __future__ import annotations

import argparse

import gymnasium as gym
import numpy as np

import sb3_fair  # noqa: F401  (registers the ids)
from sb3_fair import metrics
from sb3_fair.envs import greedy_allocation


def rules(rng: np.random.Generator) -> dict:
    def among_present(present, counts):
        return int(rng.choice(np.flatnonzero(present))) if present.any() else 0

    return {"random": lambda present, counts: int(rng.integers(len(present))),
            "random among present": among_present,
            "greedy (fewest so far among present)": greedy_allocation}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=200)
    args = parser.parse_args()
    print("| rule | log-Nash welfare per episode | egalitarian |\n|---|---|---|")
    for name, rule in rules(np.random.default_rng(0)).items():
        env = gym.make("sb3_fair/DonutAllocation-v0")
        returns, egal = [], []
        for episode in range(args.episodes):
            env.reset(seed=10_000 + episode)  # the episodes of `train`'s evaluation of seed 0
            base, done, total = env.unwrapped, False, 0.0
            while not done:
                _, reward, terminated, truncated, _ = env.step(rule(base.present, base.counts))
                total, done = total + float(reward), terminated or truncated
            returns.append(total)
            egal.append(metrics.egalitarian(base.counts))
        print(f"| {name} | {np.mean(returns):.1f} ± {np.std(returns):.1f} | {np.mean(egal):.2f} ± {np.std(egal):.2f} |")


if __name__ == "__main__":
    main()
