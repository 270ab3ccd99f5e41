"""Hyper-parameter files in RL Zoo's format: ``sb3_fair/hyperparams/<algo>.yml``, keyed by env id.

An SB3 user reads them as RL Zoo's (DLR-RM/rl-baselines3-zoo ``hyperparams/<algo>.yml``): one
entry per env id with ``n_timesteps``, ``policy``, ``policy_kwargs``, ``n_envs``, ``env_kwargs``,
``env_wrapper``, ... and the algorithm's own keyword arguments; a ``default`` entry for the others.
sb3-fair adds **named variants**: the entry ``"<env id>@<variant>"`` (e.g.
``sb3_fair/DelayedImpactLending-v0@f_ppo_l``), where the papers' presets live beside the default
entry. Every entry says in a comment whether it was tuned (and by which sweep) or is a paper's preset.

Values that are Python objects are written as strings, resolved by :func:`resolve_hyperparams`:

* ``"package.module:name"`` anywhere (e.g. ``activation_fn: torch.nn:ReLU``,
  ``massaging_tau: sb3_fair.common.long_term.advantages:lending_massaging_threshold``);
* RL Zoo's forms: ``policy_kwargs`` (and ``replay_buffer_kwargs``, ``normalize``) as a Python
  ``dict(...)`` expression over ``nn``/``th``; ``learning_rate: lin_0.001`` (and ``clip_range``,
  ``clip_range_vf``, ``delta_std``) for a linear schedule; ``policy`` or ``replay_buffer_class`` as a dotted path.

**Configs are data.** Nothing is ``eval``'d: a ``dict(...)`` string is read by :func:`parse_dict_expression`,
which takes literals, ``dict(...)``, lists and tuples, and names of classes such as ``nn.ReLU``.
Every object a file names is resolved by :func:`import_object`, which imports only from
:data:`ALLOWED_PACKAGES` (sb3-fair, Stable-Baselines3, sb3-contrib, ``torch.nn``, ``torch.optim``,
Gymnasium's wrappers) and only classes and functions defined there, not in :data:`DENIED_MODULES`
(which read or write files); where a key's role is known (``callback``, ``env_wrapper``, ``policy``, ...)
the class must be of that kind (:data:`ROLES`), and a value the algorithm calls must be of the kind its key needs,
checked without calling it (:func:`check_kind`: a schedule is a number or ``lin_<x>``, never another function). A config
you trust may name your own code with ``trusted=True`` (``sb3-fair ... --trust-config``): it then imports and calls
whatever the file names, as RL Zoo does (a schedule may then be any callable, as in SB3). YAML is read by :func:`load_yaml`, which refuses files whose anchors and aliases expand
beyond :data:`MAX_YAML_NODES` values (a "billion laughs" file) or that nest deeper than :data:`MAX_YAML_DEPTH`.
Without ``trusted``, every path among a wrapper's or callback's arguments and a config's W&B folders must lead inside
the working folder, symlinks followed (:func:`check_arguments`, :func:`check_wandb_paths`).

This module reads files and resolves values; :mod:`sb3_fair.experiment` turns an entry into a model.
The algorithms' ``from_preset`` read their papers' variants from here.
"""

from __future__ import annotations

import ast
import copy
import importlib
import inspect
import math
import os
import re
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any, cast

import yaml

#: the folder of the shipped files
HYPERPARAMS_DIR = Path(__file__).resolve().parent.parent / "hyperparams"
#: separates an env id from a variant name in an entry's key
VARIANT_SEPARATOR = "@"
#: RL Zoo's keys that are not keyword arguments of the algorithm (read by the experiment layer)
ZOO_KEYS = (
    "n_timesteps",
    "n_envs",
    "env_kwargs",
    "env_wrapper",
    "vec_env_wrapper",
    "normalize",
    "frame_stack",
    "callback",
    "noise_type",
    "noise_std",
)

_OBJECT = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")
_DOTTED = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)+$")
#: keys whose value SB3 calls as a schedule of the remaining progress (1 at the start of training, 0 at the end), and
#: so calls while it builds the model: a number, RL Zoo's ``"lin_<x>"`` or a :class:`LinearSchedule` (``clip_range_vf``
#: also None); with ``trusted=True`` also any callable, SB3's ``Schedule``
SCHEDULE_KEYS = ("learning_rate", "clip_range", "clip_range_vf", "delta_std")
#: keys whose value sb3-fair calls as a schedule of the 0-based PPO iteration (FairPPO's ``massaging_tau``, called on
#: iteration 0 when the model is built), and the documented schedules a config may name for each besides a number;
#: with ``trusted=True`` any callable
ITERATION_SCHEDULES: dict[str, tuple[str, ...]] = {
    "massaging_tau": tuple(
        f"sb3_fair.common.long_term.advantages:{case}_massaging_threshold"
        for case in ("lending", "attention", "epidemic")
    ),
}
#: keys whose value is an object that the algorithm calls and that a config cannot write: the experiment builds it
#: from other keys (key -> those keys); a Python caller may give an instance of its class
BUILT_KEYS: dict[str, str] = {"action_noise": "noise_type and noise_std"}
#: the values RL Zoo's ``noise_type`` takes
NOISE_TYPES = ("normal", "ornstein-uhlenbeck")

