"""Fair-ER / Fair-E: Grupen et al.'s Figs. 3-5 at 2-core scale: capture success and I(R;Z) against pursuer speed.

Reproduces Grupen, Selman and Lee, "Cooperative Multi-Agent Fairness and Equivariant Policies"
(AAAI 2022, arXiv:2106.05727): FairDDPG with the Fair-ER regulariser for lambda in {0, 0.1, 0.5, 0.9},
Fair-E (FairDDPG with the equivariant actor) and the greedy baseline, on ``sb3_fair/PursuitEvasion-v0``
(3 pursuers, 6 x 6 torus). Each model is trained with the paper's speed curriculum (|v_p| from 1.2
down to 0.4, here linear over training) and evaluated greedily at fixed speeds.

Scaling against the paper (125,000 training episodes of up to 500 steps): ``--steps`` env steps per
run (default 50,000), episodes capped at ``--max-steps`` (default 200) in training and evaluation,
``--eval-episodes`` per speed (default 30), ``--seeds`` seeds (default 3); DDPG with SB3's defaults
except networks [128, 128] (the paper's width), batch 256, Gaussian action noise 0.2.

Also times FairDDPG(lambda=0) and FairDDPG(lambda=0.5) against SB3's DDPG on the same env.

``--entry``: FairTD3 at sb3-fair's tuned entry instead (``sb3_fair/hyperparams/fair_td3.yml``, the env's own
entry: 4 x 4 torus, curriculum 2 -> 1, 50,000 steps, episodes of 200 steps), with lambda = 0 (TD3), 0.5 (the
entry), 0.9 and Fair-E (``policy="FairEPolicy"``), each seed's runs paired by seed: per-seed tables and a
paired t-test and exact Wilcoxon test (:func:`reproduction.paired_test`) of each variant against TD3, and of
each lambda > 0 against Fair-E (the paper's §5.3: the utility Fair-ER keeps, a large lambda's over-constraint), for
capture success and I(R;Z) at each evaluation speed (default 2, 1.5, 1.2, 1, 0.8: the paper's collapse
below |v_p| ~ 0.8). Its records live under ``<results>/fair_er/td3_entry/``; no throughput run. ``--entry --size S``
changes the entry's torus alone (records under ``td3_entry_size_S/``): on the 2 x 2 torus learners capture below the
evader's speed, so the paper's low-skill claims can be compared there.

Every run goes through :func:`sb3_fair.experiment.train` (no evaluation there: the runs are
evaluated afterwards at each fixed speed with
:func:`~sb3_fair.common.evaluation.evaluate_team_fairness`). Every run is a trial of ``benchmarks/runner.py`` (its
spec: variant, seed, steps, episode cap, evaluation episodes, curriculum, speeds, torus and ``entry``;
:func:`run_trial`), on Ray (a local Ray by default, ``--address`` for a cluster) or without it (``--local``). Each
run's record is written once to ``<results>/fair_er/<setting>/<variant>_<seed>-<id>.json`` (``--results``; the
setting's folder, :func:`out_dir`, is empty for the paper's curriculum and arena; a smoke run's under ``quick/``), the
training seconds in its sidecar; the records kept before the runner are read in place from
``benchmarks/archive/records.tar.xz`` (``--archive``), a newer record of the same run taking their place. A later call
trains only the runs that have no record with the same settings. Writes the section
"Fair-ER / Fair-E (Grupen et al. 2022)" of ``<out>/RESULTS.md`` and ``<out>/fair_er_pursuit*.png``.

Usage::

    python benchmarks/fair_er.py            # about 25 min on 2 cores (measured: see RESULTS.md)
    python benchmarks/fair_er.py --quick    # smoke run
    python benchmarks/fair_er.py --entry --seeds 10 --workers 2   # FairTD3's tuned entry, 10 seeds
    python benchmarks/fair_er.py --entry --size 2 --speeds 2 1.5 1.2 1 0.8 0.6 --seeds 10   # the entry on a 2 x 2 torus
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np
import runner
from reproduction import (
    Output,
    add_runner_arguments,
    archive_arg,
    archive_files,
    archived,
    check_configs,
    median_steps_per_s,
    reproduce_parser,
    results_root,
)

from sb3_fair.experiment.config import int_at_least, number_in

#: the benchmark's folder under ``<results>/`` (and its records' folder in the archive, ``out/fair_er/``)
RUNS_NAME = "fair_er"
#: the command named in the RESULTS.md headings (the section keys; the script calls :func:`main`)
COMMAND = "python benchmarks/fair_er.py"
ENV_ID = "sb3_fair/PursuitEvasion-v0"
PAPER_CURRICULUM = (1.2, 0.4)
#: the task's settings without ``--entry`` when not given (the paper's curriculum and torus)
TASK_DEFAULTS: dict[str, Any] = {"steps": 50_000, "max_steps": 200, "curriculum": PAPER_CURRICULUM, "size": 6.0}
SPEEDS = (1.2, 1.0, 0.8, 0.6, 0.4)
VARIANTS = {
    "lambda=0": dict(policy="MlpPolicy", equivariance_coef=0.0),
    "lambda=0.1": dict(policy="MlpPolicy", equivariance_coef=0.1),
    "lambda=0.5": dict(policy="MlpPolicy", equivariance_coef=0.5),
    "lambda=0.9": dict(policy="MlpPolicy", equivariance_coef=0.9),
    "Fair-E": dict(policy="sb3_fair.ddpg.policies:FairEPolicy", equivariance_coef=0.0),
}
#: ``--entry``: the variants trained by default and the evaluation speeds
ENTRY_VARIANTS = ("lambda=0", "lambda=0.5", "lambda=0.9", "Fair-E")
ENTRY_SPEEDS = (2.0, 1.5, 1.2, 1.0, 0.8)
#: FairDDPG's hyper-parameters (SB3's DDPG defaults except these); sb3-fair ships no pursuit entry
HYPERPARAMS: dict[str, Any] = dict(learning_rate=1e-3, batch_size=256, buffer_size=200_000, learning_starts=1000, gamma=0.99,
                                   tau=0.005, noise_type="normal", noise_std=0.2, policy_kwargs={"net_arch": [128, 128]})


def experiment_config(job: dict[str, Any]) -> Any:
    """The :class:`~sb3_fair.experiment.ExperimentConfig` of one training run: FairDDPG of ``job["variant"]``
    on the pursuit env (``max_steps``, ``size``) with the speed curriculum as RL Zoo's ``callback``."""
    from sb3_fair.experiment import ExperimentConfig

    spec = VARIANTS[job["variant"]]
    if job.get("entry"):  # FairTD3's tuned entry with only the policy and lambda changed (and the torus, if asked)
        overrides = {"policy": spec["policy"].rsplit(":", 1)[-1], "equivariance_coef": spec["equivariance_coef"]}
        if job["size"] != entry_settings()["size"]:
            overrides["env_kwargs.size"] = job["size"]
        return ExperimentConfig.from_hyperparams(
            "fair_td3", ENV_ID, overrides=overrides,
            seed=job["seed"], n_timesteps=job["steps"], eval_episodes=0, name=f"fair_er-td3-{job['variant']}-seed{job['seed']}",
            group="fair_er_td3")
    start, end = job["curriculum"]
    hyperparams = {"policy": spec["policy"], "equivariance_coef": spec["equivariance_coef"], **HYPERPARAMS,
                   "env_kwargs": {"max_steps": job["max_steps"], "size": job["size"]},
                   "callback": {"sb3_fair.envs.pursuit:SpeedCurriculum": {"start": float(start), "end": float(end)}}}
    return ExperimentConfig(algo="fair_ddpg", env=ENV_ID, hyperparams=hyperparams, seed=job["seed"], n_timesteps=job["steps"],
                            eval_episodes=0, name=f"fair_er-{job['variant']}-seed{job['seed']}", group="fair_er")


