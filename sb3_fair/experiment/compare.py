"""``sb3-fair compare``'s tasks as data: a fair algorithm's tuned entry against baselines with the same settings.

The shipped tasks are ``compare_tasks.yml`` beside this module; a user's own file (``--tasks-file``, or
:func:`load_tasks` ``(path)``) is read with the same rules and adds to them. A task names the algorithm and env
of its entry (``sb3_fair/hyperparams/<algo>.yml``), the figures of its table, and its runs, each a change of
that entry (see the file's header). :func:`task_configs` turns a task into one
:class:`~sb3_fair.experiment.config.ExperimentConfig` per run, which :func:`~sb3_fair.experiment.training.train_all`
trains.

:func:`compare_runs` trains a comparison's runs over seeds and gathers its statistics into a :class:`Comparison`:
each seed's figures (:func:`seed_figures`: the task's ``absolute`` figures as ``|x|``, and with ``price_of_fairness``
each fair run's price of fairness per group against the seed's first baseline), their mean and standard deviation
over the seeds (:func:`seed_statistics`) and the figures no run reported (:func:`absent_figures`).
:func:`plot_comparison` draws it and :func:`log_comparison` logs its table and plot to W&B.

Example::

    from sb3_fair.experiment.compare import compare_runs, load_tasks, task_configs
    from sb3_fair.experiment.training import train_all

    task = load_tasks()["donut"]
    configs = task_configs(task, seed=0, episodes=40, eval_episodes=5)
    results = train_all(list(configs.values()), jobs=2)

    runs = [(seed, name, config) for seed in (0, 1) for name, config in task_configs(task, seed, episodes=40).items()]
    comparison = compare_runs(task, runs, jobs=2)
    print(comparison.table, comparison.spread)  # run name -> figure -> mean, sd over the seeds
"""

from __future__ import annotations

import re
import string
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import numpy as np

#: the shipped tasks
TASKS_FILE = Path(__file__).resolve().parent / "compare_tasks.yml"
#: the keys a task and a run may have
TASK_KEYS = {
    "description",
    "algo",
    "env",
    "hyperparams",
    "figures",
    "plot",
    "absolute",
    "price_of_fairness",
    "options",
    "runs",
    "runs_by_fairness",
    "gym_packages",
}
RUN_KEYS = {"baseline", "variant", "hyperparams"}
OPTION_KEYS = {"key", "fair_only", "default"}
#: the command-line options a task may take
OPTIONS = ("preset", "fairness", "alpha", "beta")


@dataclass(frozen=True)
class Run:
    """One run of a task: a change of the task's entry.

    :param baseline: train the algorithm's SB3 / sb3-contrib parent with the same settings instead.
    :param variant: read the entry ``<env>@<variant>`` instead of the env's own.
    :param hyperparams: overrides of the entry (dotted keys reach into mappings).
    """

    baseline: bool = False
    variant: str | None = None
    hyperparams: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CompareTask:
    """One comparison of ``sb3-fair compare`` (see ``compare_tasks.yml`` for what each field means)."""

    name: str
    algo: str
    env: str
    figures: list[str]
    runs: dict[str, Run]
    description: str = ""
    #: overrides of every run's entry (before the runs' own), e.g. a smaller game
    hyperparams: dict[str, Any] = field(default_factory=dict)
    plot_x: str = "utilitarian"
    plot_y: list[str] = field(default_factory=list)
    #: a figure of the training episodes to plot over the training steps (None: the trade-off plot)
    plot_curve: str | None = None
    #: what the curve's figure is, in words (its name by default)
    plot_curve_label: str | None = None
    #: what the stakeholders receive, in words, to plot how it was split among them in evaluation (None: no split)
    plot_split: str | None = None
    #: draw the trade-off of ``plot_x`` against ``plot_y`` beside the curve or the split (the task names x or y)
    plot_tradeoff: bool = False
    absolute: list[str] = field(default_factory=list)
    price_of_fairness: bool = False
    #: option name -> (hyper-parameter key, on the fair runs only, default)
    options: dict[str, tuple[str, bool, Any]] = field(default_factory=dict)
    runs_by_fairness: dict[str, dict[str, Run]] = field(default_factory=dict)
    #: modules to import before the env is made (the runs' ``gym_packages``, before ``--gym-packages``'s)
    gym_packages: list[str] = field(default_factory=list)

    def option_values(self, given: dict[str, Any]) -> dict[str, Any]:
        """The task's option values: ``given`` (None: not given) over the defaults; an option given to a task that
        does not take it is refused."""
        refused = sorted(k for k, v in given.items() if v is not None and k not in self.options)
        if refused:
            accepted = ", ".join(f"--{k}" for k in self.options) or "none"
            raise ValueError(
                f"task {self.name!r} takes no {', '.join('--' + k for k in refused)} (its options: {accepted})"
            )
        return {k: given[k] if given.get(k) is not None else default for k, (_, _, default) in self.options.items()}

    def runs_for(self, values: dict[str, Any]) -> dict[str, Run]:
        """The runs for these option values (``runs_by_fairness`` for the chosen ``fairness``, else ``runs``)."""
        return self.runs_by_fairness.get(str(values.get("fairness")), self.runs)


