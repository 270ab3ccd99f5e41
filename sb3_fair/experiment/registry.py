"""Names for algorithms and envs, as RL Zoo spells them, and the one function that builds an env for training.

Algorithms are RL Zoo's names (``ppo``, ``dqn``, ``ppo_lstm`` for sb3-contrib's ``RecurrentPPO``,
...) plus ``ppo_mask`` (``MaskablePPO``) and ``fair_<name>`` for each Fair class. A class name
(``FairPPO``) or the old CLI's spelling (``fairppo``) is accepted too.

Envs are Gymnasium ids, and the PettingZoo games under ids of their own
(:data:`MULTIAGENT_ENVS`), which :func:`make_env` turns into an SB3 ``VecEnv`` with one slot per
agent (:func:`~sb3_fair.wrappers.make_multiagent_vec_env`); ``env_kwargs`` of a game go to its
factory, and ``counterfactual_pair: flip`` (or ``swap``) runs each game beside its counterfactual
twin (:class:`~sb3_fair.wrappers.CounterfactualPair`) for FairPPO's CF penalty.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

import gymnasium as gym
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper

from sb3_fair.common.hyperparams import import_object, zoo_spec_objects

#: algorithm name -> "module:Class" (imported on first use)
ALGOS: dict[str, str] = {
    # Stable-Baselines3
    "a2c": "stable_baselines3:A2C",
    "ddpg": "stable_baselines3:DDPG",
    "dqn": "stable_baselines3:DQN",
    "ppo": "stable_baselines3:PPO",
    "sac": "stable_baselines3:SAC",
    "td3": "stable_baselines3:TD3",
    # sb3-contrib
    "ars": "sb3_contrib:ARS",
    "crossq": "sb3_contrib:CrossQ",
    "ppo_lstm": "sb3_contrib:RecurrentPPO",
    "ppo_mask": "sb3_contrib:MaskablePPO",
    "qrdqn": "sb3_contrib:QRDQN",
    "tqc": "sb3_contrib:TQC",
    "trpo": "sb3_contrib:TRPO",
    # sb3-fair
    "cpo": "sb3_fair:CPO",
    "fair_ddpg": "sb3_fair:FairDDPG",
    "fair_dqn": "sb3_fair:FairDQN",
    "fair_ppo": "sb3_fair:FairPPO",
    "fair_ppo_lstm": "sb3_fair:FairRecurrentPPO",
    "fair_ppo_mask": "sb3_fair:FairMaskablePPO",
    "fair_td3": "sb3_fair:FairTD3",
}

#: the fair counterpart of each baseline (``sb3-fair compare``, a sweep's λ = 0 point)
FAIR_COUNTERPART: dict[str, str] = {
    "ddpg": "fair_ddpg",
    "dqn": "fair_dqn",
    "ppo": "fair_ppo",
    "ppo_lstm": "fair_ppo_lstm",
    "ppo_mask": "fair_ppo_mask",
    "td3": "fair_td3",
}


def _harvest(preset: str = "small", **kwargs: Any) -> Any:
    from sb3_fair.envs import AllelopathicHarvestEnv

    return AllelopathicHarvestEnv.from_preset(preset, **kwargs)


def _disparity(**kwargs: Any) -> Any:
    from sb3_fair.envs import DisparityGame

    return DisparityGame(**kwargs)


#: PettingZoo parallel games by id -> factory taking the ``env_kwargs``
MULTIAGENT_ENVS: dict[str, Callable[..., Any]] = {
    "sb3_fair/AllelopathicHarvest-v0": _harvest,
    "sb3_fair/DisparityGame-v0": _disparity,
}

#: registered Gymnasium ids whose ``env_kwargs`` name a module to import (Shimmy's old-gym envs): refused without ``trusted``
IMPORTING_ENV_IDS = ("GymV21Environment-v0", "GymV26Environment-v0")
#: ``env_kwargs`` key of a game that pairs it with its counterfactual twin (``"flip"`` or ``"swap"``)
COUNTERFACTUAL_PAIR = "counterfactual_pair"


def _key(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def algo_names() -> list[str]:
    """The algorithm names :func:`get_algo_class` knows."""
    return sorted(ALGOS)


def canonical_algo(name: str) -> str:
    """``name`` as a key of :data:`ALGOS`: ``"FairPPO"``, ``"fairppo"``, ``"fair-ppo"`` -> ``"fair_ppo"``.

    :raises ValueError: naming the accepted names.
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"algo must be one of {algo_names()}, got {name!r}")
    wanted = _key(name)
    for canonical, target in ALGOS.items():
        if wanted in (_key(canonical), _key(target.rpartition(":")[2])):
            return canonical
    raise ValueError(f"algo must be one of {algo_names()} (or a class name such as FairPPO), got {name!r}")


