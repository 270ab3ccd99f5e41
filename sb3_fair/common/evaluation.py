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


def group_fairness_figures(returns: Any, groups: Any, factors: Any | None = None, twins: Any | None = None,
                           protected: int = 1) -> dict[str, float]:
    """The group-fairness figures of one multi-agent episode (paper 001 §5.1), from :mod:`sb3_fair.metrics`.

    :param returns: each agent's episode return.
    :param groups: each agent's protected attribute.
    :param factors: each agent's legitimate factor (adds conditional statistical parity).
    :param twins: each agent's counterfactual twin (index), as :class:`~sb3_fair.wrappers.CounterfactualPair`
        reports; adds counterfactual fairness (factual minus counterfactual) and its normalised form.
    :return: ``group_<g>_mean`` for every group, and where both groups are present ``dp`` (signed,
        protected minus the others), ``dp_abs``, ``dp_normalized`` (Table 1's form), with factors
        ``csp_<k>`` (normalised, per stratum, Table 1's "G1/G2") and ``csp_mean_abs``, with twins
        ``cf``, ``cf_abs`` and ``cf_normalized``.
    """
    from sb3_fair import metrics

    r = np.asarray(returns, dtype=np.float64)
    g = np.asarray(groups, dtype=np.int64)
    out = {f"group_{k}_mean": v for k, v in metrics.group_means(r, g).items()}
    if np.any(g == protected) and np.any(g != protected):
        out["dp"] = metrics.demographic_parity(r, g, protected)
        out["dp_abs"] = abs(out["dp"])
        out["dp_normalized"] = metrics.normalized_demographic_parity(r, g, protected)
        if factors is not None:
            f = np.asarray(factors, dtype=np.int64)
            try:
                for k, v in metrics.normalized_conditional_statistical_parity(r, g, f, protected).items():
                    out[f"csp_{k}"] = v
                out["csp_mean_abs"] = metrics.conditional_statistical_parity(r, g, f, protected)["mean_abs"]
            except ValueError:
                pass
    if twins is not None:
        tw = np.asarray(twins, dtype=np.int64)
        factual = np.flatnonzero(tw > np.arange(tw.size))
        out["cf"] = metrics.counterfactual_fairness(r[factual], r[tw[factual]])
        out["cf_abs"] = abs(out["cf"])
        out["cf_normalized"] = metrics.normalized_counterfactual_fairness(r[factual], r[tw[factual]])
    return out


def evaluate_group_fairness(model: Any, env: Any, n_episodes: int = 10, deterministic: bool = False,
                            seed: int = 0, protected: int = 1) -> dict[str, Any]:
    """Run ``model`` on a PettingZoo parallel game for ``n_episodes`` and tabulate fairness per group.

    One policy acts for every agent (parameter sharing, as FairPPO trains). Each episode's figures
    come from :func:`group_fairness_figures` (DP, CSP when the infos carry ``"factor"``, CF when
    ``env`` is a :class:`~sb3_fair.wrappers.CounterfactualPair`) and are averaged.

    :param model: anything with SB3's ``predict`` taking a batch of observations.
    :param env: a ``ParallelEnv`` whose infos carry ``"group"``.
    :param n_episodes: episodes to run (seeds ``seed``, ``seed + 1``, ...).
    :param deterministic: greedy actions.
    :return: ``{"table": {group: {"mean_return", "std_return", "agents"}}, "<figure>": mean over
        episodes, ..., "episode_return": mean total return per agent, "episodes": [figures]}``.
    """
    if int(n_episodes) < 1:
        raise ValueError(f"n_episodes must be an int >= 1, got {n_episodes!r}")
    episodes: list[dict[str, float]] = []
    per_group: dict[int, list[float]] = {}
    totals = []
    for e in range(int(n_episodes)):
        obs, infos = env.reset(seed=seed + e)
        agents = list(env.possible_agents)
        if any("group" not in infos.get(a, {}) for a in agents):
            raise ValueError("env: every agent's info must carry 'group' (the protected attribute)")
        groups = np.array([infos[a]["group"] for a in agents])
        factors = np.array([infos[a]["factor"] for a in agents]) if all("factor" in infos[a] for a in agents) else None
        twins = np.array([infos[a]["twin"] for a in agents]) if all("twin" in infos[a] for a in agents) else None
        returns = np.zeros(len(agents))
        while env.agents:
            live = list(env.agents)
            actions, _ = model.predict(np.stack([obs[a] for a in live]), deterministic=deterministic)
            obs, rewards, _terms, _truncs, _infos = env.step(dict(zip(live, actions)))
            for i, a in enumerate(agents):
                returns[i] += rewards.get(a, 0.0)
        episodes.append(group_fairness_figures(returns, groups, factors, twins, protected))
        totals.append(float(returns.mean()))
        for g in np.unique(groups):
            per_group.setdefault(int(g), []).extend(returns[groups == g].tolist())
    out: dict[str, Any] = {"table": {g: {"mean_return": float(np.mean(v)), "std_return": float(np.std(v)), "agents": len(v)}
                                     for g, v in sorted(per_group.items())}}
    for key in sorted({k for ep in episodes for k in ep}):
        out[key] = float(np.nanmean([ep[key] for ep in episodes if key in ep]))
    out["episode_return"] = float(np.mean(totals))
    out["episodes"] = episodes
    return out


def price_of_fairness_table(fair: dict[str, Any], base: dict[str, Any]) -> dict[int, float]:
    """Price of fairness per group (paper 001 §6.2) from two :func:`evaluate_group_fairness` results."""
    from sb3_fair import metrics

    return {g: float(metrics.price_of_fairness(fair["table"][g]["mean_return"], base["table"][g]["mean_return"]))
            for g in fair["table"] if g in base["table"]}