#: the figures a task may name beyond the figure table's (:data:`~sb3_fair.common.figure_table.FIGURE_NAMES`): what the
#: evaluators report beside them (:mod:`sb3_fair.common.evaluation`), and the price of fairness ``compare`` adds
EVALUATION_FIGURES = (
    "episode_reward",
    "episode_reward_std",
    "episode_length",
    "episode_return",
    "team_fairness",
    "capture_success",
    "short_term_mean",
    "long_term_mean",
    "long_term_final",
)
#: figures with a group or stratum in their name: ``group_<g>_mean``, ``csp_norm_<k>``, ``pof_group_<g>``
_NUMBERED_FIGURES = re.compile(r"^(group_-?\d+_mean|csp_norm_-?\d+|pof_group_-?\d+)$")


def check_figure(name: str, where: str) -> str:
    """``name`` if a comparison can report it (a figure of the table, an evaluator's figure, a group's or stratum's,
    the price of fairness); a ValueError naming ``where`` and the accepted names otherwise."""
    from sb3_fair.common.figure_table import FIGURE_NAMES, check_not_renamed

    check_not_renamed(name, where)  # a name of < 0.5.0 whose sign flipped: never read as the new figure
    if name in FIGURE_NAMES or name in EVALUATION_FIGURES or _NUMBERED_FIGURES.match(name):
        return name
    raise ValueError(
        f"{where}: unknown figure {name!r}; accepted: {sorted({*FIGURE_NAMES, *EVALUATION_FIGURES} - {'csp_norm'})}, "
        "group_<g>_mean, csp_norm_<k>, pof_group_<g>"
    )


