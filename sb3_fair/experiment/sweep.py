"""Sweeps on Ray Tune: every trial is one :func:`~sb3_fair.experiment.training.train` of a config with some
hyper-parameters changed; one results table (CSV), a fairness–utility Pareto plot, W&B runs grouped per sweep.

Needs the ``sweep`` extra (``pip install -e ".[sweep]"`` in a clone of sb3-fair: Ray Tune, Optuna). Runs on an embedded
local Ray (all cores) by default, or on an existing cluster (``address="ray://..."`` or ``"auto"``).

Example::

    from sb3_fair.experiment import ExperimentConfig
    from sb3_fair.experiment.sweep import sweep

    base = ExperimentConfig.from_hyperparams("fair_ppo", "sb3_fair/AllelopathicHarvest-v0", n_timesteps=200_000)
    out = sweep(base, grid={"alpha": [0.0, 0.5, 1.0], "beta": [0.0, 0.5]}, seeds=3, name="harvest-dp")
    print(out.table)        # one row per trial: status, config, eval/* figures
    # out.csv_path, out.plot_path: <storage>/harvest-dp/results.csv and pareto.png

Grid sweeps run each (point, seed) as its own trial. A search (``search="optuna"``, ``samples=N``,
``metric``, ``mode``) samples points from ``space`` (``{"learning_rate": ("loguniform", 1e-5, 1e-3)}``)
and trains ``seeds`` seeds inside each trial, reporting their mean, so that the search optimises a
figure that does not hang on one seed. A failed trial is reported in the table (``status`` ERROR,
``error``) and does not stop the others; ``resume=True`` goes on with an interrupted sweep of the
same ``name`` (re-running failed trials).

The opt-in of a config that names your own code (``trusted=True``, ``sb3-fair sweep --trust-config``) is never saved:
Ray's trial parameters do not hold it, each trial gets it from the call that runs it, and a resume checks every trial
Ray restores under its own call's opt-in before any trial runs, whatever the files in the sweep's folder say.
"""

from __future__ import annotations

import csv
import itertools
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from sb3_fair.common.figure_table import check_not_renamed
from sb3_fair.experiment.config import MAX_NAME_LENGTH, ExperimentConfig, check_name, parse_value
from sb3_fair.experiment.registry import check_keys

#: figures used for the Pareto plot when none is named: utility (higher is better) and unfairness (its size ``|x|``,
#: lower is better)
UTILITY_KEYS = ("episode_reward", "episode_return", "utilitarian")
UNFAIRNESS_KEYS = (
    "dp_norm",
    "dp_abs",
    "long_term_final",
    "long_term_mean",
    "team_fairness",
    "gini",
    "max_unfairness",
    "group_gap",
)
#: the sampling distributions of a search space
DISTRIBUTIONS = ("uniform", "loguniform", "randint", "choice")


#: grids of up to this many points have every point built once before Ray starts; larger ones have each value built
MAX_CHECKED_POINTS = 256


def _require_ray() -> Any:
    try:
        import ray
        from ray import tune  # noqa: F401
    except ImportError as err:
        raise ImportError(f'sweeps need Ray Tune: pip install -e ".[sweep]" in a clone of sb3-fair ({err})') from None
    return ray


def split_values(text: str) -> list[str]:
    """``"1,2,[64,64]"`` -> ``["1", "2", "[64,64]"]``: commas outside brackets separate values."""
    out, depth, current = [], 0, ""
    for ch in text:
        if ch in "[{(":
            depth += 1
        elif ch in "]})":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(current)
            current = ""
        else:
            current += ch
    out.append(current)
    return [v.strip() for v in out]


def parse_grid(items: list[str] | None) -> dict[str, list[Any]]:
    """``["alpha=0,0.5,1", "policy_kwargs.net_arch=[64,64],[32]"]`` -> ``{"alpha": [0, 0.5, 1], ...}``.

    :raises ValueError: naming an item that is not ``key=v1,v2,...``.
    """
    grid: dict[str, list[Any]] = {}
    for item in items or []:
        key, sep, text = item.partition("=")
        if not sep or not key.strip() or not text.strip():
            raise ValueError(f"--grid takes key=v1,v2,... (e.g. alpha=0,0.5,1), got {item!r}")
        grid[key.strip()] = [parse_value(v) for v in split_values(text)]
    return grid


