"""A run's files: where they go, saving and loading a model with its config, and going on from a checkpoint.

* where: the config and VecNormalize statistics saved beside a model (:func:`saved_config_path`: ``x.zip`` ->
  ``x.config.yml``; :func:`saved_vecnormalize_path`), the checkpoint folder (:func:`checkpoint_folder`) and the
  checkpoints in it (:func:`checkpoints_in`), the run's lock file (:func:`run_lock_path`);
* saving and loading: :func:`save` (the model, its config, its VecNormalize statistics) and :func:`load_model`;
* resuming: a checkpoint, or a model :func:`save` wrote, checked (a complete zip and replay buffer, saved by the
  config's class with its fairness settings) and loaded on a fresh env of the config, with its replay buffer and
  VecNormalize statistics (what ``train(config, resume=...)`` goes on from);
* the checks :func:`~sb3_fair.experiment.training.train` makes before it writes: :func:`check_run_files` (no other
  run's files written over, nor a later point of this run) and the free space the run's files need.

Each file is written whole by the tools of :mod:`~sb3_fair.experiment.files`; the checkpoints written during
training are :class:`~sb3_fair.experiment.checkpoints.CompactCheckpointCallback`'s.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Any

from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.vec_env import VecEnv, VecNormalize

from sb3_fair.experiment.build import build_model
from sb3_fair.experiment.config import ExperimentConfig
from sb3_fair.experiment.files import atomic_path, check_free_space, model_bytes, replay_buffer_bytes
from sb3_fair.experiment.files import zip_path as model_zip  # zip_path names the local variables here
from sb3_fair.experiment.registry import get_algo_class, is_fair_algo, make_env

#: suffix of the config saved beside a model (``model.zip`` -> ``model.config.yml``)
CONFIG_SUFFIX = ".config.yml"
#: suffix of the VecNormalize statistics saved beside a model trained with ``normalize``
VECNORMALIZE_SUFFIX = ".vecnormalize.pkl"


_CHECKPOINT = re.compile(r"^(?P<prefix>.+)_(?P<steps>\d+)_steps$")


def saved_config_path(model_path: str | Path) -> Path:
    """The config file saved beside ``model_path``: ``x.zip`` -> ``x.config.yml``; a checkpoint of
    :func:`~sb3_fair.experiment.training.train` (``<prefix>_<N>_steps.zip``) -> its folder's ``<prefix>.config.yml``."""
    p = Path(model_path)
    stem = p.name[:-4] if p.name.endswith(".zip") else p.name
    match = _CHECKPOINT.match(stem)
    if match and not p.with_name(stem + CONFIG_SUFFIX).is_file():
        return p.with_name(match["prefix"] + CONFIG_SUFFIX)
    return p.with_name(stem + CONFIG_SUFFIX)


def saved_vecnormalize_path(model_path: str | Path) -> Path:
    """The VecNormalize statistics saved beside ``model_path``: ``x.zip`` -> ``x.vecnormalize.pkl``; a checkpoint
    ``<prefix>_<N>_steps.zip`` -> ``<prefix>_vecnormalize_<N>_steps.pkl`` (SB3's ``CheckpointCallback`` naming)."""
    p = Path(model_path)
    stem = p.name[:-4] if p.name.endswith(".zip") else p.name
    match = _CHECKPOINT.match(stem)
    if match and not p.with_name(stem + VECNORMALIZE_SUFFIX).is_file():
        return p.with_name(f"{match['prefix']}_vecnormalize_{match['steps']}_steps.pkl")
    return p.with_name(stem + VECNORMALIZE_SUFFIX)