def _check_keys(data: Any, allowed: set[str], where: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise ValueError(f"{where} must be a mapping, got {data!r}")
    unknown = sorted(str(k) for k in set(data) - allowed)
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {unknown}; accepted: {sorted(allowed)}")
    return data


def _strings(value: Any, where: str) -> list[str]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        raise ValueError(f"{where} must be a non-empty list of names, got {value!r}")
    return list(value)


def _runs(data: Any, where: str) -> dict[str, Run]:
    if not isinstance(data, dict) or not data:
        raise ValueError(f"{where} must map run names to their changes, got {data!r}")
    runs = {}
    for name, run in data.items():
        spec = _check_keys({} if run is None else run, RUN_KEYS, f"{where}[{name!r}]")
        baseline = spec.get("baseline", False)
        if not isinstance(baseline, bool):
            raise ValueError(f"{where}[{name!r}].baseline must be true or false, got {baseline!r}")
        variant = spec.get("variant")
        if variant is not None and not isinstance(variant, str):
            raise ValueError(f"{where}[{name!r}].variant must be a variant name, got {variant!r}")
        hyperparams = spec.get("hyperparams") or {}
        if not isinstance(hyperparams, dict):
            raise ValueError(f"{where}[{name!r}].hyperparams must be a mapping of keys to values, got {hyperparams!r}")
        runs[str(name)] = Run(baseline=baseline, variant=variant, hyperparams=dict(hyperparams))
    if not any(not r.baseline for r in runs.values()):
        raise ValueError(f"{where} has no fair run (every run is baseline: true)")
    return runs


def parse_task(name: str, data: Any, source: str = "<data>") -> CompareTask:
    """A :class:`CompareTask` from its entry in a tasks file; every error names the file, the task and the key."""
    where = f"{source}: task {name!r}"
    entry = _check_keys(data, TASK_KEYS, where)
    for key in ("algo", "env", "figures", "runs"):
        if key not in entry:
            raise ValueError(f"{where} needs {key!r}")
    for key in ("algo", "env"):
        if not isinstance(entry[key], str) or not entry[key]:
            raise ValueError(f"{where}.{key} must be a name, got {entry[key]!r}")
    figures = _strings(entry["figures"], f"{where}.figures")
    plot = _check_keys(entry.get("plot") or {}, {"x", "y", "curve", "curve_label", "split"}, f"{where}.plot")
    for key in ("curve", "curve_label", "split"):
        if key in plot and (not isinstance(plot[key], str) or not plot[key]):
            raise ValueError(f"{where}.plot.{key} must be a non-empty string, got {plot[key]!r}")
    options = {}
    for option, spec in _check_keys(entry.get("options") or {}, set(OPTIONS), f"{where}.options").items():
        spec = _check_keys(spec, OPTION_KEYS, f"{where}.options.{option}")
        if not isinstance(spec.get("key"), str):
            raise ValueError(f"{where}.options.{option}.key must be a hyper-parameter key, got {spec.get('key')!r}")
        options[option] = (spec["key"], bool(spec.get("fair_only", False)), spec.get("default"))
    by_fairness = entry.get("runs_by_fairness") or {}
    if not isinstance(by_fairness, dict):
        raise ValueError(f"{where}.runs_by_fairness must map a --fairness value to runs, got {by_fairness!r}")
    hyperparams = entry.get("hyperparams") or {}
    if not isinstance(hyperparams, dict):
        raise ValueError(f"{where}.hyperparams must be a mapping of keys to values, got {hyperparams!r}")
    gym_packages = entry.get("gym_packages") or []
    if not isinstance(gym_packages, list) or not all(isinstance(m, str) and m for m in gym_packages):
        raise ValueError(f"{where}.gym_packages must be a list of module names, got {gym_packages!r}")
    price = entry.get("price_of_fairness", False)
    if not isinstance(price, bool):
        raise ValueError(f"{where}.price_of_fairness must be true or false, got {price!r}")
    for i, figure in enumerate(figures):  # a misspelled figure would train every run, then print nan
        check_figure(figure, f"{where}.figures[{i}]")
    for i, figure in enumerate(_strings(entry["absolute"], f"{where}.absolute") if "absolute" in entry else []):
        if figure not in figures:
            raise ValueError(f"{where}.absolute[{i}]: {figure!r} is not one of the task's figures {figures}")
    for key in ("x", "curve"):
        if key in plot:
            check_figure(str(plot[key]), f"{where}.plot.{key}")
    for i, figure in enumerate(_strings(plot["y"], f"{where}.plot.y") if "y" in plot else []):
        check_figure(figure, f"{where}.plot.y[{i}]")
    return CompareTask(
        name=name,
        algo=entry["algo"],
        env=entry["env"],
        figures=figures,
        runs=_runs(entry["runs"], f"{where}.runs"),
        description=str(entry.get("description", "")),
        hyperparams=dict(hyperparams),
        plot_x=str(plot.get("x", "utilitarian")),
        plot_y=_strings(plot["y"], f"{where}.plot.y") if "y" in plot else [figures[0]],
        plot_curve=plot.get("curve"),
        plot_curve_label=plot.get("curve_label"),
        plot_split=plot.get("split"),
        plot_tradeoff="x" in plot or "y" in plot,
        absolute=_strings(entry["absolute"], f"{where}.absolute") if "absolute" in entry else [],
        price_of_fairness=price,
        options=options,
        runs_by_fairness={str(k): _runs(v, f"{where}.runs_by_fairness.{k}") for k, v in by_fairness.items()},
        gym_packages=list(gym_packages),
    )


def load_tasks(path: str | Path | None = None) -> dict[str, CompareTask]:
    """The shipped tasks, and with ``path`` a user's tasks file's too (its tasks replace shipped ones of the same name).

    :raises ValueError: naming the file, the task and the key, for anything but a task as documented.
    """
    from sb3_fair.common.hyperparams import load_yaml

    tasks: dict[str, CompareTask] = {}
    for file in [TASKS_FILE] if path is None else [TASKS_FILE, Path(path)]:
        try:
            text = Path(file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            why = "not UTF-8 text" if isinstance(err, UnicodeDecodeError) else (err.strerror or str(err))
            raise ValueError(f"tasks file {str(file)!r} cannot be read ({why}): give a YAML file of tasks") from None
        data = load_yaml(text, str(file)) or {}
        if not isinstance(data, dict):
            raise ValueError(f"{file} must map task names to tasks, got {type(data).__name__}")
        tasks.update({str(name): parse_task(str(name), entry, str(file)) for name, entry in data.items()})
    return tasks


def episode_steps(env_id: str, env_kwargs: dict[str, Any]) -> int:
    """Training steps of one episode of ``env_id`` with ``env_kwargs``: its ``horizon``, or for a multi-agent game
    of :data:`~sb3_fair.experiment.registry.MULTIAGENT_ENVS` its ``max_steps`` x agents (agent-steps)."""
    import gymnasium as gym

    import sb3_fair.envs  # noqa: F401  (registers the ids)
    from sb3_fair.experiment.registry import MULTIAGENT_ENVS

    if env_id in MULTIAGENT_ENVS:
        game = MULTIAGENT_ENVS[env_id](**env_kwargs)
        max_steps = getattr(game, "max_steps", None)
        if not isinstance(max_steps, (int, np.integer)) or isinstance(max_steps, bool) or max_steps < 1:
            raise ValueError(
                f"--episodes: the game {env_id!r} has no max_steps (its fixed length) to count steps by; leave "
                "--episodes out (the entry's n_timesteps) or set n_timesteps"
            )
        return int(max_steps) * len(game.possible_agents)
    env = gym.make(env_id, **env_kwargs)
    try:
        horizon = getattr(env.unwrapped, "horizon", None)  # the sb3-fair envs' episode length
    finally:
        env.close()
    if not isinstance(horizon, (int, np.integer)) or isinstance(horizon, bool) or horizon < 1:
        raise ValueError(
            f"--episodes: {env_id!r} has no fixed episode length (its env has no horizon) to count steps by; "
            "leave --episodes out (the entry's n_timesteps) or set n_timesteps"
        )
    return int(horizon)


def baseline_of(config: Any) -> Any:
    """The SB3 / sb3-contrib parent of a Fair config, with the entry's keys the parent does not take left out."""
    import inspect

    from sb3_fair.common.hyperparams import ZOO_KEYS
    from sb3_fair.experiment import ExperimentConfig, get_algo_class
    from sb3_fair.experiment.registry import FAIR_COUNTERPART

    parent = {fair: base for base, fair in FAIR_COUNTERPART.items()}.get(config.algo)
    if parent is None:
        raise ValueError(f"{config.algo!r} has no SB3 parent to compare with")
    accepted = set(inspect.signature(get_algo_class(parent).__init__).parameters)
    hyperparams = {k: v for k, v in config.hyperparams.items() if k in accepted or k in ZOO_KEYS or k == "policy"}
    return ExperimentConfig.from_dict(
        {**config.to_dict(), "algo": parent, "hyperparams": hyperparams}, trusted=config.trusted
    )


def run_name(template: str, values: dict[str, Any]) -> str:
    """A run's name with the task's option values put in for ``$name`` (numbers as ``%g``)."""
    shown = {k: format(v, "g") if isinstance(v, float) else str(v) for k, v in values.items()}
    return string.Template(template).safe_substitute(shown)


def task_configs(
    task: CompareTask,
    seed: int,
    episodes: int | None = None,
    options: dict[str, Any] | None = None,
    overrides: dict[str, Any] | None = None,
    **fields: Any,
) -> dict[str, Any]:
    """One :class:`~sb3_fair.experiment.config.ExperimentConfig` per run of ``task``, in table order.

    :param task: the task.
    :param seed: the seed of every run.
    :param episodes: train this many episodes (default: the entry's ``n_timesteps``); every run trains as long.
    :param options: values of the task's options (e.g. ``{"preset": "tiny", "fairness": "dp"}``; None or left out:
        the option's default); an option the task does not take is refused.
    :param overrides: hyper-parameter overrides of every run (e.g. ``{"learning_rate": 1e-3}``).
    :param fields: the other config fields of every run (``eval_episodes``, ``wandb``, ``group``, ...).
    """
    from sb3_fair.experiment import ExperimentConfig
    from sb3_fair.experiment.config import plain_name

    if task.gym_packages:  # the task's modules, then the caller's
        fields = {
            **fields,
            "gym_packages": list(dict.fromkeys([*task.gym_packages, *(fields.get("gym_packages") or [])])),
        }
    values = task.option_values(dict(options or {}))
    every = {
        **task.hyperparams,
        **(overrides or {}),
        **{task.options[k][0]: v for k, v in values.items() if not task.options[k][1]},
    }
    fair_only = {task.options[k][0]: v for k, v in values.items() if task.options[k][1]}
    base = ExperimentConfig.from_hyperparams(task.algo, task.env, overrides=every, seed=seed, **fields)
    n_timesteps = base.n_timesteps
    if episodes:
        n_timesteps = episodes * episode_steps(task.env, dict(base.hyperparams.get("env_kwargs") or {}))
    configs = {}
    for template, run in task.runs_for(values).items():
        changes = {**every, **({} if run.baseline else fair_only), **run.hyperparams}
        name = run_name(template, values)
        config = ExperimentConfig.from_hyperparams(
            task.algo, task.env, variant=run.variant, overrides=changes, seed=seed, **fields
        ).replace(n_timesteps=n_timesteps)
        if "name" not in fields:  # the run's own name (W&B): two runs of one algorithm and env differ by it
            config = config.replace(name=plain_name(f"{name}, seed {seed}"))
        configs[name] = baseline_of(config) if run.baseline else config
    return configs


def seed_figures(
    task: CompareTask, runs: list[tuple[int, str, Any]], results: list[Any]
) -> tuple[dict[str, list[dict[str, Any]]], dict[str, list[Any]], dict[str, list[Any]]]:
    """Each run's evaluation figures, training curve and per-stakeholder returns, seed by seed.

    The task's ``absolute`` figures are given as their size ``|x|``. With the task's ``price_of_fairness``, each run of a
    seed gets ``pof_group_<g>`` for the groups 0 and 1: a fair run (one of the task's algorithm) its price of fairness
    in % per group against the seed's first baseline (:func:`~sb3_fair.common.evaluation.price_of_fairness_table` of
    their per-group tables), a baseline 0 (it pays nothing).

    :param task: the comparison.
    :param runs: ``(seed, run name, config)`` of every training, each seed's runs in the task's order (baselines first);
        a config's ``algo`` tells a fair run from a baseline (the algorithm's parent).
    :param results: each training's result (its ``evaluation``, ``table``, ``curve`` and ``returns``), in the order of
        ``runs``.
    :return: ``(per_seed, curves, returns)``, each a mapping of run name -> one entry per seed.
    """
    from sb3_fair.common.evaluation import price_of_fairness_table

    per_seed: dict[str, list[dict[str, Any]]] = {}
    curves: dict[str, list[Any]] = {}  # each seed's training curve, per run
    returns: dict[str, list[Any]] = {}  # each seed's per-stakeholder evaluation returns, per run
    configs = {name: config for _, name, config in runs}
    fair_names = {name for name, config in configs.items() if config.algo == task.algo}  # a baseline is the parent
    for seed in dict.fromkeys(s for s, _, _ in runs):  # the seeds, in the order they ran
        seed_results = {name: res for (s, name, _), res in zip(runs, results) if s == seed}
        baseline = (
            next(res for name, res in seed_results.items() if name not in fair_names)
            if task.price_of_fairness
            else None
        )
        for name, res in seed_results.items():
            row = dict(res.evaluation)
            for key in task.absolute:
                row[key] = abs(row.get(key, float("nan")))
            if baseline is not None:  # each fair run against the first baseline; a baseline pays nothing
                fair = name in fair_names
                pof = (
                    price_of_fairness_table({"table": res.table}, {"table": baseline.table})
                    if fair
                    else {0: 0.0, 1: 0.0}
                )
                row.update({f"pof_group_{g}": pof.get(g, float("nan")) for g in (0, 1)})
            per_seed.setdefault(name, []).append(row)
            curves.setdefault(name, []).append(res.curve)
            returns.setdefault(name, []).append(res.returns)
    return per_seed, curves, returns


def seed_statistics(
    per_seed: dict[str, list[dict[str, Any]]], figures: list[str]
) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, float]]]:
    """The mean and the standard deviation over the seeds of each run's ``figures`` (NaN for a figure a seed lacks).

    :param per_seed: run name -> each seed's figures (:func:`seed_figures`).
    :param figures: the figures of the table.
    :return: ``(table, spread)``: run name -> figure -> the mean, and the standard deviation (NumPy's, ``ddof=0``).
    """
    table = {
        name: {k: float(np.mean([r.get(k, float("nan")) for r in runs])) for k in figures}
        for name, runs in per_seed.items()
    }
    spread = {
        name: {k: float(np.std([r.get(k, float("nan")) for r in runs])) for k in figures}
        for name, runs in per_seed.items()
    }
    return table, spread


