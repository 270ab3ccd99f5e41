"""Evaluate a trained model's fairness: per-episode figures from FairnessMonitor, averaged."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from stable_baselines3.common.evaluation import evaluate_policy
from stable_baselines3.common.monitor import Monitor

from sb3_fair.common.callbacks import _flatten_fairness
from sb3_fair.common.fair_algorithm import has_wrapper
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
    if not has_wrapper(env, FairnessMonitor):
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


def evaluate_team_fairness(policy: Any, env: gym.Env, n_episodes: int = 50, seed: int = 0, deterministic: bool = True) -> dict[str, Any]:
    """Team fairness ``I(R;Z)`` and capture success of ``policy`` over ``n_episodes`` (paper 002, Defs. 1-2).

    ``policy`` is anything with SB3's ``predict`` (a model, or
    :class:`~sb3_fair.envs.GreedyPursuitPolicy`). An agent is credited in an episode when its summed
    ``info["benefits"]`` is positive; the credit matrix goes to :func:`sb3_fair.metrics.team_fairness`
    and :func:`sb3_fair.metrics.capture_success`.

    :return: ``{"team_fairness": bits, "capture_success": fraction, "mean_return": float,
        "mean_length": float, "credit": (n_episodes, n_agents) array}``.
    """
    from sb3_fair import metrics
    from sb3_fair.common.stakeholders import get_benefits, get_stakeholders

    if int(n_episodes) < 1:
        raise ValueError(f"n_episodes must be an int >= 1, got {n_episodes!r}")
    n = get_stakeholders(env).n
    credit = np.zeros((int(n_episodes), n))
    returns, lengths = [], []
    for e in range(int(n_episodes)):
        obs, _ = env.reset(seed=seed + e)
        done, total, steps = False, 0.0, 0
        while not done:
            action, _ = policy.predict(obs, deterministic=deterministic)
            obs, reward, terminated, truncated, info = env.step(action)
            credit[e] += get_benefits(info, n)
            total += float(reward)
            steps += 1
            done = terminated or truncated
        returns.append(total)
        lengths.append(steps)
    credited = (credit > 0).astype(np.int64)
    return {
        "team_fairness": metrics.team_fairness(credited),
        "capture_success": metrics.capture_success(credited),
        "mean_return": float(np.mean(returns)),
        "mean_length": float(np.mean(lengths)),
        "credit": credited,
    }