#: the packages a config may name objects from without ``trusted=True``
ALLOWED_PACKAGES = ("sb3_fair", "stable_baselines3", "sb3_contrib", "torch.nn", "torch.optim", "gymnasium.wrappers")
#: modules of those packages a config may not name objects from without ``trusted=True``: they load pickles,
#: write files or run whole experiments
DENIED_MODULES = ("sb3_fair.experiment", "sb3_fair.cli", "stable_baselines3.common.save_util")
#: the kind of class a key names (checked without ``trusted=True``): key -> (module, class name) of the base
ROLES: dict[str, tuple[str, str]] = {
    "policy": ("stable_baselines3.common.policies", "BasePolicy"),
    "replay_buffer_class": ("stable_baselines3.common.buffers", "ReplayBuffer"),
    "rollout_buffer_class": ("stable_baselines3.common.buffers", "RolloutBuffer"),
    "callback": ("stable_baselines3.common.callbacks", "BaseCallback"),
    "env_wrapper": ("gymnasium", "Wrapper"),
    "vec_env_wrapper": ("stable_baselines3.common.vec_env", "VecEnvWrapper"),
    "activation_fn": ("torch.nn", "Module"),
    "features_extractor_class": ("stable_baselines3.common.torch_layers", "BaseFeaturesExtractor"),
    "optimizer_class": ("torch.optim", "Optimizer"),
}
#: a second kind a key may name: an ``env_wrapper`` of a multi-agent game wraps the PettingZoo game
OTHER_ROLES: dict[str, tuple[str, str]] = {"env_wrapper": ("pettingzoo.utils.wrappers", "BaseParallelWrapper")}


def _role_error(role: str, obj: Any) -> str | None:
    """Why ``obj`` is not of the kind ``role`` names (:data:`ROLES`, :data:`OTHER_ROLES`), or ``None`` if it is."""
    kinds = [ROLES[role], *([OTHER_ROLES[role]] if role in OTHER_ROLES else [])]
    for base_module, base_name in kinds:
        if inspect.isclass(obj) and issubclass(obj, getattr(importlib.import_module(base_module), base_name)):
            return None
    return f"{role} must name a subclass of " + " or ".join(f"{m}.{n}" for m, n in kinds)


#: keyword arguments of a wrapper or callback that name a folder or file to write (SB3's ``Monitor(filename)``,
#: ``CheckpointCallback(save_path)``, Gymnasium's ``RecordVideo(video_folder)``, ...), as are those with one of
#: :data:`PATH_WORDS` among the ``_``-separated words of their name: a prefix argument (``name_prefix``) is joined to
#: each of them beside it (:func:`check_arguments`)
PATH_ARGUMENTS = frozenset(
    {
        "filename",
        "save_path",
        "video_folder",
        "log_path",
        "best_model_save_path",
        "log_dir",
        "path",
        "folder",
        "directory",
        "dir",
        "file",
        "output_path",
    }
)
#: the words of an argument's name (``best_model_save_path``, ``root_dir``) that make it a folder or file argument
PATH_WORDS = frozenset({"path", "dir", "directory", "folder", "file", "filename", "root"})
#: the W&B ``init`` arguments of a config's ``wandb`` mapping that say where W&B writes (:func:`check_wandb_paths`)
WANDB_PATH_ARGUMENTS = ("dir", "settings")
#: how :func:`load_yaml` bounds a file: values after anchors and aliases are expanded, and nesting
MAX_YAML_NODES = 100_000
MAX_YAML_DEPTH = 100
TRUST_HINT = (
    "configs are data: sb3-fair imports only classes and functions of {packages}; pass trusted=True "
    "(sb3-fair --trust-config) to let a config you trust name your own code"
)