def absent_figures(per_seed: dict[str, list[dict[str, Any]]], figures: list[str]) -> list[str]:
    """The ``figures`` that no run of any seed reported (NaN in the table), e.g. a group figure of a one-group env."""
    return [k for k in figures if all(k not in r for runs in per_seed.values() for r in runs)]


@dataclass
class Comparison:
    """A comparison's trainings and its statistics over the seeds: what :func:`compare_runs` returns.

    :param task: the comparison.
    :param runs: ``(seed, run name, config)`` of every training, in the order they were handed out.
    :param results: each training's :class:`~sb3_fair.experiment.training.ExperimentResult`, in the order of ``runs``.
    :param per_seed: run name -> each seed's evaluation figures (:func:`seed_figures`).
    :param curves: run name -> each seed's :attr:`~sb3_fair.experiment.training.ExperimentResult.curve`.
    :param returns: run name -> each seed's :attr:`~sb3_fair.experiment.training.ExperimentResult.returns`.
    :param table: run name -> each of the task's figures, its mean over the seeds (:func:`seed_statistics`).
    :param spread: run name -> each of the task's figures, its standard deviation over the seeds.
    """

    task: CompareTask
    runs: list[tuple[int, str, Any]]
    results: list[Any]
    per_seed: dict[str, list[dict[str, Any]]]
    curves: dict[str, list[Any]]
    returns: dict[str, list[Any]]
    table: dict[str, dict[str, float]]
    spread: dict[str, dict[str, float]]

    @property
    def absent(self) -> list[str]:
        """The task's figures that no run reported (:func:`absent_figures`)."""
        return absent_figures(self.per_seed, self.task.figures)


