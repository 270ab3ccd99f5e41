"""Evaluating a model with the evaluator that fits its env: :func:`evaluate`, which
:func:`~sb3_fair.experiment.training.train` runs after training, and :func:`evaluate_saved`, a saved model evaluated
as ``sb3-fair evaluate`` does (on the env, arguments and episodes of its run's own evaluation).

A model trained on a ``VecNormalize`` env is evaluated on raw observations normalised with its training statistics.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.vec_env import VecNormalize

from sb3_fair.experiment.persistence import load_model
from sb3_fair.experiment.registry import import_gym_packages, is_multiagent_env, make_eval_env


class _NormalizedPredictor:
    """A model's ``predict`` on raw observations, normalised with its training VecNormalize's statistics; its
    ``predict`` has the model's signature, so evaluators still see ``action_masks`` or ``episode_start``."""

    def __init__(self, model: BaseAlgorithm, vec_normalize: VecNormalize) -> None:
        import inspect

        self.model = model
        self.vec_normalize = vec_normalize

        def predict(observation: Any, *args: Any, **kwargs: Any) -> Any:
            return model.predict(vec_normalize.normalize_obs(observation), *args, **kwargs)

        predict.__signature__ = inspect.signature(model.predict)  # type: ignore[attr-defined]  # typeshed's function type has no __signature__; inspect.signature reads it
        self.predict = predict


def evaluate(
    model: Any,
    env_id: str,
    n_episodes: int = 10,
    env_kwargs: dict[str, Any] | None = None,
    env_wrapper: Any = None,
    deterministic: bool | None = None,
    seed: int = 0,
    trusted: bool = False,
) -> tuple[dict[str, float], dict[int, dict[str, float]]]:
    """Evaluate ``model`` with the evaluator that fits the env; return the scalar figures and, for a
    multi-agent game, the per-group table.

    * a multi-agent game: :func:`~sb3_fair.common.evaluation.evaluate_group_fairness` (samples by default);
    * an env reporting Hu et al.'s (2024) Δs and Δl: :func:`~sb3_fair.common.evaluation.evaluate_long_term`
      (samples by default, their protocol);
    * a team env (stakeholders and an agent symmetry, Grupen et al. 2022):
      :func:`~sb3_fair.common.evaluation.evaluate_team_fairness`, so ``team_fairness`` (I(R;Z)) and
      ``capture_success`` stand beside the monitor's figures (greedy by default);
    * an env with stakeholders: :func:`~sb3_fair.common.evaluation.evaluate_fairness` (greedy by default);
    * any other env: SB3's :func:`~stable_baselines3.common.evaluation.evaluate_policy` (greedy by default).

    A model trained on a ``VecNormalize`` env sees observations normalised with its training statistics.
    ``trusted`` lets ``env_id`` and ``env_wrapper`` name code outside the allow-list (as in :func:`~sb3_fair.experiment.make_env`).
    """
    scalars, table, _ = _evaluate(model, env_id, n_episodes, env_kwargs, env_wrapper, deterministic, seed, trusted)
    return scalars, table


def evaluate_saved(
    path: str | Path,
    env_id: str | None = None,
    n_episodes: int = 20,
    env_kwargs: dict[str, Any] | None = None,
    deterministic: bool | None = None,
    seed: int | None = None,
    algo: str | None = None,
    gym_packages: list[str] | None = None,
    trusted: bool = False,
) -> tuple[dict[str, float], dict[int, dict[str, float]], str]:
    """Evaluate a saved model as its run's own evaluation did (``sb3-fair evaluate``): :func:`evaluate` on the env it
    trained on, with the evaluation env's arguments, env wrapper and first seed of its saved config.

    :param path: a model :func:`~sb3_fair.experiment.persistence.save` wrote (its config beside it says the algorithm
        and the env), or any SB3 zip (then ``algo`` and ``env_id`` are needed).
    :param env_id: the env to evaluate on (default: the one it trained on); on another env than its config's, the
        config's arguments and wrapper are left out.
    :param n_episodes: evaluation episodes.
    :param env_kwargs: the env's arguments, over those of the run's own evaluation (its ``eval_env_kwargs`` over its
        ``env_kwargs``).
    :param deterministic: greedy (True) or sampled (False) actions; None: the evaluator's default (see :func:`evaluate`).
    :param seed: the first episode's seed (default: the one the run's own evaluation used; 0 without a saved config).
    :param algo: the algorithm, for a model without a saved config.
    :param gym_packages: modules to import first, so that the envs they register exist (needs ``trusted`` for a module
        outside the allow-list).
    :param trusted: let the saved config, ``env_id`` and ``gym_packages`` name code outside the allow-list.
    :return: the scalar figures, the per-group table of a multi-agent game, and the env evaluated on.
    :raises ValueError: for a model with no saved config and no ``env_id`` (or no ``algo``), or one that cannot be loaded.
    """
    import_gym_packages(gym_packages, trusted=trusted)  # an env of a module of your own
    model, config = load_model(path, algo=algo, trusted=trusted)
    env_id = env_id or (config.env if config else None)
    if env_id is None:
        raise ValueError(f"{path} has no saved config: say which env to evaluate on (--env)")
    saved = config if config is not None and env_id == config.env else None  # the config of the env it trained on
    kwargs = saved.evaluation_env_kwargs if saved is not None else {}
    kwargs.update(env_kwargs or {})  # as train's own evaluation, then the caller's
    wrapper = saved.hyperparams.get("env_wrapper") if saved is not None else None
    if seed is None:  # the episodes train's own evaluation ran, for a model it saved
        seed = 0 if config is None else config.evaluation_seed
    evaluation, table = evaluate(model, env_id, n_episodes, kwargs, wrapper, deterministic, seed=seed, trusted=trusted)
    return evaluation, table, env_id


