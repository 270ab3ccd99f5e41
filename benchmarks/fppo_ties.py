"""F-PPO's massaging tie rule on delayed-impact lending, a first look: the paper's F-PPO preset (``f_ppo``, ties keep
the sampled action), the same with the tie rule alone changed (``f_ppo_flip``: ``massaging_ties="flip"``), and the
authors' code's three choices (``f_ppo_authors``: ties flip, the training long-term gap ``counts_sinkhorn``, a
terminal horizon), per PPO iteration: the share of executed actions that massaging
replaced, the share of them whose applicant would have defaulted, the share of the rollout's steps with Δs <= δ, the
training short-term gap Δs and the training episodes' reward.

    python benchmarks/fppo_ties.py --seeds 2 --timesteps 60000 --out /tmp/fppo_ties

Massaging starts at iteration 18 (the lending τ schedule), so a run needs more than 36,000 steps to show it. Each run is
a process of its own with one torch thread, two at a time.
"""

from __future__ import annotations

import argparse
import csv
import statistics
import subprocess
import sys
from pathlib import Path

#: run name -> (preset variant, overrides): the paper's reading, the tie rule alone changed, the authors' three choices
VARIANTS = {
    "f_ppo": ("f_ppo", {}),
    "f_ppo_flip": ("f_ppo", {"massaging_ties": "flip"}),
    "f_ppo_authors": ("f_ppo_authors", {}),
}


def train(variant: str, seed: int, timesteps: int, out: Path) -> None:
    import torch
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.logger import configure

    import sb3_fair  # noqa: F401  (registers the envs)
    from sb3_fair import FairPPO

    class MassagedDefaulters(BaseCallback):
        """``fairness/massaged_would_default``: the rollout's share of massaged actions whose applicant would have
        defaulted (the env's ``info["would_repay"]`` of the decided applicant)."""

        def _on_rollout_start(self) -> None:
            self.massaged, self.defaulters = 0, 0

        def _on_step(self) -> bool:
            infos = self.locals["infos"]
            for i in self.model.massaged_rows:
                self.massaged += 1
                self.defaulters += not infos[i]["would_repay"]
            return True

        def _on_rollout_end(self) -> None:
            if self.massaged:
                self.logger.record("fairness/massaged_would_default", self.defaulters / self.massaged)

    torch.set_num_threads(1)
    preset, overrides = VARIANTS[variant]
    model = FairPPO.from_preset(
        "delayed_impact_lending", "sb3_fair/DelayedImpactLending-v0", variant=preset, seed=seed, **overrides
    )
    model.set_logger(configure(str(out / f"{variant}_{seed}"), ["csv"]))
    model.learn(timesteps, callback=MassagedDefaulters())


def summary(out: Path, seeds: int, variants: list[str] | None = None) -> list[str]:
    """One Markdown row per run: massaged share over the massaged iterations, Δs of the last five rollouts and of the
    first five, the last training episodes' reward."""
    lines = [
        "| variant | seed | massaged iterations | massaged share, mean (min-max) | of them would default | "
        "steps with Δs <= δ, last 5 | training Δs, last 5 rollouts | training Δs, first 5 | ep_rew_mean at the end |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for variant in variants or list(VARIANTS):
        for seed in range(seeds):
            with open(out / f"{variant}_{seed}" / "progress.csv") as f:
                rows = list(csv.DictReader(f))

            def column(key: str, rows: list[dict[str, str]] = rows) -> list[float]:
                return [float(r[key]) for r in rows if r.get(key)]

            taus, shares = column("fairness/massaging_tau"), column("fairness/massaged_fraction")
            massaged = [share for tau, share in zip(taus, shares) if tau > 0]
            ds = column("fairness/short_term")
            share = (
                f"{statistics.mean(massaged):.3f} ({min(massaged):.3f}-{max(massaged):.3f})"
                if massaged
                else "— (no iteration reached τ > 0)"
            )
            defaulters, within = column("fairness/massaged_would_default"), column("fairness/within_delta")
            lines.append(
                f"| {variant} | {seed} | {len(massaged)} | {share} | "
                f"{f'{statistics.mean(defaulters):.3f}' if defaulters else '—'} | "
                f"{f'{statistics.mean(within[-5:]):.3f}' if within else '—'} | {statistics.mean(ds[-5:]):.3f} | "
                f"{statistics.mean(ds[:5]):.3f} | {column('rollout/ep_rew_mean')[-1]:.1f} |"
            )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--timesteps", type=int, default=60_000)
    parser.add_argument("--out", type=Path, default=Path("fppo_ties"))
    parser.add_argument("--variants", nargs="+", choices=list(VARIANTS), default=list(VARIANTS))
    parser.add_argument("--run", nargs=2, metavar=("VARIANT", "SEED"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run:
        train(args.run[0], int(args.run[1]), args.timesteps, args.out)
        return
    jobs = [(v, s) for s in range(args.seeds) for v in args.variants]
    for i in range(0, len(jobs), 2):  # two at a time, one per core
        procs = [
            subprocess.Popen(
                [
                    sys.executable,
                    __file__,
                    "--run",
                    v,
                    str(s),
                    "--timesteps",
                    str(args.timesteps),
                    "--out",
                    str(args.out),
                ]
            )
            for v, s in jobs[i : i + 2]
        ]
        if any(p.wait() for p in procs):
            raise SystemExit("a run failed")
    print("\n".join(summary(args.out, args.seeds, args.variants)))


if __name__ == "__main__":
    main()