def compare_runs(
    task: CompareTask,
    runs: list[tuple[int, str, Any]],
    jobs: int = 1,
    on_start: Any = None,
    on_done: Any = None,
) -> Comparison:
    """Train every run of a comparison and gather its statistics over the seeds (``sb3-fair compare``'s work).

    :param task: the comparison.
    :param runs: ``(seed, run name, config)`` of every training, e.g. each seed's :func:`task_configs`, seed by seed.
    :param jobs: trainings at a time, each in its own process (:func:`~sb3_fair.experiment.training.train_all`; the
        figures are the same, seed for seed, as with ``jobs=1``).
    :param on_start: called with ``(index into runs, config)`` when a training is handed out.
    :param on_done: called with ``(index into runs, result)`` when a training has finished.
    :raises ValueError: as :func:`~sb3_fair.experiment.training.train_all`: a setting some run's model refuses, before any
        run trains, or the first error of a run that failed.
    """
    from sb3_fair.experiment.training import train_all

    results = train_all(
        [config for _, _, config in runs],
        jobs=jobs,
        on_start=on_start,
        on_done=on_done,
    )
    per_seed, curves, returns = seed_figures(task, runs, results)
    table, spread = seed_statistics(per_seed, task.figures)
    return Comparison(task, list(runs), results, per_seed, curves, returns, table, spread)