def _evaluate(
    model: Any,
    env_id: str,
    n_episodes: int = 10,
    env_kwargs: dict[str, Any] | None = None,
    env_wrapper: Any = None,
    deterministic: bool | None = None,
    seed: int = 0,
    trusted: bool = False,
) -> tuple[dict[str, float], dict[int, dict[str, float]], np.ndarray | None]:
    """:func:`evaluate`, and each episode's per-stakeholder returns where the evaluator gives them."""

    from stable_baselines3.common.evaluation import evaluate_policy

    from sb3_fair.common.evaluation import (
        evaluate_fairness,
        evaluate_group_fairness,
        evaluate_long_term,
        evaluate_team_fairness,
    )
    from sb3_fair.common.protocol import is_fairness_signals_supported, is_stakeholders_supported, is_symmetry_supported

    vec_normalize = model.get_vec_normalize_env() if isinstance(model, BaseAlgorithm) else None
    predictor = _NormalizedPredictor(model, vec_normalize) if vec_normalize is not None else model
    env = make_eval_env(env_id, env_kwargs, env_wrapper, trusted=trusted)
    try:
        if is_multiagent_env(env_id):
            res = evaluate_group_fairness(
                predictor, env, n_episodes=n_episodes, seed=seed, deterministic=bool(deterministic)
            )
            return _scalars(res), {int(g): dict(row) for g, row in res["table"].items()}, None
        _, info = env.reset(seed=seed)
        if is_fairness_signals_supported(info):
            res = evaluate_long_term(
                predictor, env, n_episodes=n_episodes, seed=seed, deterministic=bool(deterministic)
            )
            return _scalars(res), {}, None
        if is_stakeholders_supported(env) and is_symmetry_supported(env):
            det = True if deterministic is None else deterministic
            res = evaluate_team_fairness(predictor, env, n_episodes=n_episodes, seed=seed, deterministic=det)
            res["episode_reward"], res["episode_reward_std"] = res.pop("mean_return"), res.pop("std_return")
            res["episode_length"] = res.pop("mean_length")
            return _scalars(res), {}, None
        if is_stakeholders_supported(env):
            det = True if deterministic is None else deterministic
            res = evaluate_fairness(predictor, env, n_episodes=n_episodes, deterministic=det)
            return _scalars(res), {}, res["returns"]
        det = True if deterministic is None else deterministic
        if _masked(predictor, env):  # sb3-contrib's evaluate_policy passes the env's action masks
            from sb3_contrib.common.maskable.evaluation import evaluate_policy as evaluate_masked

            rewards, lengths = evaluate_masked(
                predictor,  # type: ignore[arg-type]  # sb3-contrib types the model MaskablePPO; any predict taking action_masks does
                env,
                n_eval_episodes=n_episodes,
                deterministic=det,
                return_episode_rewards=True,
                warn=False,
            )
        else:
            rewards, lengths = evaluate_policy(
                predictor, env, n_eval_episodes=n_episodes, deterministic=det, return_episode_rewards=True, warn=False
            )
        return (
            {
                "episode_reward": float(np.mean(rewards)),
                "episode_reward_std": float(np.std(rewards)),
                "episode_length": float(np.mean(lengths)),
            },
            {},
            None,
        )
    finally:
        env.close()


def _masked(model: Any, env: Any) -> bool:
    import inspect

    from sb3_contrib.common.maskable.utils import is_masking_supported

    return "action_masks" in inspect.signature(model.predict).parameters and is_masking_supported(env)


def _scalars(result: dict[str, Any]) -> dict[str, float]:
    return {
        k: float(v)
        for k, v in result.items()
        if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)
    }


__all__ = ["evaluate", "evaluate_saved"]