def get_algo_class(name: str) -> type[BaseAlgorithm]:
    """The class of algorithm ``name`` (see :func:`canonical_algo`)."""
    return import_object(ALGOS[canonical_algo(name)])


def is_fair_algo(name: str) -> bool:
    """Whether ``name`` is one of sb3-fair's algorithms."""
    return canonical_algo(name).startswith("fair_")


def accepted_arguments(name: str) -> set[str]:
    """The keyword arguments algorithm ``name`` takes (a Fair class's own and its parent's)."""
    from sb3_fair.common.fair_algorithm import constructor_arguments

    return constructor_arguments(get_algo_class(name))


def check_keys(name: str, keys: list[str]) -> None:
    """Check that every hyper-parameter key (dotted keys by their first part) is an argument of algorithm
    ``name`` or one of RL Zoo's keys.

    :raises ValueError: naming the keys it does not take.
    """
    from sb3_fair.common.hyperparams import ZOO_KEYS

    accepted = (accepted_arguments(name) | set(ZOO_KEYS) | {"policy"}) - {"env", "_init_setup_model"}
    unknown = sorted({k for k in keys if k.split(".")[0] not in accepted})
    if unknown:
        raise ValueError(
            f"{unknown} {'is not an argument' if len(unknown) == 1 else 'are not arguments'} of "
            f"{get_algo_class(name).__name__}; accepted: {sorted(accepted)}"
        )


def register_multiagent_env(env_id: str, factory: Callable[..., Any]) -> None:
    """Give a PettingZoo ``ParallelEnv`` factory an id for configs, the CLI and sweeps.

    :param env_id: the id (e.g. ``"my_pkg/MyGame-v0"``); must not be a Gymnasium id.
    :param factory: called with the config's ``env_kwargs``; returns a ``ParallelEnv``.
    """
    if not isinstance(env_id, str) or not env_id:
        raise ValueError(f"env_id must be a non-empty str, got {env_id!r}")
    if not callable(factory):
        raise ValueError(f"factory must be callable, got {factory!r}")
    MULTIAGENT_ENVS[env_id] = factory


def is_multiagent_env(env_id: str) -> bool:
    """Whether ``env_id`` names a PettingZoo game of :data:`MULTIAGENT_ENVS`."""
    return env_id in MULTIAGENT_ENVS


#: what a module named by ``gym_packages`` or an env's ``module:`` part is spelled as: dotted Python names
_MODULE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
#: the hint of every error about a module that is not on this Python's path
_PATH_HINT = (
    "put the folder that holds it on PYTHONPATH (PYTHONPATH=/path/to/folder sb3-fair ...) or pip install the "
    "package that has it"
)


