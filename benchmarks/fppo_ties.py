"""F-PPO's massaging tie rule on delayed-impact lending, a first look: the paper's F-PPO preset (``f_ppo``, ties keep
the sampled action), the authors' code's three choices (``f_ppo_authors``: ties flip, the training long-term gap
``counts_sinkhorn``, a terminal horizon) and each of them alone (``f_ppo_flip``: ``massaging_ties="flip"``;
``f_ppo_dl``: the env's ``long_term="counts_sinkhorn"``; ``f_ppo_horizon``: ``horizon_terminates=True``), per PPO
iteration, in training: the share of executed actions that massaging
replaced, the share of them whose applicant would have defaulted, the share of the rollout's steps with Δs <= δ, the
training short-term gap Δs and the training episodes' reward.

    python benchmarks/fppo_ties.py --seeds 2 --timesteps 60000 --out /tmp/fppo_ties

Massaging starts at iteration 18 (the lending τ schedule), so a run needs more than 36,000 steps to show it. Each run is
a process of its own with one torch thread, two at a time.
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from fppo import AUTHORS_CHOICES, massaged_defaulters

#: run name -> (preset variant, what it changes): the paper's reading, the authors' three choices (``f_ppo_authors``)
#: and each of them alone (``f_ppo_flip``, ``f_ppo_dl``, ``f_ppo_horizon``: :data:`fppo.AUTHORS_CHOICES`)
VARIANTS = {"f_ppo": ("f_ppo", {}), **AUTHORS_CHOICES,
            # the authors' three choices with their training Δl computed as their code does (geomloss's Sinkhorn):
            # needs geomloss (pip install "sb3-fair[authors]")
            "f_ppo_authors_geomloss": ("f_ppo", {"massaging_ties": "flip",
                                                 "env_kwargs": {"long_term": "counts_geomloss", "horizon_terminates": True}})}


def make_model(variant: str, seed: int) -> Any:
    """The FairPPO of one :data:`VARIANTS` entry: its preset variant on the lending env made with the variant's env
    arguments (the preset's, then the entry's changes), with the entry's other changes as keyword arguments."""
    import gymnasium as gym

    import sb3_fair  # noqa: F401  (registers the envs)
    from sb3_fair import FairPPO
    from sb3_fair.ppo.presets import preset_env_kwargs

    preset, changes = VARIANTS[variant]
    overrides = {k: v for k, v in changes.items() if k != "env_kwargs"}
    env = gym.make("sb3_fair/DelayedImpactLending-v0",
                   **{**preset_env_kwargs("delayed_impact_lending", preset), **changes.get("env_kwargs", {})})
    return FairPPO.from_preset("delayed_impact_lending", env, variant=preset, seed=seed, **overrides)


def train(variant: str, seed: int, timesteps: int, out: Path) -> None:
    import torch
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.logger import configure

    class MassagedDefaulters(BaseCallback):
        """``fairness/massaged_would_default``: the rollout's share of massaged actions whose applicant would have
        defaulted (the env's ``info["would_repay"]`` of the decided applicant); ``lending/accept_rate``: the share
        of the rollout's executed actions that accept; ``lending/rollout_reward``: the rollout's summed reward (the
        bank's cash change; one training episode per rollout)."""

        def _on_rollout_start(self) -> None:
            self.massaged, self.defaulters, self.accepted, self.steps, self.reward = 0, 0, 0, 0, 0.0

        def _on_step(self) -> bool:
            infos = self.locals["infos"]
            massaged, defaulters = massaged_defaulters(self.model, infos)
            self.massaged += massaged
            self.defaulters += defaulters
            self.accepted += sum(bool(info["accepted"]) for info in infos)
            self.steps += len(infos)
            self.reward += float(sum(self.locals["rewards"]))
            return True

        def _on_rollout_end(self) -> None:
            if self.massaged:
                self.logger.record("fairness/massaged_would_default", self.defaulters / self.massaged)
            self.logger.record("lending/accept_rate", self.accepted / max(self.steps, 1))
            self.logger.record("lending/rollout_reward", self.reward)

    torch.set_num_threads(1)
    model = make_model(variant, seed)
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


#: iteration windows of the comparison with the authors' code: before massaging, its first 12 iterations, the rest
WINDOWS = ((1, 18), (19, 30), (31, 50))