def _in(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def is_allowed_module(name: str) -> bool:
    """Whether a config may name objects of module ``name`` without ``trusted``: in :data:`ALLOWED_PACKAGES`, not in
    :data:`DENIED_MODULES`."""
    return _in(name, ALLOWED_PACKAGES) and not _in(name, DENIED_MODULES)


def _untrusted(path: str, reason: str) -> ValueError:
    return ValueError(f"{path!r} {reason}; " + TRUST_HINT.format(packages=", ".join(ALLOWED_PACKAGES)))


def import_object(path: str, trusted: bool = False, role: str | None = None) -> Any:
    """The object at ``"package.module:name"`` or RL Zoo's ``"package.module.Name"``.

    :param path: the path.
    :param trusted: import from any module (the config is trusted); otherwise only a class or function
        defined in :data:`ALLOWED_PACKAGES` outside :data:`DENIED_MODULES`, named at its module's top level.
    :param role: the key the path was written under: without ``trusted``, a key of :data:`ROLES` must name
        a subclass of its base (e.g. ``callback`` a ``BaseCallback``).
    :raises ValueError: naming ``path`` when it is malformed, cannot be imported or is not allowed.
    """
    if not isinstance(path, str) or not (_OBJECT.match(path) or _DOTTED.match(path)):
        raise ValueError(f"expected a path such as 'package.module:Name' or 'package.module.Name', got {path!r}")
    module_name, _, attr = path.partition(":") if ":" in path else path.rpartition(".")
    if not trusted:
        if not is_allowed_module(module_name):
            raise _untrusted(path, "is not in a package a config may name")
        if "." in attr or any(part.startswith("_") for part in (*module_name.split("."), attr)):
            raise _untrusted(path, "is not a public name at the top level of its module")
    try:
        obj: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as err:
        raise ValueError(f"cannot import {path!r}: {err}") from None
    if not trusted:
        defined_in = getattr(obj, "__module__", None) or ""
        if not (inspect.isclass(obj) or inspect.isfunction(obj)) or not is_allowed_module(defined_in):
            raise _untrusted(
                path,
                f"is a {type(obj).__name__} from {defined_in or 'elsewhere'}, not a class or function of those packages",
            )
        if role in ROLES:
            why = _role_error(role, obj)
            if why is not None:
                raise ValueError(f"{why}, got {path!r}")
    return obj


def hyperparams_file(algo: str) -> Path:
    """The shipped file of ``algo`` (a canonical name such as ``"fair_ppo"``)."""
    return HYPERPARAMS_DIR / f"{algo}.yml"


def load_yaml(text: str, source: str = "<string>") -> Any:
    """``text`` read with YAML's safe loader, bounded by :func:`bounded_data`: every value once per place it appears
    (anchors and aliases expanded into copies, so changing one place never changes another).

    :param text: the YAML text.
    :param source: what the text is (a file name), for the error messages.
    :raises ValueError: naming ``source`` for invalid YAML, or data that :func:`bounded_data` refuses.
    """
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise ValueError(f"{source} is not valid YAML: {err}") from None
    except RecursionError:
        raise ValueError(
            f"{source}: YAML nested deeper than Python can read; configs nest at most {MAX_YAML_DEPTH} levels"
        ) from None
    return bounded_data(data, source)


def bounded_data(data: Any, source: str = "<data>") -> Any:
    """``data`` (mappings, lists and scalars, as YAML or JSON give them) as a tree of copies, checked to stay bounded.

    :param data: the data.
    :param source: what it was read from, for the error messages.
    :raises ValueError: naming ``source`` for a recursive alias, more than :data:`MAX_YAML_NODES` values once
        aliases are expanded (a "billion laughs" file) or nesting deeper than :data:`MAX_YAML_DEPTH`.
    """
    seen: dict[int, tuple[int, int]] = {}  # id -> (values once expanded, levels below)

    def measure(node: Any, path: tuple[int, ...]) -> tuple[int, int]:
        if not isinstance(node, (dict, list)):
            return 1, 0
        if id(node) in path:
            raise ValueError(f"{source}: a YAML alias refers to a mapping or list that contains it (a recursive alias)")
        if len(path) > MAX_YAML_DEPTH:
            raise ValueError(f"{source}: YAML nested deeper than {MAX_YAML_DEPTH} levels")
        if id(node) not in seen:
            total, height = 1, 0
            for child in [*node.keys(), *node.values()] if isinstance(node, dict) else node:
                n, h = measure(child, (*path, id(node)))
                total, height = total + n, max(height, h + 1)
                if total > MAX_YAML_NODES:
                    break
            seen[id(node)] = (total, height)
        total, height = seen[id(node)]
        if total > MAX_YAML_NODES:
            raise ValueError(
                f"{source}: YAML expands to more than {MAX_YAML_NODES:,} values once its anchors and aliases "
                f"(&name / *name) are expanded; a config that large is refused so that reading it stays bounded"
            )
        if len(path) + height > MAX_YAML_DEPTH:
            raise ValueError(f"{source}: YAML nested deeper than {MAX_YAML_DEPTH} levels")
        return total, height

    measure(data, ())

    def expand(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: expand(v) for k, v in node.items()}
        if isinstance(node, list):
            return [expand(v) for v in node]
        return node

    return expand(data)


@lru_cache(maxsize=32)
def _read(path: str, mtime: float) -> dict[str, Any]:
    with open(path) as f:
        data = load_yaml(f.read(), path)
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
    return sorted(k[len(prefix) :] for k in read_hyperparams_file(path) if isinstance(k, str) and k.startswith(prefix))


def entry_keys(env_id: str, variant: str | None = None) -> list[str]:
    """The keys an entry of ``env_id`` is looked up by, in order: ``env_id`` as given, and for an env of the
    ``module:name`` form (``mymodule:my/Env-v0``, ``mymodule:make_game``) ``name`` alone; each ``@<variant>``
    for a named variant."""
    keys = [entry_key(env_id, variant)]
    if ":" in env_id:
        keys.append(entry_key(env_id.partition(":")[2], variant))
    return keys


def load_hyperparams(path: str | Path, env_id: str, variant: str | None = None, default: bool = True) -> dict[str, Any]:
    """The entry of ``env_id`` (or of its ``variant``) in a hyper-parameter file, as RL Zoo reads it.

    :param path: the file.
    :param env_id: the env id; an env of the ``module:name`` form finds its entry under ``module:name`` or ``name``
        (:func:`entry_keys`).
    :param variant: a named variant (``"<env_id>@<variant>"``), or None for the env's own entry.
    :param default: fall back to the file's ``default`` entry when the env has none (RL Zoo's rule;
        never for a named variant).
    :raises ValueError: naming the file, the keys it looked for and the entries (variants) it has.
    """
    data = read_hyperparams_file(path)
    keys = entry_keys(env_id, variant)
    key = next((k for k in keys if k in data), None)
    if key is not None:
        entry = data[key]
    elif variant is None and default and "default" in data:
        key, entry = "default", data["default"]
    else:
        names = entry_keys(env_id)  # the env's own keys, whose variants the file has
        have = sorted({v for name in names for v in variants(path, name)})
        looked = [*keys, *(["default"] if variant is None and default else [])]
        quoted = [repr(k) for k in looked]
        shown = f"the key {quoted[0]}" if len(quoted) == 1 else f"the keys {', '.join(quoted[:-1])} and {quoted[-1]}"
        what = f"variant {variant!r} of {env_id!r}" if variant else f"entry for {env_id!r}"
        hint = (
            f"; its variants: {have}"
            if have
            else f"; its entries: {sorted(str(k) for k in data if not str(k).startswith('_'))}"
        )
        raise ValueError(f"{path} has no {what}{hint} (looked for {shown})")
    if not isinstance(entry, dict):
        raise ValueError(f"{path}: entry {key!r} must be a mapping of hyper-parameters, got {entry!r}")
    return entry


class LinearSchedule:
    """RL Zoo's ``lin_<value>``: ``value`` times the remaining progress (1 at the start of training, 0 at the end)."""

    def __init__(self, initial_value: float) -> None:
        self.initial_value = float(initial_value)
        if not math.isfinite(self.initial_value):
            raise ValueError(f"a linear schedule starts from a finite number, got lin_{initial_value}")

    def __call__(self, progress_remaining: float) -> float:
        return progress_remaining * self.initial_value

    def __repr__(self) -> str:
        return f"lin_{self.initial_value:g}"


#: the names a ``dict(...)`` string may start an attribute path with, and the module each stands for (RL Zoo's)
_EXPRESSION_ROOTS = {"nn": "torch.nn", "th": "torch", "torch": "torch"}


def parse_dict_expression(text: str, trusted: bool = False) -> dict[str, Any]:
    """RL Zoo's ``"dict(net_arch=[64, 64], activation_fn=nn.Tanh)"`` read as data, never ``eval``'d.

    Accepted: numbers, strings, ``True``/``False``/``None``, lists, tuples, ``{...}`` and ``dict(key=value, ...)``
    (nested), and names of objects: ``nn.<Name>``, ``th.<path>``/``torch.<path>`` or a full dotted path
    (``stable_baselines3.common.torch_layers.NatureCNN``), each resolved by :func:`import_object` (so the
    allow-list holds, with the key a name is given under as its role).

    :param text: the expression.
    :param trusted: passed to :func:`import_object`.
    :raises ValueError: naming the part of the expression that is not data.
    """
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as err:
        raise ValueError(f"cannot read {text!r} ({err.msg})") from None

    def dotted(node: ast.AST) -> str | None:
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Attribute):
            head = dotted(node.value)
            return None if head is None else f"{head}.{node.attr}"
        return None

    def value(node: ast.AST, key: str | None) -> Any:
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, str, bool, type(None))):
            return node.value
        if (
            isinstance(node, ast.UnaryOp)
            and isinstance(node.op, (ast.USub, ast.UAdd))
            and isinstance(node.operand, ast.Constant)
            and isinstance(node.operand.value, (int, float))
            and not isinstance(node.operand.value, bool)
        ):
            return -node.operand.value if isinstance(node.op, ast.USub) else node.operand.value
        if isinstance(node, (ast.List, ast.Tuple)):
            items = [value(v, key) for v in node.elts]
            return items if isinstance(node, ast.List) else tuple(items)
        if isinstance(node, ast.Dict):
            if any(k is None for k in node.keys):
                raise ValueError(f"cannot read {text!r}: '**' is not data")
            keys = [value(k, None) for k in cast("list[ast.expr]", node.keys)]  # no None key: refused above
            return {k: value(v, k if isinstance(k, str) else None) for k, v in zip(keys, node.values)}
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "dict"
            and not node.args
            and all(kw.arg is not None for kw in node.keywords)
        ):
            return {kw.arg: value(kw.value, kw.arg) for kw in node.keywords}
        name = dotted(node)
        if name is not None and "." in name:
            root, _, rest = name.partition(".")
            return import_object(f"{_EXPRESSION_ROOTS.get(root, root)}.{rest}", trusted=trusted, role=key)
        raise ValueError(
            f"cannot read {text!r}: {ast.unparse(node)!r} is not data (numbers, strings, lists, dict(...) "
            f"and names such as nn.ReLU are)"
        )

    out = value(tree.body, None)
    if not isinstance(out, dict):
        raise ValueError(f"must give a dict, got {out!r}")
    return out


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _shown(value: Any) -> str:
    """A value as a message names it: a class or function by its module and name, anything else by its repr."""
    if inspect.isclass(value) or inspect.isroutine(value):
        kind = "class" if inspect.isclass(value) else "function"
        return f"the {kind} {getattr(value, '__module__', '?')}:{getattr(value, '__qualname__', '?')}"
    return repr(value)