def import_env_module(module: str, what: str = "gym_packages", trusted: bool = False) -> Any:
    """Import ``module`` so that its ``gymnasium.register`` (or :func:`register_multiagent_env`) calls run, as RL Zoo's
    ``--gym-packages`` does: importing a module runs its code, so a module outside
    :data:`~sb3_fair.common.hyperparams.ALLOWED_PACKAGES` needs ``trusted`` (``--trust-config``).

    :param module: the module's dotted name.
    :param what: where it was named, for the messages (``gym_packages``, ``env 'mymodule:make_game'``).
    :param trusted: import any module.
    :return: the module.
    :raises ValueError: one line naming the module: not a module name, not allowed, not on this Python's path
        (with what to do), or its import failed (with the error it raised).
    """
    import importlib

    from sb3_fair.common.hyperparams import ALLOWED_PACKAGES, TRUST_HINT, is_allowed_module

    if not isinstance(module, str) or not _MODULE_NAME.match(module):
        raise ValueError(f"{what}: {module!r} is not a module name (dotted Python names, e.g. my_package.envs)")
    if not trusted and not is_allowed_module(module):
        raise ValueError(
            f"{what}: importing the module {module!r} runs its code; "
            + TRUST_HINT.format(packages=", ".join(ALLOWED_PACKAGES))
        )
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as err:
        missing = err.name or ""
        if missing and (module == missing or module.startswith(missing + ".")):
            raise ValueError(f"{what}: no module named {module!r} on this Python's path: {_PATH_HINT}") from None
        raise ValueError(
            f"{what}: importing {module!r} failed: it imports {missing or 'a module'!r}, which is not installed "
            f"(pip install {missing or 'the package it names'})"
        ) from err
    except Exception as err:  # a user's module: whatever it raises, in one line naming it
        raise ValueError(f"{what}: importing {module!r} failed: {type(err).__name__}: {err}") from err


def import_gym_packages(modules: Any, trusted: bool = False) -> list[str]:
    """Import every module of a config's ``gym_packages`` (``sb3-fair --gym-packages``), in order, so that the envs
    they register exist in this process (each worker process of ``compare`` and ``sweep`` does the same).

    :param modules: a list of module names (None or ``[]``: none).
    :param trusted: import modules outside the allow-list (see :func:`import_env_module`).
    :return: the names, as a list.
    :raises ValueError: for anything but a list of module names, or a module that cannot be imported.
    """
    if modules is None:
        return []
    if isinstance(modules, str) or not isinstance(modules, (list, tuple)):
        raise ValueError(f"gym_packages must be a list of module names (e.g. [my_package.envs]), got {modules!r}")
    names = list(modules)
    for module in names:
        import_env_module(module, "gym_packages", trusted=trusted)
    return names


def _module_envs(module: str) -> list[str]:
    """The Gymnasium ids and games registered from ``module`` (by their entry point's module), for messages."""
    found = []
    for env_id, spec in gym.registry.items():
        entry = spec.entry_point
        where = entry.partition(":")[0] if isinstance(entry, str) else getattr(entry, "__module__", "")
        if where == module or where.startswith(module + "."):
            found.append(env_id)
    for env_id, factory in MULTIAGENT_ENVS.items():
        where = getattr(factory, "__module__", "") or ""
        if ":" not in env_id and (where == module or where.startswith(module + ".")):
            found.append(env_id)
    return sorted(found)


def _user_game(env_id: str, factory: Callable[..., Any]) -> Callable[..., Any]:
    """``factory`` (a ``module:factory`` env) checked, each time it is called, to return a PettingZoo ``ParallelEnv``."""
    from pettingzoo import ParallelEnv

    def make(**kwargs: Any) -> Any:
        game = factory(**kwargs)
        if not isinstance(game, ParallelEnv):
            kind = "a Gymnasium env" if isinstance(game, gym.Env) else f"a {type(game).__name__}"
            raise ValueError(
                f"env {env_id!r}: {env_id.partition(':')[2]}() returned {kind}, not a PettingZoo ParallelEnv; a "
                "Gymnasium env is named by its id: gymnasium.register(id=..., entry_point=...) in its module, then "
                "--env MODULE:ID"
            )
        return game

    make.__module__ = getattr(factory, "__module__", None) or __name__
    return make


