"""``sb3-fair compare``'s tasks as data: a fair algorithm's tuned entry against baselines with the same settings.

The shipped tasks are ``compare_tasks.yml`` beside this module; a user's own file (``--tasks-file``, or
:func:`load_tasks` ``(path)``) is read with the same rules and adds to them. A task names the algorithm and env
of its entry (``sb3_fair/hyperparams/<algo>.yml``), the figures of its table, and its runs, each a change of
that entry (see the file's header). :func:`task_configs` turns a task into one
:class:`~sb3_fair.experiment.config.ExperimentConfig` per run, which :func:`~sb3_fair.experiment.run.train_all`
trains.

Example::

    from sb3_fair.experiment.compare import load_tasks, task_configs
    from sb3_fair.experiment import train_all

    task = load_tasks()["donut"]
    configs = task_configs(task, seed=0, episodes=40, eval_episodes=5)
    results = train_all(list(configs.values()), jobs=2)
"""

from __future__ import annotations

import string
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

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
    absolute: list[str] = field(default_factory=list)
    price_of_fairness: bool = False
    #: option name -> (hyper-parameter key, on the fair runs only, default)
    options: dict[str, tuple[str, bool, Any]] = field(default_factory=dict)
    runs_by_fairness: dict[str, dict[str, Run]] = field(default_factory=dict)

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
    plot = _check_keys(entry.get("plot") or {}, {"x", "y"}, f"{where}.plot")
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
    price = entry.get("price_of_fairness", False)
    if not isinstance(price, bool):
        raise ValueError(f"{where}.price_of_fairness must be true or false, got {price!r}")
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
        absolute=_strings(entry["absolute"], f"{where}.absolute") if "absolute" in entry else [],
        price_of_fairness=price,
        options=options,
        runs_by_fairness={str(k): _runs(v, f"{where}.runs_by_fairness.{k}") for k, v in by_fairness.items()},
    )


def load_tasks(path: str | Path | None = None) -> dict[str, CompareTask]:
    """The shipped tasks, and with ``path`` a user's tasks file's too (its tasks replace shipped ones of the same name).

    :raises ValueError: naming the file, the task and the key, for anything but a task as documented.
    """
    from sb3_fair.common.hyperparams import load_yaml

    tasks: dict[str, CompareTask] = {}
    for file in [TASKS_FILE] if path is None else [TASKS_FILE, Path(path)]:
        data = load_yaml(Path(file).read_text(), str(file)) or {}
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
        return int(game.max_steps) * len(game.possible_agents)
    env = gym.make(env_id, **env_kwargs)
    try:
        return int(cast(Any, env.unwrapped).horizon)  # the sb3-fair envs' episode length
    finally:
        env.close()


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
    return ExperimentConfig.from_dict({**config.to_dict(), "algo": parent, "hyperparams": hyperparams})


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
        config = ExperimentConfig.from_hyperparams(
            task.algo, task.env, variant=run.variant, overrides=changes, seed=seed, **fields
        ).replace(n_timesteps=n_timesteps)
        configs[run_name(template, values)] = baseline_of(config) if run.baseline else config
    return configs


__all__ = [
    "OPTIONS",
    "TASKS_FILE",
    "CompareTask",
    "Run",
    "baseline_of",
    "episode_steps",
    "load_tasks",
    "parse_task",
    "task_configs",
]
