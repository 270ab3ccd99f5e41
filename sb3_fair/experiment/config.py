"""One experiment as data: :class:`ExperimentConfig`, built from a hyper-parameter file entry plus overrides.

A config holds the algorithm and env names, the hyper-parameter entry as written (RL Zoo's keys and
the algorithm's keyword arguments, Python objects still as strings), the seed and the evaluation and
tracking settings. It is plain data: it round-trips through :meth:`ExperimentConfig.to_dict`, so a
W&B run config, a Ray Tune trial or a JSON file can carry it; :func:`sb3_fair.experiment.train` turns
it into a model.

Example::

    from sb3_fair.experiment import ExperimentConfig, train

    cfg = ExperimentConfig.from_hyperparams("fair_ppo", "sb3_fair/AllelopathicHarvest-v0",
                                            overrides=["alpha=1.0", "env_kwargs.preset=tiny"], n_timesteps=20_000)
    result = train(cfg)
    print(result.evaluation["dp_norm"], result.evaluation["episode_return"])
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from sb3_fair.common.hyperparams import (
    MAX_YAML_DEPTH,
    bounded_data,
    check_objects,
    hyperparams_file,
    load_hyperparams,
    load_yaml,
)
from sb3_fair.experiment.registry import canonical_algo, check_env_id, get_algo_class, import_gym_packages

#: the keys of an experiment file (a YAML file with ``algo`` and ``env`` at the top)
CONFIG_FIELDS = (
    "algo",
    "env",
    "variant",
    "hyperparams",
    "seed",
    "n_timesteps",
    "eval_episodes",
    "eval_env_kwargs",
    "eval_deterministic",
    "eval_seed",
    "save_path",
    "tensorboard_log",
    "wandb",
    "verbose",
    "progress_bar",
    "name",
    "group",
    "checkpoint_every",
    "checkpoint_buffers",
    "num_threads",
    "gym_packages",
)


_INT = re.compile(r"^[+-]?\d+$")
_WORDS = {"true": True, "false": False, "null": None, "none": None, "~": None}


def parse_value(text: str) -> Any:
    """A command-line value: JSON where it is JSON (``[64, 64]``, ``{"a": 1}``, ``true``, ``null``), numbers
    as Python reads them (``1e-4``, ``.5``, ``010`` is 10), ``True``/``False``/``None``, a YAML flow list or
    mapping with bare words (``[tanh, relu]``), else the text itself (``long_term``, ``3:30``, ``no``).

    :raises ValueError: for an empty value (write ``null`` for None).
    """
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"an override needs a value after '=' (write null for None), got {text!r}")
    text = text.strip()
    if _INT.match(text):
        return int(text)
    if text.lower() in _WORDS:
        return _WORDS[text.lower()]
    try:
        return bounded_data(json.loads(text), "the value")
    except RecursionError:
        raise ValueError(f"cannot read the value: nested deeper than {MAX_YAML_DEPTH} levels") from None
    except json.JSONDecodeError:
        pass
    try:
        return float(text)
    except ValueError:
        pass
    if text[0] in "[{":
        try:
            return load_yaml(text, "the value")
        except ValueError as err:
            raise ValueError(f"cannot read {text!r} as a list or mapping ({str(err).splitlines()[0]})") from None
    return text


def int_at_least(minimum: int) -> Any:
    """An argparse ``type``: an int >= ``minimum`` (the error names the argument and the accepted values)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an int >= {minimum}, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be an int >= {minimum}, got {text!r}")
        return value

    return parse


def number_in(minimum: float, maximum: float = math.inf, strict: bool = False) -> Any:
    """An argparse ``type``: a finite number in [minimum, maximum] (> minimum where ``strict``)."""
    accepted = f"a finite number {'>' if strict else '>='} {minimum:g}" + (
        "" if maximum == math.inf else f" and <= {maximum:g}"
    )

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {accepted}, got {text!r}") from None
        if not math.isfinite(value) or value < minimum or (strict and value == minimum) or value > maximum:
            raise argparse.ArgumentTypeError(f"must be {accepted}, got {text!r}")
        return value

    return parse


#: the most checkpoints one run may write (``n_timesteps // checkpoint_every``)
MAX_CHECKPOINTS = 10_000
#: the longest run, group or variant name (a sweep's name, which prefixes its runs' names, at most half of it)
MAX_NAME_LENGTH = 200