def _resolve_module_env(env_id: str, trusted: bool) -> str:
    """``env_id`` of the ``module:name`` form, its module imported: ``name`` is a Gymnasium id or a game the module
    registers (a game is then known under ``env_id`` too), or a function of the module that returns a PettingZoo
    ``ParallelEnv`` (registered under ``env_id``)."""
    import difflib
    import inspect

    module, _, name = env_id.partition(":")
    mod = import_env_module(module, f"env {env_id!r}", trusted=trusted)
    if name in gym.registry:
        return env_id  # gym.make("module:id") imports the module (again: it is cached) and makes the id
    if name in MULTIAGENT_ENVS:
        MULTIAGENT_ENVS[env_id] = MULTIAGENT_ENVS[name]
        return env_id
    obj = getattr(mod, name, None) if name.isidentifier() else None
    if inspect.isclass(obj) and issubclass(obj, gym.Env):
        raise ValueError(
            f"env {env_id!r}: {name} is a Gymnasium env class; Gymnasium envs are named by a registered id: "
            f"gymnasium.register(id='my/{name}-v0', entry_point='{module}:{name}') in {module}, then --env "
            f"{module}:my/{name}-v0"
        )
    if callable(obj):
        if not trusted and not _is_allowed_game_class(obj):
            from sb3_fair.common.hyperparams import ALLOWED_PACKAGES, TRUST_HINT

            # calling a function is running code: without the opt-in only a game class of the allow-list is built
            # (a function an allowed module merely imports, such as SB3's zip loader, is never called)
            raise ValueError(
                f"env {env_id!r} would call {module}.{name}, which is not a PettingZoo game class of sb3-fair's "
                "allow-list; " + TRUST_HINT.format(packages=", ".join(ALLOWED_PACKAGES))
            )
        MULTIAGENT_ENVS[env_id] = _user_game(env_id, obj)
        return env_id
    registered = _module_envs(module)
    close = difflib.get_close_matches(name, [*gym.registry, *MULTIAGENT_ENVS], n=3, cutoff=0.5)
    hint = (
        f"; it registers {registered}"
        if registered
        else "; it registers no env" + (f" (did you mean {close}?)" if close else "")
    )
    raise ValueError(
        f"env {env_id!r}: the module {module!r} was imported, but {name!r} is neither a Gymnasium id nor a "
        f"multi-agent game registered by it, nor a function of it that makes a PettingZoo game{hint}"
    )


def _is_allowed_game_class(obj: Any) -> bool:
    """Whether ``obj`` is a PettingZoo ``ParallelEnv`` class defined in a module of the allow-list (and not of
    :data:`~sb3_fair.common.hyperparams.DENIED_MODULES`): the only ``module:factory`` built without ``trusted``."""
    import inspect

    from pettingzoo import ParallelEnv

    from sb3_fair.common.hyperparams import is_allowed_module

    where = getattr(obj, "__module__", "") or ""
    return inspect.isclass(obj) and issubclass(obj, ParallelEnv) and is_allowed_module(where)


