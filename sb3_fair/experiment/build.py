"""Building a run from its config: :func:`build_model`, the model of an
:class:`~sb3_fair.experiment.config.ExperimentConfig` on its training ``VecEnv``.

The hyper-parameters that are RL Zoo's keys rather than the algorithm's arguments are built here too: ``normalize``
(a ``VecNormalize`` around the training env), ``noise_type`` and ``noise_std`` (the action noise), and ``callback``
(the config's own callbacks, which :func:`~sb3_fair.experiment.training.train` runs). :data:`RESERVED_KEYS` are the
keys the experiment sets itself.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import VecEnv, VecNormalize

from sb3_fair.common.hyperparams import algo_kwargs, check_sb3_ranges, resolve_hyperparams, zoo_spec_objects
from sb3_fair.experiment.config import ExperimentConfig
from sb3_fair.experiment.registry import check_keys, get_algo_class, is_fair_algo, make_env


def _vec_normalize(env: VecEnv, spec: Any, gamma: float | None, trusted: bool = False) -> VecEnv:
    """RL Zoo's ``normalize``: True, a mapping of VecNormalize arguments, or their ``dict(...)`` string (read as data)."""
    if spec is None or spec is False:
        return env
    if spec is True:
        kwargs: dict[str, Any] = {}
    elif isinstance(spec, (dict, str)):
        kwargs = resolve_hyperparams({"normalize": spec}, trusted=trusted)["normalize"]
    else:
        raise ValueError(
            f"hyper-parameter 'normalize' must be true, false or a mapping of VecNormalize arguments, got {spec!r}"
        )
    if gamma is not None and "gamma" not in kwargs:
        kwargs["gamma"] = gamma
    return VecNormalize(env, **kwargs)


def _action_noise(hyperparams: dict[str, Any], env: VecEnv) -> Any:
    """RL Zoo's ``noise_type`` (``normal`` or ``ornstein-uhlenbeck``) and ``noise_std``."""
    from stable_baselines3.common.noise import NormalActionNoise, OrnsteinUhlenbeckActionNoise

    kind = hyperparams.get("noise_type")
    if kind is None:
        return None
    if not isinstance(kind, str):
        raise ValueError(f"hyper-parameter 'noise_type' must be 'normal' or 'ornstein-uhlenbeck', got {kind!r}")
    std = float(hyperparams.get("noise_std", 0.1))
    n = int(np.prod(env.action_space.shape))  # type: ignore[arg-type]  # gymnasium's Space.shape is Optional (None for a Dict)
    if kind.strip() == "normal":
        return NormalActionNoise(mean=np.zeros(n), sigma=std * np.ones(n))
    if kind.strip() == "ornstein-uhlenbeck":
        return OrnsteinUhlenbeckActionNoise(mean=np.zeros(n), sigma=std * np.ones(n))
    raise ValueError(f"hyper-parameter 'noise_type' must be 'normal' or 'ornstein-uhlenbeck', got {kind!r}")


def _zoo_callbacks(spec: Any, trusted: bool = False) -> list[BaseCallback]:
    """RL Zoo's ``callback``: a dotted path, ``{path: kwargs}``, or a list of either; each names a ``BaseCallback``
    (a class of the allow-list unless ``trusted``)."""
    out = []
    for path, cls, kwargs in zoo_spec_objects(spec, "callback", trusted=trusted):
        try:
            out.append(cls(**kwargs))
        except TypeError as err:
            raise ValueError(f"hyper-parameter 'callback': {path!r} refused its arguments {kwargs}: {err}") from None
    return out


#: keys a hyper-parameter entry must not set: the experiment sets them
RESERVED_KEYS = frozenset({"env", "seed", "verbose", "tensorboard_log", "_init_setup_model"})


def _coerce_ints(cls: type, kwargs: dict[str, Any]) -> dict[str, Any]:
    """Whole floats (``1e4`` read as 10000.0) turned into ints where the algorithm's default is an int; any other
    float is refused where the argument is annotated ``int`` (``batch_size=64.5`` would fail only once training started).

    :raises ValueError: naming the hyper-parameter.
    """
    import inspect

    params: dict[str, inspect.Parameter] = {}
    c: type[Any]  # a class of the MRO (its __init__ is read as the class's function)
    for c in reversed(cls.__mro__):
        if "__init__" in vars(c):
            params.update(inspect.signature(c.__init__).parameters)
    out = dict(kwargs)
    for key, value in kwargs.items():
        if key not in params or not isinstance(value, float):
            continue
        default, annotation = params[key].default, params[key].annotation
        if annotation in (int, "int") and not value.is_integer():
            raise ValueError(f"hyper-parameter {key!r} must be an int, got {value!r}")
        if value.is_integer() and isinstance(default, int) and not isinstance(default, bool):
            out[key] = int(value)
    return out