def parse_space(items: list[str] | None) -> dict[str, tuple[Any, ...]]:
    """``["learning_rate=loguniform(1e-5,1e-3)", "alpha=uniform(0,1)", "n_steps=choice(64,128)"]`` -> a search space.

    :raises ValueError: naming an item that is not ``key=<distribution>(args)`` with a distribution of
        :data:`DISTRIBUTIONS`.
    """
    space: dict[str, tuple[Any, ...]] = {}
    for item in items or []:
        key, sep, text = item.partition("=")
        text = text.strip()
        kind, paren, rest = text.partition("(")
        if not sep or not key.strip() or not paren or not rest.endswith(")") or kind not in DISTRIBUTIONS:
            raise ValueError(
                f"--space takes key=<{'|'.join(DISTRIBUTIONS)}>(args), e.g. learning_rate=loguniform(1e-5,1e-3), "
                f"got {item!r}"
            )
        args = tuple(parse_value(v) for v in split_values(rest[:-1]))
        if kind != "choice" and (
            len(args) != 2 or not all(isinstance(a, (int, float)) for a in args) or not args[0] < args[1]
        ):
            raise ValueError(f"--space {key}: {kind} takes (low, high) with low < high, got {text!r}")
        space[key.strip()] = (kind, *args)
    return space


def _tune_domain(spec: tuple[Any, ...]) -> Any:
    from ray import tune

    kind, *args = spec
    if kind == "choice":
        return tune.choice(list(args))
    return {"uniform": tune.uniform, "loguniform": tune.loguniform, "randint": tune.randint}[kind](*args)


def _figures(results: list[Any]) -> dict[str, float]:
    """The mean of each evaluation figure (``eval/<name>``) over ``results``, with ``eval/<name>_seed_std``."""
    out: dict[str, float] = {}
    keys = sorted({k for r in results for k in r.evaluation})
    for key in keys:
        values = np.array([r.evaluation.get(key, np.nan) for r in results], dtype=float)
        out[f"eval/{key}"] = float(np.nanmean(values)) if np.isfinite(values).any() else float("nan")
        if len(results) > 1:
            out[f"eval/{key}_seed_std"] = float(np.nanstd(values))
    out["train/steps_per_second"] = float(np.mean([r.steps_per_second for r in results]))
    out["train/n_timesteps"] = float(np.mean([r.n_timesteps for r in results]))
    return out


def trial_configs(params: dict[str, Any], trusted: bool = False, trial: str = "trial") -> list[ExperimentConfig]:
    """The configs of one trial, one per seed, each checked (:class:`~sb3_fair.experiment.config.ExperimentConfig`)
    before any is trained.

    :param params: the trial's parameters as Ray holds them: ``base`` (the base config's :meth:`to_dict`),
        ``overrides`` (the point) and ``seeds``; any other key (the ``trusted`` that earlier versions saved, or one
        written into a file) is ignored.
    :param trusted: the opt-in of the call that runs the sweep: the only place it comes from.
    :param trial: the trial's name, for the runs' names.
    :raises ValueError: for parameters that are not a trial's, or a config refused under ``trusted``.
    """
    base_data, overrides, seeds = params.get("base"), params.get("overrides") or {}, params.get("seeds", 0)
    if not isinstance(base_data, dict) or not isinstance(overrides, dict):
        raise ValueError(f"not the parameters of an sb3-fair sweep's trial (base, overrides, seeds): {params!r}"[:300])
    seeds = seeds if isinstance(seeds, list) else [seeds]
    if not seeds:
        raise ValueError("a trial has at least one seed, got none")
    base = ExperimentConfig.from_dict(base_data, trusted=trusted)
    out = []
    for seed in seeds:
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise ValueError(f"a trial's seeds are ints, got {seed!r}")
        out.append(
            base.replace(
                seed=seed,
                hyperparams=dict(overrides),
                save_path=None,
                checkpoint_every=None,
                progress_bar=False,
                name=f"{base.group}-{trial}-seed{seed}",
            )
        )
    return out