def check_env_id(env_id: str, trusted: bool = False) -> str:
    """``env_id``, checked to be a registered Gymnasium id or a game of :data:`MULTIAGENT_ENVS`.

    An id of the ``module:name`` form imports ``module`` first (as ``gym.make`` does); ``name`` is then a Gymnasium id
    or a game the module registers, or a function of the module that returns a PettingZoo ``ParallelEnv``
    (``mymodule:make_game``, then known to :data:`MULTIAGENT_ENVS` under ``env_id``).

    :param env_id: the id.
    :param trusted: accept the ``"module:name"`` form for any module (importing it runs its code);
        otherwise only for modules of :data:`~sb3_fair.common.hyperparams.ALLOWED_PACKAGES`.
    :raises ValueError: naming the nearest ids, or the module that is not allowed, not found, or has no such env.
    """
    import sb3_fair.envs  # noqa: F401  (registers sb3-fair's envs)
    from sb3_fair.common.hyperparams import ALLOWED_PACKAGES, TRUST_HINT, is_allowed_module

    if not isinstance(env_id, str) or not env_id:
        raise ValueError(f"env must be a Gymnasium id or one of {sorted(MULTIAGENT_ENVS)}, got {env_id!r}")
    if env_id in IMPORTING_ENV_IDS and not trusted:
        raise ValueError(
            f"env {env_id!r} imports the old-gym env its env_kwargs name (Shimmy's compatibility env); "
            + TRUST_HINT.format(packages=", ".join(ALLOWED_PACKAGES))
        )
    if env_id in MULTIAGENT_ENVS or env_id in gym.registry:
        return env_id
    if ":" in env_id:  # Gymnasium's "module:Env-v0" imports the module first
        module = env_id.partition(":")[0]
        if not trusted and not is_allowed_module(module):
            raise ValueError(
                f"env {env_id!r} would import the module {module!r}; "
                + TRUST_HINT.format(packages=", ".join(ALLOWED_PACKAGES))
            )
        return _resolve_module_env(env_id, trusted)
    import difflib

    known = [*MULTIAGENT_ENVS, *gym.registry]
    close = difflib.get_close_matches(env_id, known, n=3, cutoff=0.5)
    hint = (
        f"; did you mean {close}?"
        if close
        else f"; sb3-fair's are {sorted(k for k in known if k.startswith('sb3_fair/'))}"
    )
    raise ValueError(
        f"env {env_id!r} is neither a registered Gymnasium id nor a multi-agent game{hint}; an env that a module of "
        "your own registers: gym_packages: [MODULE] (--gym-packages MODULE) or MODULE:ID, with --trust-config"
    )


def wrapper_chain(
    spec: Any, key: str = "env_wrapper", trusted: bool = False, game_of: tuple[str, bool] | None = None
) -> Callable[[Any], Any] | None:
    """RL Zoo's ``env_wrapper`` / ``vec_env_wrapper`` entry as one callable that applies the wrappers in order.

    :param spec: a dotted path, ``{path: kwargs}``, or a list of either (RL Zoo's format).
    :param key: the entry's key (``env_wrapper`` or ``vec_env_wrapper``), for messages and the allow-list's role check.
    :param trusted: let the paths name classes outside the allow-list (see
        :func:`~sb3_fair.common.hyperparams.import_object`).
    :param game_of: ``(env_id, is_game)`` of the env an ``env_wrapper`` wraps: a wrapper class of the other kind
        (:func:`_check_wrapper_kind`) is refused.
    """
    if spec is None:
        return None
    objects = zoo_spec_objects(spec, key, trusted=trusted)
    if game_of is not None:
        for path, obj, _ in objects:
            _check_wrapper_kind(path, obj, *game_of)
    chain = [(cls, kwargs) for _, cls, kwargs in objects]

    def wrap(env: Any) -> Any:
        for cls, kwargs in chain:
            try:
                env = cls(env, **kwargs)
            except (ImportError, gym.error.DependencyNotInstalled) as err:
                raise ImportError(_missing_package_message(key, cls, err)) from err
        return env

    return wrap


#: the optional packages of wrappers a config may name, and how to install them
_OPTIONAL_PACKAGES: dict[str, tuple[str, str]] = {
    "RecordVideo": ("moviepy", 'pip install moviepy (or pip install "gymnasium[other]")'),
    "HumanRendering": ("pygame", 'pip install pygame (or pip install "gymnasium[classic-control]")'),
}


def _missing_package_message(key: str, cls: Any, err: BaseException) -> str:
    """What an ``ImportError`` of a wrapper named by a config says: the entry, the wrapper, the package, the pip command."""
    name = getattr(cls, "__qualname__", repr(cls))
    where = f"{getattr(cls, '__module__', '?')}.{name}"
    if name in _OPTIONAL_PACKAGES:
        package, command = _OPTIONAL_PACKAGES[name]
    else:
        package = getattr(err, "name", None) or "an optional package"
        command = f"pip install {package}" if getattr(err, "name", None) else "install the package the error names"
    return (
        f"{key}: {where} needs {package}, which is not installed ({err}); install it with {command}, or leave "
        f"{name} out of {key}"
    )


#: the ``env_kwargs`` entries of a game that are :func:`~sb3_fair.wrappers.make_multiagent_vec_env`'s, not the game's
ADAPTER_KWARGS = ("black_death", "pad")


