"""sb3-contrib's algorithms with sb3-fair: two comparisons, same budget and seeds for every method.

``--part harvest``: FairMaskablePPO against FairPPO (and their unpenalised parents) on Allelopathic
Harvest's ``small`` preset, DP penalty at fair-PPO's (alpha, beta) = (0.5, 0.5), lambda = 1, the
settings of ``benchmarks/fair_ppo_harvest.py``. MaskablePPO trains and acts under the game's
``action_masks()`` (an impaired agent can only stay on odd steps; moves into the border, eating or
recolouring without a bush and obstructing with no opponent in range are masked). Reported:
normalised DP unfairness of Table 1, mean return per group on fresh games, training steps/s.

``--part donut``: paper 003's (Alamdari et al. 2024, arXiv:2312.04772) question "explicit memory or
a recurrent network?" on the doughnut task: RecurrentPPO (LSTM) on the env *without* memory in
the observation, PPO on the env with the full memory (MemoryAugmentation), and FairDQN with
FairQCM (the paper preset), each for the paper's 1000 episodes of 100 steps, then the greedy
policy's accumulated Nash-welfare score on 20 fresh episodes. The reward is the same log-Nash
fairness reward in all three; only what the agent sees (and the algorithm) differs.

Usage::

    python benchmarks/contrib_algorithms.py --part harvest --seeds 3
    python benchmarks/contrib_algorithms.py --part donut --seeds 3
    python benchmarks/contrib_algorithms.py --part harvest --quick   # smoke run

Writes ``benchmarks/out/contrib/*.json`` and the two sections of ``benchmarks/RESULTS.md``.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from bench_common import write_section

HERE = Path(__file__).resolve().parent
OUT = HERE / "out" / "contrib"
HARVEST_METHODS = ("PPO", "MaskablePPO", "FairPPO", "FairMaskablePPO")
DONUT_METHODS = ("RecurrentPPO (no memory)", "PPO (full memory)", "FairDQN (FairQCM)")
DONUT_HORIZON = 100


def harvest_ppo_kwargs(seed: int) -> dict[str, Any]:
    return dict(n_steps=150, batch_size=600, n_epochs=4, learning_rate=3e-4, gamma=0.99, ent_coef=0.01, seed=seed)


def run_harvest(job: dict[str, Any]) -> dict[str, Any]:
    import torch as th

    th.set_num_threads(1)
    from sb3_contrib import MaskablePPO
    from stable_baselines3 import PPO

    from sb3_fair import FairMaskablePPO, FairPPO
    from sb3_fair.common.evaluation import evaluate_group_fairness
    from sb3_fair.envs import AllelopathicHarvestEnv
    from sb3_fair.wrappers import make_multiagent_vec_env

    cls = {"PPO": PPO, "MaskablePPO": MaskablePPO, "FairPPO": FairPPO, "FairMaskablePPO": FairMaskablePPO}[job["method"]]
    fair = dict(fairness="dp", alpha=0.5, beta=0.5, fairness_coef=1.0) if job["method"].startswith("Fair") else {}
    env = make_multiagent_vec_env(AllelopathicHarvestEnv.from_preset("small"), n_instances=4)
    model = cls("MlpPolicy", env, **harvest_ppo_kwargs(job["seed"]), **fair)
    t0 = time.perf_counter()
    model.learn(job["steps"])
    seconds = time.perf_counter() - t0
    res = evaluate_group_fairness(model, AllelopathicHarvestEnv.from_preset("small"), n_episodes=job["eval_episodes"],
                                  seed=10_000 + 100 * job["seed"])
    out = {**job, "seconds": seconds, "steps_per_s": job["steps"] / seconds, "dp_normalized": res["dp_normalized"],
           "dp_abs": res["dp_abs"], "episode_return": res["episode_return"],
           "group_0": res["table"][0]["mean_return"], "group_1": res["table"][1]["mean_return"]}
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f"harvest_{job['method']}_{job['seed']}.json").write_text(json.dumps(out))
    print(f"[done] harvest {job['method']} seed={job['seed']} {seconds:.0f}s", flush=True)
    return out


def donut_score(model: Any, env: Any, episodes: int, seed: int, recurrent: bool) -> list[float]:
    """Undiscounted returns (accumulated Nash welfare) of the greedy policy; an LSTM keeps its state within an episode."""
    scores = []
    for e in range(episodes):
        obs, _ = env.reset(seed=seed + e)
        state, start, done, total = None, np.ones((1,), dtype=bool), False, 0.0
        while not done:
            if recurrent:
                action, state = model.predict(obs, state=state, episode_start=start, deterministic=True)
                start = np.zeros((1,), dtype=bool)
            else:
                action, _ = model.predict(obs, deterministic=True)
            obs, r, term, trunc, _ = env.step(action)
            total += float(r)
            done = term or trunc
        scores.append(total)
    return scores


def run_donut(job: dict[str, Any]) -> dict[str, Any]:
    import torch as th

    th.set_num_threads(1)
    from sb3_contrib import RecurrentPPO
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import StopTrainingOnMaxEpisodes

    from sb3_fair import FairDQN
    from sb3_fair.dqn import PAPER_EPISODES
    from sb3_fair.envs import make_donut_allocation

    method, seed, episodes = job["method"], job["seed"], job["episodes"]
    memory = None if method.startswith("RecurrentPPO") else "full"
    env, eval_env = make_donut_allocation(memory=memory), make_donut_allocation(memory=memory)
    steps = episodes * DONUT_HORIZON
    if method.startswith("RecurrentPPO"):
        model = RecurrentPPO("MlpLstmPolicy", env, gamma=0.95, seed=seed)
    elif method.startswith("PPO"):
        model = PPO("MlpPolicy", env, gamma=0.95, seed=seed)
    else:
        model = FairDQN.from_preset("donut", env, counterfactual=True, seed=seed)
        steps = max(episodes, PAPER_EPISODES) * DONUT_HORIZON  # the paper's epsilon schedule, stopped after `episodes`
    t0 = time.perf_counter()
    model.learn(steps, callback=StopTrainingOnMaxEpisodes(episodes) if method.startswith("FairDQN") else None)
    seconds = time.perf_counter() - t0
    scores = donut_score(model, eval_env, job["eval_episodes"], 50_000 + 100 * seed, method.startswith("RecurrentPPO"))
    out = {**job, "seconds": seconds, "env_steps": int(model.num_timesteps), "score": float(np.mean(scores)), "scores": scores}
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f"donut_{method.split()[0]}_{seed}.json").write_text(json.dumps(out))
    print(f"[done] donut {method} seed={seed} {seconds:.0f}s score={out['score']:.1f}", flush=True)
    return out


def random_donut_score(episodes: int, seed: int) -> float:
    from sb3_fair.envs import make_donut_allocation

    env = make_donut_allocation(memory=None)
    env.action_space.seed(seed)
    totals = []
    for e in range(episodes):
        env.reset(seed=50_000 + e)
        done, total = False, 0.0
        while not done:
            _, r, term, trunc, _ = env.step(env.action_space.sample())
            total += float(r)
            done = term or trunc
        totals.append(total)
    return float(np.mean(totals))


def mean_sd(values: list[float], fmt: str = "{:.1f}") -> str:
    return f"{fmt.format(np.mean(values))} ± {fmt.format(np.std(values))}"


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--part", choices=["harvest", "donut"], required=True)
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--steps", type=int, default=500_000, help="harvest: agent-steps per run")
    p.add_argument("--episodes", type=int, default=1000, help="donut: training episodes per run")
    p.add_argument("--eval-episodes", type=int, default=None)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--report-only", action="store_true",
                   help="write the section from the JSON files of finished runs in benchmarks/out/contrib (no training)")
    args = p.parse_args(argv)
    if args.quick:
        args.seeds, args.steps, args.episodes = 1, 4800, 5
    t0 = time.perf_counter()
    if args.part == "harvest":
        evals = args.eval_episodes or (2 if args.quick else 10)
        jobs = [dict(method=m, seed=s, steps=args.steps, eval_episodes=evals) for s in range(args.seeds) for m in HARVEST_METHODS]
        if args.report_only:
            results = [json.loads(f.read_text()) for f in sorted(OUT.glob("harvest_*.json"))]
            results = [r for r in results if r["steps"] == args.steps]
            args.seeds = len({r["seed"] for r in results if all(
                any(x["seed"] == r["seed"] and x["method"] == m for x in results) for m in HARVEST_METHODS)})
            results = [r for r in results if r["seed"] < args.seeds]
            wall = sum(r["seconds"] for r in results) / args.workers
        else:
            with mp.get_context("spawn").Pool(args.workers) as pool:
                results = pool.map(run_harvest, jobs, chunksize=1)
            wall = time.perf_counter() - t0
        rows = []
        for m in HARVEST_METHODS:
            rs = [r for r in results if r["method"] == m]
            rows.append(f"| {m} | {mean_sd([abs(r['dp_normalized']) for r in rs], '{:.3f}')} | "
                        f"{mean_sd([r['group_0'] for r in rs])} | {mean_sd([r['group_1'] for r in rs])} | "
                        f"{mean_sd([r['episode_return'] for r in rs])} | {mean_sd([r['steps_per_s'] for r in rs], '{:.0f}')} |")
        ratio = [next(r["steps_per_s"] for r in results if r["method"] == "FairMaskablePPO" and r["seed"] == s)
                 / next(r["steps_per_s"] for r in results if r["method"] == "FairPPO" and r["seed"] == s) for s in range(args.seeds)]
        text = (
            f"## FairMaskablePPO vs FairPPO on Allelopathic Harvest: `python benchmarks/contrib_algorithms.py --part harvest "
            f"--seeds {args.seeds} --steps {args.steps}`\n\n"
            f"Preset `small` (8 agents, 300-step games), 4 games side by side, one shared policy, {args.steps} agent-steps per run, "
            "PPO n_steps 150, batch 600, 4 epochs, lr 3e-4, entropy 0.01; the Fair classes with the DP penalty at "
            "(alpha, beta) = (0.5, 0.5), lambda = 1. The masked classes train and act under the game's `action_masks()`. "
            f"Evaluated on {evals} fresh games per seed; mean ± sd over {args.seeds} seeds (seeds 0..{args.seeds - 1}, the same "
            f"for every method); group 1 = impaired. Steps/s: training throughput, two runs at a time on the 2 cores "
            f"(FairPPO and FairMaskablePPO of a seed side by side), which other work shared. "
            f"Wall time about {wall / 60:.0f} min.\n\n"
            "| method | DP unfairness (normalised, abs) | group 0 mean return | group 1 mean return | mean return per agent | steps/s |\n"
            "|---|---|---|---|---|---|\n" + "\n".join(rows) + "\n\n"
            f"FairMaskablePPO / FairPPO steps/s per seed: {', '.join(f'{x:.2f}' for x in ratio)}.\n"
        )
        if not args.quick:
            write_section(HERE / "RESULTS.md", "FairMaskablePPO vs FairPPO", text)
    else:
        evals = args.eval_episodes or (2 if args.quick else 20)
        jobs = [dict(method=m, seed=s, episodes=args.episodes, eval_episodes=evals) for s in range(args.seeds) for m in DONUT_METHODS]
        # the slowest (FairQCM) first so that the two workers finish together
        jobs.sort(key=lambda j: not j["method"].startswith("FairDQN"))
        if args.report_only:
            results = [json.loads(f.read_text()) for f in sorted(OUT.glob("donut_*.json"))]
            results = [r for r in results if r["episodes"] == args.episodes and r["seed"] < args.seeds]
            wall = sum(r["seconds"] for r in results) / args.workers
        else:
            with mp.get_context("spawn").Pool(args.workers) as pool:
                results = pool.map(run_donut, jobs, chunksize=1)
            wall = time.perf_counter() - t0
        rand = random_donut_score(evals, 0)
        rows = []
        for m in DONUT_METHODS:
            rs = sorted((r for r in results if r["method"] == m), key=lambda r: r["seed"])
            per_seed = ", ".join(f"{r['score']:.0f}" for r in rs)
            rows.append(f"| {m} | {mean_sd([r['score'] for r in rs])} | {per_seed} | "
                        f"{np.mean([r['env_steps'] for r in rs]):.0f} | {np.mean([r['seconds'] for r in rs]) / 60:.1f} |")
        text = (
            f"## Explicit memory or a recurrent network (doughnuts): `python benchmarks/contrib_algorithms.py --part donut "
            f"--seeds {args.seeds} --episodes {args.episodes}`\n\n"
            "Paper 003's doughnut task (5 customers, 100 steps, log-Nash fairness reward, 0 when a doughnut is wasted). "
            f"Each method trains {args.episodes} episodes of 100 steps (seeds 0..{args.seeds - 1}); then its greedy policy "
            f"plays {evals} fresh episodes; the score is the accumulated Nash welfare (the return), mean ± sd over seeds. "
            "RecurrentPPO (sb3-contrib, `MlpLstmPolicy`, defaults but gamma 0.95) sees only who is present, not how many "
            "doughnuts each customer has had; PPO (defaults but gamma 0.95) sees the full memory (MemoryAugmentation, binary "
            "encoding); FairDQN is the paper preset (`FairDQN.from_preset('donut')`, counterfactual replay). "
            f"A random policy scores {rand:.1f}. Wall time {wall / 60:.0f} min on 2 cores.\n\n"
            "| method | score | per seed | env steps | minutes per run |\n|---|---|---|---|---|\n" + "\n".join(rows) + "\n"
        )
        if not args.quick:
            write_section(HERE / "RESULTS.md", "Explicit memory or a recurrent network", text)
    print(text)


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    main()
