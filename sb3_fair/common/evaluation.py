"""Evaluate a trained model's fairness: per-episode figures from FairnessMonitor, averaged."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from typing import Any

import gymnasium as gym
import numpy as np
from sb3_contrib.common.maskable.utils import is_masking_supported
from stable_baselines3.common.env_util import is_wrapped
from stable_baselines3.common.evaluation import evaluate_policy
from stable_baselines3.common.monitor import Monitor

from sb3_fair import metrics
from sb3_fair.common.figure_table import scalar_figures
from sb3_fair.common.monitor import FairnessMonitor, ParallelFairnessMonitor
from sb3_fair.common.protocol import FAIRNESS, get_benefits, get_fairness_signals, get_stakeholders


def evaluate_fairness(model: Any, env: gym.Env, n_episodes: int = 20, deterministic: bool = True) -> dict[str, Any]:
    """Run ``model`` for ``n_episodes`` episodes on ``env`` and average the fairness figures.

    Uses SB3's :func:`~stable_baselines3.common.evaluation.evaluate_policy` (sb3-contrib's, under the env's
    action masks, for a model whose ``predict`` takes ``action_masks``); ``env`` is wrapped in
    :class:`~sb3_fair.wrappers.FairnessMonitor` (and SB3's ``Monitor``) if it is not already.

    :return: ``{"episode_reward": mean, "episode_reward_std": std, "<figure>": mean, ...,
        "episodes": [per-episode figures], "returns": array}``; group means appear as ``group_<g>_mean``;
        ``returns`` holds each episode's per-stakeholder returns, one row per episode (shape
        ``(n_episodes, n_stakeholders)``).
    """
    if int(n_episodes) < 1:
        raise ValueError(f"n_episodes must be an int >= 1, got {n_episodes!r}")
    if not is_wrapped(env, FairnessMonitor):
        env = FairnessMonitor(env)
    env = Monitor(env)
    episodes: list[dict[str, float]] = []
    returns: list[np.ndarray] = []

    def grab(locals_: dict[str, Any], _globals: dict[str, Any]) -> None:
        info = locals_.get("info") or {}
        if locals_.get("done") and FAIRNESS in info:
            episodes.append(scalar_figures(info[FAIRNESS]))
            returns.append(np.asarray(info[FAIRNESS]["returns"], dtype=np.float64))

    # SB3's evaluate_policy, or sb3-contrib's (whose model is a MaskablePPO) under the env's masks
    evaluate: Callable[..., tuple[float, float] | tuple[list[float], list[int]]] = evaluate_policy
    if "action_masks" in inspect.signature(model.predict).parameters and is_masking_supported(env):
        from sb3_contrib.common.maskable.evaluation import evaluate_policy as evaluate  # acts under the env's masks
    rewards, _lengths = evaluate(
        model,
        env,
        n_eval_episodes=int(n_episodes),
        deterministic=deterministic,
        return_episode_rewards=True,
        callback=grab,
        warn=False,
    )
    out: dict[str, Any] = {"episode_reward": float(np.mean(rewards)), "episode_reward_std": float(np.std(rewards))}
    out.update(_mean_figures(episodes))
    out["episodes"] = episodes
    out["returns"] = np.array(returns, dtype=np.float64).reshape(len(returns), -1)
    return out


def _mean_figures(episodes: list[dict[str, float]]) -> dict[str, float]:
    """Each figure's mean over the episodes that report it (NaN ignored)."""
    return {
        key: float(np.nanmean([ep[key] for ep in episodes if key in ep]))
        for key in sorted({k for ep in episodes for k in ep})
    }


def _episode_steps(
    model: Any, env: gym.Env, seed: int | None, deterministic: bool
) -> Iterator[tuple[float, dict[str, Any]]]:
    """Play one episode of ``model`` on ``env`` (reset with ``seed``) and yield each step's ``(reward, info)``; a recurrent
    ``model`` (its ``predict`` takes ``episode_start``) keeps its state through the episode."""
    recurrent = "episode_start" in inspect.signature(model.predict).parameters
    obs, _ = env.reset(seed=seed)
    state: Any = None
    done, first = False, True
    while not done:
        kwargs: dict[str, Any] = {"deterministic": deterministic}
        if recurrent:
            kwargs.update(state=state, episode_start=np.array([first]))
        action, state = model.predict(obs, **kwargs)
        obs, reward, terminated, truncated, info = env.step(action)
        yield float(reward), info
        done, first = terminated or truncated, False