def _linear(value: str) -> LinearSchedule:
    """RL Zoo's ``"lin_<x>"`` as a :class:`LinearSchedule`."""
    try:
        return LinearSchedule(float(value[4:]))
    except ValueError:
        raise ValueError(f"a linear schedule is written lin_<finite number>, got {value!r}") from None


def documented_schedules(key: str) -> list[Any]:
    """The functions of :data:`ITERATION_SCHEDULES` for ``key`` (imported, never called)."""
    return [import_object(path) for path in ITERATION_SCHEDULES.get(key, ())]


def check_kind(key: str, value: Any, trusted: bool = False, written: Any = None) -> None:
    """Check, without calling it, that ``value`` (resolved: the objects, not their paths) is of the kind needed under
    ``key``, for the keys whose value the algorithm calls or instantiates while it builds the model or trains:

    * :data:`SCHEDULE_KEYS` (``learning_rate``, ``clip_range``, ``clip_range_vf``, ``delta_std``): a number or a
      :class:`LinearSchedule` (RL Zoo's ``"lin_<x>"``), ``clip_range_vf`` also None; with ``trusted``, also any
      callable (SB3's ``Schedule``);
    * :data:`ITERATION_SCHEDULES` (``massaging_tau``): a number or one of the key's documented schedules; with
      ``trusted``, any callable;
    * :data:`BUILT_KEYS` (``action_noise``): None or an instance of SB3's ``ActionNoise`` (a config writes
      ``noise_type`` and ``noise_std``);
    * :data:`ROLES` (``policy``, ``activation_fn``, ``features_extractor_class``, ``optimizer_class``,
      ``replay_buffer_class``, ...), without ``trusted``: None or a subclass of the key's base (``policy`` also a
      name such as ``"MlpPolicy"``); :func:`import_object` checks the paths, this the classes given in Python.

    Any other key passes: the algorithm does not call its value.

    :param key: the key.
    :param value: its value, resolved.
    :param trusted: the config is trusted (see above).
    :param written: the value as written (a path), for the message; default ``value``.
    :raises ValueError: naming the key, what it accepts and the value.
    """
    shown = _shown(value) if written is None or written is value else f"{written!r} ({_shown(value)})"
    own = (
        "; your own function or class here needs trusted=True (sb3-fair --trust-config)"
        if callable(value) and not trusted
        else ""
    )
    if key in SCHEDULE_KEYS:
        if _is_number(value) or isinstance(value, LinearSchedule) or (value is None and key == "clip_range_vf"):
            return
        if trusted and callable(value):
            return
        number = isinstance(value, str) and bool(re.fullmatch(r"[+-]?\d+(\.\d*)?[eE][+-]?\d+", value.strip()))
        raise ValueError(
            "SB3 calls it (a schedule) while it builds the model, so it must be a number, 'lin_<x>' (a linear schedule "
            f"from x to 0) or a LinearSchedule{', or None' if key == 'clip_range_vf' else ''}"
            f"{', or a callable of the remaining progress' if trusted else ''}; got {shown}{own}"
            + (f" (YAML reads {value} as a string: write it with a point, e.g. 3.0e-4)" if number else "")
        )
    if key in ITERATION_SCHEDULES:
        if _is_number(value) or (trusted and callable(value)) or any(value is f for f in documented_schedules(key)):
            return
        raise ValueError(
            "sb3-fair calls it (a schedule) when it builds the model, so it must be a number or one of "
            f"{list(ITERATION_SCHEDULES[key])}{', or a callable of the iteration' if trusted else ''}; got {shown}{own}"
        )
    if key in BUILT_KEYS:
        from stable_baselines3.common.noise import ActionNoise

        if value is None or isinstance(value, ActionNoise):
            return
        raise ValueError(
            f"SB3 calls it at every step; a config writes {BUILT_KEYS[key]} instead (in Python: an ActionNoise "
            f"instance); got {shown}"
        )
    if key in ROLES and not trusted and value is not None and not isinstance(value, (str, dict, list)):
        why = _role_error(key, value)
        if why is not None:
            raise ValueError(f"{why}, got {shown}{own}")


