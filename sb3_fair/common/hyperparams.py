"""Hyper-parameter files in RL Zoo's format: ``sb3_fair/hyperparams/<algo>.yml``, keyed by env id.

An SB3 user reads them as RL Zoo's (DLR-RM/rl-baselines3-zoo ``hyperparams/<algo>.yml``): one
entry per env id with ``n_timesteps``, ``policy``, ``policy_kwargs``, ``n_envs``, ``env_kwargs``,
``env_wrapper``, ... and the algorithm's own keyword arguments; a ``default`` entry for the others.
sb3-fair adds **named variants**: the entry ``"<env id>@<variant>"`` (e.g.
``sb3_fair/DelayedImpactLending-v0@f_ppo_l``), where the papers' presets live beside the default
entry. Every entry says in a comment whether it was tuned (and by which sweep) or is a paper's preset.

Values that are Python objects are written as strings, resolved by :func:`resolve_hyperparams`:

* ``"package.module:name"`` anywhere (e.g. ``activation_fn: torch.nn:ReLU``,
  ``massaging_tau: sb3_fair.common.long_term:lending_massaging_threshold``);
* RL Zoo's forms: ``policy_kwargs`` (and ``replay_buffer_kwargs``) as a Python ``dict(...)``
  expression over ``nn``/``th``; ``learning_rate: lin_0.001`` (and ``clip_range``, ``clip_range_vf``)
  for a linear schedule; ``policy`` or ``replay_buffer_class`` as a dotted path.

This module reads files and resolves values; :mod:`sb3_fair.experiment` turns an entry into a model.
The algorithms' ``from_preset`` read their papers' variants from here.
"""

from __future__ import annotations

import copy
import importlib
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

#: the folder of the shipped files
HYPERPARAMS_DIR = Path(__file__).resolve().parent.parent / "hyperparams"
#: separates an env id from a variant name in an entry's key
VARIANT_SEPARATOR = "@"
#: RL Zoo's keys that are not keyword arguments of the algorithm (read by the experiment layer)
ZOO_KEYS = ("n_timesteps", "n_envs", "env_kwargs", "env_wrapper", "vec_env_wrapper", "normalize", "frame_stack", "callback",
            "noise_type", "noise_std")

_OBJECT = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")
_DOTTED = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)+$")
_SCHEDULE_KEYS = ("learning_rate", "clip_range", "clip_range_vf")


def import_object(path: str) -> Any:
    """The object at ``"package.module:name"`` or RL Zoo's ``"package.module.Name"``.

    :raises ValueError: naming ``path`` when it is malformed or cannot be imported.
    """
    if not isinstance(path, str) or not (_OBJECT.match(path) or _DOTTED.match(path)):
        raise ValueError(f"expected a path such as 'package.module:Name' or 'package.module.Name', got {path!r}")
    module_name, _, attr = path.partition(":") if ":" in path else path.rpartition(".")
    try:
        obj: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as err:
        raise ValueError(f"cannot import {path!r}: {err}") from None
    return obj


def hyperparams_file(algo: str) -> Path:
    """The shipped file of ``algo`` (a canonical name such as ``"fair_ppo"``)."""
    return HYPERPARAMS_DIR / f"{algo}.yml"


@lru_cache(maxsize=32)
def _read(path: str, mtime: float) -> dict[str, Any]:
    with open(path) as f:
        data = yaml.safe_load(f)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a hyper-parameter file maps env ids to entries, got a {type(data).__name__}")
    return data


def read_hyperparams_file(path: str | Path) -> dict[str, Any]:
    """Every entry of a hyper-parameter file (a deep copy: change it freely)."""
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"no hyper-parameter file {str(p)!r}")
    return copy.deepcopy(_read(str(p), p.stat().st_mtime))


def entry_key(env_id: str, variant: str | None = None) -> str:
    """The key of an entry: ``env_id`` or ``"<env_id>@<variant>"``."""
    return env_id if not variant else f"{env_id}{VARIANT_SEPARATOR}{variant}"


def variants(path: str | Path, env_id: str) -> list[str]:
    """The named variants a file has for ``env_id``."""
    prefix = env_id + VARIANT_SEPARATOR
    return sorted(k[len(prefix):] for k in read_hyperparams_file(path) if isinstance(k, str) and k.startswith(prefix))