def evaluate_team_fairness(
    policy: Any, env: gym.Env, n_episodes: int = 50, seed: int = 0, deterministic: bool = True
) -> dict[str, Any]:
    """Team fairness ``I(R;Z)`` and capture success of ``policy`` over ``n_episodes`` (Grupen et al. 2022, Defs. 1-2).

    ``policy`` is anything with SB3's ``predict`` (a model, or
    :class:`~sb3_fair.envs.GreedyPursuitPolicy`). An agent is credited in an episode when its summed
    ``info["benefits"]`` is positive; the credit matrix goes to :func:`sb3_fair.metrics.team_fairness`
    and :func:`sb3_fair.metrics.capture_success`. Episode ``e`` is reset with seed ``seed + e``. The
    figures of the env's :class:`~sb3_fair.wrappers.FairnessMonitor` (added if absent) are averaged over
    the episodes as well, as :func:`evaluate_fairness` does.

    A recurrent ``policy`` (``predict`` takes ``episode_start``) keeps its state through each episode.

    :return: ``{"team_fairness": bits, "capture_success": fraction, "mean_return": float, "std_return": float,
        "mean_length": float, "credit": (n_episodes, n_agents) array, "<figure>": mean, ...}``.
    """
    if int(n_episodes) < 1:
        raise ValueError(f"n_episodes must be an int >= 1, got {n_episodes!r}")
    stakeholders = get_stakeholders(env)
    if not is_wrapped(env, FairnessMonitor):
        env = FairnessMonitor(env)
    credit = np.zeros((int(n_episodes), stakeholders.n))
    returns, lengths, episodes = [], [], []
    info: dict[str, Any]  # the last step's info of each episode
    for e in range(int(n_episodes)):
        total, steps, info = 0.0, 0, {}
        for reward, info in _episode_steps(policy, env, seed + e, deterministic):
            credit[e] += get_benefits(info, stakeholders, env)
            total += reward
            steps += 1
        if FAIRNESS in info:
            episodes.append(scalar_figures(info[FAIRNESS]))
        returns.append(total)
        lengths.append(steps)
    credited = (credit > 0).astype(np.int64)
    out: dict[str, Any] = _mean_figures(episodes)
    out.update(
        {
            "team_fairness": metrics.team_fairness(credited),
            "capture_success": metrics.capture_success(credited),
            "mean_return": float(np.mean(returns)),
            "std_return": float(np.std(returns)),
            "mean_length": float(np.mean(lengths)),
            "credit": credited,
        }
    )
    return out


def evaluate_group_fairness(
    model: Any, env: Any, n_episodes: int = 10, deterministic: bool = False, seed: int = 0, protected: int = 1
) -> dict[str, Any]:
    """Run ``model`` on a PettingZoo parallel game for ``n_episodes`` and tabulate fairness per group.

    One policy acts for every agent (parameter sharing, as FairPPO trains). Each episode's figures
    come from :class:`~sb3_fair.common.monitor.ParallelFairnessMonitor` (the figure table of
    :mod:`sb3_fair.common.figure_table`: DP, CSP where the game has legitimate factors, CF when ``env``
    is a :class:`~sb3_fair.wrappers.CounterfactualPair`) and are averaged.

    :param model: anything with SB3's ``predict`` taking a batch of observations; a model whose
        ``predict`` takes ``action_masks`` (sb3-contrib's MaskablePPO) gets the game's
        ``action_masks()`` rows of the live agents; a recurrent one (``predict`` takes
        ``episode_start``, as RecurrentPPO's) keeps its hidden state through each episode.
    :param env: a ``ParallelEnv`` honouring the stakeholder contract.
    :param n_episodes: episodes to run (seeds ``seed``, ``seed + 1``, ...).
    :param deterministic: greedy actions.
    :param protected: the group value of the protected agents.
    :return: ``{"table": {group: {"mean_return", "std_return", "agents"}}, "<figure>": mean over
        episodes, ..., "episode_return": mean total return per agent, "episodes": [figures]}``.
    """
    if int(n_episodes) < 1:
        raise ValueError(f"n_episodes must be an int >= 1, got {n_episodes!r}")
    monitor = env if isinstance(env, ParallelFairnessMonitor) else ParallelFairnessMonitor(env, protected=protected)
    # a masking model (sb3-contrib's MaskablePPO) acts under the game's masks, as it trained
    accepts = inspect.signature(model.predict).parameters
    masked = "action_masks" in accepts and callable(getattr(monitor, "action_masks", None))
    # a recurrent model (sb3-contrib's RecurrentPPO) keeps each agent's hidden state through the episode
    recurrent = "episode_start" in accepts
    episodes: list[dict[str, float]] = []
    per_group: dict[int, list[float]] = {}
    totals = []
    for e in range(int(n_episodes)):
        obs, _infos = monitor.reset(seed=seed + e)
        summary: dict[str, Any] | None = None
        state: Any = None
        while monitor.agents:
            live = list(monitor.agents)
            batch = np.stack([obs[a] for a in live])
            kwargs: dict[str, Any] = {"deterministic": deterministic}
            if masked:
                kwargs["action_masks"] = monitor.action_masks()[[monitor.possible_agents.index(a) for a in live]]
            if recurrent:
                kwargs.update(state=state, episode_start=np.full(len(live), state is None))
            actions, state = model.predict(batch, **kwargs)
            obs, _rewards, _terms, _truncs, infos = monitor.step(dict(zip(live, actions)))
            summary = next((i[FAIRNESS] for i in infos.values() if FAIRNESS in i), summary)
        assert summary is not None, "the game ended without a fairness summary"
        returns, groups = summary["returns"], monitor.episode_groups
        episodes.append(scalar_figures(summary))
        totals.append(float(returns.mean()))
        for g in np.unique(groups):
            per_group.setdefault(int(g), []).extend(returns[groups == g].tolist())
    out: dict[str, Any] = {
        "table": {
            g: {"mean_return": float(np.mean(v)), "std_return": float(np.std(v)), "agents": len(v)}
            for g, v in sorted(per_group.items())
        }
    }
    for key in sorted({k for ep in episodes for k in ep}):
        out[key] = float(np.nanmean([ep[key] for ep in episodes if key in ep]))
    out["episode_return"] = float(np.mean(totals))
    out["episodes"] = episodes
    return out


