"""``train(config) -> ExperimentResult``: the one runner behind the CLI, the benchmarks and sweeps.

:func:`train` trains the model of an :class:`~sb3_fair.experiment.config.ExperimentConfig`
(:func:`~sb3_fair.experiment.build.build_model`, or a checkpoint it goes on from) with the ``fairness/*`` logs for every
algorithm, SB3's own included, saves it with its config (:func:`~sb3_fair.experiment.persistence.save`), evaluates it
with the evaluator that fits the env (:func:`~sb3_fair.experiment.evaluation.evaluate`) and, with ``wandb`` on, owns
the W&B run: one run per call, grouped and tagged, the evaluation figures in its summary. :func:`train_all` trains
many configs, side by side in worker processes, once :func:`check_configs` has built each of them.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import numpy as np
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.callbacks import BaseCallback, CallbackList
from stable_baselines3.common.vec_env import VecEnv

from sb3_fair.experiment.build import _zoo_callbacks, build_model
from sb3_fair.experiment.checkpoints import CompactCheckpointCallback
from sb3_fair.experiment.config import ExperimentConfig
from sb3_fair.experiment.evaluation import _evaluate
from sb3_fair.experiment.files import ModelNotSavedError, RunLock, atomic_path, check_output_path
from sb3_fair.experiment.persistence import (
    _CHECKPOINT,
    CONFIG_SUFFIX,
    RUN_IDENTITY,
    _check_space,
    _resume,
    _zip_steps,
    check_run_files,
    checkpoint_folder,
    run_lock_path,
    save,
)
from sb3_fair.experiment.processes import end_workers, worker_dies_with_parent
from sb3_fair.experiment.registry import get_algo_class, is_fair_algo, make_env, make_eval_env


@dataclass
class ExperimentResult:
    """What :func:`train` returns.

    :param config: the config that ran.
    :param evaluation: the evaluation's scalar figures (``episode_reward``, fairness figures, ...);
        empty without evaluation.
    :param table: the per-group table of a multi-agent evaluation (``{group: {"mean_return", ...}}``).
    :param n_timesteps: the model's step count at the end.
    :param train_time_s: seconds spent in ``learn``.
    :param save_path: where the model was saved, if it was.
    :param resumed_at: the step count of the checkpoint a resumed run went on from.
    :param resumed_buffer: the replay buffer file a resumed run loaded, if any.
    :param checkpoint_bytes: the disk use of the checkpoints the run wrote (models, the newest replay
        buffer, VecNormalize statistics); 0 without checkpoints.
    :param model: the trained model (not part of :meth:`to_dict`).
    :param curve: ``(step count, figures)`` of each training episode that ended in this training, as
        :class:`~sb3_fair.common.callbacks.TrainingCurve` keeps them (the episode's reward and its fairness figures).
    :param returns: each evaluation episode's per-stakeholder returns, one row per episode, for an env with
        stakeholders evaluated by :func:`~sb3_fair.common.evaluation.evaluate_fairness`; None otherwise.
    """

    config: ExperimentConfig
    evaluation: dict[str, float] = field(default_factory=dict)
    table: dict[int, dict[str, float]] = field(default_factory=dict)
    n_timesteps: int = 0
    train_time_s: float = 0.0
    save_path: str | None = None
    resumed_at: int | None = None
    resumed_buffer: str | None = None
    checkpoint_bytes: int = 0
    model: BaseAlgorithm | None = field(default=None, repr=False)
    curve: list[tuple[int, dict[str, float]]] = field(default_factory=list, repr=False)
    returns: np.ndarray | None = field(default=None, repr=False)

    @property
    def steps_per_second(self) -> float:
        """Training throughput."""
        return self.n_timesteps / self.train_time_s if self.train_time_s > 0 else float("nan")

    def to_dict(self) -> dict[str, Any]:
        """Plain data: the config, the figures and the timings."""
        return {
            "config": self.config.to_dict(),
            "evaluation": dict(self.evaluation),
            "table": {str(g): dict(row) for g, row in self.table.items()},
            "n_timesteps": self.n_timesteps,
            "train_time_s": self.train_time_s,
            "steps_per_second": self.steps_per_second,
            "save_path": self.save_path,
            "curve": [[step, dict(point)] for step, point in self.curve],
            "returns": None if self.returns is None else self.returns.tolist(),
        }


def _quiet_logger(model: BaseAlgorithm, verbose: int) -> None:
    """Give ``model`` SB3's logger without a folder: SB3's default makes an empty ``/tmp/SB3-<time>`` folder on
    every ``learn`` when there is nothing to write there (hundreds in a sweep)."""
    import sys

    from stable_baselines3.common.logger import HumanOutputFormat, Logger

    model.set_logger(Logger(folder=None, output_formats=[HumanOutputFormat(sys.stdout)] if verbose >= 1 else []))


def _check_model_fits(model: Any, config: ExperimentConfig) -> None:
    """A model in memory that ``train(config, model=...)`` may go on with: an instance of ``config.algo``'s class, with an
    env whose spaces are those of ``config.env`` with the config's ``env_kwargs``."""
    cls = get_algo_class(config.algo)
    if not isinstance(model, cls):
        raise ValueError(
            f"model must be a {cls.__name__} (config.algo {config.algo!r}), e.g. an earlier result's .model; "
            f"got {type(model).__name__}"
        )
    if model.get_env() is None:
        raise ValueError("model has no env to go on training on: pass an earlier result's .model, or load it with env=")
    probe = make_env(
        config.env,
        n_envs=1,
        seed=config.seed,
        env_kwargs=config.hyperparams.get("env_kwargs") or {},
        env_wrapper=config.hyperparams.get("env_wrapper"),
        vec_env_wrapper=config.hyperparams.get("vec_env_wrapper"),
        trusted=config.trusted,
    )
    try:
        if probe.observation_space != model.observation_space or probe.action_space != model.action_space:
            raise ValueError(
                f"model was not trained on {config.env!r} with env_kwargs {config.hyperparams.get('env_kwargs') or {}}: "
                f"its spaces are {model.observation_space} / {model.action_space}, the env's "
                f"{probe.observation_space} / {probe.action_space}"
            )
    finally:
        probe.close()


@contextmanager
def torch_threads(n: int | None) -> Iterator[None]:
    """torch's intra-op thread count set to ``n`` inside the block, the previous count back after it (``None``: unchanged)."""
    import torch as th

    if n is None:
        yield
        return
    previous = th.get_num_threads()
    th.set_num_threads(n)
    try:
        yield
    finally:
        th.set_num_threads(previous)


def train(
    config: ExperimentConfig,
    callback: BaseCallback | list[BaseCallback] | None = None,
    resume: str | Path | None = None,
    model: BaseAlgorithm | None = None,
) -> ExperimentResult:
    """Train, save, evaluate and track one run of ``config``.

    Training in chunks, with an evaluation after each, goes on from the model in memory::

        result = train(config.replace(n_timesteps=10_000))
        for total in (20_000, 30_000):
            result = train(config.replace(n_timesteps=total), model=result.model)

    :param config: the experiment.
    :param callback: the user's callbacks, run after the fairness logging.
    :param resume: a checkpoint (``.zip``) to go on from, up to ``config.n_timesteps`` steps in all
        (with its replay buffer, if saved beside it by the checkpoints). The fresh training env and the
        random generators are seeded with ``config.seed + N`` (N the checkpoint's steps), so the resumed
        part does not replay the episodes the run started with.
    :param model: a model in memory (e.g. the ``.model`` of an earlier result) to go on training, on its own
        env and with its own settings, up to ``config.n_timesteps`` steps in all; ``config`` names it for
        saving, evaluation and W&B.

    Everything runs with ``config.num_threads`` torch threads (default 1), the process's own count restored after.
    """
    with torch_threads(config.num_threads):
        return _train(config, callback, resume, model)


def _train(
    config: ExperimentConfig,
    callback: BaseCallback | list[BaseCallback] | None,
    resume: str | Path | None,
    model: BaseAlgorithm | None,
) -> ExperimentResult:
    if resume is not None and model is not None:
        raise ValueError("give resume (a checkpoint on disk) or model (a model in memory), not both")
    if config.save_path:
        check_output_path(
            config.save_path, "save_path"
        )  # before training: a model trained for nothing is lost otherwise
    if not (config.save_path or config.checkpoint_every):
        return _train_unlocked(config, callback, resume, model)
    lock = RunLock(run_lock_path(config), f"the run {str(config.save_path or checkpoint_folder(config))!r}")
    with lock:  # one writer per run: a second train() of the same files is refused while this one runs
        start: int | None = None
        if model is not None:
            start = int(model.num_timesteps)
        elif resume is not None and Path(resume).is_file():
            match = _CHECKPOINT.match(Path(resume).name[:-4])
            start = int(match["steps"]) if match else _zip_steps(Path(resume))
            start = 0 if start is None else start
        check_run_files(config, start)
        return _train_unlocked(config, callback, resume, model)


def _train_unlocked(
    config: ExperimentConfig,
    callback: BaseCallback | list[BaseCallback] | None,
    resume: str | Path | None,
    model: BaseAlgorithm | None,
) -> ExperimentResult:
    if (
        config.eval_episodes and config.eval_env_kwargs
    ):  # the evaluation env's own arguments, checked before training too
        try:
            make_eval_env(
                config.env, config.evaluation_env_kwargs, config.hyperparams.get("env_wrapper"), trusted=config.trusted
            ).close()
        except TypeError as err:
            raise ValueError(f"env {config.env!r} refused eval_env_kwargs {config.eval_env_kwargs}: {err}") from None
    if model is not None:
        _check_model_fits(model, config)
    from sb3_fair.common.callbacks import FairnessCallback, TrainingCurve
    from sb3_fair.common.fair_algorithm import fairness_figures_logged
    from sb3_fair.common.wandb_logging import finish_wandb_run, start_wandb_run

    run, owns_run = None, False
    if config.wandb:
        from sb3_fair.common.wandb_logging import active_wandb_run

        init = dict(config.wandb) if isinstance(config.wandb, dict) else {}
        init.setdefault("name", config.run_name)
        init.setdefault("group", config.group or config.default_group)
        init.setdefault("tags", [config.algo, config.env, *([config.variant] if config.variant else [])])
        owns_run = active_wandb_run() is None  # a run you started yourself is joined and left open for you
        run = start_wandb_run(
            {"experiment": config.to_plain_dict()}, **init
        )  # the model adds its own flat settings beside it
    try:
        buffer: Path | None = None
        going_on = resume is not None or model is not None
        if resume is not None:
            model, buffer = _resume(config, Path(resume))
        elif model is None:
            model = build_model(config)
        start = int(model.num_timesteps)
        _check_space(config, model, start if going_on else 0)
        if config.tensorboard_log is not None:
            model.tensorboard_log = config.tensorboard_log
        # a logger of your own (model.set_logger) is kept; ours is dropped after training, as SB3 drops its own
        quiet = model.tensorboard_log is None and not getattr(model, "_custom_logger", False)
        if quiet:
            _quiet_logger(model, config.verbose)
        callbacks: list[BaseCallback] = []
        # the model has an env (get_env() is Optional in SB3): built or resumed on one, or checked by _check_model_fits
        if not is_fair_algo(config.algo) and (
            fairness_figures_logged(cast(VecEnv, model.get_env())) or run is not None
        ):
            callbacks.append(FairnessCallback(wandb=run is not None))
        callbacks += _zoo_callbacks(config.hyperparams.get("callback"), trusted=config.trusted)
        checkpoints = None
        if config.checkpoint_every:
            folder = checkpoint_folder(config)
            every = max(
                config.checkpoint_every // cast(VecEnv, model.get_env()).num_envs, 1
            )  # CheckpointCallback counts VecEnv steps
            checkpoints = CompactCheckpointCallback(
                every,
                str(folder),
                name_prefix="model",
                save_replay_buffer=True,
                save_vecnormalize=True,
                keep_buffers=config.checkpoint_buffers,
            )
            callbacks.append(checkpoints)
            folder.mkdir(parents=True, exist_ok=True)
            with atomic_path(folder / ("model" + CONFIG_SUFFIX)) as tmp:
                config.save(tmp)
        if callback is not None:
            callbacks += callback if isinstance(callback, list) else [callback]
        curve = TrainingCurve()  # reads the infos only: the training is the same with it
        callbacks.append(curve)
        assert config.n_timesteps is not None  # filled in (or refused) by ExperimentConfig.__post_init__
        remaining = config.n_timesteps - (start if going_on else 0)
        t0 = time.perf_counter()
        try:
            if remaining > 0:
                model.learn(
                    remaining,
                    callback=CallbackList(callbacks),
                    progress_bar=config.progress_bar,
                    reset_num_timesteps=not going_on,
                )
        finally:
            if quiet:
                model._custom_logger = False  # the next learn (or train) configures a fresh logger
        train_time = time.perf_counter() - t0
        result = ExperimentResult(
            config=config,
            n_timesteps=int(model.num_timesteps),
            train_time_s=train_time,
            model=model,
            checkpoint_bytes=checkpoints.bytes_on_disk() if checkpoints is not None else 0,
            curve=curve.points,
        )
        if resume is not None:
            result.resumed_at, result.resumed_buffer = start, (str(buffer) if buffer else None)
        if checkpoints is not None and checkpoints.failed is not None:
            failed = checkpoints.failed
            raise ModelNotSavedError(
                f"training stopped at {model.num_timesteps} steps: a checkpoint could not be written in "
                f"{checkpoint_folder(config)} ({failed.strerror or failed}); the trained model is kept on this error (.model)",
                model,
                failed.filename or checkpoint_folder(config),
            ) from failed
        if config.save_path:
            try:
                save(model, config, config.save_path)
            except OSError as err:
                raise ModelNotSavedError(
                    f"save_path: the trained model could not be written to {config.save_path} ({err.strerror or err}); "
                    "it is kept on this error (.model)",
                    model,
                    config.save_path,
                ) from err
            result.save_path = str(config.save_path)
        if config.eval_episodes:
            result.evaluation, result.table, result.returns = _evaluate(
                model,
                config.env,
                config.eval_episodes,
                config.evaluation_env_kwargs,
                config.hyperparams.get("env_wrapper"),
                config.eval_deterministic,
                seed=config.evaluation_seed,
                trusted=config.trusted,
            )
        if run is not None:
            _log_evaluation(run, result)
        return result
    finally:
        if run is not None and owns_run:
            finish_wandb_run(run)


def _train_in_worker(data: dict[str, Any], trusted: bool) -> ExperimentResult:
    """:func:`train` of a config sent to a worker process as plain data; the result without its model."""
    result = train(ExperimentConfig.from_dict(data, trusted=trusted))
    result.model = None  # models hold their envs: they stay in the worker
    return result


def check_configs(configs: list[ExperimentConfig]) -> None:
    """Build the model of every distinct config (its settings, env and hyper-parameters; the seed, step count and
    names aside) and close it again, so that a setting the algorithm or the env refuses is reported before any run
    trains. Nothing is trained, saved or logged.

    :raises ValueError: the first config's error, prefixed with the run it belongs to.
    """
    import json

    seen = set()
    for config in configs:
        key = json.dumps(
            {k: v for k, v in config.to_plain_dict().items() if k in RUN_IDENTITY and k != "seed"},
            sort_keys=True,
            default=repr,
        )
        if key in seen:
            continue
        seen.add(key)
        try:
            model = build_model(config.replace(wandb=False, tensorboard_log=None, verbose=0))
        except ValueError as err:
            raise ValueError(f"run {config.run_name!r}: {err}") from None
        env = model.get_env()
        if env is not None:
            env.close()


def train_all(
    configs: list[ExperimentConfig], jobs: int = 1, on_start: Any = None, on_done: Any = None
) -> list[ExperimentResult]:
    """:func:`train` of every config, ``jobs`` at a time in worker processes; the results in the order of ``configs``.

    Each training runs with its config's ``num_threads`` (default 1) in a fresh process (``spawn``), so the results are
    those of a serial run, seed for seed (a run depends only on its config). With ``jobs=1`` the trainings run one
    after another in this process and keep their models.

    :param configs: the runs.
    :param jobs: how many at a time (>= 1).
    :param on_start: called with ``(index, config)`` when a run is handed out.
    :param on_done: called with ``(index, result)`` when a run has finished.
    :raises ValueError: for ``jobs`` < 1; a setting some run's model refuses, before any run trains
        (:func:`check_configs`); otherwise the first error of a run that failed while training, after the others have
        finished.

    When this process is interrupted (Ctrl+C, or SIGTERM where the caller turns it into an exception, as the command
    line does), the worker processes are ended before the exception goes on; on Linux a worker also ends when this
    process is killed outright.
    """
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be an int >= 1, got {jobs!r}")
    check_configs(configs)  # a bad setting of the last run is reported before the first trains
    results: list[ExperimentResult | None] = [None] * len(configs)
    if jobs == 1 or len(configs) <= 1:
        for i, config in enumerate(configs):
            if on_start is not None:
                on_start(i, config)
            results[i] = train(config)
            if on_done is not None:
                on_done(i, results[i])
        return [r for r in results if r is not None]
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor, as_completed

    pool = ProcessPoolExecutor(
        max_workers=min(jobs, len(configs)), mp_context=mp.get_context("spawn"), initializer=worker_dies_with_parent
    )
    errors = []
    try:
        futures = {}
        for i, config in enumerate(configs):
            if on_start is not None:
                on_start(i, config)
            futures[pool.submit(_train_in_worker, config.to_dict(), config.trusted)] = i
        for future in as_completed(futures):
            i = futures[future]
            try:
                results[i] = future.result()
            except Exception as err:  # noqa: BLE001 - reported after the other runs finish
                errors.append((i, err))
                continue
            if on_done is not None:
                on_done(i, results[i])
    except BaseException:  # Ctrl+C, SIGTERM turned into an exception, an error of a callback: no worker goes on alone
        end_workers(pool)
        raise
    pool.shutdown()
    if errors:
        i, error = min(errors, key=lambda e: e[0])
        raise error
    return [r for r in results if r is not None]


def _log_evaluation(run: Any, result: ExperimentResult) -> None:
    """The evaluation figures into the run's summary (``eval/*``) and, as W&B tables, the figures and the per-group table."""
    from sb3_fair.common.wandb_logging import log_results

    try:
        run.summary.update({f"eval/{k}": v for k, v in result.evaluation.items()})
        run.summary.update({"train/steps_per_second": result.steps_per_second})
    except Exception as exc:  # noqa: BLE001 - W&B must never stop an experiment
        import warnings

        warnings.warn(f"Weights & Biases could not store the evaluation figures ({exc!r})", stacklevel=2)
    tables = {}
    if result.evaluation:
        tables["eval/figures"] = (["figure", "value"], [[k, v] for k, v in result.evaluation.items()])
    if result.table:
        columns = sorted({k for row in result.table.values() for k in row})
        tables["eval/per_group"] = (
            ["group", *columns],
            [[g, *[row.get(c) for c in columns]] for g, row in sorted(result.table.items())],
        )
    log_results(run, tables=tables)


__all__ = [
    "ExperimentResult",
    "check_configs",
    "torch_threads",
    "train",
    "train_all",
]