def check_name(value: Any, what: str, max_length: int = MAX_NAME_LENGTH) -> str:
    """``value`` checked to be a plain name (it becomes a folder or file name): a non-empty str of at most
    ``max_length`` bytes in UTF-8 (file systems bound a file name's bytes: 255 on most), without path separators or
    control characters, not ``.`` or ``..``.

    :param value: the name.
    :param what: the argument it was given as, for the message.
    :param max_length: the longest name accepted.
    :raises ValueError: naming ``what`` and the rule.
    """
    if (
        not isinstance(value, str)
        or not value.strip()
        or len(value.encode("utf-8", "surrogatepass")) > max_length
        or value in (".", "..")
        or any(c in value for c in "/\\")
        or any(ord(c) < 32 for c in value)
    ):
        raise ValueError(
            f"{what} must be a plain name (1-{max_length} bytes in UTF-8, no '/' or '\\', not '.' or '..', "
            f"no control characters): it names a folder or file inside the output folder; got {value!r}"
        )
    return value


def _check_file_outputs(path: Path, data: dict[str, Any], fields: dict[str, Any]) -> None:
    """A config file's own ``save_path`` and ``tensorboard_log`` (those ``fields`` do not replace: ``--save`` and
    ``--tensorboard-log`` are the user's own choice) must lead inside the working folder, like every other path a config
    names; a saved config's ``save_path`` may also be the model it was saved beside (``m.zip`` for ``m.config.yml``,
    and for a checkpoint folder's ``m/model.config.yml``), so that a run saved elsewhere can be resumed from there.

    :raises ValueError: naming the file, the key and the destination (the opt-in: ``trusted=True``, ``--trust-config``).
    """
    from sb3_fair.common.hyperparams import check_contained
    from sb3_fair.experiment.files import zip_path

    path = path.resolve()
    beside = {path.parent.with_suffix(".zip")} if path.parent.name else set()  # a checkpoint folder's: the run's model
    if path.name.endswith(".config.yml"):  # a model's config: the model beside it
        beside.add(path.with_name(path.name[: -len(".config.yml")] + ".zip"))
    for key in ("save_path", "tensorboard_log"):
        value = data.get(key)
        if key in fields or value is None:
            continue
        if key == "save_path" and isinstance(value, str) and zip_path(value).resolve() in beside:
            continue
        check_contained(value, f"{path}: {key}={value!r} would write")


def plain_name(text: str) -> str:
    """``text`` with its path separators (``/``, ``\\``) written ``_``: an env id or a run's label as a name of a run,
    group or folder (``sb3_fair/DonutAllocation-v0`` -> ``sb3_fair_DonutAllocation-v0``)."""
    return re.sub(r"[/\\]", "_", text)