def load_model(
    path: str | Path, algo: str | None = None, env: VecEnv | None = None, trusted: bool = False, **kwargs: Any
) -> tuple[BaseAlgorithm, ExperimentConfig | None]:
    """A saved model and, if :func:`~sb3_fair.experiment.training.train` saved it, its config (algorithm, env and VecNormalize statistics
    come from there); ``algo`` is needed otherwise.

    The saved config is data: objects it names must be on the allow-list unless ``trusted`` (see
    :class:`~sb3_fair.experiment.ExperimentConfig`). The model's zip is SB3's, which unpickles what it holds:
    load only zips you trust.

    :raises ValueError: when neither ``algo`` nor a saved config says which algorithm to load.
    """
    p = Path(path)
    zip_path = model_zip(p)
    if not zip_path.is_file():
        raise ValueError(f"no saved model {str(p)!r}")
    cfg_path = saved_config_path(zip_path)
    config = ExperimentConfig.from_file(cfg_path, trusted=trusted) if cfg_path.is_file() else None
    name = algo or (config.algo if config else None)
    if name is None:
        raise ValueError(f"{zip_path} has no saved config ({cfg_path.name}); say which algorithm it is (--algo)")
    model = get_algo_class(name).load(zip_path, env=env, device=kwargs.pop("device", "cpu"), **kwargs)
    stats = saved_vecnormalize_path(zip_path)
    if stats.is_file() and config is None:
        raise ValueError(
            f"{zip_path} was trained on normalised observations ({stats.name}) but has no saved config to "
            f"rebuild its env from ({cfg_path.name})"
        )
    if stats.is_file() and config is not None:
        vec = make_env(
            config.env,
            n_envs=1,
            env_kwargs=config.hyperparams.get("env_kwargs") or {},
            env_wrapper=config.hyperparams.get("env_wrapper"),
            trusted=config.trusted,
        )
        norm = VecNormalize.load(str(stats), vec)
        norm.training, norm.norm_reward = False, False
        model._vec_normalize_env = norm  # what get_vec_normalize_env() reads
    return model, config


