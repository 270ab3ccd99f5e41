"""Every speed ratio of sb3-fair in one run, written to RESULTS.md with this command.

* each Fair class against its parent on the same env, seed and settings (median steps per CPU second of
  interleaved repeats, one torch thread, in this process);
* each single-agent env against CartPole-v1 (random actions, interleaved);
* torch's default threads against one thread, alone and beside a busy process (whole processes);
* the README's main job (``sb3-fair compare --task donut --seeds 5``), idle and beside a busy process.

Usage::

    python benchmarks/speed.py                 # everything, about 20 minutes on 2 cores
    python benchmarks/speed.py --part algos    # one part: algos, envs, threads, main
    python benchmarks/speed.py --quick         # tiny budgets (a smoke run; not written to RESULTS.md)
    python benchmarks/speed.py --part algos --only FairQCM   # the Fair-class rows whose name contains a text
                                                             # (printed only, not written to RESULTS.md)
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
BUSY = "import time\nt = time.time()\nwhile time.time() - t < 3600: pass\n"


def _median_steps_per_s(makers: dict[str, Callable[[], Any]], steps: int, repeats: int) -> dict[str, float]:
    from reproduction import median_steps_per_s

    # steps per CPU second: each model trains on one thread in this process, so this is its steps/s on an idle
    # core, and a busy neighbour (other work on a shared machine) disturbs it less than wall time
    return median_steps_per_s(makers, steps, repeats, clock=time.process_time)


def algos(steps: int, repeats: int, only: str | None = None) -> list[tuple[str, str, float, float]]:
    """(what, env, parent steps/s, Fair steps/s) for every Fair class (those whose row name contains ``only``)."""
    import gymnasium as gym
    from sb3_contrib import MaskablePPO, RecurrentPPO
    from stable_baselines3 import DDPG, DQN, PPO, TD3

    import sb3_fair  # noqa: F401  (registers the envs)
    from sb3_fair import FairDDPG, FairDQN, FairMaskablePPO, FairPPO, FairRecurrentPPO, FairTD3
    from sb3_fair.envs import AllelopathicHarvestEnv
    from sb3_fair.common.long_term.advantages import lending_massaging_threshold
    from sb3_fair.ppo.presets import preset_kwargs
    from sb3_fair.wrappers import make_multiagent_vec_env

    def game() -> Any:  # paper 001's game; it reports action masks, for MaskablePPO
        return make_multiagent_vec_env(AllelopathicHarvestEnv.from_preset("tiny"), n_instances=2)

    small = dict(n_steps=128, batch_size=64, n_epochs=2, seed=0)
    group = dict(fairness="dp", alpha=0.5, beta=0.5)
    lending = {k: v for k, v in preset_kwargs("delayed_impact_lending", "f_ppo").items()}
    parent_lending = {k: v for k, v in lending.items() if k not in ("fairness", "fairness_coef", "delta", "massaging",
                                                                      "massaging_tau", "regularization")}
    no_massaging = {**lending, "massaging": False}
    # the preset's schedule massages from iteration 17 on, so two rollouts would not massage at all: τ is fixed at the
    # schedule's value for iteration 100, where the paper's runs spend most of their time
    massaging = {**lending, "massaging_tau": round(lending_massaging_threshold(100), 2)}
    donut = dict(learning_rate=5e-4, batch_size=256, train_freq=1, target_update_interval=1000, learning_starts=100, seed=0)
    pursuit = dict(learning_starts=100, seed=0, policy_kwargs={"net_arch": [128, 128]})
    rows: list[tuple[str, str, dict[str, Callable[[], Any]]]] = [
        ("FairPPO, DP penalty α = β = 0.5", "AllelopathicHarvest tiny (2 games)",
         {"parent": lambda: PPO("MlpPolicy", game(), **small), "fair": lambda: FairPPO("MlpPolicy", game(), **small, **group)}),
        ("FairMaskablePPO, DP penalty", "AllelopathicHarvest tiny (2 games)",
         {"parent": lambda: MaskablePPO("MlpPolicy", game(), **small),
          "fair": lambda: FairMaskablePPO("MlpPolicy", game(), **small, **group)}),
        ("FairRecurrentPPO, DP penalty", "AllelopathicHarvest tiny (2 games)",
         {"parent": lambda: RecurrentPPO("MlpLstmPolicy", game(), **small),
          "fair": lambda: FairRecurrentPPO("MlpLstmPolicy", game(), **small, **group)}),
        ("F-PPO-L (regulariser, no massaging), lending preset", "DelayedImpactLending",
         {"parent": lambda: PPO("MlpPolicy", gym.make("sb3_fair/DelayedImpactLending-v0"), seed=0, **parent_lending),
          "fair": lambda: FairPPO("MlpPolicy", gym.make("sb3_fair/DelayedImpactLending-v0"), seed=0, **no_massaging)}),
        ("F-PPO (regulariser and massaging at τ = 0.71), lending preset", "DelayedImpactLending",
         {"parent": lambda: PPO("MlpPolicy", gym.make("sb3_fair/DelayedImpactLending-v0"), seed=0, **parent_lending),
          "fair": lambda: FairPPO("MlpPolicy", gym.make("sb3_fair/DelayedImpactLending-v0"), seed=0, **massaging)}),
        ("FairDQN, potential shaping", "DonutAllocation",
         {"parent": lambda: DQN("MlpPolicy", "sb3_fair/DonutAllocation-v0", **donut),
          "fair": lambda: FairDQN("MlpPolicy", "sb3_fair/DonutAllocation-v0", potential_shaping=True, **donut)}),
        ("FairDQN, FairQCM (32 counterfactual rows a step; no target)", "DonutAllocation",
         {"parent": lambda: DQN("MlpPolicy", "sb3_fair/DonutAllocation-v0", **donut),
          "fair": lambda: FairDQN("MlpPolicy", "sb3_fair/DonutAllocation-v0", counterfactual=True, potential_shaping=True, **donut)}),
        ("FairTD3, Fair-ER λ = 0.5", "PursuitEvasion",
         {"parent": lambda: TD3("MlpPolicy", "sb3_fair/PursuitEvasion-v0", **pursuit),
          "fair": lambda: FairTD3("MlpPolicy", "sb3_fair/PursuitEvasion-v0", equivariance_coef=0.5, **pursuit)}),
        ("FairDDPG, Fair-ER λ = 0.5", "PursuitEvasion",
         {"parent": lambda: DDPG("MlpPolicy", "sb3_fair/PursuitEvasion-v0", **pursuit),
          "fair": lambda: FairDDPG("MlpPolicy", "sb3_fair/PursuitEvasion-v0", equivariance_coef=0.5, **pursuit)}),
    ]
    out = []
    for what, env, makers in rows:
        if only is not None and only not in what:
            continue
        n = steps if "preset" not in what else max(steps, 2 * lending["n_steps"])  # two of the preset's rollouts
        n = n // 4 if "Recurrent" in what else n  # an LSTM on 16 slots: about 40 steps/s
        med = _median_steps_per_s(makers, n, repeats)
        out.append((what, env, med["parent"], med["fair"]))
        print(f"{what}: parent {med['parent']:.0f} steps/s, Fair {med['fair']:.0f} ({med['fair'] / med['parent']:.2f}x)", flush=True)
    return out


def envs(steps: int, repeats: int) -> list[tuple[str, float]]:
    """(env id, random-action steps/s), CartPole-v1 first; the repeats interleaved."""
    import gymnasium as gym

    import sb3_fair  # noqa: F401

    ids = ["CartPole-v1"] + sorted(k for k in gym.registry if k.startswith("sb3_fair/"))
    runs: dict[str, list[float]] = {i: [] for i in ids}
    for _ in range(repeats):
        for env_id in ids:
            env = gym.make(env_id)
            env.action_space.seed(0)
            actions = [env.action_space.sample() for _ in range(steps)]
            env.reset(seed=0)
            t0 = time.perf_counter()
            for a in actions:
                _, _, terminated, truncated, _ = env.step(a)
                if terminated or truncated:
                    env.reset()
            runs[env_id].append(steps / (time.perf_counter() - t0))
            env.close()
    out = [(i, float(np.median(v))) for i, v in runs.items()]
    for env_id, sps in out:
        print(f"{env_id}: {sps:,.0f} steps/s ({sps / out[0][1]:.2f}x CartPole-v1)", flush=True)
    return out


@contextmanager
def busy_neighbour(on: bool) -> Any:
    """A process that keeps one core busy while the block runs."""
    proc = subprocess.Popen([sys.executable, "-c", BUSY]) if on else None
    try:
        if proc is not None:
            time.sleep(0.5)
        yield
    finally:
        if proc is not None:
            proc.kill()
            proc.wait()


def _wall(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def threads(steps: int, repeats: int) -> list[tuple[str, str, float]]:
    """(setting, neighbour, median wall seconds) of a DQN doughnut run with torch's default threads and with one."""
    code = ("import sys, torch\n"
            "from sb3_fair.experiment import ExperimentConfig, train\n"
            "n = None if sys.argv[1] == 'default' else int(sys.argv[1])\n"
            "cfg = ExperimentConfig.from_hyperparams('dqn', 'sb3_fair/DonutAllocation-v0', n_timesteps=int(sys.argv[2]), eval_episodes=1,"
            " num_threads=n, overrides=['learning_rate=5e-4', 'batch_size=256', 'train_freq=1', 'env_kwargs.memory=full'])\n"
            "train(cfg)\n")
    out = []
    for neighbour in (False, True):
        with busy_neighbour(neighbour):
            walls: dict[str, list[float]] = {"default": [], "1": []}
            for _ in range(repeats):
                for setting in walls:
                    walls[setting].append(_wall([sys.executable, "-c", code, setting, str(steps)]))
        for setting, values in walls.items():
            label = "torch's default (one thread per core)" if setting == "default" else "one thread (sb3-fair's default)"
            out.append((label, "one busy process" if neighbour else "none", float(np.median(values))))
            print(f"{label}, neighbour {'busy' if neighbour else 'none'}: {np.median(values):.1f} s", flush=True)
    return out