def load_hyperparams(path: str | Path, env_id: str, variant: str | None = None, default: bool = True) -> dict[str, Any]:
    """The entry of ``env_id`` (or of its ``variant``) in a hyper-parameter file, as RL Zoo reads it.

    :param path: the file.
    :param env_id: the env id.
    :param variant: a named variant (``"<env_id>@<variant>"``), or None for the env's own entry.
    :param default: fall back to the file's ``default`` entry when the env has none (RL Zoo's rule;
        never for a named variant).
    :raises ValueError: naming the file and the entries it has.
    """
    data = read_hyperparams_file(path)
    key = entry_key(env_id, variant)
    if key in data:
        entry = data[key]
    elif variant is None and default and "default" in data:
        entry = data["default"]
    else:
        have = variants(path, env_id)
        what = f"variant {variant!r} of {env_id!r}" if variant else f"an entry for {env_id!r} (and no 'default')"
        hint = f"; its variants: {have}" if have else f"; its entries: {sorted(k for k in data if not str(k).startswith('_'))}"
        raise ValueError(f"{path} has no {what}{hint}")
    if not isinstance(entry, dict):
        raise ValueError(f"{path}: entry {key!r} must be a mapping of hyper-parameters, got {entry!r}")
    return entry


class LinearSchedule:
    """RL Zoo's ``lin_<value>``: ``value`` times the remaining progress (1 at the start of training, 0 at the end)."""

    def __init__(self, initial_value: float) -> None:
        self.initial_value = float(initial_value)

    def __call__(self, progress_remaining: float) -> float:
        return progress_remaining * self.initial_value

    def __repr__(self) -> str:
        return f"lin_{self.initial_value:g}"


_EVAL_NAMES: dict[str, Any] | None = None


def _eval_names() -> dict[str, Any]:
    global _EVAL_NAMES
    if _EVAL_NAMES is None:
        import torch as th
        from torch import nn

        _EVAL_NAMES = {"__builtins__": {}, "dict": dict, "list": list, "tuple": tuple, "nn": nn, "th": th, "torch": th,
                       "True": True, "False": False, "None": None, "float": float, "int": int}
    return _EVAL_NAMES


def _resolve_value(value: Any) -> Any:
    if isinstance(value, str) and _OBJECT.match(value):
        return import_object(value)
    if isinstance(value, dict):
        return {k: _resolve_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolve_value(v) for v in value]
    return value


def resolve_hyperparams(hyperparams: dict[str, Any]) -> dict[str, Any]:
    """An entry's strings turned into the objects they name (see the module docstring); a new dict.

    :raises ValueError: naming the key whose value cannot be resolved.
    """
    out: dict[str, Any] = {}
    for key, value in hyperparams.items():
        try:
            if key in ("policy_kwargs", "replay_buffer_kwargs") and isinstance(value, str):
                value = eval(value, _eval_names())  # RL Zoo's form: a dict(...) expression written in the file  # noqa: S307
                if not isinstance(value, dict):
                    raise ValueError(f"must give a dict, got {value!r}")
            elif key in ("policy", "replay_buffer_class") and isinstance(value, str) and _DOTTED.match(value):
                value = import_object(value)
            elif key in _SCHEDULE_KEYS and isinstance(value, str) and value.startswith("lin_"):
                try:
                    value = LinearSchedule(float(value[4:]))
                except ValueError:
                    raise ValueError(f"a linear schedule is written lin_<number>, got {value!r}") from None
            out[key] = _resolve_value(value)
        except ValueError as err:
            raise ValueError(f"hyper-parameter {key!r}: {err}") from None
        except Exception as err:  # an eval of a malformed expression
            raise ValueError(f"hyper-parameter {key!r}: cannot read {value!r} ({type(err).__name__}: {err})") from None
    return out


def algo_kwargs(hyperparams: dict[str, Any]) -> dict[str, Any]:
    """The algorithm's keyword arguments of an entry: everything but RL Zoo's own keys and ``policy``, resolved."""
    return resolve_hyperparams({k: v for k, v in hyperparams.items() if k not in ZOO_KEYS and k != "policy"})


__all__ = [
    "HYPERPARAMS_DIR",
    "VARIANT_SEPARATOR",
    "ZOO_KEYS",
    "LinearSchedule",
    "algo_kwargs",
    "entry_key",
    "hyperparams_file",
    "import_object",
    "load_hyperparams",
    "read_hyperparams_file",
    "resolve_hyperparams",
    "variants",
]