def trainable(params: dict[str, Any], trusted: bool = False) -> None:
    """The Ray Tune trainable: one :func:`~sb3_fair.experiment.training.train` per seed of ``params`` (the base
    config, the point's overrides, the seeds), reported as ``eval/*`` figures.

    :param params: the trial's parameters (:func:`trial_configs`).
    :param trusted: the opt-in, from the process that runs the sweep (``tune.with_parameters``), never from ``params``,
        which Ray saves and restores.
    """
    import torch as th
    from ray import tune

    from sb3_fair.experiment.training import train

    trial = tune.get_context().get_trial_name() or "trial"
    configs = trial_configs(params, trusted=trusted, trial=trial)  # every seed's config accepted before any run
    th.set_num_threads(configs[0].num_threads or 1)  # the CPUs Ray gave the trial (train() sets it again, for its run)
    tune.report(_figures([train(cfg) for cfg in configs]))


@dataclass
class SweepResult:
    """What :func:`sweep` returns.

    :param table: one dict per trial: ``trial``, ``status`` (``TERMINATED``, ``ERROR`` or ``UNFINISHED``), ``error``,
        ``seed``, the point's overrides (``hp/<key>``) and the ``eval/*`` figures.
    :param csv_path: the table as CSV.
    :param plot_path: the Pareto plot (None when no trial finished or the figures are missing).
    :param path: the sweep's folder (give it back with ``resume=True`` to go on).
    """

    table: list[dict[str, Any]] = field(default_factory=list)
    csv_path: Path | None = None
    plot_path: Path | None = None
    path: Path | None = None

    @property
    def errors(self) -> list[dict[str, Any]]:
        """The failed trials' rows."""
        return [row for row in self.table if row["status"] == "ERROR"]

    @property
    def finished(self) -> list[dict[str, Any]]:
        """The finished trials' rows."""
        return [row for row in self.table if row["status"] == "TERMINATED"]