def merge_entries(entry: dict[str, Any], updates: dict[str, Any]) -> dict[str, Any]:
    """``entry`` updated by ``updates`` (a new dict): mappings are merged key by key, at every depth; any other
    value replaces the entry's (``None`` too)."""
    out = copy.deepcopy(entry)
    for key, value in updates.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge_entries(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def override_keys(overrides: list[str] | dict[str, Any] | None) -> set[str]:
    """The top-level keys ``overrides`` set (``policy_kwargs.net_arch=...`` -> ``policy_kwargs``)."""
    if not overrides:
        return set()
    keys = overrides.keys() if isinstance(overrides, dict) else [str(o).split("=", 1)[0] for o in overrides]
    return {k.strip().split(".")[0] for k in keys}


def apply_overrides(hyperparams: dict[str, Any], overrides: list[str] | dict[str, Any] | None) -> dict[str, Any]:
    """``hyperparams`` with ``key=value`` overrides applied (a new dict); a dotted key reaches into a mapping:
    ``policy_kwargs.net_arch=[64,64]``, ``env_kwargs.preset=tiny``; ``key=null`` sets None.

    :raises ValueError: naming an override that is not ``key=value`` or whose parent is not a mapping.
    """
    out = copy.deepcopy(hyperparams)
    items: list[tuple[str, Any]]
    if overrides is None:
        return out
    if isinstance(overrides, dict):
        items = list(overrides.items())
    else:
        items = []
        for item in overrides:
            if not isinstance(item, str) or "=" not in item or not item.split("=", 1)[0].strip():
                raise ValueError(
                    f"an override is key=value (e.g. learning_rate=3e-4, policy_kwargs.net_arch=[64,64]), got {item!r}"
                )
            key, text = item.split("=", 1)
            items.append((key.strip(), parse_value(text)))
    for key, value in items:
        parts = key.split(".")
        node = out
        for i, part in enumerate(parts[:-1]):
            child = node.get(part)
            if child is None:
                child = node[part] = {}
            if isinstance(child, str):  # RL Zoo's policy_kwargs: "dict(...)" cannot take a dotted override
                raise ValueError(
                    f"override {key!r}: {'.'.join(parts[: i + 1])} is written as a string ({child!r}); "
                    f"override the whole of it instead"
                )
            if not isinstance(child, dict):
                raise ValueError(f"override {key!r}: {'.'.join(parts[: i + 1])} is {child!r}, not a mapping")
            node = child
        node[parts[-1]] = value
    return out


@dataclass
class ExperimentConfig:
    """One training run: what to train, on what, for how long, and how to evaluate and track it.

    :param algo: an algorithm name of :data:`sb3_fair.experiment.registry.ALGOS` (``"fair_ppo"``, ``"ppo"``, ...).
    :param env: a Gymnasium id or a multi-agent game id (:data:`~sb3_fair.experiment.registry.MULTIAGENT_ENVS`).
    :param hyperparams: the hyper-parameter entry: RL Zoo's keys (``n_timesteps``, ``policy``,
        ``n_envs``, ``env_kwargs``, ``env_wrapper``, ``vec_env_wrapper``, ``normalize``, ``callback``,
        ``noise_type``/``noise_std``) and the algorithm's keyword arguments.
    :param variant: the named variant the entry came from (a record; None for the env's own entry).
    :param seed: the algorithm's and the env's seed.
    :param n_timesteps: training steps; None takes the entry's ``n_timesteps``.
    :param eval_episodes: evaluation episodes after training (0: none).
    :param eval_env_kwargs: the evaluation env's keyword arguments where they differ from training's
        (merged over ``env_kwargs``; e.g. ``{"horizon": 10000}`` for the F-PPO paper's lending protocol).
    :param eval_deterministic: greedy evaluation; None picks the evaluator's default (greedy, except
        the long-term protocol of Hu et al. 2024 and the multi-agent games, which sample).
    :param eval_seed: the seed of the first evaluation episode (episode ``e`` gets ``eval_seed + e`` where the
        evaluator seeds each episode); None: ``10_000 + seed``, away from the training env's seeds.
    :param save_path: where to save the model (``.zip``); the config is saved beside it.
    :param tensorboard_log: TensorBoard folder.
    :param wandb: stream to Weights & Biases: ``True`` or a dict of :func:`wandb.init` arguments.
    :param verbose: the algorithm's verbosity.
    :param progress_bar: SB3's progress bar.
    :param name: the run's name (W&B run name; default ``<algo>-<env>-seed<seed>``).
    :param group: the experiment or sweep the run belongs to (W&B group).
    :param checkpoint_every: save a checkpoint every this many steps (beside ``save_path``).
    :param checkpoint_buffers: how many of the newest checkpoints keep the replay buffer (each written up to its
        filled rows: :mod:`sb3_fair.experiment.checkpoints`); 0 keeps none.
    :param num_threads: torch's intra-op threads while :func:`~sb3_fair.experiment.train` runs (RL Zoo's
        ``--num-threads``); default 1, because the small networks of RL lose time to a pool of threads that wait for
        each other as soon as anything else uses a core (run trials side by side instead); None leaves torch's
        setting (one thread per core) as it is. The process's own setting comes back when ``train`` returns.
    :param gym_packages: modules to import before the env is made, so that their ``gymnasium.register`` (or
        :func:`~sb3_fair.experiment.registry.register_multiagent_env`) calls run (RL Zoo's ``--gym-packages``); imported
        when the config is made, in every process that makes it (the workers of ``compare`` and ``sweep``, ``evaluate``
        and ``--resume`` reading the saved config). Importing runs the module's code, so a module outside the
        allow-list needs ``trusted``.
    :param trusted: let the hyper-parameters name Python objects outside sb3-fair's allow-list
        (:data:`~sb3_fair.common.hyperparams.ALLOWED_PACKAGES`) and env ids of the form ``"module:Env-v0"`` from
        any module: building the model then imports and calls the code they name. Never read from a file
        (``sb3-fair --trust-config`` sets it) and not part of :meth:`to_dict`.
    """

    algo: str
    env: str
    hyperparams: dict[str, Any] = field(default_factory=dict)
    variant: str | None = None
    seed: int = 0
    n_timesteps: int | None = None
    eval_episodes: int = 10
    eval_env_kwargs: dict[str, Any] = field(default_factory=dict)
    eval_deterministic: bool | None = None
    eval_seed: int | None = None
    save_path: str | None = None
    tensorboard_log: str | None = None
    wandb: bool | dict[str, Any] = False
    verbose: int = 0
    progress_bar: bool = False
    name: str | None = None
    group: str | None = None
    checkpoint_every: int | None = None
    checkpoint_buffers: int = 1
    num_threads: int | None = 1
    gym_packages: list[str] = field(default_factory=list)
    trusted: bool = field(default=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.trusted, bool):
            raise ValueError(f"trusted must be True or False, got {self.trusted!r}")
        self.algo = canonical_algo(self.algo)
        self.gym_packages = import_gym_packages(self.gym_packages, trusted=self.trusted)  # before the env is looked up
        self.env = check_env_id(self.env, trusted=self.trusted)
        for name in ("name", "group", "variant"):
            if getattr(self, name) is not None:
                check_name(getattr(self, name), name)
        if not isinstance(self.hyperparams, dict):
            raise ValueError(f"hyperparams must be a mapping, got {self.hyperparams!r}")
        # a shared file or a saved model's config: refused here, before anything it names is imported or called
        # (trusted: the checks that import nothing; the objects are checked when the model is built, before any call)
        check_objects(self.hyperparams, trusted=self.trusted)
        policy = self.hyperparams.get("policy", "MlpPolicy")
        if isinstance(policy, str) and "." not in policy and ":" not in policy:
            cls = get_algo_class(self.algo)
            if policy not in cls.policy_aliases:
                raise ValueError(
                    f"hyper-parameter 'policy': {policy!r} is not a policy of {cls.__name__}: one of "
                    f"{sorted(cls.policy_aliases)}, or a path to a subclass of BasePolicy"
                )
        if not isinstance(self.eval_env_kwargs, dict):
            raise ValueError(f"eval_env_kwargs must be a mapping, got {self.eval_env_kwargs!r}")
        for name, minimum in (("seed", 0), ("eval_episodes", 0), ("verbose", 0), ("checkpoint_buffers", 0)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
                raise ValueError(f"{name} must be an int >= {minimum}, got {value!r}")
        for name, minimum in (("n_timesteps", 1), ("checkpoint_every", 1), ("eval_seed", 0), ("num_threads", 1)):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < minimum):
                raise ValueError(f"{name} must be an int >= {minimum} or None, got {value!r}")
        if self.eval_deterministic is not None and not isinstance(self.eval_deterministic, bool):
            raise ValueError(f"eval_deterministic must be True, False or None, got {self.eval_deterministic!r}")
        if not isinstance(self.wandb, (bool, dict)):
            raise ValueError(f"wandb must be True, False or a dict of wandb.init arguments, got {self.wandb!r}")
        from sb3_fair.common.hyperparams import check_wandb_paths

        check_wandb_paths(self.wandb, self.trusted)  # W&B's folders: checked here, before anything is written
        if self.n_timesteps is None and "n_timesteps" in self.hyperparams:
            steps = self.hyperparams["n_timesteps"]
            if isinstance(steps, bool) or not isinstance(steps, (int, float)) or not math.isfinite(steps) or steps < 1:
                raise ValueError(f"hyper-parameter n_timesteps must be a number >= 1, got {steps!r}")
            self.n_timesteps = int(steps)
        if self.n_timesteps is None:
            raise ValueError(f"no n_timesteps: the entry for {self.env!r} has none; give n_timesteps (--timesteps)")
        if self.checkpoint_every and self.n_timesteps // self.checkpoint_every > MAX_CHECKPOINTS:
            raise ValueError(
                f"checkpoint_every={self.checkpoint_every} would write {self.n_timesteps // self.checkpoint_every:,} "
                f"checkpoints in {self.n_timesteps:,} steps (every one keeps its model); a run writes at most "
                f"{MAX_CHECKPOINTS:,}: give checkpoint_every >= {-(-self.n_timesteps // MAX_CHECKPOINTS):,}"
            )

    @property
    def evaluation_seed(self) -> int:
        """The seed of the first evaluation episode: ``eval_seed``, or ``10_000 + seed``."""
        return 10_000 + self.seed if self.eval_seed is None else self.eval_seed

    @property
    def evaluation_env_kwargs(self) -> dict[str, Any]:
        """The evaluation env's arguments: the training env's ``env_kwargs``, updated by ``eval_env_kwargs``."""
        return {**(self.hyperparams.get("env_kwargs") or {}), **self.eval_env_kwargs}

    @property
    def default_group(self) -> str:
        """``<algo>-<env>``, a plain name (path separators in the env id become ``_``): the W&B group of a run without
        ``group``, and the name of a sweep without one."""
        return self.algo + "-" + plain_name(self.env)

    @property
    def run_name(self) -> str:
        """``name``, or ``<algo>-<env>[@<variant>]-seed<seed>`` (:attr:`default_group`, then the variant and seed)."""
        return self.name or f"{self.default_group}{'@' + self.variant if self.variant else ''}-seed{self.seed}"

    @classmethod
    def from_hyperparams(
        cls,
        algo: str,
        env: str,
        variant: str | None = None,
        file: str | Path | None = None,
        overrides: list[str] | dict[str, Any] | None = None,
        updates: dict[str, Any] | None = None,
        **fields: Any,
    ) -> ExperimentConfig:
        """A config from a hyper-parameter file's entry (RL Zoo's format) plus overrides.

        :param algo: the algorithm name.
        :param env: the env id.
        :param variant: a named variant of the entry (``"<env>@<variant>"``), e.g. ``"paper_fairqcm"``.
        :param file: the hyper-parameter file; default sb3-fair's ``hyperparams/<algo>.yml``. An algorithm
            without a file there starts from ``{"policy": "MlpPolicy"}`` (its own defaults).
        :param overrides: ``["key=value", ...]`` or a dict (dotted keys reach into mappings), applied last.
        :param updates: a mapping merged into the entry first, at every depth (an experiment file's ``hyperparams``).
        :param fields: the other :class:`ExperimentConfig` fields (``seed``, ``n_timesteps``, ``trusted``, ...).
        """
        algo = canonical_algo(algo)
        trusted = fields.get("trusted", False)
        if not isinstance(trusted, bool):
            raise ValueError(f"trusted must be True or False, got {trusted!r}")
        import_gym_packages(fields.get("gym_packages"), trusted=trusted)  # the modules that register the env first
        env = check_env_id(env, trusted=trusted)
        path = Path(file) if file is not None else hyperparams_file(algo)
        if file is None and not path.is_file():
            if variant is not None:
                raise ValueError(f"sb3-fair ships no hyper-parameters for {algo!r}, so it has no variant {variant!r}")
            entry: dict[str, Any] = {"policy": "MlpPolicy"}
        else:
            entry = load_hyperparams(path, env, variant)
        if updates:
            entry = merge_entries(entry, updates)
        return cls(algo=algo, env=env, variant=variant, hyperparams=apply_overrides(entry, overrides), **fields)

    @classmethod
    def from_file(
        cls, path: str | Path, overrides: list[str] | dict[str, Any] | None = None, **fields: Any
    ) -> ExperimentConfig:
        """A config from an experiment file: YAML (or JSON) with ``algo``, ``env`` and any other field at the
        top; its ``hyperparams`` start from the algorithm's shipped entry (or ``hyperparams_file``'s) for
        ``env``/``variant`` and are updated by the file's, then by ``overrides``; ``fields`` win over the file's.
        With ``inherit_hyperparams: false`` (what :meth:`save` writes) the file's ``hyperparams`` are the whole entry.

        The file is data (:func:`~sb3_fair.common.hyperparams.load_yaml`; objects it names must be on the
        allow-list unless ``trusted=True`` is among ``fields``).
        """
        p = Path(path)
        if not p.is_file():
            raise ValueError(f"no config file {str(p)!r}")
        data = load_yaml(p.read_text(), str(p)) or {}
        if not isinstance(data, dict) or "algo" not in data or "env" not in data:
            raise ValueError(
                f"{p}: an experiment file maps 'algo', 'env' and other fields {list(CONFIG_FIELDS)}; "
                f"for an RL Zoo hyper-parameter file (keyed by env id) use from_hyperparams(file=...)"
            )
        extra = ("hyperparams_file", "inherit_hyperparams")
        unknown = sorted(set(data) - set(CONFIG_FIELDS) - set(extra))
        if unknown:
            raise ValueError(f"{p}: unknown keys {unknown}; accepted: {list(CONFIG_FIELDS) + list(extra)}")
        if "n_timesteps" in override_keys(overrides) and "n_timesteps" not in fields:
            data.pop("n_timesteps", None)  # -p n_timesteps=... wins over the file's field
        if not fields.get("trusted", False):
            _check_file_outputs(p, data, fields)
        mine, given = data.get("gym_packages"), fields.get("gym_packages")
        if isinstance(mine, list) and isinstance(given, list):  # the file's modules, then the command line's
            fields = {**fields, "gym_packages": list(dict.fromkeys([*mine, *given]))}
        data.update(fields)
        own = data.pop("hyperparams", None) or {}
        if not isinstance(own, dict):
            raise ValueError(f"{p}: hyperparams must be a mapping, got {own!r}")
        file = data.pop("hyperparams_file", None)
        if file is not None and not Path(file).is_absolute():
            file = p.parent / file
        inherit = data.pop("inherit_hyperparams", True)
        if inherit not in (True, False):
            raise ValueError(f"{p}: inherit_hyperparams must be true or false, got {inherit!r}")
        if not inherit:  # a saved config: its hyperparams are the whole entry
            trusted = data.pop("trusted", False)
            return cls.from_dict({**data, "hyperparams": apply_overrides(own, overrides)}, trusted=trusted)
        algo, env, variant = data.pop("algo"), data.pop("env"), data.pop("variant", None)
        return cls.from_hyperparams(algo, env, variant=variant, file=file, updates=own, overrides=overrides, **data)

    def to_dict(self) -> dict[str, Any]:
        """Every field as plain data (JSON-ready when the hyper-parameters are), ``trusted`` left out."""
        data = copy.deepcopy(dataclasses.asdict(self))
        del data["trusted"]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any], trusted: bool = False) -> ExperimentConfig:
        """The inverse of :meth:`to_dict`; an unknown key is an error naming the accepted ones.

        :param data: the fields.
        :param trusted: see :class:`ExperimentConfig` (never read from ``data``).
        """
        unknown = sorted(set(data) - set(CONFIG_FIELDS))
        if unknown:
            raise ValueError(f"unknown config keys {unknown}; accepted: {list(CONFIG_FIELDS)}")
        return cls(**copy.deepcopy(data), trusted=trusted)

    def replace(self, **changes: Any) -> ExperimentConfig:
        """A copy with ``changes`` (``hyperparams`` as overrides: ``{"alpha": 1.0, "env_kwargs.preset": "tiny"}``)."""
        data = self.to_dict()
        overrides = changes.pop("hyperparams", None)
        if overrides is not None:
            data["hyperparams"] = apply_overrides(data["hyperparams"], overrides)
        data.update(changes)
        if "n_timesteps" not in changes and "n_timesteps" in override_keys(overrides):
            data["n_timesteps"] = None  # taken from the changed entry
        trusted = data.pop("trusted", self.trusted)
        return ExperimentConfig.from_dict(data, trusted=trusted)

    def save(self, path: str | Path) -> None:
        """Write the config as YAML, with ``inherit_hyperparams: false`` (its hyper-parameters are complete):
        ``ExperimentConfig.from_file`` reads back the same config."""
        data = {**self.to_plain_dict(), "inherit_hyperparams": False}
        Path(path).write_text(yaml.safe_dump(data, sort_keys=False))

    def to_plain_dict(self) -> dict[str, Any]:
        """:meth:`to_dict` with Python objects written back as the hyper-parameter files write them
        (classes and functions as ``"module:name"``, linear schedules as ``"lin_<x>"``), for YAML, JSON and W&B."""
        return _plain(self.to_dict())


def _plain(value: Any) -> Any:
    from sb3_fair.common.hyperparams import LinearSchedule

    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, LinearSchedule):
        return repr(value)
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if (
        callable(value)
        and getattr(value, "__module__", None)
        and getattr(value, "__qualname__", None)
        and "<" not in value.__qualname__
    ):
        return f"{value.__module__}:{value.__qualname__}"
    raise ValueError(f"cannot write {value!r} in a config file: give it as 'package.module:name'")


__all__ = [
    "CONFIG_FIELDS",
    "MAX_CHECKPOINTS",
    "MAX_NAME_LENGTH",
    "ExperimentConfig",
    "apply_overrides",
    "check_name",
    "int_at_least",
    "merge_entries",
    "number_in",
    "override_keys",
    "parse_value",
    "plain_name",
]