def log_comparison(
    comparison: Comparison,
    name: str,
    group: str,
    settings: dict[str, Any],
    plot: str | Path | None = None,
) -> None:
    """The comparison's table (each figure's mean and ``<figure>_sd`` per run) and its plot, in one W&B summary run.

    :param comparison: what :func:`compare_runs` returned.
    :param name: the summary run's name (``compare-<task>-summary``).
    :param group: the W&B group of the comparison's runs (``compare-<task>``).
    :param settings: the summary run's config (the task, the seeds, the episodes).
    :param plot: the PNG :func:`plot_comparison` wrote, if any.
    """
    from sb3_fair.common.wandb_logging import log_summary_run

    figures, table, spread = comparison.task.figures, comparison.table, comparison.spread
    rows = [[run, *[table[run][k] for k in figures], *[spread[run][k] for k in figures]] for run in table]
    log_summary_run(
        name,
        group,
        settings,
        images={"compare/plot": plot} if plot else None,
        tables={"compare/table": (["method", *figures, *[f"{k}_sd" for k in figures]], rows)},
    )


def _binned(curve: list[tuple[int, dict[str, float]]], figure: str, edges: np.ndarray) -> np.ndarray:
    """The mean of ``figure`` over the training episodes that ended in each bin of steps (NaN where none did)."""
    steps = np.array([s for s, point in curve if figure in point], dtype=np.float64)
    values = np.array([point[figure] for _, point in curve if figure in point], dtype=np.float64)
    out = np.full(len(edges) - 1, np.nan)
    which = np.clip(np.searchsorted(edges, steps, side="left") - 1, 0, len(edges) - 2)
    for b in range(len(edges) - 1):
        if np.any(which == b):
            out[b] = float(np.mean(values[which == b]))
    return out