def _resolve_value(value: Any, trusted: bool, role: str | None) -> Any:
    if isinstance(value, str) and _OBJECT.match(value):
        return import_object(value, trusted=trusted, role=role)
    if role in ROLES:
        check_kind(role, value, trusted)
    if isinstance(value, dict):
        return {k: _resolve_value(v, trusted, k if isinstance(k, str) else None) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolve_value(v, trusted, role) for v in value]
    return value


def resolve_hyperparams(hyperparams: dict[str, Any], trusted: bool = False) -> dict[str, Any]:
    """An entry's strings turned into the objects they name (see the module docstring); a new dict.

    :param hyperparams: the entry.
    :param trusted: let the entry name objects outside :data:`ALLOWED_PACKAGES` (see :func:`import_object`).
    :raises ValueError: naming the key whose value cannot be resolved or is not allowed.
    """
    out: dict[str, Any] = {}
    for key, value in hyperparams.items():
        try:
            if key in ("policy_kwargs", "replay_buffer_kwargs", "normalize") and isinstance(value, str):
                value = parse_dict_expression(value, trusted=trusted)  # RL Zoo's form: a dict(...) written in the file
            elif key in ("policy", "replay_buffer_class") and isinstance(value, str) and _DOTTED.match(value):
                value = import_object(value, trusted=trusted, role=key)
            elif key in SCHEDULE_KEYS and isinstance(value, str) and value.startswith("lin_"):
                value = _linear(value)
            out[key] = _resolve_value(value, trusted, key)
            check_kind(key, out[key], trusted, written=hyperparams[key])
        except ValueError as err:
            raise ValueError(f"hyper-parameter {key!r}: {err}") from None
    return out


#: how a message about a path that leaves the working folder ends
CONTAINMENT_HINT = "give a relative path inside it (or trusted=True, sb3-fair --trust-config, for a config you trust)"


def path_text(value: Any) -> str | None:
    """``value`` as the path text a writer would open: a str as it is, bytes (YAML's ``!!binary``) and
    ``os.PathLike`` objects decoded as the file system does (:func:`os.fsdecode`); None for anything else."""
    if isinstance(value, (bytes, bytearray)):
        return os.fsdecode(bytes(value))
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
        return os.fsdecode(value) if isinstance(value, bytes) else value
    return value if isinstance(value, str) else None