def make_env(
    env_id: str,
    n_envs: int = 1,
    seed: int | None = None,
    env_kwargs: dict[str, Any] | None = None,
    env_wrapper: Any = None,
    vec_env_wrapper: Any = None,
    monitor_fairness: bool = True,
    trusted: bool = False,
) -> VecEnv:
    """The training ``VecEnv`` of a config: a Gymnasium id through SB3's ``make_vec_env``, a game through
    :func:`~sb3_fair.wrappers.make_multiagent_vec_env`.

    :param env_id: a Gymnasium id or a key of :data:`MULTIAGENT_ENVS`.
    :param n_envs: envs side by side (games: instances side by side, each one slot per agent).
    :param seed: the first env's seed (Gymnasium ids; games are seeded by the algorithm's ``seed``).
    :param env_kwargs: the env's (game factory's) keyword arguments; a game's ``counterfactual_pair``
        entry pairs it with its counterfactual twin, and its ``black_death`` and ``pad`` entries go to
        :func:`~sb3_fair.wrappers.make_multiagent_vec_env` (:data:`ADAPTER_KWARGS`).
    :param env_wrapper: RL Zoo's ``env_wrapper`` entry: Gymnasium wrappers of each env, or, for a game, PettingZoo
        parallel wrappers of each game instance (such as :class:`~sb3_fair.wrappers.ParallelDeclareStakeholders`).
    :param vec_env_wrapper: RL Zoo's ``vec_env_wrapper`` entry.
    :param monitor_fairness: wrap every env that honours the stakeholder contract in
        :class:`~sb3_fair.common.monitor.FairnessMonitor` (games: ``ParallelFairnessMonitor``), so
        that any algorithm can log ``fairness/*`` with a :class:`~sb3_fair.common.callbacks.FairnessCallback`.
    :param trusted: let ``env_id`` and the wrapper entries name code outside the allow-list (a config you trust).
    """
    env_id = check_env_id(env_id, trusted=trusted)
    kwargs = dict(env_kwargs or {})
    if is_multiagent_env(env_id):
        from sb3_fair.wrappers import CounterfactualPair, make_multiagent_vec_env

        wrap_game = wrapper_chain(env_wrapper, trusted=trusted, game_of=(env_id, True))
        pair = kwargs.pop(COUNTERFACTUAL_PAIR, None)
        adapter = {k: kwargs.pop(k) for k in ADAPTER_KWARGS if k in kwargs}
        factory = MULTIAGENT_ENVS[env_id]

        def game() -> Any:
            built = factory(**kwargs)
            return built if wrap_game is None else wrap_game(built)

        game()  # a bad env_kwargs or env_wrapper fails here, naming the argument, before any VecEnv exists
        if pair not in (None, False):
            mode = "flip" if pair is True else pair
            vec = make_multiagent_vec_env(
                CounterfactualPair(game, mode=mode), n_instances=n_envs, monitor=monitor_fairness, **adapter
            )
        else:
            vec = make_multiagent_vec_env(game, n_instances=n_envs, monitor=monitor_fairness, **adapter)
    else:
        wrap = wrapper_chain(env_wrapper, trusted=trusted, game_of=(env_id, False))
        if monitor_fairness:
            wrap = _with_fairness_monitor(wrap)
        vec = make_vec_env(_env_maker(env_id, kwargs), n_envs=n_envs, seed=seed, env_kwargs=kwargs, wrapper_class=wrap)
    vec_wrap = wrapper_chain(vec_env_wrapper, "vec_env_wrapper", trusted=trusted)
    if vec_wrap is not None:
        vec = vec_wrap(vec)
        if not isinstance(vec, (VecEnv, VecEnvWrapper)):
            raise ValueError(f"vec_env_wrapper must return a VecEnv, got {type(vec).__name__}")
    return vec