def plot_comparison(
    task: CompareTask,
    per_seed: dict[str, list[dict[str, Any]]],
    path: str | Path,
    curves: dict[str, list[list[tuple[int, dict[str, float]]]]] | None = None,
    returns: dict[str, list[np.ndarray | None]] | None = None,
) -> Path:
    """Draw what differs between a comparison's runs into the PNG ``path``.

    With the task's ``plot.curve``, its figure over the training steps: per run, the mean over the seeds of each
    seed's mean in each bin of steps, with a band from the lowest to the highest seed. With ``plot.split``, how the
    evaluation episodes' benefits were split among the stakeholders: in each episode the stakeholders are ranked from
    the one who received least to the one who received most, and each bar is a rank's mean over the episodes and
    seeds (the whiskers: the seeds' standard deviation). The trade-off, each seed's ``plot.x`` against ``plot.y``, is
    drawn beside them when the task names ``x`` or ``y``, and alone for a task with neither curve nor split.

    :param task: the comparison.
    :param per_seed: run name -> each seed's evaluation figures.
    :param path: the PNG to write (its folder is made).
    :param curves: run name -> each seed's :attr:`~sb3_fair.experiment.training.ExperimentResult.curve`.
    :param returns: run name -> each seed's :attr:`~sb3_fair.experiment.training.ExperimentResult.returns`.
    :return: the path written.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = Path(path)
    curves, returns = curves or {}, returns or {}
    show_curve = task.plot_curve is not None and any(
        task.plot_curve in point for runs in curves.values() for c in runs for _, point in c
    )
    show_split = task.plot_split is not None and any(r is not None and r.size for rs in returns.values() for r in rs)
    for asked, drawn, what in (
        (task.plot_curve, show_curve, f"plot.curve {task.plot_curve!r}: no training episode reported it"),
        (task.plot_split, show_split, "plot.split: no evaluation gave per-stakeholder returns"),
    ):
        if asked is not None and not drawn:
            warnings.warn(f"task {task.name!r}: {what}, so {path.name} leaves that panel out", stacklevel=2)
    show_tradeoff = task.plot_tradeoff or not (show_curve or show_split)
    panels = int(show_curve) + int(show_split) + int(show_tradeoff)
    fig, axes = plt.subplots(1, panels, figsize=(6.5 * panels, 4.4), squeeze=False)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    names = list(per_seed)
    ax_iter = iter(axes[0])
    if show_curve:
        ax = next(ax_iter)
        figure = cast(str, task.plot_curve)
        steps = [s for runs in curves.values() for c in runs for s, point in c if figure in point]
        first, last = (min(steps), max(steps)) if steps else (0, 1)
        # about one episode end of each seed per bin (the games of a multi-agent VecEnv end at the same step)
        counts = [len({s for s, point in c if figure in point}) for runs in curves.values() for c in runs]
        n_bins = max(1, min(40, min((k for k in counts if k), default=1)))
        edges = np.linspace(first - 1, last, n_bins + 1)
        centres = (edges[:-1] + edges[1:]) / 2
        for i, name in enumerate(names):
            rows = np.array([_binned(c, figure, edges) for c in curves.get(name, []) if c])
            if rows.size == 0:
                continue
            with warnings.catch_warnings():  # a bin no seed reached is NaN, and stays out of the line
                warnings.simplefilter("ignore", RuntimeWarning)
                mean, low, high = np.nanmean(rows, 0), np.nanmin(rows, 0), np.nanmax(rows, 0)
            colour, seen = colours[i % len(colours)], np.isfinite(mean)  # the bins some seed reached
            ax.plot(centres[seen], mean[seen], color=colour, label=name)
            if len(rows) > 1:
                ax.fill_between(centres[seen], low[seen], high[seen], color=colour, alpha=0.2, linewidth=0)
        n_seeds = max(len(runs) for runs in curves.values())
        from sb3_fair.experiment.registry import MULTIAGENT_ENVS

        ax.set_xlabel("training agent-steps" if task.env in MULTIAGENT_ENVS else "training steps")
        ax.set_ylabel(task.plot_curve_label or figure)
        ax.set_title(f"training episodes: mean of {n_seeds} seed(s), band lowest to highest", fontsize="medium")
        ax.legend(fontsize="small")
    if show_split:
        ax = next(ax_iter)
        width = 0.8 / max(len(names), 1)
        n_ranks = 0
        for i, name in enumerate(names):
            seeds = [np.sort(r, axis=1) for r in returns.get(name, []) if r is not None and r.size]
            if not seeds:
                continue
            per_seed_means = np.array([s.mean(axis=0) for s in seeds])  # seeds x ranks
            n_ranks = per_seed_means.shape[1]
            x = np.arange(n_ranks) + (i - (len(names) - 1) / 2) * width
            ax.bar(
                x,
                per_seed_means.mean(axis=0),
                width,
                yerr=per_seed_means.std(axis=0) if len(seeds) > 1 else None,
                color=colours[i % len(colours)],
                label=name,
                capsize=2,
            )
        totals = [float(r.sum(axis=1).mean()) for rs in returns.values() for r in rs if r is not None and r.size]
        if totals and n_ranks:
            ax.axhline(float(np.mean(totals)) / n_ranks, color="grey", linestyle="--", linewidth=1, label="equal split")
        ax.set_xticks(np.arange(n_ranks), [f"{k + 1}" for k in range(n_ranks)])
        ax.set_xlabel("stakeholders ranked in each episode, from least to most served")
        ax.set_ylabel(f"{task.plot_split} per episode")
        ax.set_title(f"how the {task.plot_split} were split (evaluation)", fontsize="medium")
        ax.legend(fontsize="small")
    if show_tradeoff:
        ax = next(ax_iter)
        x_key, y_key = task.plot_x, task.plot_y[0]
        for i, (name, runs) in enumerate(per_seed.items()):
            ax.scatter(
                [r.get(x_key, np.nan) for r in runs],
                [r.get(y_key, np.nan) for r in runs],
                label=name,
                s=40,
                color=colours[i % len(colours)],
            )
        ax.set_xlabel("utility: total benefit per episode" if x_key == "utilitarian" else f"utility ({x_key})")
        shown = f"|{y_key}|" if y_key in task.absolute else y_key
        ax.set_ylabel(
            f"fairness score ({shown})" if x_key == "utilitarian" else f"unfairness ({shown}, lower = fairer)"
        )
        ax.set_title("fairness-utility trade-off (evaluation, one point per seed)", fontsize="medium")
        ax.legend(fontsize="small")
    fig.suptitle(f"{task.name}: {task.env}", fontsize="medium")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


__all__ = [
    "EVALUATION_FIGURES",
    "OPTIONS",
    "TASKS_FILE",
    "CompareTask",
    "Comparison",
    "Run",
    "absent_figures",
    "baseline_of",
    "check_figure",
    "compare_runs",
    "episode_steps",
    "load_tasks",
    "log_comparison",
    "parse_task",
    "plot_comparison",
    "seed_figures",
    "seed_statistics",
    "task_configs",
]
