"""Evaluate a trained model's fairness: per-episode figures from FairnessMonitor, averaged."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from stable_baselines3.common.evaluation import evaluate_policy
from stable_baselines3.common.monitor import Monitor

from sb3_fair.common.callbacks import _flatten_fairness
from sb3_fair.wrappers.monitor import FairnessMonitor


def evaluate_fairness(model: Any, env: gym.Env, n_episodes: int = 20, deterministic: bool = True) -> dict[str, Any]:
    """Run ``model`` for ``n_episodes`` episodes on ``env`` and average the fairness figures.

    Uses SB3's :func:`~stable_baselines3.common.evaluation.evaluate_policy`; ``env`` is wrapped in
    :class:`~sb3_fair.wrappers.FairnessMonitor` (and SB3's ``Monitor``) if it is not already.

    :return: ``{"episode_reward": mean, "episode_reward_std": std, "<figure>": mean, ...,
        "episodes": [per-episode figures]}``; group means appear as ``group_<g>_mean``.
    """
    if int(n_episodes) < 1:
        raise ValueError(f"n_episodes must be an int >= 1, got {n_episodes!r}")
    wrapped = env
    while wrapped is not None and not isinstance(wrapped, FairnessMonitor):
        wrapped = getattr(wrapped, "env", None)
    if wrapped is None:
        env = FairnessMonitor(env)
    env = Monitor(env)
    episodes: list[dict[str, float]] = []

    def grab(locals_: dict[str, Any], _globals: dict[str, Any]) -> None:
        info = locals_.get("info") or {}
        if locals_.get("done") and "fairness" in info:
            episodes.append(_flatten_fairness(info["fairness"]))

    rewards, _lengths = evaluate_policy(model, env, n_eval_episodes=int(n_episodes), deterministic=deterministic,
                                        return_episode_rewards=True, callback=grab, warn=False)
    out: dict[str, Any] = {"episode_reward": float(np.mean(rewards)), "episode_reward_std": float(np.std(rewards))}
    keys = sorted({k for ep in episodes for k in ep})
    for key in keys:
        values = [ep[key] for ep in episodes if key in ep]
        out[key] = float(np.nanmean(values)) if values else float("nan")
    out["episodes"] = episodes
    return out