def evaluate_long_term(
    model: Any,
    env: gym.Env,
    n_episodes: int = 10,
    seed: int | None = 0,
    deterministic: bool = False,
    info_keys: tuple[str, ...] = (),
) -> dict[str, Any]:
    """Per-step short- and long-term fairness of ``model`` on an env reporting both signals (Hu et al. 2024's protocol).

    Runs ``n_episodes`` episodes of a single env (reset with seeds ``seed``, ``seed + 1``, ...; no
    reseeding with ``seed=None``) and records at every step Δs and Δl of the step's info
    (:func:`~sb3_fair.common.protocol.get_fairness_signals`), the reward, and each ``info_keys``
    entry. Hu, Lear, Zhang (2024, arXiv:2401.06318) plot each of these per time step, averaged
    over episodes (their Figs. 1, 3, 4: lending 10 x 10,000 steps, attention 10 x 1,000, epidemic
    200 x 20; they sample actions, ``deterministic=False``).

    :param model: anything with SB3's ``predict`` (a trained model, a reference policy, or a
        :class:`~sb3_fair.common.long_term.massaging.MassagedPredictor`); a recurrent one (``predict`` takes
        ``episode_start``) keeps its state through each episode.
    :param env: the env (not vectorised).
    :param n_episodes: episodes to run.
    :param seed: the first episode's reset seed.
    :param deterministic: greedy actions.
    :param info_keys: further per-step info entries to record (numbers or arrays).
    :return: ``{"short_term": (episodes, T) array, "long_term": ..., "reward": ..., <key>: ...}``
        (episodes shorter than the longest padded with NaN) and the summaries ``short_term_mean``
        (over all steps), ``long_term_mean``, ``long_term_final`` (the last step's, averaged over
        episodes) and ``episode_reward`` / ``episode_reward_std``.
    """
    if int(n_episodes) < 1:
        raise ValueError(f"n_episodes must be an int >= 1, got {n_episodes!r}")
    runs: dict[str, list[list[Any]]] = {k: [] for k in ("short_term", "long_term", "reward", *info_keys)}
    for e in range(int(n_episodes)):
        rows: dict[str, list[Any]] = {k: [] for k in runs}
        for reward, info in _episode_steps(model, env, None if seed is None else seed + e, deterministic):
            ds, dl = get_fairness_signals([info])
            rows["short_term"].append(ds[0])
            rows["long_term"].append(dl[0])
            rows["reward"].append(reward)
            for key in info_keys:
                rows[key].append(np.asarray(info[key], dtype=np.float64))
        for k, v in rows.items():
            runs[k].append(v)
    longest = max(len(r) for r in runs["reward"])
    out: dict[str, Any] = {}
    for k, episodes in runs.items():
        shape = np.shape(episodes[0][0])
        arr = np.full((len(episodes), longest, *shape), np.nan)
        for i, ep in enumerate(episodes):
            arr[i, : len(ep)] = ep
        out[k] = arr
    totals = np.nansum(out["reward"], axis=1)
    last = np.array([ep[-1] for ep in runs["long_term"]])
    out.update(
        short_term_mean=float(np.nanmean(out["short_term"])),
        long_term_mean=float(np.nanmean(out["long_term"])),
        long_term_final=float(last.mean()),
        episode_reward=float(totals.mean()),
        episode_reward_std=float(totals.std()),
    )
    return out


def price_of_fairness_table(fair: dict[str, Any], base: dict[str, Any]) -> dict[int, float]:
    """Price of fairness per group (La Malfa et al. 2025 §6.2) from two :func:`evaluate_group_fairness` results."""
    return {
        g: float(metrics.price_of_fairness(fair["table"][g]["mean_return"], base["table"][g]["mean_return"]))
        for g in fair["table"]
        if g in base["table"]
    }