def check_contained(value: Any, where: str, root: str | os.PathLike[str] | None = None, base: Any = None) -> Path:
    """The destination of the path ``value``, checked to lead inside ``root``: joined to the folder ``base`` (for a
    file-name prefix) and to ``root``, ``..`` and every symlink that exists along it resolved.

    A path that starts with ``~`` (a home folder: some writers expand it, others do not) is refused, wherever home is.

    :param value: a str, bytes or ``os.PathLike`` (:func:`path_text`); anything else passes.
    :param where: what writes it, for the message (``"hyper-parameter 'callback': 'x:Y' would write log_path='...'"``).
    :param root: the folder to stay in; default the working folder (resolved).
    :param base: a folder ``value`` is a name in (``CheckpointCallback``'s ``save_path`` for its ``name_prefix``).
    :returns: the resolved destination (``root`` itself for a value that is no path).
    :raises ValueError: ``where``, the destination, the folder it leaves and the opt-in.
    """
    top = Path.cwd().resolve() if root is None else Path(root).resolve()
    text, folder = path_text(value), path_text(base)
    if text is None:
        return top
    texts = [text] if folder is None else [folder, text]
    if any(t.startswith("~") for t in texts):
        raise ValueError(f"{where}: a home folder ('~'), outside the working folder {top}; {CONTAINMENT_HINT}")
    try:
        destination = top.joinpath(*texts).resolve()
    except (OSError, RuntimeError, ValueError) as err:  # a NUL byte, a symlink loop
        raise ValueError(f"{where}: not a path that can be resolved ({err}); {CONTAINMENT_HINT}") from None
    if not destination.is_relative_to(top):
        raise ValueError(f"{where}: {destination}, outside the working folder {top}; {CONTAINMENT_HINT}")
    return destination


def is_path_argument(name: Any) -> bool:
    """Whether an argument named ``name`` is a folder or file to write: in :data:`PATH_ARGUMENTS`, or one of
    :data:`PATH_WORDS` among its ``_``-separated words (``best_model_save_path``, ``root_dir``, ``x_files_dir``)."""
    return isinstance(name, str) and (name in PATH_ARGUMENTS or not PATH_WORDS.isdisjoint(name.lower().split("_")))


def _is_prefix(name: Any) -> bool:
    return isinstance(name, str) and "prefix" in name.lower().split("_")


def check_arguments(arguments: Any, where: str, root: str | os.PathLike[str] | None = None) -> None:
    """Check every path that an object built from ``arguments`` (a wrapper's or callback's keyword arguments, W&B's
    ``settings``) may write to, by where it leads (:func:`check_contained`): every str, bytes or ``os.PathLike`` value
    at any depth of its mappings and lists, whatever its key (a value that is no path, such as ``"episode"``, leads
    inside), from the working folder; but a prefix argument's value (``name_prefix``: ``prefix`` among the words of its
    name) joined to each folder argument beside it (:func:`is_path_argument`), as writers join it
    (``CheckpointCallback`` writes ``<save_path>/<name_prefix>_<N>_steps.zip``). Of a mapping under ``wandb`` (W&B's
    init arguments, such as ``FairnessCallback``'s), only :data:`WANDB_PATH_ARGUMENTS`.

    :param arguments: the arguments.
    :param where: what they are given to, for the messages (``"hyper-parameter 'callback': 'x:Y'"``).
    :param root: the folder to stay in; default the working folder.
    :raises ValueError: ``"<where> would write <key>=<value>: <destination>, outside the working folder ..."``.
    """
    seen: set[int] = set()

    def walk(node: Any, name: str) -> None:
        if isinstance(node, Mapping):
            if id(node) in seen:
                return
            seen.add(id(node))
            folders = [(k, v) for k, v in node.items() if is_path_argument(k) and path_text(v) is not None]
            for key, child in node.items():
                shown = f"{name}.{key}" if name else str(key)
                if key == "wandb" and isinstance(child, Mapping):  # W&B's init arguments (FairnessCallback's)
                    child = {k: child[k] for k in WANDB_PATH_ARGUMENTS if k in child}
                if not (folders and _is_prefix(key) and path_text(child) is not None):
                    walk(child, shown)
                    continue
                for folder, folder_value in folders:  # a name inside each folder beside it
                    check_contained(
                        child,
                        f"{where} would write {shown}={path_text(child)!r} in {folder}={path_text(folder_value)!r}",
                        root,
                        base=folder_value,
                    )
        elif isinstance(node, (list, tuple)):
            if id(node) in seen:
                return
            seen.add(id(node))
            for i, child in enumerate(node):
                walk(child, f"{name}[{i}]")
        elif path_text(node) is not None:
            check_contained(node, f"{where} would write {name}={path_text(node)!r}", root)

    walk(arguments, "")


def check_wandb_paths(
    wandb: Any, trusted: bool = False, where: str = "wandb", root: str | os.PathLike[str] | None = None
) -> None:
    """Check the folders a config's ``wandb`` (a mapping of :func:`wandb.init` arguments: the config's field, or a Fair
    algorithm's ``wandb`` hyper-parameter) makes W&B write to: its :data:`WANDB_PATH_ARGUMENTS`, ``dir`` and every path
    in ``settings`` (``root_dir``, ``x_files_dir``, ...), by :func:`check_arguments`. Nothing is checked with
    ``trusted``, nor for ``True`` (W&B writes in the working folder, or in ``$WANDB_DIR``: the environment's, not the
    config's).

    :raises ValueError: ``"<where> would write dir=...: ..., outside the working folder ..."``.
    """
    if trusted or not isinstance(wandb, Mapping):
        return
    check_arguments({k: wandb[k] for k in WANDB_PATH_ARGUMENTS if k in wandb}, where, root)