def entry_settings() -> dict[str, Any]:
    """FairTD3's tuned pursuit entry's training steps, episode cap, arena and curriculum (``--entry``)."""
    from sb3_fair.experiment import ExperimentConfig

    hp = ExperimentConfig.from_hyperparams("fair_td3", ENV_ID).hyperparams
    curriculum = hp["callback"]["sb3_fair.envs.pursuit:SpeedCurriculum"]
    return {"steps": int(hp["n_timesteps"]), "max_steps": int(hp["env_kwargs"]["max_steps"]), "size": float(hp["env_kwargs"]["size"]),
            "curriculum": [float(curriculum["start"]), float(curriculum["end"])]}


def out_dir(runs: Path, curriculum: tuple[float, float], size: float = TASK_DEFAULTS["size"], entry: bool = False) -> Path:
    """Where the per-run JSON files of one setting live under ``runs`` (the paper's curriculum and arena keep the top
    folder; FairTD3's entry, ``td3_entry``, or ``td3_entry_size_<size>`` on another torus)."""
    if entry:
        return runs / ("td3_entry" if size == entry_settings()["size"] else f"td3_entry_size_{size:g}")
    name = ("" if tuple(curriculum) == PAPER_CURRICULUM else f"curriculum_{curriculum[0]:g}_{curriculum[1]:g}") + (
        "" if size == TASK_DEFAULTS["size"] else f"_size_{size:g}")
    return runs / name.lstrip("_") if name else runs