def sweep(
    base: ExperimentConfig,
    grid: dict[str, list[Any]] | None = None,
    seeds: int = 1,
    space: dict[str, tuple[Any, ...]] | None = None,
    search: str | None = None,
    samples: int = 10,
    metric: str | None = None,
    mode: str = "max",
    name: str | None = None,
    storage: str | Path = "sweeps",
    address: str | None = None,
    resume: bool = False,
    max_concurrent: int | None = None,
    utility: str | None = None,
    unfairness: str | None = None,
) -> SweepResult:
    """Run a sweep of ``base`` on Ray Tune and write its table and Pareto plot.

    :param base: the experiment every trial starts from.
    :param grid: ``{hyper-parameter key: values}`` (dotted keys reach into mappings); every combination runs.
    :param seeds: seeds ``0..seeds-1`` per point (grid: one trial each; search: all inside each trial).
    :param space: a search space, ``{key: ("uniform"|"loguniform"|"randint", low, high) | ("choice", v1, ...)}``.
    :param search: None (grid) or ``"optuna"`` (Optuna's TPE through Ray Tune's ``OptunaSearch``).
    :param samples: trials of a search.
    :param metric: the figure a search optimises (``eval/<figure>``, e.g. ``eval/episode_reward``).
    :param mode: ``"max"`` or ``"min"`` for ``metric``.
    :param name: the sweep's name (its folder under ``storage`` and its W&B group), a plain name (no path
        separators, not ``..``; :func:`~sb3_fair.experiment.config.check_name`); default ``<algo>-<env>``.
    :param storage: the folder of sweeps.
    :param address: an existing Ray cluster (``"auto"``, ``"ray://host:10001"``); None starts a local Ray of the
        sweep's own (``ray.init(address="local")``), even where another cluster on this machine left its address behind.
    :param resume: go on with the sweep of the same name (unfinished and failed trials run again).
    :param max_concurrent: trials at once (default: as many as Ray has CPUs).
    :param utility: the x figure of the Pareto plot (default: the first of :data:`UTILITY_KEYS` reported).
    :param unfairness: the y figure (lower is fairer; default: the first of :data:`UNFAIRNESS_KEYS` reported).
    :raises ValueError: for a bad argument, an existing sweep without ``resume``, or ``resume`` of none.
    """
    ray = _require_ray()
    from ray import tune

    grid, space = dict(grid or {}), dict(space or {})
    if isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 1:
        raise ValueError(f"seeds must be an int >= 1, got {seeds!r}")
    if search not in (None, "optuna"):
        raise ValueError(f"search must be None (a grid) or 'optuna', got {search!r}")
    if mode not in ("max", "min"):
        raise ValueError(f"mode must be 'max' or 'min', got {mode!r}")
    if search is None and space:
        raise ValueError("space needs search='optuna' (a grid sweep takes grid)")
    if search is not None:
        if not space:
            raise ValueError(
                "search='optuna' needs a space to sample, e.g. {'learning_rate': ('loguniform', 1e-5, 1e-3)}"
            )
        if grid:
            raise ValueError("a search samples its space; give grid values as ('choice', v1, v2, ...) in space instead")
        if not metric:
            raise ValueError("search='optuna' needs the metric it optimises, e.g. 'eval/episode_reward'")
        if not isinstance(metric, str) or not metric.startswith(("eval/", "train/")):
            raise ValueError(
                f"metric must be a reported figure, 'eval/<figure>' or 'train/steps_per_second', got {metric!r}"
            )
        if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
            raise ValueError(f"samples must be an int >= 1, got {samples!r}")
    for argument, figure in (("metric", metric), ("utility", utility), ("unfairness", unfairness)):
        check_not_renamed(figure, argument)  # a figure name of < 0.5.0 whose sign flipped
    check_keys(base.algo, [*grid, *space])  # a key the algorithm does not take fails here, not in every trial
    singles: list[ExperimentConfig] = []  # each grid value alone (a refused value fails here, not in every trial)
    for (
        key,
        values,
    ) in grid.items():  # and so does a dotted key into something that is not a mapping
        if not isinstance(values, list) or not values:
            raise ValueError(f"grid[{key!r}] must be a non-empty list of values, got {values!r}")
        singles += [base.replace(hyperparams={key: value}) for value in values]
    choices: list[ExperimentConfig] = []  # a choice's values, or a distribution's low end (a number of the key)
    for key, (kind, *args) in space.items():
        choices += [base.replace(hyperparams={key: value}) for value in (args if kind == "choice" else args[:1])]
    # every grid point (each value alone past MAX_CHECKED_POINTS points) built into a model once, before Ray starts: a
    # setting SB3 or the env refuses (a batch size of 0) would otherwise fail inside every trial that has it
    from sb3_fair.experiment.training import check_configs

    keys = list(grid)
    if grid and math.prod(len(grid[k]) for k in keys) <= MAX_CHECKED_POINTS:
        points = [base.replace(hyperparams=dict(zip(keys, values))) for values in itertools.product(*grid.values())]
    else:
        points = singles
    check_configs(points + choices or [base])
    name = base.default_group if name is None else name
    check_name(name, "name", MAX_NAME_LENGTH // 2)
    root = Path(storage).resolve()
    path = root / name
    if path.resolve().parent != root:  # a plain name cannot leave storage; a symlink named like the sweep could
        raise ValueError(f"name {name!r}: the sweep's folder {path} resolves outside storage {str(root)!r}")
    if resume and not path.exists():
        raise ValueError(f"no sweep {name!r} in {root} to resume")
    if path.exists() and not resume:
        raise ValueError(
            f"a sweep {name!r} exists in {root}: resume=True (--resume) goes on with it, or give another name"
        )
    base = base.replace(group=name, eval_episodes=base.eval_episodes or 1)
    if isinstance(base.wandb, dict) or base.wandb:
        wandb_kwargs = dict(base.wandb) if isinstance(base.wandb, dict) else {}
        wandb_kwargs.setdefault("tags", [base.algo, base.env, f"sweep:{name}"])
        base = base.replace(wandb=wandb_kwargs)

    os.environ.setdefault(
        "RAY_CHDIR_TO_TRIAL_DIR", "0"
    )  # relative paths in configs stay relative to the caller's folder
    started = False
    if not ray.is_initialized():
        # "local" starts a Ray of our own even where a cluster's ray_current_cluster file is left behind (Ray would join it)
        init: dict[str, Any] = (
            {"address": address}
            if address
            else {"address": "local", "num_cpus": os.cpu_count(), "include_dashboard": False}
        )
        folders = _module_folders(base)
        if folders and not address:  # the trials import the env's modules: their folders on the workers' path
            paths = [*folders, *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
            init["runtime_env"] = {"env_vars": {"PYTHONPATH": os.pathsep.join(dict.fromkeys(paths))}}
        ray.init(log_to_driver=False, configure_logging=False, **init)
        started = True
    try:
        # each trial holds as many CPUs as its torch threads, so that Ray does not run more threads than cores; the
        # opt-in goes to the trials from this call only (Ray saves the param_space, and restores it on a resume)
        trial = tune.with_resources(
            tune.with_parameters(trainable, trusted=base.trusted), {"cpu": base.num_threads or 1}
        )
        if resume:
            tuner = _restore(tune, path, trial, name, base.trusted)
        else:
            if search is None:
                param_space: dict[str, Any] = {
                    "base": base.to_dict(),
                    "seeds": tune.grid_search(list(range(seeds))),
                    "overrides": {k: tune.grid_search(v) for k, v in grid.items()},
                }
                tune_config = tune.TuneConfig(num_samples=1, max_concurrent_trials=max_concurrent)
            else:
                from ray.tune.search.optuna import OptunaSearch

                param_space = {
                    "base": base.to_dict(),
                    "seeds": list(range(seeds)),
                    "overrides": {k: _tune_domain(v) for k, v in space.items()},
                }
                tune_config = tune.TuneConfig(
                    search_alg=OptunaSearch(metric=metric, mode=mode, seed=0),
                    num_samples=samples,
                    max_concurrent_trials=max_concurrent,
                )
            run_config = tune.RunConfig(
                name=name,
                storage_path=str(root),
                verbose=0,
                failure_config=tune.FailureConfig(max_failures=0, fail_fast=False),
            )
            tuner = tune.Tuner(trial, param_space=param_space, tune_config=tune_config, run_config=run_config)
        grid_result = _fit_keeping_signal_handlers(tuner)
    finally:
        if started:
            ray.shutdown()
    table = _table(grid_result)
    out = SweepResult(table=table, path=path)
    out.csv_path = path / "results.csv"
    _write_csv(table, out.csv_path)
    out.plot_path = pareto_plot(table, path / "pareto.png", utility=utility, unfairness=unfairness, title=name)
    if base.wandb:
        from sb3_fair.common.wandb_logging import log_summary_run

        columns = [k for k in dict.fromkeys(k for row in table for k in row)]
        init = {
            k: v
            for k, v in (base.wandb if isinstance(base.wandb, dict) else {}).items()
            if k not in ("name", "group", "job_type")
        }
        log_summary_run(
            f"{name}-summary",
            name,
            {
                "sweep": {
                    "name": name,
                    "grid": grid,
                    "space": {k: list(v) for k, v in space.items()},
                    "seeds": seeds,
                    "search": search,
                    "base": base.to_dict(),
                }
            },
            images={"sweep/pareto": out.plot_path} if out.plot_path else None,
            tables={"sweep/results": (columns, [[row.get(c) for c in columns] for row in table])},
            **init,
        )
    return out


def _module_folders(base: ExperimentConfig) -> list[str]:
    """The folders this process imported the config's own modules from (``gym_packages`` and the env's ``module:``
    part), where they are not in sb3-fair's allow-list: what the trials of a local Ray need on their path to import
    them again, whether this process found them through ``PYTHONPATH`` or a ``sys.path`` entry."""
    import sys

    from sb3_fair.common.hyperparams import is_allowed_module

    modules = [*base.gym_packages, *([base.env.partition(":")[0]] if ":" in base.env else [])]
    folders = []
    for name in modules:
        top = sys.modules.get(name.split(".")[0])
        file = getattr(top, "__file__", None)
        if is_allowed_module(name) or not file:
            continue
        path = Path(file).resolve()
        folders.append(str(path.parent.parent if path.name == "__init__.py" else path.parent))
    return list(dict.fromkeys(folders))


def _restore(tune: Any, path: Path, trial: Any, name: str, trusted: bool) -> Any:
    """The sweep at ``path`` restored by Ray Tune, after every trial Ray holds for it was checked under this call's
    opt-in (:func:`trial_configs`), so that a config that needs ``trusted=True`` is refused before any trial runs.

    :raises ValueError: naming the sweep, for Ray records that cannot be read or a trial whose config is refused.
    """
    try:
        tuner = tune.Tuner.restore(str(path), trial, resume_unfinished=True, resume_errored=True)
        trials = tune.ExperimentAnalysis(str(path)).trials  # what the restore goes on with: the newest experiment state
    except Exception as err:  # noqa: BLE001  (whatever Ray raises for missing or broken records: nothing may run)
        raise ValueError(
            f"sweep {name!r} cannot be resumed: Ray Tune's records of its trials in {path} cannot be read "
            f"({type(err).__name__}: {str(err).strip().splitlines()[0] if str(err).strip() else ''}); nothing was run"
        ) from None
    for t in trials:
        label = Path(t.path).name if t.path else str(t)
        try:
            trial_configs(t.config if isinstance(t.config, dict) else {}, trusted=trusted, trial=label)
        except ValueError as err:
            raise ValueError(f"sweep {name!r} cannot be resumed: its trial {label}: {err}") from None
    return tuner


def _fit_keeping_signal_handlers(tuner: Any) -> Any:
    """``tuner.fit()``, then the process's own SIGINT / SIGUSR1 handlers back: Ray Tune leaves its own
    installed after the run, so a later Ctrl+C would print Tune's message instead of interrupting."""
    import signal
    import threading

    names = [n for n in ("SIGINT", "SIGUSR1") if hasattr(signal, n)]
    main_thread = threading.current_thread() is threading.main_thread()
    saved = {n: signal.getsignal(getattr(signal, n)) for n in names} if main_thread else {}
    try:
        return tuner.fit()
    finally:
        for n, handler in saved.items():
            if handler is not None:
                signal.signal(getattr(signal, n), handler)


def _table(grid_result: Any) -> list[dict[str, Any]]:
    rows = []
    for i, res in enumerate(grid_result):
        config = res.config or {}
        row: dict[str, Any] = {
            "trial": Path(res.path).name if res.path else str(i),
            "status": "ERROR"
            if res.error is not None
            else ("TERMINATED" if "train/n_timesteps" in (res.metrics or {}) else "UNFINISHED"),
            "error": _error_line(res.error),
            "seed": config.get("seeds"),
        }
        for key, value in (config.get("overrides") or {}).items():
            row[f"hp/{key}"] = value
        for key, value in (res.metrics or {}).items():
            if key.startswith(("eval/", "train/")):
                # a trial of sb3-fair < 0.5.0 read back on resume: its old figure has the opposite sign
                check_not_renamed(key.removesuffix("_seed_std"), f"trial {row['trial']}")
                row[key] = value
        rows.append(row)
    return sorted(rows, key=lambda r: r["trial"])


def _error_line(error: BaseException | None) -> str:
    """A failed trial's error in one line: the trial's own exception, not Ray's wrapper of it."""
    if error is None:
        return ""
    cause = getattr(error, "cause", None) or error
    text = str(cause).strip().splitlines()
    return f"{type(cause).__name__}: {text[-1] if text else ''}"[:300]


def _write_csv(table: list[dict[str, Any]], path: Path) -> None:
    columns: list[str] = []
    for row in table:
        columns += [k for k in row if k not in columns]
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=columns)
        writer.writeheader()
        for row in table:
            writer.writerow({k: (str(v) if isinstance(v, (list, dict)) else v) for k, v in row.items()})


def points(table: list[dict[str, Any]], utility: str, unfairness: str) -> list[dict[str, Any]]:
    """The finished trials grouped by point (their ``hp/*`` values): mean and spread over seeds of both figures.

    The unfairness is the figure's size, ``|x|``: a signed gap such as ``dp_norm`` is as unfair at -0.3 as at
    +0.3 (the figures that cannot be negative, such as ``gini``, are unchanged). A figure name of sb3-fair < 0.5.0
    whose sign flipped (``dp_normalized``, ...) is refused with its new name.
    """
    check_not_renamed(utility, "utility")
    check_not_renamed(unfairness, "unfairness")
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in table:
        if row["status"] != "TERMINATED" or not all(
            np.isfinite(float(row.get(f"eval/{k}", np.nan))) for k in (utility, unfairness)
        ):
            continue  # a point without both figures has no place on the plane
        point = {k: v for k, v in row.items() if k.startswith("hp/")}
        groups.setdefault(repr(sorted(point.items())), []).append(row)
    out: list[dict[str, Any]] = []
    for rows in groups.values():
        u = np.array([r[f"eval/{utility}"] for r in rows], dtype=float)
        f = np.abs(np.array([r[f"eval/{unfairness}"] for r in rows], dtype=float))
        u_std = [r.get(f"eval/{utility}_seed_std", 0.0) for r in rows]  # a search's trial averages seeds itself
        f_std = [r.get(f"eval/{unfairness}_seed_std", 0.0) for r in rows]
        out.append(
            {
                "point": {k[3:]: v for k, v in rows[0].items() if k.startswith("hp/")},
                "trials": len(rows),
                "utility": float(u.mean()),
                "utility_std": float(u.std() if len(rows) > 1 else u_std[0]),
                "unfairness": float(f.mean()),
                "unfairness_std": float(f.std() if len(rows) > 1 else f_std[0]),
            }
        )
    for p in out:  # Pareto-optimal: no other point at least as useful and as fair, and better in one
        p["pareto"] = not any(
            q is not p
            and q["utility"] >= p["utility"]
            and q["unfairness"] <= p["unfairness"]
            and (q["utility"] > p["utility"] or q["unfairness"] < p["unfairness"])
            for q in out
        )
    return out


def _first_reported(table: list[dict[str, Any]], keys: tuple[str, ...]) -> str | None:
    reported = {k[5:] for row in table for k in row if k.startswith("eval/")}
    return next((k for k in keys if k in reported), None)


def pareto_plot(
    table: list[dict[str, Any]], path: Path, utility: str | None = None, unfairness: str | None = None, title: str = ""
) -> Path | None:
    """Plot each point's mean utility against its mean unfairness, seed spread as error bars, the Pareto front joined."""
    utility = utility or _first_reported(table, UTILITY_KEYS)
    unfairness = unfairness or _first_reported(table, UNFAIRNESS_KEYS)
    if utility is None or unfairness is None:
        return None
    pts = points(table, utility, unfairness)
    if not pts:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4.5))
    for p in pts:
        ax.errorbar(
            p["utility"],
            p["unfairness"],
            xerr=p["utility_std"],
            yerr=p["unfairness_std"],
            fmt="o",
            color="tab:red" if p["pareto"] else "tab:gray",
            capsize=3,
            alpha=0.9,
        )
        label = ", ".join(f"{k}={v}" for k, v in p["point"].items())
        if label:
            ax.annotate(label, (p["utility"], p["unfairness"]), fontsize=7, xytext=(4, 4), textcoords="offset points")
    front = sorted((p for p in pts if p["pareto"]), key=lambda p: p["utility"])
    if len(front) > 1:
        ax.plot(
            [p["utility"] for p in front],
            [p["unfairness"] for p in front],
            "-",
            color="tab:red",
            alpha=0.5,
            label="Pareto front",
        )
        ax.legend()
    ax.set_xlabel(f"utility: {utility} (higher is better)")
    ax.set_ylabel(f"unfairness: |{unfairness}| (lower is fairer)")
    ax.set_title(f"fairness-utility trade-off{': ' + title if title else ''}")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


__all__ = [
    "DISTRIBUTIONS",
    "SweepResult",
    "pareto_plot",
    "parse_grid",
    "parse_space",
    "points",
    "sweep",
    "trainable",
    "trial_configs",
]