def zoo_spec_items(spec: Any, key: str, trusted: bool = False) -> list[tuple[Any, dict[str, Any]]]:
    """RL Zoo's ``env_wrapper`` / ``vec_env_wrapper`` / ``callback`` entry as ``(path, kwargs)`` pairs: the entry is a
    path, ``{path: kwargs}`` (kwargs may be null), or a list of either.

    :param spec: the entry.
    :param key: its key, for the messages.
    :param trusted: without it, every path among the arguments must lead inside the working folder
        (:func:`check_arguments`: nested values, prefixes and bytes too, symlinks followed).
    :raises ValueError: naming ``key`` for a malformed entry or a path that leaves the working folder.
    """
    if spec is None:
        return []
    items = []
    for item in spec if isinstance(spec, list) else [spec]:
        if isinstance(item, dict):
            if len(item) != 1:
                raise ValueError(
                    f"hyper-parameter {key!r}: each entry is a dotted path or {{path: kwargs}} with one path, got {item!r}"
                )
            path, kwargs = next(iter(item.items()))
        else:
            path, kwargs = item, None
        kwargs = {} if kwargs is None else kwargs
        if not isinstance(kwargs, dict):
            raise ValueError(f"hyper-parameter {key!r}: the arguments of {path!r} must be a mapping, got {kwargs!r}")
        if not trusted:
            check_arguments(kwargs, f"hyper-parameter {key!r}: {path!r}")
        items.append((path, dict(kwargs)))
    return items


def zoo_spec_objects(spec: Any, key: str, trusted: bool = False) -> list[tuple[Any, Any, dict[str, Any]]]:
    """:func:`zoo_spec_items` as ``(path, object, kwargs)``, each path imported by :func:`import_object` (the key as
    its role); an object given in Python instead of a path is its own object.

    :raises ValueError: prefixed with ``hyper-parameter '<key>'``.
    """
    out = []
    for path, kwargs in zoo_spec_items(spec, key, trusted=trusted):
        try:
            obj = import_object(path, trusted=trusted, role=key) if isinstance(path, str) else path
            check_kind(key, obj, trusted)
        except ValueError as err:
            raise ValueError(f"hyper-parameter {key!r}: {err}") from None
        out.append((path, obj, kwargs))
    return out


def check_objects(hyperparams: dict[str, Any], trusted: bool = False) -> None:
    """Check an entry before anything it names is called, importing nothing outside :data:`ALLOWED_PACKAGES` and
    calling nothing.

    Without ``trusted``: every object the entry names is on the allow-list (the values :func:`resolve_hyperparams`
    resolves, the ``dict(...)`` strings, and the paths of ``env_wrapper``, ``vec_env_wrapper`` and ``callback``, each a
    class of its kind, :data:`ROLES`), and every value the algorithm calls is of the kind its key needs
    (:func:`check_kind`: a schedule is a number, ``lin_<x>`` or a documented schedule, never another function).
    With ``trusted`` (nothing is imported): the values of :data:`SCHEDULE_KEYS`, :data:`ITERATION_SCHEDULES` and
    :data:`BUILT_KEYS` are of their kind or a ``"module:name"`` path, whose object :func:`resolve_hyperparams` checks
    when the model is built, before anything is called. Both: ``noise_type`` is one of :data:`NOISE_TYPES` and
    ``noise_std`` a finite number >= 0. Without ``trusted``, every path the entry's wrappers, callbacks and W&B
    arguments write to leads inside the working folder (:func:`check_arguments`, :func:`check_wandb_paths`).

    :raises ValueError: naming the key and the value.
    """
    kind = hyperparams.get("noise_type")
    if kind is not None and not (isinstance(kind, str) and kind.strip() in NOISE_TYPES):
        raise ValueError(
            f"hyper-parameter 'noise_type' must be 'normal' or 'ornstein-uhlenbeck' (or null), got {kind!r}"
        )
    std = hyperparams.get("noise_std")
    if std is not None and not (_is_number(std) and math.isfinite(std) and std >= 0):
        raise ValueError(f"hyper-parameter 'noise_std' must be a finite number >= 0, got {std!r}")
    check_wandb_paths(hyperparams.get("wandb"), trusted, "hyper-parameter 'wandb'")  # a Fair algorithm's W&B run
    if trusted:
        for key in (*SCHEDULE_KEYS, *ITERATION_SCHEDULES, *BUILT_KEYS):
            if key not in hyperparams:
                continue
            value = hyperparams[key]
            try:
                if isinstance(value, str) and _OBJECT.match(value) and key not in BUILT_KEYS:
                    continue  # the config's own code: imported, and its kind checked, when the model is built
                if isinstance(value, str) and key in SCHEDULE_KEYS and value.startswith("lin_"):
                    value = _linear(value)
                check_kind(key, value, trusted=True, written=hyperparams[key])
            except ValueError as err:
                raise ValueError(f"hyper-parameter {key!r}: {err}") from None
        return
    resolve_hyperparams({k: v for k, v in hyperparams.items() if k not in ZOO_KEYS or k == "normalize"})
    for key in ("env_wrapper", "vec_env_wrapper", "callback"):
        zoo_spec_objects(hyperparams.get(key), key)