def _env_maker(env_id: str, kwargs: dict[str, Any]) -> str | Callable[..., Any]:
    """What :func:`make_vec_env` makes the envs from: ``env_id`` itself, or ``gym.make`` of it where the env's class
    says it cannot render ``"rgb_array"``. SB3's ``make_vec_env`` asks an id for ``render_mode="rgb_array"`` unless
    told otherwise (dropping it only for an env that takes no ``render_mode``), and Gymnasium warns for an env whose
    ``metadata["render_modes"]`` lacks it; ``gym.make`` is asked for no render mode. An env whose class cannot be told
    (a factory function) keeps SB3's default."""
    if "render_mode" in kwargs:
        return env_id
    from sb3_fair.common.validation import env_class

    cls = env_class(env_id)  # None for an id gym cannot resolve (make_vec_env says why) or a factory it cannot tell
    modes = getattr(cls, "metadata", {}).get("render_modes") if cls is not None else None
    if modes is not None and "rgb_array" not in modes:
        return functools.partial(gym.make, env_id)
    return env_id


def _check_wrapper_kind(path: Any, obj: Any, env_id: str, game: bool) -> None:
    """Refuse an ``env_wrapper`` class of the other kind: a Gymnasium wrapper for a game, a PettingZoo one for a
    Gymnasium env (a function, which a trusted config may name, is called as it is)."""
    from pettingzoo.utils.wrappers import BaseParallelWrapper

    want, other = (BaseParallelWrapper, gym.Wrapper) if game else (gym.Wrapper, BaseParallelWrapper)
    if isinstance(obj, type) and issubclass(obj, other):
        kind = (
            "a multi-agent game, whose env_wrapper entries are PettingZoo parallel wrappers"
            if game
            else "a Gymnasium env, whose env_wrapper entries are Gymnasium wrappers"
        )
        raise ValueError(
            f"env_wrapper: {path!r} is a {other.__module__}.{other.__name__}, but {env_id!r} is {kind} "
            f"(subclasses of {want.__module__}.{want.__name__})"
        )


def _with_fairness_monitor(inner: Callable[[Any], Any] | None) -> Callable[[Any], Any]:
    def wrap(env: Any) -> Any:
        from stable_baselines3.common.env_util import is_wrapped

        from sb3_fair.common.monitor import FairnessMonitor
        from sb3_fair.common.protocol import is_stakeholders_supported

        if inner is not None:
            env = inner(env)
        if is_stakeholders_supported(env) and not is_wrapped(env, FairnessMonitor):
            env = FairnessMonitor(env)
        return env

    return wrap


def make_eval_env(
    env_id: str, env_kwargs: dict[str, Any] | None = None, env_wrapper: Any = None, trusted: bool = False
) -> Any:
    """One env for evaluation, not vectorised: a Gymnasium env (with ``env_wrapper``), or the bare game
    (paired with its twin where ``env_kwargs`` says so); ``trusted`` as in :func:`make_env`."""
    env_id = check_env_id(env_id, trusted=trusted)
    kwargs = dict(env_kwargs or {})
    if is_multiagent_env(env_id):
        from sb3_fair.wrappers import CounterfactualPair

        pair = kwargs.pop(COUNTERFACTUAL_PAIR, None)
        factory = MULTIAGENT_ENVS[env_id]
        if pair not in (None, False):
            return CounterfactualPair(lambda: factory(**kwargs), mode="flip" if pair is True else pair)
        return factory(**kwargs)
    wrap = wrapper_chain(env_wrapper, trusted=trusted)
    env = gym.make(env_id, **kwargs)
    return wrap(env) if wrap is not None else env


__all__ = [
    "ALGOS",
    "COUNTERFACTUAL_PAIR",
    "FAIR_COUNTERPART",
    "MULTIAGENT_ENVS",
    "accepted_arguments",
    "algo_names",
    "canonical_algo",
    "check_env_id",
    "check_keys",
    "get_algo_class",
    "import_env_module",
    "import_gym_packages",
    "import_object",
    "is_fair_algo",
    "is_multiagent_env",
    "make_env",
    "make_eval_env",
    "register_multiagent_env",
    "wrapper_chain",
]