def compare_authors(out: Path, data: Path) -> list[str]:
    """Markdown rows: the authors' F-PPO (their training log, ``data``: numbers recorded from runs of their code, as
    published and with the exact W1 in place of their geomloss Sinkhorn) beside this folder's ``f_ppo_authors`` and
    ``f_ppo`` runs of the same seeds, per iteration window (:data:`WINDOWS`): the
    training Δs (their ``short_mean``: the rollout's mean windowed TPR gap after the executed action), the massaged
    share, the accept rate and the episode's reward (the bank's cash change over the rollout's 2,000-step episode)."""
    authors = json.loads(data.read_text())
    lines = ["| code, variant | seed | " + " | ".join(f"Δs, iterations {a}-{b}" for a, b in WINDOWS) + " | "
             + " | ".join(f"massaged share, {a}-{b}" for a, b in WINDOWS[1:]) + " | "
             + " | ".join(f"accept rate, {a}-{b}" for a, b in WINDOWS) + " | "
             + " | ".join(f"episode reward, {a}-{b}" for a, b in WINDOWS) + " |",
             "|---|---|" + "---|" * (3 * len(WINDOWS) + len(WINDOWS) - 1)]

    def cells(rows: dict[int, dict[str, float]], keys: tuple[str, ...], windows: tuple[tuple[int, int], ...]) -> list[str]:
        out = []
        for key in keys:
            for a, b in windows:
                values = [rows[i][key] for i in range(a, b + 1) if i in rows and rows[i].get(key) is not None]
                out.append(f"{statistics.mean(values):.3f}" if len(values) == b - a + 1 else "-")
        return out

    def authors_row(name: str, run: dict[str, Any]) -> str:
        rows = {r["iteration"]: {"ds": r["short_mean"], "massaged": r.get("massaged_share"),
                                 "accept": r.get("accept_rate_after_massage"),
                                 "reward": r.get("episode_bank_cash_change_derived")} for r in run["iterations"]}
        return f"| {name} | {run['seed']} | " + " | ".join(
            cells(rows, ("ds",), WINDOWS) + cells(rows, ("massaged",), WINDOWS[1:])
            + cells(rows, ("accept", "reward"), WINDOWS)) + " |"

    exact = {run["seed"]: run for run in authors.get("runs_exact_w1", [])}
    for run in authors["runs"]:
        lines.append(authors_row("authors' code, F-PPO", run))
        if run["seed"] in exact:  # their code with the exact W1 in place of geomloss's Sinkhorn (one line changed)
            lines.append(authors_row("authors' code, exact W1 for their Sinkhorn", exact[run["seed"]]))
        for variant in ("f_ppo_authors", "f_ppo_authors_geomloss", "f_ppo"):
            path = out / f"{variant}_{run['seed']}" / "progress.csv"
            if not path.exists():
                continue
            with open(path) as f:
                ours = {i + 1: r for i, r in enumerate(csv.DictReader(f))}
            rows = {i: {"ds": float(r["fairness/short_term"]), "massaged": float(r["fairness/massaged_fraction"] or 0),
                        "accept": float(r["lending/accept_rate"]) if r.get("lending/accept_rate") else None,
                        "reward": float(r["lending/rollout_reward"]) if r.get("lending/rollout_reward") else None}
                    for i, r in ours.items()}
            lines.append(f"| sb3-fair, `{variant}` | {run['seed']} | " + " | ".join(
                cells(rows, ("ds",), WINDOWS) + cells(rows, ("massaged",), WINDOWS[1:])
                + cells(rows, ("accept", "reward"), WINDOWS)) + " |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--timesteps", type=int, default=60_000)
    parser.add_argument("--out", type=Path, default=Path("fppo_ties"))
    parser.add_argument("--variants", nargs="+", choices=list(VARIANTS),
                        default=[v for v in VARIANTS if v != "f_ppo_authors_geomloss"])
    parser.add_argument("--run", nargs=2, metavar=("VARIANT", "SEED"), help=argparse.SUPPRESS)
    parser.add_argument("--compare-authors", action="store_true",
                        help="no training: the table of --out's f_ppo_authors and f_ppo runs beside the authors' code's "
                             "training log (benchmarks/data/authors_code_fppo.json)")
    args = parser.parse_args()
    if args.compare_authors:
        print("\n".join(compare_authors(args.out, Path(__file__).resolve().parent / "data" / "authors_code_fppo.json")))
        return
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