def save(model: BaseAlgorithm, config: ExperimentConfig, path: str | Path) -> None:
    """Save ``model``, its config beside it (``x.config.yml``) and, if it trained on one, its VecNormalize statistics.

    Each file is written to a temporary name and renamed into place once complete
    (:func:`~sb3_fair.experiment.files.atomic_path`), the model's zip last: an interrupted or failed save leaves the
    files that were there before, never a partial one."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    zip_path = model_zip(p)
    with atomic_path(saved_config_path(zip_path)) as tmp:
        config.save(tmp)
    norm = model.get_vec_normalize_env()
    if norm is not None:
        with atomic_path(zip_path.with_name(zip_path.name[:-4] + VECNORMALIZE_SUFFIX)) as tmp:
            norm.save(str(tmp))
    with atomic_path(zip_path) as tmp, open(tmp, "wb") as f:
        model.save(f)


def checkpoint_folder(config: ExperimentConfig) -> Path:
    """Where :func:`~sb3_fair.experiment.training.train` writes ``config``'s checkpoints: beside ``save_path`` (``runs/m.zip`` -> ``runs/m/``), or
    ``checkpoints/<run name>/`` in the working folder (the run name is a plain name, so it stays there)."""
    if config.save_path:
        return Path(config.save_path).with_suffix("")
    folder = Path("checkpoints") / config.run_name
    if folder.resolve().parent != Path("checkpoints").resolve():  # run_name is checked to be a plain name: never
        raise ValueError(f"the run name {config.run_name!r} would put checkpoints outside ./checkpoints")
    return folder


#: the fields of a config that make it the same run: a run's files may be written again only by a config that agrees on
#: these (its step count, evaluation, logging and checkpoint settings may differ: a longer run of the same run)
RUN_IDENTITY = ("algo", "env", "variant", "seed", "hyperparams")


def _check_space(config: ExperimentConfig, model: BaseAlgorithm, start: int) -> None:
    """Refuse a run whose model, checkpoints and replay buffers will not fit where they go (before it trains)."""
    assert config.n_timesteps is not None
    remaining = max(config.n_timesteps - start, 0)
    zip_bytes = model_bytes(model)
    if config.save_path:
        check_free_space(Path(config.save_path).parent, zip_bytes, "save_path")
    if config.checkpoint_every:
        n = remaining // config.checkpoint_every
        buffers = min(config.checkpoint_buffers + 1, n) if config.checkpoint_buffers else 0  # +1: the one being written
        needed = (
            n * zip_bytes
            + buffers * replay_buffer_bytes(model, config.n_timesteps)
            + (zip_bytes if config.save_path else 0)
        )
        check_free_space(checkpoint_folder(config), needed, "checkpoint_every")


def run_lock_path(config: ExperimentConfig) -> Path:
    """The lock file :func:`~sb3_fair.experiment.training.train` holds while it writes ``config``'s files: ``runs/.m.lock`` for ``runs/m.zip`` (and
    its checkpoint folder ``runs/m/``), ``checkpoints/.<run name>.lock`` otherwise."""
    folder = checkpoint_folder(config)
    return folder.with_name(f".{folder.name}.lock")


def checkpoints_in(folder: Path) -> dict[int, Path]:
    """The checkpoints :func:`~sb3_fair.experiment.training.train` wrote in ``folder`` (``model_<N>_steps.zip``), by step count."""
    found = {}
    if folder.is_dir():
        for path in folder.glob("model_*_steps.zip"):
            match = _CHECKPOINT.match(path.name[:-4])
            if match and match["prefix"] == "model":
                found[int(match["steps"])] = path
    return dict(sorted(found.items()))


def _run_identity(data: Any) -> dict[str, Any] | None:
    if not isinstance(data, dict):
        return None
    return {k: data.get(k) for k in RUN_IDENTITY}


def _saved_identity(config_file: Path) -> dict[str, Any] | None:
    """The identity fields of a saved config file (plain data; nothing it names is imported), None if unreadable."""
    from sb3_fair.common.hyperparams import load_yaml

    try:
        return _run_identity(load_yaml(config_file.read_text(), str(config_file)))
    except (OSError, ValueError, UnicodeDecodeError):
        return None


def _differences(saved: dict[str, Any], current: dict[str, Any]) -> str:
    return ", ".join(
        f"{k} {saved.get(k)!r} there, {current.get(k)!r} here" for k in RUN_IDENTITY if saved.get(k) != current.get(k)
    )


def _zip_steps(path: Path) -> int | None:
    """The ``num_timesteps`` saved in an SB3 zip (read from its ``data`` record; nothing is unpickled), None if the
    file is not a readable SB3 zip."""
    import zipfile

    try:
        return int(_zip_data(path)["num_timesteps"])
    except (OSError, KeyError, ValueError, TypeError, zipfile.BadZipFile):
        return None


def check_run_files(config: ExperimentConfig, start: int | None = None) -> None:
    """Refuse a run that would write over another run's files (called by :func:`~sb3_fair.experiment.training.train` under the run's lock).

    A fresh run (``start`` None) may write its save path and checkpoint folder only where they are empty, or hold the
    files of the same run (a saved config that agrees on :data:`RUN_IDENTITY`). A run that goes on from step ``start``
    (a resume, or a model in memory) must not write over files of a later point of its run: the checkpoint folder may
    hold no checkpoint after ``start``, and the saved model no more steps than ``start``.

    :raises ValueError: naming the file, what it holds, and what to do instead.
    """
    current = _run_identity(config.to_plain_dict())
    assert current is not None
    targets: list[tuple[Path, Path]] = []  # (file or folder, the config that says whose it is)
    if config.save_path:
        zip_path = model_zip(config.save_path)
        targets.append((zip_path, saved_config_path(zip_path)))
    folder = checkpoint_folder(config) if config.checkpoint_every else None
    found = checkpoints_in(folder) if folder is not None else {}
    if folder is not None and found:
        targets.append((folder, folder / ("model" + CONFIG_SUFFIX)))
    hint = "give this run another save path or name (--save / --name), or delete the old files"
    for target, config_file in targets:
        if not target.exists():
            continue
        if target.is_file() and _zip_steps(target) is None:
            raise ValueError(
                f"save_path: {str(target)!r} exists and is not a model zip; it is never overwritten: {hint}"
            )
        saved = _saved_identity(config_file) if config_file.is_file() else None
        if saved is None:
            raise ValueError(
                f"save_path: {str(target)!r} holds a model or checkpoints with no readable config of their run "
                f"({config_file.name}): {hint}"
            )
        if saved != current:
            raise ValueError(
                f"save_path: {str(target)!r} holds another run's files ({_differences(saved, current)}): {hint}"
            )
    if start is None:
        return
    later = [steps for steps in found if steps > start]
    if later:
        assert folder is not None
        newest = found[max(later)]
        raise ValueError(
            f"resume: going on from step {start} would write over the later checkpoints of this run in {folder}/ "
            f"({len(later)} of them, the newest {newest.name}): resume from the newest (--resume {newest}), or branch "
            "off into a new run with another save path or name (--save / --name)"
        )
    if config.save_path:
        zip_path = model_zip(config.save_path)
        saved_steps = _zip_steps(zip_path) if zip_path.is_file() else None
        if saved_steps is not None and saved_steps > start:
            raise ValueError(
                f"resume: going on from step {start} would write over {zip_path}, this run's model at {saved_steps} "
                "steps: branch off into a new run with another save path or name (--save / --name); to train the "
                f"finished run further, resume from its model (--resume {zip_path})"
            )


def _checkpoint_buffer_path(checkpoint: Path) -> Path | None:
    """The replay buffer a checkpoint ``<prefix>_<N>_steps.zip`` keeps beside it (``<prefix>_replay_buffer_<N>_steps.pkl``,
    :class:`~sb3_fair.experiment.checkpoints.CompactCheckpointCallback`'s naming); None for a zip of another name."""
    match = _CHECKPOINT.match(checkpoint.name[:-4])
    return checkpoint.with_name(f"{match['prefix']}_replay_buffer_{match['steps']}_steps.pkl") if match else None


def _complete_checkpoint(path: Path) -> str | None:
    """Why the checkpoint ``path`` (and the replay buffer beside it) cannot be resumed from, None if it can: the zip
    must pass its CRC checks; a buffer beside it must be non-empty and end as a pickle ends."""
    import zipfile

    try:
        with zipfile.ZipFile(path) as z:
            bad = z.testzip()
            names = z.namelist()
    except (OSError, zipfile.BadZipFile) as err:
        return f"{path.name} is not a complete zip ({err})"
    if "data" not in names:  # the tail of a cut file can be a zip of its own (torch saves its tensors as one)
        return f"{path.name} is not a complete zip (no 'data' record)"
    if bad is not None:
        return f"{path.name} is damaged (bad CRC in {bad})"
    buffer = _checkpoint_buffer_path(path)
    if buffer is not None and buffer.is_file():
        size = buffer.stat().st_size
        with open(buffer, "rb") as f:
            f.seek(max(size - 1, 0))
            last = f.read(1)
        if size == 0 or last != b".":  # every pickle ends with its STOP opcode
            return f"its replay buffer {buffer.name} is incomplete ({size} bytes)"
    return None


def _damaged_checkpoint(checkpoint: Path, why: str) -> ValueError:
    complete = [p for steps, p in reversed(checkpoints_in(checkpoint.parent).items()) if p != checkpoint]
    newest = next((p for p in complete if _complete_checkpoint(p) is None), None)
    offer = (
        f"; the newest complete checkpoint is {newest} (--resume {newest})"
        if newest
        else "; no other checkpoint there is complete"
    )
    return ValueError(f"resume: cannot resume from {checkpoint}: {why}{offer}")


def _zip_data(path: Path) -> dict[str, Any]:
    """The ``data`` record of an SB3 zip as JSON (nothing is unpickled)."""
    import json
    import zipfile

    with zipfile.ZipFile(path) as z:
        data = json.loads(z.read("data"))
    return data if isinstance(data, dict) else {}


def _plain_json(value: Any) -> Any:
    return [_plain_json(v) for v in value] if isinstance(value, (list, tuple)) else value


def _check_checkpoint_fits(config: ExperimentConfig, checkpoint: Path) -> None:
    """Refuse a checkpoint that ``config`` (its folder's, when resumed from the command line) does not describe: one
    saved by another class (a Fair class's zip records its class; a parent's zip records none), or whose fairness
    settings differ from the config's."""
    from sb3_fair.common.fair_algorithm import fairness_parameters

    cls = get_algo_class(config.algo)
    data = _zip_data(checkpoint)
    saved_by = data.get("_saved_by")
    fair = is_fair_algo(config.algo)
    if fair and saved_by is None and "fairness_window" not in data:
        who = "an SB3 / sb3-contrib model (no Fair class recorded in it)"
    elif saved_by is not None and saved_by != cls.__name__:
        who = str(saved_by)
    elif not fair and ("fairness_window" in data or saved_by is not None):
        who = f"a Fair class ({saved_by or 'of sb3-fair'})"
    else:
        who = None
    if who is not None:
        raise ValueError(
            f"resume: {checkpoint} was saved by {who}, but the config says algo {config.algo!r} ({cls.__name__}): "
            "resume it with the config of the run that wrote it"
        )
    if not fair:
        return
    own = fairness_parameters(cls)
    differ = [
        f"{key} {data[key]!r} in the checkpoint, {config.hyperparams[key]!r} in the config"
        for key in sorted(own & set(config.hyperparams) & set(data))
        if isinstance(data[key], (int, float, str, bool, list, type(None)))
        and _plain_json(data[key]) != _plain_json(config.hyperparams[key])
    ]
    if differ:
        raise ValueError(
            f"resume: {checkpoint} was trained with other fairness settings than the config says ({'; '.join(differ)}): "
            "resume it with the config of the run that wrote it"
        )


def _resume(config: ExperimentConfig, checkpoint: Path) -> tuple[BaseAlgorithm, Path | None]:
    """A checkpoint of :class:`CheckpointCallback` (``<prefix>_<N>_steps.zip``), or a model :func:`save` wrote, on a
    fresh env of ``config``, with its replay buffer and VecNormalize statistics where they were saved beside it.
    A damaged checkpoint (a cut zip, an incomplete or unreadable buffer) is refused, naming the file and the newest
    complete checkpoint beside it."""
    if not checkpoint.is_file():
        raise ValueError(f"no checkpoint {str(checkpoint)!r}")
    why = _complete_checkpoint(checkpoint)
    if why is not None:
        raise _damaged_checkpoint(checkpoint, why)
    _check_checkpoint_fits(config, checkpoint)
    probe = build_model(config)  # the training env, built as the config says
    env = probe.get_env()
    buffer = _checkpoint_buffer_path(checkpoint)
    stats = saved_vecnormalize_path(checkpoint)  # a checkpoint's, or a saved model's (x.vecnormalize.pkl)
    if stats.is_file() and isinstance(env, VecNormalize):
        env = VecNormalize.load(str(stats), env.venv)
    extra: dict[str, Any] = {"wandb": True} if is_fair_algo(config.algo) and config.wandb else {}
    model = get_algo_class(config.algo).load(checkpoint, env=env, tensorboard_log=config.tensorboard_log, **extra)
    model.set_random_seed(config.seed + int(model.num_timesteps))  # the env too: its first reset is a fresh episode
    if buffer is None:  # a model saved at the end of a run: save() keeps no replay buffer beside it
        if getattr(model, "replay_buffer", None) is not None:
            warnings.warn(
                f"{checkpoint.name} is a saved model, not a checkpoint (<prefix>_<N>_steps.zip): no replay buffer is "
                "saved beside it, so the run goes on with an empty replay buffer",
                stacklevel=3,
            )
        return model, None
    if buffer.is_file() and hasattr(model, "load_replay_buffer"):
        import pickle

        try:
            model.load_replay_buffer(buffer)
        except (
            EOFError,
            pickle.UnpicklingError,
            AssertionError,
            AttributeError,
            ImportError,
            ValueError,
            TypeError,
        ) as err:
            raise _damaged_checkpoint(checkpoint, f"its replay buffer {buffer.name} cannot be read ({err!r})") from None
        return model, buffer
    if getattr(model, "replay_buffer", None) is not None:
        warnings.warn(
            f"no replay buffer beside {checkpoint.name} ({buffer.name}; train() keeps the buffers of the newest "
            f"checkpoint_buffers checkpoints only): the run goes on with an empty replay buffer",
            stacklevel=3,
        )
    return model, None


__all__ = [
    "CONFIG_SUFFIX",
    "RUN_IDENTITY",
    "VECNORMALIZE_SUFFIX",
    "check_run_files",
    "checkpoint_folder",
    "checkpoints_in",
    "load_model",
    "run_lock_path",
    "save",
    "saved_config_path",
    "saved_vecnormalize_path",
]
