"""The ``sb3-fair`` command: train, evaluate and compare any algorithm on any env, through :mod:`sb3_fair.experiment`.

Examples::

    sb3-fair compare --task donut --seeds 5                     # DQN vs FairDQN (tuned), fairness table + PNG
    sb3-fair compare --task harvest --seeds 2 --episodes 60     # PPO vs FairPPO on Allelopathic Harvest
    sb3-fair train --algo fair_dqn --env sb3_fair/DonutAllocation-v0 --timesteps 50000 --save fairqcm.zip
    sb3-fair evaluate fairqcm.zip --episodes 50 --json
    sb3-fair train --algo fair_ppo --env sb3_fair/DelayedImpactLending-v0 --variant f_ppo_l -p delta=0.01
    sb3-fair train --algo fair_ppo --env sb3_fair/AllelopathicHarvest-v0 -p env_kwargs.preset=tiny -p alpha=1.0
    sb3-fair train --config my_experiment.yml --seed 3
    sb3-fair sweep my_experiment.yml --grid alpha=0,0.5,1 beta=0,0.5 --seeds 3 --name dp-weights
    sb3-fair train --algo ppo --env my/Env-v0 --gym-packages mymodule --trust-config --timesteps 10000
    sb3-fair train --algo fair_ppo --env mymodule:make_game --trust-config --timesteps 10000

The papers' benchmarks are scripts in the repository's ``benchmarks/`` (``python benchmarks/fairqcm.py --quick``).

``--algo`` takes RL Zoo's names (``ppo``, ``dqn``, ``ppo_lstm`` ...), ``ppo_mask`` and ``fair_*``;
``--env`` a Gymnasium id or a multi-agent game (``sb3_fair/AllelopathicHarvest-v0``,
``sb3_fair/DisparityGame-v0``); an env of your own module is ``MODULE:ID`` (a Gymnasium id or game the module
registers), ``MODULE:FACTORY`` (a function returning a PettingZoo ``ParallelEnv``) or its id with ``--gym-packages
MODULE`` (importing a module runs its code: with ``--trust-config``). Hyper-parameters come from ``sb3_fair/hyperparams/<algo>.yml``
(RL Zoo's format, keyed by env id; ``--variant`` picks ``<env id>@<variant>``) or ``--config``,
then ``-p key=value`` overrides (dotted keys reach into mappings).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from sb3_fair.common.validation import MAX_COEF
from sb3_fair.experiment.config import int_at_least, number_in

#: runs of at least this many steps show a progress bar unless --quiet
PROGRESS_BAR_STEPS = 5_000


def _check_output_path(parser: argparse.ArgumentParser, option: str, path: str | None) -> None:
    """Fail before any training when ``path`` cannot be written (a model trained for nothing is lost otherwise)."""
    from sb3_fair.experiment.files import check_output_path

    if not path:
        return
    try:
        check_output_path(path, option)
    except ValueError as err:
        parser.error(f"argument {err}")


def _parse_kv(items: list[str] | None, option: str = "--env-kwargs") -> dict[str, Any]:
    """``key=value`` pairs, each value read as YAML (numbers, lists, true/false)."""
    from sb3_fair.experiment.config import parse_value

    out: dict[str, Any] = {}
    for item in items or []:
        if "=" not in item or not item.split("=", 1)[0]:
            raise SystemExit(f"{option} takes key=value pairs, got {item!r}")
        key, value = item.split("=", 1)
        out[key] = parse_value(value)
    return out


def _config_from_args(args: argparse.Namespace) -> Any:
    """The :class:`~sb3_fair.experiment.ExperimentConfig` the ``train`` arguments describe."""
    from sb3_fair.experiment import ExperimentConfig

    overrides = list(args.params or [])
    if getattr(args, "learning_rate", None) is not None:
        overrides.append(f"learning_rate={args.learning_rate!r}")
    fields: dict[str, Any] = {}  # only what the command line gives: the rest comes from the file (or the defaults)
    if args.eval_env_kwargs:
        fields["eval_env_kwargs"] = _parse_kv(args.eval_env_kwargs, "--eval-env-kwargs")
    for name in (
        "save",
        "checkpoint_every",
        "checkpoint_buffers",
        "num_threads",
        "seed",
        "eval_episodes",
        "eval_seed",
        "name",
        "group",
        "tensorboard_log",
        "verbose",
    ):
        if getattr(args, name, None) is not None:
            fields["save_path" if name == "save" else name] = getattr(args, name)
    if args.timesteps is not None:
        fields["n_timesteps"] = args.timesteps
    if args.wandb:
        fields["wandb"] = True
    if getattr(args, "trust_config", False):
        fields["trusted"] = True
    if getattr(args, "gym_packages", None):
        fields["gym_packages"] = list(args.gym_packages)
    config_file = Path(args.config) if args.config else None
    if config_file is None and args.command == "train" and args.resume:  # a checkpoint folder holds the run's config
        from sb3_fair.experiment.persistence import saved_config_path

        saved = saved_config_path(args.resume)
        config_file = saved if saved.is_file() else None
    if config_file is not None:
        from sb3_fair.common.hyperparams import load_yaml

        data = load_yaml(config_file.read_text(), str(config_file)) or {}
        if isinstance(data, dict) and "algo" in data and "env" in data:  # an experiment file
            for name in ("algo", "env", "variant"):
                if getattr(args, name) is not None:
                    fields[name] = getattr(args, name)
            return ExperimentConfig.from_file(config_file, overrides=overrides, **fields)
        if not args.algo or not args.env:
            raise ValueError(f"{config_file} is a hyper-parameter file (keyed by env id): give --algo and --env too")
        return ExperimentConfig.from_hyperparams(
            args.algo, args.env, variant=args.variant, file=config_file, overrides=overrides, **fields
        )
    if not args.algo or not args.env:
        raise ValueError("train needs --algo and --env (or --config with an experiment file naming them)")
    return ExperimentConfig.from_hyperparams(args.algo, args.env, variant=args.variant, overrides=overrides, **fields)


def cmd_train(args: argparse.Namespace) -> None:
    from sb3_fair.experiment import train

    config = _config_from_args(args)
    config.progress_bar = not args.quiet and config.n_timesteps >= PROGRESS_BAR_STEPS
    if not args.json:
        print(
            f"training {config.algo} on {config.env}{' @' + config.variant if config.variant else ''}: {config.n_timesteps:,} steps, "
            f"seed {config.seed}",
            flush=True,
        )
    if config.checkpoint_every and not args.json:
        from sb3_fair.experiment.persistence import checkpoint_folder

        folder = checkpoint_folder(config)
        print(
            f"checkpoints every {config.checkpoint_every} steps in {folder}/ (resume with --resume {folder}/model_<N>_steps.zip)"
        )
    result = train(config, resume=args.resume)
    if config.checkpoint_every and not args.json:
        print(
            f"checkpoints: {result.checkpoint_bytes / 1e6:.1f} MB on disk (every model; the replay buffers of the newest "
            f"{config.checkpoint_buffers})"
        )
    if args.resume and not args.json:
        buffer = f" with its replay buffer ({Path(result.resumed_buffer).name})" if result.resumed_buffer else ""
        print(f"resumed {args.resume} at {result.resumed_at} steps{buffer}; now at {result.n_timesteps} steps")
    if result.save_path and not args.json:
        print(f"saved {result.save_path} (and its config, {Path(result.save_path).with_suffix('').name}.config.yml)")
    _report(
        result.evaluation,
        result.table,
        args.json,
        f"{config.env}: {config.eval_episodes} evaluation episodes",
        Path(config.save_path).stem if config.save_path else config.algo,
    )


def _report(
    evaluation: dict[str, float], table: dict[int, dict[str, float]], as_json: bool, title: str, name: str
) -> None:
    if as_json:
        print(json.dumps({"evaluation": evaluation, "table": {str(g): row for g, row in table.items()}}, indent=2))
        return
    if evaluation:
        _print_table({name: evaluation}, list(evaluation), title=title)
    if table:
        columns = sorted({k for row in table.values() for k in row})
        _print_table({f"group {g}": row for g, row in table.items()}, columns, title="per group")


def cmd_evaluate(args: argparse.Namespace) -> None:
    from sb3_fair.experiment.evaluation import evaluate_saved

    evaluation, table, env_id = evaluate_saved(
        args.model,
        env_id=args.env,
        n_episodes=args.episodes,
        env_kwargs=_parse_kv(args.env_kwargs),
        deterministic=args.deterministic,
        seed=args.seed,
        algo=args.algo,
        gym_packages=args.gym_packages,
        trusted=args.trust_config,
    )
    _report(evaluation, table, args.json, f"{env_id}: {args.episodes} evaluation episodes", Path(args.model).stem)


def cmd_sweep(args: argparse.Namespace) -> None:
    from sb3_fair.experiment.sweep import parse_grid, parse_space, points, sweep

    base = _config_from_args(args)
    if args.resume and args.sweep_name is None:
        raise ValueError("--resume needs the --name of the sweep to go on with")
    result = sweep(
        base,
        grid=parse_grid(args.grid),
        seeds=args.seeds,
        space=parse_space(args.space),
        search=args.search,
        samples=args.samples,
        metric=args.metric,
        mode=args.mode,
        name=args.sweep_name,
        storage=args.storage,
        address=args.address,
        resume=args.resume,
        max_concurrent=args.max_concurrent,
        utility=args.utility,
        unfairness=args.unfairness,
    )
    from sb3_fair.experiment.sweep import UNFAIRNESS_KEYS, UTILITY_KEYS, _first_reported

    utility = args.utility or _first_reported(result.table, UTILITY_KEYS)
    unfairness = args.unfairness or _first_reported(result.table, UNFAIRNESS_KEYS)
    if utility and unfairness:
        rows = {
            ", ".join(f"{k}={v}" for k, v in p["point"].items()) or "base": {
                utility: f"{p['utility']:.3f} ± {p['utility_std']:.3f}",
                unfairness: f"{p['unfairness']:.3f} ± {p['unfairness_std']:.3f}",
                "trials": str(p["trials"]),
                "Pareto": "yes" if p["pareto"] else "",
            }
            for p in points(result.table, utility, unfairness)
        }
        _print_table(
            rows,
            [utility, unfairness, "trials", "Pareto"],
            title=f"sweep {result.path.name if result.path else args.sweep_name}: mean ± sd over seeds",
        )
    for row in result.errors:
        print(f"trial {row['trial']} failed: {row['error']}")
    print(
        f"{len(result.finished)} of {len(result.table)} trials finished; table {result.csv_path}"
        + (f", Pareto plot {result.plot_path}" if result.plot_path else "")
    )


def _compare_task(args: argparse.Namespace) -> Any:
    """The ``compare --task`` named by ``args`` (shipped, or from ``--tasks-file``)."""
    from sb3_fair.experiment.compare import load_tasks

    tasks = load_tasks(args.tasks_file)
    if args.task not in tasks:
        raise ValueError(f"--task must be one of {sorted(tasks)}, got {args.task!r}")
    return tasks[args.task]


def _task_configs(args: argparse.Namespace, seed: int, task: Any = None) -> dict[str, Any]:
    """The configs of a ``compare --task`` (``task``: the one ``args`` names, read once by the caller), in the task's
    order (baselines first)."""
    from sb3_fair.experiment.compare import task_configs

    fields: dict[str, Any] = dict(
        eval_episodes=args.eval_episodes,
        wandb=bool(args.wandb),
        tensorboard_log=args.tensorboard_log,
        group=f"compare-{args.task}",
    )
    if args.num_threads is not None:
        fields["num_threads"] = args.num_threads
    if args.trust_config:
        fields["trusted"] = True
    if args.gym_packages:
        fields["gym_packages"] = list(args.gym_packages)
    overrides = {"learning_rate": args.learning_rate} if args.learning_rate is not None else {}
    task = _compare_task(args) if task is None else task
    return task_configs(task, seed, episodes=args.episodes, options=_options(args), overrides=overrides, **fields)


def cmd_compare(args: argparse.Namespace) -> None:
    from sb3_fair.experiment.compare import compare_runs, log_comparison, plot_comparison
    from sb3_fair.experiment.registry import MULTIAGENT_ENVS

    task = _compare_task(args)
    figures = task.figures
    t0 = time.perf_counter()
    runs = [
        (seed, name, config) for seed in range(args.seeds) for name, config in _task_configs(args, seed, task).items()
    ]
    configs = {name: config for _, name, config in runs}
    jobs = min(args.jobs or os.cpu_count() or 1, len(runs))
    for _, _, config in runs:  # bars of runs side by side would overwrite each other
        config.progress_bar = jobs == 1 and not args.quiet and config.n_timesteps >= PROGRESS_BAR_STEPS
    unit = "agent-steps" if task.env in MULTIAGENT_ENVS else "steps"

    def start(i: int, config: Any) -> None:  # one run at a time: say what starts
        seed, name, _ = runs[i]
        print(f"training {name}, seed {seed}: {config.n_timesteps:,} {unit} of {config.env}", flush=True)

    def done(i: int, result: Any) -> None:  # runs side by side: say what finished
        seed, name, _ = runs[i]
        print(
            f"trained {name}, seed {seed}: {result.n_timesteps:,} {unit} of {result.config.env} in {result.train_time_s:.0f} s",
            flush=True,
        )

    if jobs > 1:
        print(f"training {len(runs)} runs ({len(configs)} agents x {args.seeds} seeds), {jobs} at a time", flush=True)
    comparison = compare_runs(
        task, runs, jobs=jobs, on_start=start if jobs == 1 else None, on_done=done if jobs > 1 else None
    )
    n_steps = " / ".join(f"{n:,}" for n in sorted({c.n_timesteps for c in configs.values()}))
    values = task.option_values(_options(args))
    shown = ", ".join(f"{k} {v:g}" if isinstance(v, float) else f"{k} {v}" for k, v in values.items())
    notes = "".join(
        [
            f"; {', '.join(task.absolute)} as |x|" if task.absolute else "",
            "; pof = price of fairness in %" if task.price_of_fairness else "",
        ]
    )
    title = (
        f"{task.env}{f' ({shown})' if shown else ''}: {args.seeds} seed(s) x {n_steps} training {unit}, "
        f"{args.eval_episodes} evaluation episodes each{notes} "
    )
    _print_table(
        comparison.table, figures, spread=comparison.spread, title=title + f"({time.perf_counter() - t0:.0f} s)"
    )
    absent = comparison.absent
    if absent:  # a figure the table names but no evaluation reported (e.g. a group figure of a one-group env)
        print(
            f"no run reported {', '.join(absent)} (nan in the table): {task.env}'s evaluation has no such figure",
            file=sys.stderr,
        )
    if args.plot:
        plot_comparison(task, comparison.per_seed, args.plot, curves=comparison.curves, returns=comparison.returns)
        print(f"wrote {args.plot}")
    if args.wandb:  # the comparison's plot and table, in one summary run of the experiment's group
        log_comparison(
            comparison,
            f"compare-{args.task}-summary",
            f"compare-{args.task}",
            {"task": args.task, "seeds": args.seeds, "episodes": args.episodes},
            plot=args.plot,
        )


def _options(args: argparse.Namespace) -> dict[str, Any]:
    from sb3_fair.experiment.compare import OPTIONS

    return {name: getattr(args, name) for name in OPTIONS}


def _print_table(
    rows: dict[str, dict[str, Any]], columns: list[str], title: str, spread: dict[str, dict[str, float]] | None = None
) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title)
    table.add_column("")
    for col in columns:
        table.add_column(col, justify="right")
    for name, row in rows.items():
        cells = []
        for col in columns:
            value = row.get(col, float("nan"))
            cell = f"{value:.3f}" if isinstance(value, float) else str(value)
            if spread is not None:
                cell += f" ± {spread[name][col]:.2f}"
            cells.append(cell)
        table.add_row(name, *cells)
    Console(width=200).print(table)


def build_parser() -> argparse.ArgumentParser:
    from sb3_fair.experiment.registry import algo_names

    parser = argparse.ArgumentParser(
        prog="sb3-fair", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)

    def trust(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--trust-config",
            action="store_true",
            help="let the config (file, tasks file, -p overrides, a saved model's config) name Python objects outside "
            "sb3-fair's allow-list (sb3_fair, stable_baselines3, sb3_contrib, torch.nn, torch.optim, "
            "gymnasium.wrappers) and import your own modules (--gym-packages, gym_packages, an env MODULE:ID or "
            "MODULE:FACTORY): they are imported and called. Only for configs and modules you trust",
        )
        p.add_argument(
            "--gym-packages",
            nargs="+",
            action="extend",
            default=[],
            metavar="MODULE",
            help="import these modules before making the env, so that their gymnasium.register (or "
            "register_multiagent_env) calls run, in every worker process too (RL Zoo's option); saved with the "
            "run's config (gym_packages), so evaluate and --resume find the env again. A module of your own needs "
            "--trust-config and its folder on PYTHONPATH (or pip install its package)",
        )

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--num-threads",
            type=int_at_least(1),
            default=None,
            metavar="N",
            help="torch threads of each training process (default 1: small networks lose time to a pool of "
            "threads as soon as anything else uses a core; run trials side by side instead)",
        )
        p.add_argument(
            "--wandb", action="store_true", help="stream logs to Weights & Biases (offline without credentials)"
        )
        p.add_argument("--tensorboard-log", default=None, help="TensorBoard log folder")
        p.add_argument(
            "--quiet", action="store_true", help="no progress bar (shown by default for runs of 5,000 steps or more)"
        )

    p = sub.add_parser(
        "train",
        help="train any algorithm on any env, save it, print its fairness table",
        description="train any algorithm on any env (hyper-parameters: sb3_fair/hyperparams/<algo>.yml, "
        "--config, then -p overrides), save it with its config, print its fairness table",
    )
    p.add_argument(
        "--algo", default=None, metavar="ALGO", help=f"one of {algo_names()} (or a class name such as FairPPO)"
    )
    p.add_argument(
        "--env",
        default=None,
        metavar="ENV",
        help="a Gymnasium id or a multi-agent game id, e.g. sb3_fair/DonutAllocation-v0; an env of your own module: "
        "MODULE:ID (a Gymnasium id or game it registers) or MODULE:FACTORY (a function returning a PettingZoo "
        "ParallelEnv), or the ID with --gym-packages MODULE; with --trust-config",
    )
    p.add_argument(
        "--config",
        default=None,
        metavar="FILE",
        help="an experiment file (YAML with algo, env, hyperparams, ...) or a hyper-parameter file in RL Zoo's format",
    )
    p.add_argument(
        "--variant",
        default=None,
        help="a named variant of the env's entry (<env>@<variant>), e.g. paper_fairqcm, f_ppo_l",
    )
    p.add_argument(
        "-p",
        "--params",
        nargs="+",
        action="extend",
        default=[],
        metavar="KEY=VALUE",
        help="hyper-parameter overrides, e.g. -p learning_rate=3e-4 policy_kwargs.net_arch=[64,64] env_kwargs.preset=tiny",
    )
    p.add_argument(
        "--timesteps", type=int_at_least(1), default=None, help="training steps (default: the entry's n_timesteps)"
    )
    p.add_argument("--seed", type=int_at_least(0), default=None)
    p.add_argument("--save", default=None, help="path of the saved model (checked to be writable before training)")
    p.add_argument(
        "--checkpoint-every",
        type=int_at_least(1),
        default=None,
        metavar="STEPS",
        help="save the model, its replay buffer and its fairness statistics every STEPS steps (next to --save)",
    )
    p.add_argument(
        "--checkpoint-buffers",
        type=int_at_least(0),
        default=None,
        metavar="N",
        help="how many of the newest checkpoints keep their replay buffer (default 1; each written up to its "
        "filled rows, older ones deleted)",
    )
    p.add_argument(
        "--resume",
        default=None,
        metavar="CHECKPOINT",
        help="go on from a checkpoint (model_<N>_steps.zip) up to --timesteps steps in all, with its replay buffer",
    )
    p.add_argument(
        "--eval-episodes", type=int_at_least(1), default=None, help="evaluation episodes after training (default 10)"
    )
    p.add_argument(
        "--eval-seed",
        type=int_at_least(0),
        default=None,
        help="seed of the first evaluation episode (default 10000 + --seed)",
    )
    p.add_argument(
        "--eval-env-kwargs",
        nargs="*",
        default=[],
        metavar="KEY=VALUE",
        help="the evaluation env's arguments where they differ, e.g. horizon=10000",
    )
    p.add_argument(
        "--learning-rate", type=number_in(0.0, strict=True), default=None, help="shortcut for -p learning_rate=..."
    )
    p.add_argument("--name", default=None, help="run name (W&B)")
    p.add_argument("--group", default=None, help="experiment group (W&B)")
    p.add_argument("--verbose", type=int_at_least(0), default=None)
    p.add_argument("--json", action="store_true", help="print the evaluation figures as JSON")
    trust(p)
    common(p)
    p.set_defaults(func=cmd_train)

    p = sub.add_parser("evaluate", help="evaluate a saved model and print its fairness table")
    p.add_argument(
        "model", help="a model saved by sb3-fair train (its config beside it says algorithm and env) or any SB3 zip"
    )
    p.add_argument(
        "--env",
        default=None,
        help="the env to evaluate on (default: the one it trained on); ids as for train (MODULE:ID, --gym-packages)",
    )
    p.add_argument("--algo", default=None, help="the algorithm (needed when the model has no saved config)")
    p.add_argument("--episodes", type=int_at_least(1), default=20)
    p.add_argument(
        "--seed",
        type=int_at_least(0),
        default=None,
        help="the first episode's seed (default: the one train's own evaluation used, 10000 + the training seed "
        "unless the saved config sets eval_seed; 0 for a model without a saved config)",
    )
    p.add_argument("--env-kwargs", nargs="*", default=[], metavar="KEY=VALUE")
    det = p.add_mutually_exclusive_group()
    det.add_argument(
        "--deterministic",
        dest="deterministic",
        action="store_const",
        const=True,
        default=None,
        help="greedy actions (default for single-agent envs without Hu et al.'s long-term signals)",
    )
    det.add_argument("--stochastic", dest="deterministic", action="store_const", const=False, help="sampled actions")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    trust(p)
    p.set_defaults(func=cmd_evaluate)

    p = sub.add_parser(
        "sweep",
        help="a grid or an Optuna search over hyper-parameters x seeds on Ray Tune: CSV table + Pareto plot",
        description="every trial is one `train` of the config with some hyper-parameters changed; runs on an embedded "
        'local Ray (all cores) or an existing cluster (--address); needs the sweep extra: pip install -e ".[sweep]"',
    )
    p.add_argument("config", nargs="?", default=None, help="an experiment file (or give --algo and --env)")
    p.add_argument("--algo", default=None, metavar="ALGO", help=f"one of {algo_names()}")
    p.add_argument(
        "--env",
        default=None,
        metavar="ENV",
        help="a Gymnasium id or a multi-agent game id (MODULE:ID, MODULE:FACTORY, --gym-packages: as for train)",
    )
    p.add_argument("--variant", default=None, help="a named variant of the env's entry")
    p.add_argument(
        "-p", "--params", nargs="+", action="extend", default=[], metavar="KEY=VALUE", help="overrides of every trial"
    )
    p.add_argument(
        "--grid",
        nargs="+",
        action="extend",
        default=[],
        metavar="KEY=V1,V2",
        help="values to sweep, every combination: --grid alpha=0,0.5,1 beta=0,1 (dotted keys reach into mappings)",
    )
    p.add_argument("--seeds", type=int_at_least(1), default=1, help="seeds 0..N-1 per point")
    p.add_argument("--search", choices=["optuna"], default=None, help="sample --space with Optuna instead of a grid")
    p.add_argument(
        "--space",
        nargs="+",
        action="extend",
        default=[],
        metavar="KEY=DIST(ARGS)",
        help="the search space (quote each item in a shell): 'learning_rate=loguniform(1e-5,1e-3)' 'alpha=uniform(0,1)' "
        "'n_steps=choice(64,128)' 'n_epochs=randint(1,10)'",
    )
    p.add_argument("--samples", type=int_at_least(1), default=10, help="trials of a search")
    p.add_argument("--metric", default=None, help="what a search optimises, e.g. eval/episode_reward")
    p.add_argument("--mode", choices=["max", "min"], default="max")
    p.add_argument("--timesteps", type=int_at_least(1), default=None, help="training steps per run")
    p.add_argument("--eval-episodes", type=int_at_least(1), default=None)
    p.add_argument(
        "--eval-seed",
        type=int_at_least(0),
        default=None,
        help="seed of the first evaluation episode (default 10000 + seed)",
    )
    p.add_argument("--eval-env-kwargs", nargs="*", default=[], metavar="KEY=VALUE")
    p.add_argument(
        "--name",
        dest="sweep_name",
        default=None,
        help="the sweep's name: its folder and W&B group (default <algo>-<env>)",
    )
    p.add_argument("--storage", default="sweeps", help="the folder of sweeps")
    p.add_argument(
        "--resume", action="store_true", help="go on with the sweep of this --name (unfinished and failed trials)"
    )
    p.add_argument(
        "--address", default=None, help="an existing Ray cluster: auto, or ray://HOST:10001 (default: a local Ray)"
    )
    p.add_argument("--max-concurrent", type=int_at_least(1), default=None, help="trials at once (default: one per CPU)")
    p.add_argument(
        "--utility",
        default=None,
        help="x of the Pareto plot, an evaluation figure (default: episode_reward or episode_return)",
    )
    p.add_argument(
        "--unfairness",
        default=None,
        help="y of the Pareto plot, its size |x|: lower is fairer (default: dp_norm, long_term_final, team_fairness, gini, ...)",
    )
    p.add_argument("--verbose", type=int_at_least(0), default=None)
    trust(p)
    common(p)
    p.set_defaults(func=cmd_sweep, name=None, group=None, seed=None)

    p = sub.add_parser(
        "compare",
        help="baseline vs fair counterpart over seeds: table + plot (learning curves and split, or trade-off)",
        description="train a task's fair entry against its baselines over seeds; the tasks are data "
        "(sb3_fair/experiment/compare_tasks.yml: donut, loan_applicants, harvest; --tasks-file adds your own)",
    )
    p.add_argument(
        "--task",
        default="donut",
        help="donut / loan_applicants: DQN vs FairDQN (FairQCM, Alamdari et al. 2024); harvest: PPO vs FairPPO "
        "(fair-PPO, La Malfa et al. 2025); or a task of --tasks-file",
    )
    p.add_argument(
        "--tasks-file", default=None, metavar="FILE", help="a YAML file of more tasks (as compare_tasks.yml)"
    )
    p.add_argument("--seeds", type=int_at_least(1), default=2)
    p.add_argument(
        "--episodes",
        type=int_at_least(1),
        default=None,
        help="training episodes per run (an episode of the task's env: donut 100 steps, loan_applicants 40, harvest a "
        "game of the preset's length x agents); default: the entry's n_timesteps",
    )
    p.add_argument("--eval-episodes", type=int_at_least(1), default=20)
    p.add_argument(
        "--learning-rate",
        type=number_in(0.0, strict=True),
        default=None,
        help="for every model (default: the tuned entry's)",
    )
    p.add_argument(
        "--fairness", choices=["dp", "csp", "cf"], default=None, help="harvest: FairPPO's penalty (default dp)"
    )
    p.add_argument(
        "--alpha", type=number_in(0.0, MAX_COEF), default=None, help="harvest: weight of the retrospective part (0.5)"
    )
    p.add_argument(
        "--beta", type=number_in(0.0, MAX_COEF), default=None, help="harvest: weight of the prospective part (0.5)"
    )
    p.add_argument(
        "--preset", choices=["tiny", "small", "medium", "paper"], default=None, help="harvest: game size (small)"
    )
    p.add_argument(
        "--plot",
        default="sb3_fair_compare.png",
        help="PNG path for the plot: the task's figure over training and how the benefits were split, or the fairness-utility trade-off ('' for none)",
    )
    p.add_argument(
        "--jobs",
        type=int_at_least(1),
        default=None,
        metavar="N",
        help="trainings at a time, each in its own process with --num-threads threads (default: one per core); "
        "the table is the same, seed for seed, as with --jobs 1",
    )
    trust(p)
    common(p)
    p.set_defaults(func=cmd_compare)
    return parser


def main(argv: list[str] | None = None) -> None:
    """Parse and check every argument (paths included) before anything trains, then run the command.

    A bad algorithm, env, hyper-parameter key or value is reported as ``sb3-fair: error: ...`` (exit 2).
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    for option in ("save", "plot"):
        _check_output_path(parser, f"--{option}", getattr(args, option, None))
    if (
        getattr(args, "tensorboard_log", None)
        and Path(args.tensorboard_log).exists()
        and not Path(args.tensorboard_log).is_dir()
    ):
        parser.error(f"argument --tensorboard-log: {args.tensorboard_log!r} is a file; give a folder")
    for option in ("env_kwargs", "eval_env_kwargs"):
        if hasattr(args, option):
            _parse_kv(getattr(args, option), "--" + option.replace("_", "-"))
    if args.command == "train" and args.resume and not Path(args.resume).is_file():
        parser.error(f"argument --resume: no checkpoint {args.resume!r}")
    if getattr(args, "config", None) and not Path(args.config).is_file():
        parser.error(f"argument --config: no file {args.config!r}")
    from sb3_fair.experiment.files import ModelNotSavedError
    from sb3_fair.experiment.processes import Terminated, terminate_raises

    try:
        with terminate_raises():  # SIGTERM raises, so that locks, temporary files and workers are cleaned up
            args.func(args)
    except ValueError as err:  # bad names, keys and values: the message says which and what is accepted
        parser.exit(2, f"{parser.prog} {args.command}: error: {err}\n")
    except ModelNotSavedError as err:  # the trained model is on the error: write it where there is room, say where
        parser.exit(1, f"{parser.prog} {args.command}: error: {err}\n{_rescue(err)}\n")
    except KeyboardInterrupt as err:  # Ctrl+C or SIGTERM: workers ended, files written whole or not at all
        what = "terminated (SIGTERM)" if isinstance(err, Terminated) else "interrupted"
        parser.exit(
            143 if isinstance(err, Terminated) else 130,
            f"{parser.prog} {args.command}: {what}; "
            + ("every worker process was ended and " if args.command in ("compare", "sweep") else "")
            + "no file was left half-written (a run with checkpoints can go on with --resume from its newest "
            "checkpoint)\n",
        )


def _rescue(err: Any) -> str:
    """Write the model a failed save kept to the system's temporary folder; say where (or that it failed too)."""
    import tempfile

    target = Path(tempfile.gettempdir()) / f"sb3-fair-unsaved-{os.getpid()}-{Path(err.path).stem or 'model'}.zip"
    try:
        err.model.save(target)
    except OSError as second:
        return f"the trained model could not be written to {target} either ({second.strerror or second}): it is lost"
    return f"the trained model was written to {target} instead: move it where it belongs (and load it from there)"


if __name__ == "__main__":
    main(sys.argv[1:])