def main_job(seeds: int) -> list[tuple[str, float]]:
    """Wall seconds of ``sb3-fair compare --task donut`` (its default jobs), idle and beside a busy process."""
    cmd = [sys.executable, "-m", "sb3_fair.cli", "compare", "--task", "donut", "--seeds", str(seeds), "--quiet", "--plot", ""]
    out = []
    for neighbour in (False, True):
        with busy_neighbour(neighbour):
            wall = _wall(cmd)
        out.append(("one busy process" if neighbour else "none", wall))
        print(f"main job, neighbour {'busy' if neighbour else 'none'}: {wall:.0f} s", flush=True)
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--part", choices=["all", "algos", "envs", "threads", "main"], default="all")
    p.add_argument("--quick", action="store_true", help="tiny budgets; nothing written to RESULTS.md")
    p.add_argument("--only", default=None, help="with --part algos: only the rows whose name contains this text "
                   "(nothing written to RESULTS.md)")
    p.add_argument("--repeats", type=int, default=None, help="repeats of the algos and envs parts (default 5 and 3)")
    args = p.parse_args()
    import torch

    torch.set_num_threads(1)
    quick = args.quick
    sections = []
    cmd = "python benchmarks/speed.py" + ("" if args.part == "all" else f" --part {args.part}")
    if args.part in ("all", "algos"):
        rows = algos(256 if quick else 4096, 1 if quick else (args.repeats or 5), args.only)
        table = ["| Fair class (setting) | env | parent steps/s | Fair steps/s | ratio |", "|---|---|---|---|---|"]
        table += [f"| {w} | {e} | {a:,.0f} | {b:,.0f} | {b / a:.2f}x |" for w, e, a, b in rows]
        sections.append("Each Fair class against its parent, same env, seed and settings (median steps per CPU second of 5 "
                        "interleaved repeats of `learn`, one torch thread, in one process):\n\n" + "\n".join(table))
    if args.part in ("all", "envs"):
        rows_e = envs(500 if quick else 20_000, 1 if quick else (args.repeats or 3))
        base = rows_e[0][1]
        table = ["| env | random-action steps/s | ratio to CartPole-v1 |", "|---|---|---|"]
        table += [f"| {e} | {s:,.0f} | {s / base:.2f}x |" for e, s in rows_e]
        sections.append("Each env with random actions against CartPole-v1 (median of 3 interleaved repeats, "
                        "`gym.make` with its default wrappers):\n\n" + "\n".join(table))
    if args.part in ("all", "threads"):
        rows_t = threads(300 if quick else 2000, 1 if quick else 3)
        table = ["| torch threads | neighbour | wall s (median) |", "|---|---|---|"]
        table += [f"| {s} | {n} | {w:.1f} |" for s, n, w in rows_t]
        sections.append("SB3's DQN on the doughnuts through `train(config)`, 2,000 steps, whole processes (median of 3), "
                        "torch's default threads against one:\n\n" + "\n".join(table))
    if args.part in ("all", "main"):
        rows_m = main_job(1 if quick else 5)
        table = ["| neighbour | wall s |", "|---|---|"] + [f"| {n} | {w:.0f} |" for n, w in rows_m]
        sections.append("The README's main job, `sb3-fair compare --task donut --seeds 5` (its default: one training "
                        "per core at a time):\n\n" + "\n".join(table))
    if quick or args.only is not None or args.repeats is not None:
        return
    from reproduction import write_section

    stamp = time.strftime("%Y-%m-%d")
    text = f"## Speed: `{cmd}` ({stamp})\n\n" + "\n\n".join(sections) + "\n"
    write_section(HERE / "RESULTS.md", f"Speed: `{cmd}`", text)
    print(f"wrote the section 'Speed: `{cmd}`' of {HERE / 'RESULTS.md'}")


if __name__ == "__main__":
    main()