def evaluate_speeds(policy: Any, max_steps: int, episodes: int, seed: int, speeds: tuple[float, ...] = SPEEDS,
                    size: float = TASK_DEFAULTS["size"]) -> dict[str, dict[str, float]]:
    """Greedy capture success, I(R;Z) and episode length of ``policy`` (a model, or a policy class built on
    each env) at each fixed pursuer speed."""
    import gymnasium as gym

    from sb3_fair.common.evaluation import evaluate_team_fairness

    out = {}
    for v in speeds:
        env = gym.make(ENV_ID, pursuer_speed=v, max_steps=max_steps, size=size)
        pol = policy(env) if isinstance(policy, type) else policy
        res = evaluate_team_fairness(pol, env, n_episodes=episodes, seed=seed)
        out[str(v)] = {k: res[k] for k in ("team_fairness", "capture_success", "mean_length")}
    return out


def run_trial(job: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The runner's trial function: train one variant and seed (``job``, its spec) through
    :func:`~sb3_fair.experiment.train` and evaluate it at each speed.

    :returns: ``(result, meta)``: the evaluation (``eval``) and the run's ``config``, and the seconds in ``learn``
        (the sidecar's ``seconds``).
    """
    import torch as th

    th.set_num_threads(1)
    from sb3_fair.experiment import train

    config = experiment_config(job)
    result = train(config)
    seconds = result.train_time_s
    out = {"eval": evaluate_speeds(result.model, job["max_steps"], job["eval_episodes"], 10_000 + job["seed"],
                                   tuple(job["speeds"]), job["size"]),
           "config": config.to_plain_dict()}
    print(f"[done] {job['variant']} seed={job['seed']} {seconds:.0f}s", flush=True)
    return out, {"seconds": seconds}


def job_file(job: dict[str, Any]) -> str:
    """The file name of ``job``'s record before the runner (its variant and seed): ``Fair-E_0.json``."""
    return f"{job['variant']}_{job['seed']}.json"


def label(job: dict[str, Any]) -> str:
    """The readable prefix of a run's trial id (:func:`runner.trial_id`): ``Fair-E_0`` (``lambda=0.5_0`` becomes
    ``lambda-0.5_0``)."""
    return job_file(job).removesuffix(".json")


def bench(quick: bool, curriculum: Any, size: float, entry: bool) -> str:
    """The folder of a setting's records under ``<results>`` (:func:`out_dir` under ``fair_er``, or
    ``fair_er/quick`` for a smoke run): ``fair_er``, ``fair_er/td3_entry``, ``fair_er/quick/td3_entry_size_2``."""
    return out_dir(Path(RUNS_NAME + ("/quick" if quick else "")), tuple(curriculum), size, entry).as_posix()


def records(results: Path, quick: bool, curriculum: Any, size: float, entry: bool,
            archive: Path | None) -> list[dict[str, Any]]:
    """Every record of a setting's folder, flat (spec, result and the sidecar's ``seconds``, as before the runner):
    the archived ones of that folder (not for a smoke run) by file name, then the runner's in the order they
    finished; of two records of the same run (variant and seed, :func:`pick`) the later one counts."""
    folder = bench(quick, curriculum, size, entry)
    out = []
    if not quick:
        kept = archived(folder + "/", archive)
        out += [kept[name] for name in sorted(kept)
                if "/" not in name[len(folder) + 1:] and Path(name).name != "throughput.json"]
    out += [flat for _, flat in runner.load_flat(results, folder)]
    return out


def _done(job: dict[str, Any], have: list[dict[str, Any]]) -> bool:
    """Whether a record of ``have`` (:func:`records`) is ``job``'s run (variant and seed) with its steps, episode cap
    and evaluation episodes, evaluated at (at least) its speeds."""
    return any(old["variant"] == job["variant"] and old["seed"] == job["seed"]
               and all(old.get(k) == job[k] for k in ("steps", "max_steps", "eval_episodes"))
               and all(str(float(v)) in old["eval"] for v in job["speeds"]) for old in have)


def pick(have: list[dict[str, Any]], args: Any) -> list[dict[str, Any]]:
    """The records the report counts: those of the call's settings (steps, episode cap, curriculum, speeds, torus,
    ``--entry``), one per variant and seed (the last of :func:`records`'), in the order of their file names."""
    speeds = tuple(args.speeds)
    kept = {job_file(r): r for r in have
            if r["steps"] == args.steps and r["max_steps"] == args.max_steps
            and tuple(r.get("curriculum", PAPER_CURRICULUM)) == tuple(args.curriculum) and all(str(v) in r["eval"] for v in speeds)
            and r.get("size", TASK_DEFAULTS["size"]) == args.size and bool(r.get("entry")) == args.entry}
    return [kept[name] for name in sorted(kept)]


def throughput_record(results: Path, quick: bool, folder: str, archive: Path | None) -> dict[str, Any]:
    """The throughput summary the section reports: ``throughput.json`` in the setting's folder (:func:`bench`) under
    ``<results>``, else the archived one (not for a smoke run), else none."""
    path = results / folder / "throughput.json"
    if path.exists():
        return json.loads(path.read_text())
    kept = archive_files(folder + "/throughput.json", archive) if not quick else {}
    return json.loads(next(iter(kept.values()))) if kept else {}


def throughput(steps: int) -> dict[str, float]:
    """Median steps/s of SB3's DDPG, FairDDPG(lambda=0) and FairDDPG(lambda=0.5) on one core."""
    import gymnasium as gym
    import torch as th

    th.set_num_threads(1)
    from stable_baselines3 import DDPG

    import sb3_fair  # noqa: F401
    from sb3_fair import FairDDPG

    kw = dict(learning_starts=200, batch_size=256, policy_kwargs={"net_arch": [128, 128]}, seed=0)

    env = lambda: gym.make(ENV_ID, max_steps=200)  # noqa: E731
    med = median_steps_per_s({
        "ddpg": lambda: DDPG("MlpPolicy", env(), **kw),
        "fair0": lambda: FairDDPG("MlpPolicy", env(), equivariance_coef=0.0, **kw),
        "fair05": lambda: FairDDPG("MlpPolicy", env(), equivariance_coef=0.5, **kw),
    }, steps)
    return {"steps": steps, **{f"{k}_steps_per_s": v for k, v in med.items()},
            "ratio_lambda0": med["fair0"] / med["ddpg"], "ratio_lambda05": med["fair05"] / med["ddpg"]}


def plot(results: list[dict], greedy: dict, path: Path, speeds: tuple[float, ...] = SPEEDS) -> None:
    """Capture success and I(R;Z) against pursuer speed, one line per variant (mean ± s.e. over seeds) and the greedy baseline."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for variant in VARIANTS:
        runs = [r for r in results if r["variant"] == variant]
        if not runs:
            continue
        for ax, key in zip(axes, ("capture_success", "team_fairness")):
            ys = np.array([[r["eval"][str(v)][key] for v in speeds] for r in runs])
            ax.errorbar(speeds, ys.mean(0), yerr=ys.std(0) / np.sqrt(len(ys)), label=f"{variant} (n={len(ys)})", capsize=2)
    for ax, key in zip(axes, ("capture_success", "team_fairness")):
        ax.plot(speeds, [greedy[str(v)][key] for v in speeds], "k--", label="greedy")
        ax.set_xlabel("pursuer speed |v_p|")
        ax.invert_xaxis()
    axes[0].set_ylabel("capture success")
    axes[1].set_ylabel("I(R;Z) (bits, lower = fairer)")
    axes[0].legend(fontsize=7)
    fig.suptitle("Grupen et al. 2022, Figs. 3-5 (scaled)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    """``python benchmarks/fair_er.py [options]`` (``--help`` lists them)."""
    parser = reproduce_parser("fair_er", __doc__)
    parser.add_argument("--seeds", type=int_at_least(1), default=3)
    parser.add_argument("--first-seed", type=int_at_least(0), default=0,
                        help="train seeds FIRST .. FIRST + SEEDS - 1 (e.g. two commands side by side); the report reads every run on disk")
    # None: not given (--entry refuses the first three and takes the entry's own; else TASK_DEFAULTS)
    parser.add_argument("--steps", type=int_at_least(1), default=None, help=f"default: {TASK_DEFAULTS['steps']}")
    parser.add_argument("--max-steps", type=int_at_least(1), default=None, help=f"default: {TASK_DEFAULTS['max_steps']}")
    parser.add_argument("--eval-episodes", type=int_at_least(1), default=30)
    parser.add_argument("--jobs", "--workers", dest="workers", metavar="N", type=int_at_least(1), default=os.cpu_count() or 1,
                        help="runs at a time on a local Ray or --local pool, one CPU and one torch thread each "
                             "(default: one per core)")
    parser.add_argument("--throughput-steps", type=int_at_least(1), default=3000)
    parser.add_argument("--curriculum", type=number_in(0.0, strict=True), nargs=2, default=None, metavar=("START", "END"),
                        help="pursuer speed at the start and end of training (default: the paper's 1.2 0.4)")
    parser.add_argument("--speeds", type=number_in(0.0, strict=True), nargs="+", default=SPEEDS, help="pursuer speeds to evaluate at")
    parser.add_argument("--size", type=number_in(0.0, strict=True), default=None,
                        help="side of the torus (default: the paper's 6; with --entry, the entry's 4)")
    parser.add_argument("--variants", nargs="+", choices=list(VARIANTS), default=None,
                        help="train only these variants (the table shows every variant with results; default: all, "
                             f"with --entry {' '.join(ENTRY_VARIANTS)})")
    parser.add_argument("--entry", action="store_true",
                        help="FairTD3 at sb3-fair's tuned pursuit entry (its steps, episode cap, arena and curriculum; "
                             "--steps, --max-steps and --curriculum are refused, --size changes the torus alone) "
                             "with paired tests against TD3")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-train", action="store_true",
                        help=f"only re-summarise the records (<results>/{RUNS_NAME}/ and the archive's)")
    add_runner_arguments(parser)
    args = parser.parse_args(argv)
    given = [name for name in TASK_DEFAULTS if getattr(args, name) is not None]
    if args.entry:
        refused = [name for name in given if name != "size"]
        if refused:
            parser.error(f"--entry takes the entry's own settings; leave out {' '.join('--' + g.replace('_', '-') for g in refused)}")
        vars(args).update({name: value for name, value in entry_settings().items() if name not in given})
        args.speeds = list(ENTRY_SPEEDS) if tuple(args.speeds) == SPEEDS else args.speeds
    else:
        vars(args).update({name: value for name, value in TASK_DEFAULTS.items() if name not in given})
    args.variants = args.variants or list(ENTRY_VARIANTS if args.entry else VARIANTS)
    if args.quick:
        # smoke run: 200 updates per run after learning_starts, 100 per timed model
        args.seeds, args.steps, args.eval_episodes, args.throughput_steps, args.max_steps = 1, 1200, 2, 300, 50
    import sb3_fair  # noqa: F401
    from sb3_fair.envs import GreedyPursuitPolicy

    results_dir, archive = results_root(args), archive_arg(args)
    output = Output(args.out, RUNS_NAME)
    folder = bench(args.quick, args.curriculum, args.size, args.entry)
    have = records(results_dir, args.quick, args.curriculum, args.size, args.entry, archive)
    t0 = time.perf_counter()
    if not args.no_train:
        jobs = [dict(variant=v, seed=s, steps=args.steps, max_steps=args.max_steps, eval_episodes=args.eval_episodes,
                     curriculum=[float(c) for c in args.curriculum], speeds=[float(v) for v in args.speeds],
                     size=float(args.size), **({"entry": True} if args.entry else {}))
                for s in range(args.first_seed, args.first_seed + args.seeds) for v in args.variants]
        # runs with a record of the same settings are kept (resume, or add seeds to some variants)
        jobs = [j for j in jobs if not _done(j, have)]
        check_configs([experiment_config(j) for j in jobs])  # every run's settings, before the first trains
        if jobs:
            summary = runner.run(folder, jobs, run_trial, results=results_dir, address=args.address, local=args.local,
                                 jobs=args.workers, label=label)
            runner.check_summary(summary)
            have = records(results_dir, args.quick, args.curriculum, args.size, args.entry, archive)
        if not args.entry:
            tp = throughput(args.throughput_steps)
            tp["wall_seconds"] = time.perf_counter() - t0
            path = results_dir / folder / "throughput.json"  # a summary, replaced by each call that trains
            path.parent.mkdir(parents=True, exist_ok=True)
            path.with_suffix(".tmp").write_text(json.dumps(tp))
            path.with_suffix(".tmp").replace(path)
    speeds = tuple(args.speeds)
    results = pick(have, args)
    greedy = evaluate_speeds(GreedyPursuitPolicy, args.max_steps, args.eval_episodes, 10_000, speeds, args.size)
    if args.entry:
        entry_report(results, greedy, args, output)
        return
    tp = throughput_record(results_dir, args.quick, folder, archive)
    if not tp:
        raise SystemExit(f"no throughput summary in {results_dir / folder} (nor the archive's): run it without --no-train")
    default = tuple(args.curriculum) == PAPER_CURRICULUM
    png = output.png("fair_er_pursuit.png" if default and args.size == TASK_DEFAULTS["size"]
                     else f"fair_er_pursuit_{Path(folder).name}.png")
    plot(results, greedy, png, speeds)

    cmd = COMMAND + (" --quick" if args.quick else "") + (
        "" if default else f" --curriculum {args.curriculum[0]:g} {args.curriculum[1]:g}") + (
        "" if speeds == SPEEDS else " --speeds " + " ".join(f"{v:g}" for v in speeds)) + (
        "" if args.steps == TASK_DEFAULTS["steps"] or args.quick else f" --steps {args.steps}") + (
        "" if args.size == TASK_DEFAULTS["size"] else f" --size {args.size:g}")
    head = "| variant | seeds | " + " | ".join(f"capture @ {v}" for v in speeds) + " | " + " | ".join(f"I(R;Z) @ {v}" for v in speeds) + " |"
    lines = [f"## Fair-ER / Fair-E (Grupen et al. 2022): `{cmd}`", "",
             f"Measured on this project's 2-core CPU machine: FairDDPG trained on a {args.size:g} x {args.size:g} torus (paper: 6 x 6), "
             f"{args.steps} env steps per run with the speed "
             f"curriculum {args.curriculum[0]:g} -> {args.curriculum[1]:g}, episodes capped at {args.max_steps} steps, evaluated greedily on {args.eval_episodes} "
             f"episodes per speed; mean ± sd over the seeds counted in the table. Paper: 125,000 episodes of up to 500 steps. "
             f"Wall time {tp.get('wall_seconds', 0) / 60:.0f} min (of the last invocation)." + (
                 "" if args.seeds == 3 and list(args.variants) == list(VARIANTS) else
                 f" Extra seeds came from `{cmd} --seeds {args.seeds} --variants {' '.join(args.variants)}`, which keeps the runs on disk."),
             "", head, "|" + "---|" * (2 + 2 * len(speeds))]
    lines += [*summary_rows(results, greedy, speeds), "", f"![fair-er]({png.name})", "",
              f"Throughput ({tp['steps']} steps, one core, median of 3 interleaved runs): SB3 DDPG {tp['ddpg_steps_per_s']:.0f} steps/s, "
              f"FairDDPG(lambda=0) {tp['fair0_steps_per_s']:.0f} ({tp['ratio_lambda0']:.2f}x), "
              f"FairDDPG(lambda=0.5) {tp['fair05_steps_per_s']:.0f} ({tp['ratio_lambda05']:.2f}x; target >= 0.8x).", ""]
    output.write_section(f"(Grupen et al. 2022): `{cmd}`", "\n".join(lines))
    print("\n".join(lines))


def summary_rows(results: list[dict], greedy: dict, speeds: tuple[float, ...]) -> list[str]:
    """The summary table's rows: per variant with runs, mean ± sd over seeds of capture success then I(R;Z) at each
    speed, and the greedy baseline's row."""
    lines = []
    for variant in VARIANTS:
        runs = [r for r in results if r["variant"] == variant]
        if runs:
            cells = [f"{np.mean(vals):.2f} ± {np.std(vals):.2f}" for key in ("capture_success", "team_fairness") for v in speeds
                     for vals in [[r["eval"][str(v)][key] for r in runs]]]
            lines.append(f"| {variant} | {len(runs)} | " + " | ".join(cells) + " |")
    lines.append("| greedy (App. C) | — | " + " | ".join(f"{greedy[str(v)]['capture_success']:.2f}" for v in speeds) + " | "
                 + " | ".join(f"{greedy[str(v)]['team_fairness']:.2f}" for v in speeds) + " |")
    return lines


def entry_report(results: list[dict], greedy: dict, args: Any, output: Output) -> None:
    """The ``--entry`` section of RESULTS.md: mean ± sd per variant and speed, each seed's capture success and
    I(R;Z), each variant against TD3 (lambda = 0) and each Fair-ER lambda > 0 against Fair-E, paired by seed, and
    the PNG."""
    from reproduction import paired_test

    speeds = tuple(args.speeds)
    entry_size = entry_settings()["size"]
    png = output.png("fair_er_pursuit_td3_entry.png" if args.size == entry_size else f"fair_er_pursuit_td3_entry_size_{args.size:g}.png")
    plot(results, greedy, png, speeds)
    cmd = COMMAND + " --entry" + (" --quick" if args.quick else "") + (
        "" if args.size == entry_size else f" --size {args.size:g}") + (
        "" if speeds == ENTRY_SPEEDS else " --speeds " + " ".join(f"{v:g}" for v in speeds))
    by = {v: {r["seed"]: r for r in results if r["variant"] == v} for v in VARIANTS}
    secs = [r["seconds"] for r in results] or [0.0]
    seeds = sorted({r["seed"] for r in results})
    lines = [f"## Fair-ER / Fair-E at FairTD3's tuned entry (Grupen et al. 2022): `{cmd} --seeds {args.seeds}`", "",
             f"FairTD3 with `sb3_fair/hyperparams/fair_td3.yml`'s pursuit entry ({args.size:g} x {args.size:g} torus"
             + ("" if args.size == entry_size else f" instead of the entry's {entry_size:g} x {entry_size:g}") + ", "
             f"{args.steps:,} steps, curriculum {args.curriculum[0]:g} -> {args.curriculum[1]:g}, episodes capped at {args.max_steps} "
             f"steps), only the policy and lambda changed; evaluated greedily on {args.eval_episodes} episodes per pursuer speed "
             f"(seeded 10,000 + seed). One torch thread per run; training time per run (each record's `seconds`) median "
             f"{np.median(secs):.0f} s, range {min(secs):.0f}–{max(secs):.0f} s (runs side by side with other work on the 2 cores). "
             "I(R;Z) in bits: 0 when who is credited with a capture does not depend on the pursuer, log2 3 = 1.585 when one "
             "pursuer makes every capture; an episode without capture credits nobody.", "",
             "| variant | seeds | " + " | ".join(f"capture @ {v:g}" for v in speeds) + " | "
             + " | ".join(f"I(R;Z) @ {v:g}" for v in speeds) + " |", "|" + "---|" * (2 + 2 * len(speeds))]
    lines += [*summary_rows(results, greedy, speeds), "", f"![fair-er td3 entry]({png.name})", ""]
    # the first two speeds, and the evader's own speed (1.0) where some run captures there (the low-skill boundary)
    shown = [*speeds[:2], *[v for v in speeds[2:] if v == 1.0 and any(r["eval"][str(v)]["capture_success"] > 0 for r in results)]]
    for v0 in shown:
        lines += [f"Per seed at |v_p| = {v0:g} (capture success / I(R;Z)):", "",
                  "| variant | " + " | ".join(f"seed {s}" for s in seeds) + " |", "|" + "---|" * (1 + len(seeds))]
        for variant, runs in by.items():
            if runs:
                lines.append(f"| {variant} | " + " | ".join(
                    f"{runs[s]['eval'][str(v0)]['capture_success']:.2f} / {runs[s]['eval'][str(v0)]['team_fairness']:.3f}"
                    if s in runs else "—" for s in seeds) + " |")
        lines.append("")

    def against(base: dict[int, dict], others: list[str]) -> list[str]:
        """One row per variant and speed: the variant minus ``base``, paired by seed, for both measures."""
        return [f"| {variant} | {v:g} | " + " | ".join(
            paired_test({s: r["eval"][str(v)][key] for s, r in by[variant].items()},
                        {s: r["eval"][str(v)][key] for s, r in base.items()}) for key in ("capture_success", "team_fairness"))
                + " |" for variant in others if by[variant] for v in speeds]

    lines += ["Each variant minus TD3 (lambda = 0), paired by seed (mean ± sd of the differences; two-sided p-values):", "",
              "| variant | speed | capture success | I(R;Z) (bits; < 0: fairer than TD3) |", "|---|---|---|---|",
              *against(by["lambda=0"], [v for v in by if v != "lambda=0"]), ""]
    # the paper's §5.3 compares Fair-ER with Fair-E: the utility Fair-ER keeps (Fig. 4), and a large lambda's
    # over-constraint, possibly below Fair-E
    fair_er = [v for v in by if v not in ("lambda=0", "Fair-E") and by[v]]
    if by["Fair-E"] and fair_er:
        lines += ["Each Fair-ER variant minus Fair-E, paired by seed (capture success > 0: Fair-ER captures more; "
                  "I(R;Z) < 0: Fair-ER is fairer):", "",
                  "| variant | speed | capture success | I(R;Z) (bits) |", "|---|---|---|---|", *against(by["Fair-E"], fair_er), ""]
    output.write_section(f"at FairTD3's tuned entry (Grupen et al. 2022): `{cmd}", "\n".join(lines))
    print("\n".join(lines))


__all__ = ["ENTRY_SPEEDS", "ENTRY_VARIANTS", "HYPERPARAMS", "VARIANTS", "bench", "entry_report", "entry_settings",
           "evaluate_speeds", "experiment_config", "job_file", "label", "main", "pick", "records", "run_trial",
           "summary_rows", "throughput", "throughput_record"]


if __name__ == "__main__":
    main()
