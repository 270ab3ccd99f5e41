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

Every run is a trial of ``benchmarks/runner.py`` (its spec: part, method, seed, budget, evaluation episodes;
:func:`run_harvest`, :func:`run_donut`, :func:`run_disparity`), on Ray (a local Ray by default, ``--address`` for a
cluster) or without it (``--local``). Writes each run's record once to ``<results>/contrib/<trial-id>.json``
(``--results``; a later call trains only the runs without one; a smoke run's under ``quick/``), its training seconds
and steps/s in the sidecar, and the part's section of ``<out>/RESULTS.md`` (not for a smoke run), from those records
and the ones kept before the runner (``benchmarks/archive/records.tar.xz``, ``--archive``).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import runner
from reproduction import add_runner_arguments, archive_arg, archived, reproduce_parser, results_root, write_section

HERE = Path(__file__).resolve().parent
#: the benchmark's folder under ``<results>/`` (and its records' folder in the archive, ``out/contrib/``)
RUNS_NAME = "contrib"
#: what varies from one run of a trial to another: in the sidecar, put back into the flat record
TIMINGS = ("seconds", "steps_per_s")
HARVEST_METHODS = ("PPO", "MaskablePPO", "FairPPO", "FairMaskablePPO")
DONUT_METHODS = ("RecurrentPPO (no memory)", "PPO (full memory)", "FairDQN (FairQCM)")
DONUT_HORIZON = 100
DISPARITY_METHODS = ("PPO", "FairPPO", "FairMaskablePPO", "RecurrentPPO", "FairRecurrentPPO")
# RecurrentPPO on the doughnuts: one 512-step rollout (about 5 episodes) per update and one minibatch of whole
# sequences per epoch; sb3-contrib's defaults (128 / 128) took twice the time per step (28 s vs 13 s per 1000 steps
# in a one-off timing of 2560 steps on one core, beside other work) for the same env-step budget.
DONUT_RECURRENT_KWARGS = dict(n_steps=512, batch_size=512)
# DisparityGame settings of the slow learning check in tests/test_fair_ppo.py.
DISPARITY_KWARGS = dict(n_steps=40, batch_size=80, n_epochs=4, learning_rate=3e-3)


def harvest_ppo_kwargs(seed: int) -> dict[str, Any]:
    return dict(n_steps=150, batch_size=600, n_epochs=4, learning_rate=3e-4, gamma=0.99, ent_coef=0.01, seed=seed)


def run_harvest(job: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The trial function of ``--part harvest``: train one method for one seed (``job``, its spec) and evaluate it.

    :returns: ``(result, meta)``: DP and the groups' returns, and the training's seconds and steps/s (the sidecar's).
    """
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
    out = {"dp_norm": res["dp_norm"], "dp_abs": res["dp_abs"], "episode_return": res["episode_return"],
           "group_0": res["table"][0]["mean_return"], "group_1": res["table"][1]["mean_return"]}
    print(f"[done] harvest {job['method']} seed={job['seed']} {seconds:.0f}s", flush=True)
    return out, {"seconds": seconds, "steps_per_s": job["steps"] / seconds}


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


def run_donut(job: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The trial function of ``--part donut``: train one method for one seed (``job``, its spec) and score it.

    :returns: ``(result, meta)``: the env steps and scores, and the training's seconds (the sidecar's).
    """
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
        model = RecurrentPPO("MlpLstmPolicy", env, gamma=0.95, seed=seed, **DONUT_RECURRENT_KWARGS)
    elif method.startswith("PPO"):
        model = PPO("MlpPolicy", env, gamma=0.95, seed=seed)
    else:
        model = FairDQN.from_preset("donut", env, counterfactual=True, seed=seed)
        steps = max(episodes, PAPER_EPISODES) * DONUT_HORIZON  # the paper's epsilon schedule, stopped after `episodes`
    t0 = time.perf_counter()
    model.learn(steps, callback=StopTrainingOnMaxEpisodes(episodes) if method.startswith("FairDQN") else None)
    seconds = time.perf_counter() - t0
    scores = donut_score(model, eval_env, job["eval_episodes"], 50_000 + 100 * seed, method.startswith("RecurrentPPO"))
    out = {"env_steps": int(model.num_timesteps), "score": float(np.mean(scores)), "scores": scores}
    print(f"[done] donut {method} seed={seed} {seconds:.0f}s score={out['score']:.1f}", flush=True)
    return out, {"seconds": seconds}


def run_disparity(job: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The trial function of ``--part disparity``: train one method for one seed (``job``, its spec), evaluate it.

    :returns: ``(result, meta)``: the DP gap and the groups' returns, and the training's seconds and steps/s.
    """
    import torch as th

    th.set_num_threads(1)
    from sb3_contrib import RecurrentPPO
    from stable_baselines3 import PPO

    from sb3_fair import FairMaskablePPO, FairPPO, FairRecurrentPPO
    from sb3_fair.common.evaluation import evaluate_group_fairness
    from sb3_fair.envs import DisparityGame
    from sb3_fair.wrappers import make_multiagent_vec_env

    method = job["method"]
    cls = {"PPO": PPO, "FairPPO": FairPPO, "FairMaskablePPO": FairMaskablePPO, "RecurrentPPO": RecurrentPPO,
           "FairRecurrentPPO": FairRecurrentPPO}[method]
    fair = dict(fairness="dp", alpha=0.5, beta=0.5, fairness_coef=1.0) if method.startswith("Fair") else {}
    policy = "MlpLstmPolicy" if "Recurrent" in method else "MlpPolicy"
    env = make_multiagent_vec_env(DisparityGame(n_agents=8, disparity=0.5), n_instances=2)
    model = cls(policy, env, **DISPARITY_KWARGS, seed=job["seed"], **fair)
    t0 = time.perf_counter()
    # DisparityGame has no action masks: FairMaskablePPO trains as a plain policy with the same penalty
    model.learn(job["steps"], **({"use_masking": False} if "Maskable" in method else {}))
    seconds = time.perf_counter() - t0
    res = evaluate_group_fairness(model, DisparityGame(n_agents=8, disparity=0.5), n_episodes=job["eval_episodes"],
                                  seed=10_000 + 100 * job["seed"])
    out = {"dp_abs": res["dp_abs"], "episode_return": res["episode_return"],
           "group_0": res["table"][0]["mean_return"], "group_1": res["table"][1]["mean_return"]}
    print(f"[done] disparity {method} seed={job['seed']} {seconds:.0f}s dp_abs={out['dp_abs']:.2f}", flush=True)
    return out, {"seconds": seconds, "steps_per_s": job["steps"] / seconds}


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


#: each part's trial function
TRIALS = {"harvest": run_harvest, "donut": run_donut, "disparity": run_disparity}


def job_file(part: str, job: dict[str, Any]) -> str:
    """The file name of a run's record before the runner: ``<part>_<method>_<seed>.json`` (the method's first word)."""
    return f"{part}_{job['method'].split()[0]}_{job['seed']}.json"


def label(spec: dict[str, Any]) -> str:
    """The readable prefix of a run's trial id (:func:`runner.trial_id`): ``donut_FairDQN_0``."""
    return job_file(spec["part"], spec).removesuffix(".json")


def bench(quick: bool) -> str:
    """The folder of a call's records under ``<results>``: ``contrib``, or ``contrib/quick`` for a smoke run."""
    return f"{RUNS_NAME}/quick" if quick else RUNS_NAME


def same_job(result: dict[str, Any], job: dict[str, Any]) -> bool:
    """``result`` (a finished run's record, flat) was produced by ``job``'s settings."""
    return all(result.get(k) == v for k, v in job.items())


def records(part: str, results: Path, quick: bool, archive: Path | None) -> list[tuple[str, dict[str, Any]]]:
    """Every record of ``part``, flat (the job's settings, the result and the sidecar's :data:`TIMINGS`, as a record
    was before the runner), with its file name before the runner (:func:`job_file`): the archived ones (not for a
    smoke run), then the runner's in the order they finished.

    :raises SystemExit: a record of sb3-fair < 0.5.0 (its figure, under its old name, has the opposite sign).
    """
    from sb3_fair.common.figure_table import check_not_renamed

    kept = archived(f"{RUNS_NAME}/{part}_", archive) if not quick else {}
    out = [(Path(name).name, r, f"{archive}:out/{name}") for name, r in sorted(kept.items())]
    for r in sorted(runner.load(results, bench(quick)), key=lambda r: r["meta"].get("finished", "")):
        if r["spec"].get("part") == part:
            flat = {**{k: v for k, v in r["spec"].items() if k != "part"}, **r["result"],
                    **{k: r["meta"][k] for k in TIMINGS if k in r["meta"]}}
            out.append((job_file(part, flat), flat, r["id"]))
    for _, r, where in out:
        try:
            for name in r:
                check_not_renamed(name, where)
        except ValueError as err:
            raise SystemExit(f"{err}: move the record away to run it again") from None
    return [(name, r) for name, r, _ in out]


def finished_runs(part: str, jobs: list[dict[str, Any]], results: Path, archive: Path | None) -> list[dict[str, Any]]:
    """The records of ``jobs`` (:func:`records`), in the order of their file names; of two records of one job, the
    later (the runner's)."""
    quick = bool(jobs and jobs[0].get("quick"))
    found: dict[int, tuple[str, dict[str, Any]]] = {}
    for name, r in records(part, results, quick, archive):
        for i, job in enumerate(jobs):
            if same_job(r, job):
                found[i] = (name, r)
    return [r for _, r in sorted(found.values(), key=lambda nr: nr[0])]


def collect_runs(part: str, jobs: list[dict[str, Any]], args: argparse.Namespace) -> list[dict[str, Any]]:
    """The runs of ``jobs``: the finished ones (records and archive), the others trained now on the runner (none with
    ``--report-only``)."""
    done = finished_runs(part, jobs, args.results, args.archive)
    todo = [] if args.report_only else [j for j in jobs if not any(same_job(r, j) for r in done)]
    if not todo:
        return done
    summary = runner.run(bench(bool(todo[0].get("quick"))), [{"part": part, **j} for j in todo], TRIALS[part],
                         results=args.results, address=args.address, local=args.local, jobs=args.workers, label=label)
    runner.check_summary(summary)
    return finished_runs(part, jobs, args.results, args.archive)


def donut_pairs(results: list[dict[str, Any]]) -> str:
    """The doughnut methods against each other, paired by seed (:func:`reproduction.paired_test`): each memory-aware
    method minus the recurrent one, and FairQCM minus PPO; empty when fewer than two seeds pair."""
    from reproduction import paired_test

    score = {m: {r["seed"]: r["score"] for r in results if r["method"] == m} for m in DONUT_METHODS}
    recurrent, ppo, fairqcm = DONUT_METHODS
    pairs = [(ppo, recurrent), (fairqcm, recurrent), (fairqcm, ppo)]
    rows = [f"| {a} − {b} | {sum(score[a][s] > score[b][s] for s in set(score[a]) & set(score[b]))} of "
            f"{len(set(score[a]) & set(score[b]))} | {paired_test(score[a], score[b], '{:.1f}')} |"
            for a, b in pairs if len(set(score[a]) & set(score[b])) >= 2]
    if not rows:
        return ""
    return ("\nPaired by seed (same seed number; mean ± sd of the differences, two-sided paired t-test and exact Wilcoxon "
            "signed-rank test):\n\n| difference | seeds higher | score |\n|---|---|---|\n" + "\n".join(rows) + "\n")


def mean_sd(values: list[float], fmt: str = "{:.1f}") -> str:
    return f"{fmt.format(np.mean(values))} ± {fmt.format(np.std(values))}"


def main(argv: list[str] | None = None) -> None:
    p = reproduce_parser("contrib_algorithms", __doc__)
    p.add_argument("--part", choices=["harvest", "donut", "disparity"], required=True)
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--steps", type=int, default=None,
                   help="agent-steps per run (harvest: default 500000; disparity: default 12000)")
    p.add_argument("--episodes", type=int, default=1000, help="donut: training episodes per run")
    p.add_argument("--eval-episodes", type=int, default=None)
    p.add_argument("--jobs", "--workers", dest="workers", metavar="N", type=int, default=2,
                   help="runs at a time on a local Ray or --local pool, one CPU each")
    p.add_argument("--quick", action="store_true", help="a smoke run (records under <results>/contrib/quick/)")
    p.add_argument("--resume", action="store_true",
                   help="(the default now) keep the finished runs with the same settings, train only the others")
    p.add_argument("--report-only", action="store_true",
                   help="write the section from the records of finished runs (results and archive; no training)")
    add_runner_arguments(p)
    args = p.parse_args(argv)
    args.results, args.archive = results_root(args), archive_arg(args)
    out = Path(args.out)
    if args.steps is None:
        args.steps = {"harvest": 500_000, "disparity": 12_000}.get(args.part, 0)
    if args.quick:
        args.seeds, args.steps, args.episodes = 1, 4800, 5
    quick = {"quick": True} if args.quick else {}  # smoke runs keep their files apart (benchmarks/out/contrib/quick)
    if args.part == "harvest":
        evals = args.eval_episodes or (2 if args.quick else 10)
        jobs = [dict(method=m, seed=s, steps=args.steps, eval_episodes=evals, **quick) for s in range(args.seeds)
                for m in HARVEST_METHODS]
        results = collect_runs("harvest", jobs, args)
        if args.report_only:
            # the seeds for which every method finished
            args.seeds = len({r["seed"] for r in results if all(
                any(x["seed"] == r["seed"] and x["method"] == m for x in results) for m in HARVEST_METHODS)})
            results = [r for r in results if r["seed"] < args.seeds]
        rows = []
        for m in HARVEST_METHODS:
            rs = [r for r in results if r["method"] == m]
            rows.append(f"| {m} | {mean_sd([abs(r['dp_norm']) for r in rs], '{:.3f}')} | "
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
            f"(FairPPO and FairMaskablePPO of a seed side by side), which other work shared; seeds may have run at "
            "different times and loads (`--resume`), so compare steps/s within a seed (the ratios below), not across seeds. "
            f"The runs took {sum(r['seconds'] for r in results) / 60:.0f} min of training in all, {args.workers} at a time.\n\n"
            "| method | DP unfairness (normalised, abs) | group 0 mean return | group 1 mean return | mean return per agent | steps/s |\n"
            "|---|---|---|---|---|---|\n" + "\n".join(rows) + "\n\n"
            f"FairMaskablePPO / FairPPO steps/s per seed: {', '.join(f'{x:.2f}' for x in ratio)}.\n"
        )
        if not args.quick:
            out.mkdir(parents=True, exist_ok=True)
            write_section(out / "RESULTS.md", "FairMaskablePPO vs FairPPO", text)
    elif args.part == "disparity":
        evals = args.eval_episodes or (2 if args.quick else 5)
        jobs = [dict(method=m, seed=s, steps=args.steps, eval_episodes=evals, **quick) for s in range(args.seeds)
                for m in DISPARITY_METHODS]
        results = collect_runs("disparity", jobs, args)
        rows = []
        for m in DISPARITY_METHODS:
            rs = sorted((r for r in results if r["method"] == m), key=lambda r: r["seed"])
            per_seed = ", ".join(f"{abs(r['dp_abs']):.2f}" for r in rs)
            rows.append(f"| {m} | {mean_sd([abs(r['dp_abs']) for r in rs], '{:.2f}')} | {per_seed} | "
                        f"{mean_sd([r['group_0'] for r in rs])} | {mean_sd([r['group_1'] for r in rs])} | "
                        f"{mean_sd([r['steps_per_s'] for r in rs], '{:.0f}')} |")
        text = (
            f"## The group penalty on every on-policy parent (DisparityGame): `python benchmarks/contrib_algorithms.py "
            f"--part disparity --seeds {args.seeds} --steps {args.steps}`\n\n"
            "DisparityGame (8 agents in two groups of 4, redrawn each game; working pays 1 to group 1 and 0.5 to "
            "group 0, resting 0.2 to both; 20-step games), two games side by side, one shared policy, "
            f"{args.steps} agent-steps per run, n_steps 40, batch 80, 4 epochs, lr 3e-3 (the slow learning check's "
            "settings); the Fair classes with the DP penalty at (alpha, beta) = (0.5, 0.5), lambda = 1; the game has no "
            "action masks, so FairMaskablePPO learns with `use_masking=False`. The recurrent classes use `MlpLstmPolicy`. "
            f"Evaluated on {evals} fresh games per seed (sampled actions); mean ± sd over seeds 0..{args.seeds - 1}. "
            "DP gap = |mean return of group 1 - mean return of group 0| per game (10 when everybody works all 20 "
            f"steps). Steps/s: two runs at a time on the 2 cores. The runs took {sum(r['seconds'] for r in results) / 60:.0f} min of training "
            "in all.\n\n"
            "| method | DP gap (abs) | per seed | group 0 mean return | group 1 mean return | steps/s |\n"
            "|---|---|---|---|---|---|\n" + "\n".join(rows) + "\n"
        )
        if not args.quick:
            out.mkdir(parents=True, exist_ok=True)
            write_section(out / "RESULTS.md", "The group penalty on every on-policy parent", text)
    else:
        evals = args.eval_episodes or (2 if args.quick else 20)
        jobs = [dict(method=m, seed=s, episodes=args.episodes, eval_episodes=evals, **quick,
                     **({"kwargs": DONUT_RECURRENT_KWARGS} if m.startswith("RecurrentPPO") else {}))
                for s in range(args.seeds) for m in DONUT_METHODS]
        # the slowest (FairQCM, then RecurrentPPO) first so that the two workers finish together
        jobs.sort(key=lambda j: (not j["method"].startswith("FairDQN"), not j["method"].startswith("Recurrent")))
        results = collect_runs("donut", jobs, args)
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
            "RecurrentPPO (sb3-contrib, `MlpLstmPolicy`, defaults but gamma 0.95, n_steps 512 and batch 512: one minibatch of "
            "whole sequences per epoch) sees only who is present, not how many "
            "doughnuts each customer has had; PPO (defaults but gamma 0.95) sees the full memory (MemoryAugmentation, binary "
            "encoding); FairDQN is the paper preset (`FairDQN.from_preset('donut')`, counterfactual replay). "
            f"A random policy scores {rand:.1f}. The runs took {sum(r['seconds'] for r in results) / 60:.0f} min of training in all, "
            f"{args.workers} at a time on the 2 cores.\n\n"
            "| method | score | per seed | env steps | minutes per run |\n|---|---|---|---|---|\n" + "\n".join(rows) + "\n"
            + donut_pairs(results)
        )
        if not args.quick:
            out.mkdir(parents=True, exist_ok=True)
            write_section(out / "RESULTS.md", "Explicit memory or a recurrent network", text)
    print(text)


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    main()