def build_model(config: ExperimentConfig, env: VecEnv | None = None) -> BaseAlgorithm:
    """The model of ``config`` on its training env (built with :func:`~sb3_fair.experiment.registry.make_env`
    unless ``env`` is given).

    :raises ValueError: naming a hyper-parameter the algorithm does not take, or a value it refuses.
    """
    hp = config.hyperparams
    if "frame_stack" in hp:
        raise ValueError(
            "hyper-parameter 'frame_stack' is not supported (the evaluation envs are not vectorised); "
            "use env_wrapper: gymnasium.wrappers.FrameStackObservation with {stack_size: N}"
        )
    cls = get_algo_class(config.algo)
    reserved = sorted(set(hp) & RESERVED_KEYS)
    if reserved:
        raise ValueError(
            f"{reserved} {'is' if len(reserved) == 1 else 'are'} set by the experiment, not by hyper-parameters: "
            "use ExperimentConfig's seed / verbose / tensorboard_log fields (--seed, --verbose, --tensorboard-log); "
            "the env is the config's env"
        )
    check_keys(config.algo, list(hp))
    kwargs = _coerce_ints(cls, algo_kwargs(hp, trusted=config.trusted))
    if isinstance(
        kwargs.get("train_freq"), list
    ):  # YAML has no tuples: [1, episode] is SB3's (1, "episode"), as RL Zoo reads it
        kwargs["train_freq"] = tuple(kwargs["train_freq"])
    check_sb3_ranges(kwargs)
    if env is None:
        n_envs = hp.get("n_envs", 1)
        if isinstance(n_envs, bool) or not isinstance(n_envs, int) or n_envs < 1:
            raise ValueError(f"hyper-parameter 'n_envs' must be an int >= 1, got {n_envs!r}")
        env_kwargs = hp.get("env_kwargs") or {}
        if not isinstance(env_kwargs, dict):
            raise ValueError(f"hyper-parameter 'env_kwargs' must be a mapping, got {env_kwargs!r}")
        try:
            env = make_env(
                config.env,
                n_envs=n_envs,
                seed=config.seed,
                env_kwargs=env_kwargs,
                env_wrapper=hp.get("env_wrapper"),
                vec_env_wrapper=hp.get("vec_env_wrapper"),
                trusted=config.trusted,
            )
        except TypeError as err:  # an env_kwargs entry the env does not take
            raise ValueError(f"env {config.env!r} refused env_kwargs {env_kwargs}: {err}") from None
        try:
            env = _vec_normalize(env, hp.get("normalize"), kwargs.get("gamma"), trusted=config.trusted)
        except TypeError as err:
            raise ValueError(f"hyper-parameter 'normalize' takes VecNormalize's arguments: {err}") from None
    noise = _action_noise(hp, env)
    if noise is not None:
        kwargs["action_noise"] = noise
    policy = resolve_hyperparams({"policy": hp.get("policy", "MlpPolicy")}, trusted=config.trusted)["policy"]
    kwargs.update(seed=config.seed, verbose=config.verbose, tensorboard_log=config.tensorboard_log)
    if is_fair_algo(config.algo) and config.wandb:
        kwargs["wandb"] = True  # joins the run train() started (and leaves it open for the evaluation figures)
    try:
        return cls(policy, env, **kwargs)
    except (
        TypeError,
        AssertionError,
    ) as err:  # SB3 asserts on some values; a policy_kwargs entry the policy does not take
        where = f"the hyper-parameters of {config.env!r}{' @' + config.variant if config.variant else ''}"
        raise ValueError(f"{cls.__name__} could not be built from {where}: {err}") from None
    except MemoryError as err:  # a buffer allocated for buffer_size or n_steps * n_envs rows
        sizes = {k: kwargs[k] for k in ("buffer_size", "n_steps", "batch_size") if k in kwargs}
        raise ValueError(
            f"{cls.__name__}'s buffers do not fit in memory ({err}); lower the hyper-parameters that size them "
            f"({sizes or 'buffer_size / n_steps'}, n_envs {env.num_envs})"
        ) from None


__all__ = ["RESERVED_KEYS", "build_model"]