def algo_kwargs(hyperparams: dict[str, Any], trusted: bool = False) -> dict[str, Any]:
    """The algorithm's keyword arguments of an entry: everything but RL Zoo's own keys and ``policy``, resolved
    (``trusted`` as in :func:`resolve_hyperparams`)."""
    return resolve_hyperparams(
        {k: v for k, v in hyperparams.items() if k not in ZOO_KEYS and k != "policy"}, trusted=trusted
    )


#: the ranges of SB3's own arguments, which SB3 checks late or not at all (``gamma=2`` trains, ``n_epochs=0`` fails at
#: the first update): name -> (lowest, highest, lowest excluded, an int)
SB3_RANGES: dict[str, tuple[float, float, bool, bool]] = {
    "gamma": (0.0, 1.0, False, False),
    "gae_lambda": (0.0, 1.0, False, False),
    "tau": (0.0, 1.0, False, False),
    "exploration_fraction": (0.0, 1.0, False, False),
    "exploration_initial_eps": (0.0, 1.0, False, False),
    "exploration_final_eps": (0.0, 1.0, False, False),
    "learning_rate": (0.0, math.inf, True, False),
    "clip_range": (0.0, math.inf, True, False),
    "clip_range_vf": (0.0, math.inf, True, False),
    "ent_coef": (0.0, math.inf, False, False),
    "vf_coef": (0.0, math.inf, False, False),
    "max_grad_norm": (0.0, math.inf, True, False),
    "target_kl": (0.0, math.inf, True, False),
    "target_policy_noise": (0.0, math.inf, False, False),
    "target_noise_clip": (0.0, math.inf, False, False),
    "n_epochs": (1, math.inf, False, True),
    "batch_size": (1, math.inf, False, True),
    "n_steps": (1, math.inf, False, True),
    "buffer_size": (1, math.inf, False, True),
    "learning_starts": (0, math.inf, False, True),
    "target_update_interval": (1, math.inf, False, True),
    "gradient_steps": (-1, math.inf, False, True),
    "policy_delay": (1, math.inf, False, True),
    "train_freq": (1, math.inf, False, True),
}


def check_sb3_ranges(kwargs: dict[str, Any]) -> None:
    """Refuse, before any env or model is built, a number outside :data:`SB3_RANGES` (for ``lin_<x>``, its ``x``) and a
    ``policy_kwargs.net_arch`` layer that is not a positive int (other schedules, strings such as SAC's
    ``ent_coef="auto"`` and None pass).

    :raises ValueError: naming the hyper-parameter and its range.
    """
    for key, (low, high, open_low, integer) in SB3_RANGES.items():
        value = kwargs.get(key)
        if key == "train_freq" and isinstance(value, tuple) and value:
            value = value[0]  # (n, "step" | "episode")
        if isinstance(value, LinearSchedule):
            value = value.initial_value  # lin_<x>: x at the start, falling to 0
        if value is None or isinstance(value, (str, bool)) or callable(value) or not isinstance(value, (int, float)):
            continue
        bad = not math.isfinite(value) and not (
            key == "max_grad_norm" and value == math.inf
        )  # no clipping: SB3's idiom
        bad = (
            bad
            or value < low
            or (open_low and value == low)
            or value > high
            or (integer and float(value) != int(value))
        )
        if bad:
            kind = "an int" if integer else "a number"
            bounds = f"{'>' if open_low else '>='} {low:g}" + ("" if high == math.inf else f" and <= {high:g}")
            raise ValueError(f"hyper-parameter {key!r} must be {kind} {bounds}, got {value!r}")
    arch = (
        (kwargs.get("policy_kwargs") or {}).get("net_arch") if isinstance(kwargs.get("policy_kwargs"), dict) else None
    )
    layers = (
        [v for part in arch.values() for v in (part if isinstance(part, list) else [part])]
        if isinstance(arch, dict)
        else arch
    )
    if isinstance(layers, list) and not all(isinstance(n, int) and not isinstance(n, bool) and n >= 1 for n in layers):
        raise ValueError(f"hyper-parameter 'policy_kwargs.net_arch' must list layer sizes (ints >= 1), got {arch!r}")


__all__ = [
    "ALLOWED_PACKAGES",
    "BUILT_KEYS",
    "CONTAINMENT_HINT",
    "DENIED_MODULES",
    "HYPERPARAMS_DIR",
    "ITERATION_SCHEDULES",
    "MAX_YAML_DEPTH",
    "MAX_YAML_NODES",
    "NOISE_TYPES",
    "PATH_ARGUMENTS",
    "PATH_WORDS",
    "ROLES",
    "SB3_RANGES",
    "SCHEDULE_KEYS",
    "VARIANT_SEPARATOR",
    "WANDB_PATH_ARGUMENTS",
    "ZOO_KEYS",
    "LinearSchedule",
    "algo_kwargs",
    "bounded_data",
    "check_arguments",
    "check_contained",
    "check_kind",
    "check_objects",
    "check_sb3_ranges",
    "check_wandb_paths",
    "documented_schedules",
    "entry_key",
    "entry_keys",
    "hyperparams_file",
    "import_object",
    "is_allowed_module",
    "is_path_argument",
    "load_hyperparams",
    "load_yaml",
    "parse_dict_expression",
    "path_text",
    "read_hyperparams_file",
    "resolve_hyperparams",
    "variants",
    "zoo_spec_items",
    "zoo_spec_objects",
]
