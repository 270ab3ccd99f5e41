"""Draw the figures of the environment pages (docs/envs/*.md) into docs/_static/envs/.

Run from the repository root::

    python docs/_scripts/env_figures.py            # every figure
    python docs/_scripts/env_figures.py donut      # only some (names: see FIGURES)

Each figure is one episode (or game) of an env of sb3-fair under a reference policy or a simple scripted one, with a
fixed seed, so that the PNGs come out the same on every run with the same library versions. It takes about 10 seconds
on one core.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import gymnasium as gym
import matplotlib.pyplot as plt
import numpy as np

import sb3_fair  # noqa: F401  (registers the envs)
from sb3_fair.envs import (
    AllelopathicHarvestEnv,
    DisparityGame,
    EqualOpportunityPolicy,
    GreedyPursuitPolicy,
    MaxDegreePolicy,
    ProportionalAllocationPolicy,
    greedy_allocation,
)
from sb3_fair.envs.epidemic import karate_graph
from sb3_fair.wrappers import FairnessMonitor, ParallelFairnessMonitor

OUT = Path(__file__).resolve().parent.parent / "_static" / "envs"
DPI = 100
#: one colour per stakeholder or group, the same in every figure
COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2"]
STATE_COLOURS = {0: "#2ca02c", 1: "#d62728", 2: "#1f77b4"}  # S, I, R


def _save(fig: plt.Figure, name: str) -> None:
    fig.tight_layout()
    path = OUT / f"{name}.png"
    # no "Software" entry: the file does not change with the matplotlib version's name alone
    fig.savefig(path, dpi=DPI, bbox_inches="tight", metadata={"Software": None}, pil_kwargs={"optimize": True})
    plt.close(fig)
    print(f"{path}: {path.stat().st_size // 1024} KB")


# ---------------------------------------------------------------------------------------------------------- doughnuts
def donut() -> None:
    """Each customer's doughnut count over one episode: a random server against ``greedy_allocation``."""
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.1), sharey=True)
    for ax, name in zip(axes, ("random", "greedy")):
        env = FairnessMonitor(gym.make("sb3_fair/DonutAllocation-v0"))
        env.reset(seed=0)
        env.action_space.seed(0)
        base = env.unwrapped
        counts = [base.counts.copy()]
        done = False
        while not done:
            action = env.action_space.sample() if name == "random" else greedy_allocation(base.present, base.counts)
            _, _, terminated, truncated, info = env.step(action)
            counts.append(info["counts"])
            done = terminated or truncated
        counts = np.array(counts)
        for i in range(counts.shape[1]):
            ax.step(np.arange(len(counts)), counts[:, i], where="post", color=COLOURS[i], label=f"customer {i}")
        figures = info["fairness"]
        label = "random server" if name == "random" else "greedy_allocation"
        ax.set_title(
            f"{label}: {int(figures['utilitarian'])} served, fewest {int(figures['egalitarian'])}, "
            f"Gini {figures['gini']:.3f}",
            fontsize=9,
        )
        ax.set_xlabel("step")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("doughnuts received so far")
    axes[1].legend(fontsize=8, loc="upper left")
    _save(fig, "donut")


# ---------------------------------------------------------------------------------------------------------- loans
def _highest_credit(base, info) -> int:
    """The applicant with the highest credit (a profit-seeking bank); applicant 0 if nobody applied."""
    applied = np.flatnonzero(base.applied)
    return int(applied[np.argmax(base.credit[applied])]) if applied.size else 0


def _balancing(base, info) -> int:
    """An applicant of the group with fewer loans so far (A on a tie), the highest credit among them."""
    applied = np.flatnonzero(base.applied)
    if not applied.size:
        return 0
    loans_b, loans_a = info.get("memory", np.zeros(2))  # the per-group memory: group 0 (B), then group 1 (A)
    want = 1 if loans_a <= loans_b else 0
    candidates = applied[base.stakeholders.groups[applied] == want]
    if not candidates.size:
        candidates = applied
    return int(candidates[np.argmax(base.credit[candidates])])


def loan_applicants() -> None:
    """Loans per group and the bank's profit over one episode, for a profit-seeking and a balancing bank."""
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.1))
    for policy, style, name in ((_highest_credit, "-", "highest credit"), (_balancing, "--", "balancing")):
        env = FairnessMonitor(gym.make("sb3_fair/LoanApplicants-v0"))
        _, info = env.reset(seed=0)
        base = env.unwrapped
        loans, profit = [np.zeros(2)], [0]
        done, total = False, 0.0
        while not done:
            _, reward, terminated, truncated, info = env.step(policy(base, info))
            total += reward
            loans.append(info["memory"].copy())
            profit.append(info["profit"])
            done = terminated or truncated
        loans = np.array(loans)
        steps = np.arange(len(loans))
        axes[0].step(steps, loans[:, 1], where="post", ls=style, color=COLOURS[1], label=f"A, {name}")
        axes[0].step(steps, loans[:, 0], where="post", ls=style, color=COLOURS[0], label=f"B, {name}")
        met = "met" if info["margin_met"] else "missed"
        axes[1].step(
            steps, profit, where="post", ls=style, color="k", label=f"{name}: return {total:.0f}, margin {met}"
        )
    axes[0].set_title("loans granted so far, by group", fontsize=9)
    axes[0].set_ylabel("loans")
    axes[0].legend(fontsize=7)
    axes[1].axhline(40 / 10, color="grey", lw=0.8, ls=":")
    axes[1].annotate("10 % margin: 4", (30, 5), fontsize=7, color="grey")
    axes[1].set_title("profit: repaid − defaulted", fontsize=9)
    axes[1].legend(fontsize=7, loc="upper left")
    for ax in axes:
        ax.set_xlabel("step")
        ax.grid(alpha=0.3)
    _save(fig, "loan_applicants")


# ---------------------------------------------------------------------------------------------------------- pursuit
def _torus_path(points: np.ndarray, size: float) -> np.ndarray:
    """The path with NaN rows where it crosses the torus' seam (so that a line plot leaves a gap there)."""
    jumps = np.any(np.abs(np.diff(points, axis=0)) > size / 2, axis=1)
    out = []
    for i, p in enumerate(points):
        if i > 0 and jumps[i - 1]:
            out.append([np.nan, np.nan])
        out.append(p)
    return np.array(out)


def pursuit_evasion() -> None:
    """The pursuers' and the evader's paths on the torus under GreedyPursuitPolicy, faster and as fast as the evader."""
    fig, axes = plt.subplots(1, 2, figsize=(8, 4.1))
    for ax, speed in zip(axes, (1.2, 1.0)):
        env = gym.make("sb3_fair/PursuitEvasion-v0", pursuer_speed=speed)
        obs, _ = env.reset(seed=0)
        policy = GreedyPursuitPolicy(env)
        base = env.unwrapped
        pursuers, evader = [base.pursuers.copy()], [base.evader.copy()]
        done, steps = False, 0
        while not done and steps < 120:
            obs, _, terminated, truncated, info = env.step(policy.predict(obs)[0])
            pursuers.append(base.pursuers.copy())
            evader.append(base.evader.copy())
            done, steps = terminated or truncated, steps + 1
        pursuers, evader = np.array(pursuers), np.array(evader)
        for i in range(base.n):
            path = _torus_path(pursuers[:, i], base.size)
            ax.plot(path[:, 0], path[:, 1], color=COLOURS[i], lw=1.2, label=f"pursuer {i}")
            ax.plot(*pursuers[0, i], "o", color=COLOURS[i], ms=5)
            ax.plot(*pursuers[-1, i], "^", color=COLOURS[i], ms=6)
        path = _torus_path(evader, base.size)
        ax.plot(path[:, 0], path[:, 1], color="#d62728", lw=1.2, ls="--", label="evader")
        ax.plot(*evader[0], "o", color="#d62728", ms=5)
        ax.plot(*evader[-1], "x", color="#d62728", ms=8, mew=2)
        if info["captured"]:
            who = ", ".join(f"pursuer {i}" for i in np.flatnonzero(info["benefits"]))
            title = f"speed {speed}: {who} captures at step {steps}"
        else:
            title = f"speed {speed}: no capture in the first {steps} steps"
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("x (● start, ▲ / × end)")
        ax.set_xlim(0, base.size)
        ax.set_ylim(0, base.size)
        ax.set_aspect("equal")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7, loc="lower left")
    _save(fig, "pursuit_evasion")


# ---------------------------------------------------------------------------------------------------------- delayed impact
def delayed_impact_lending() -> None:
    """The two groups' credit pmfs before and after an EqualOpportunityPolicy episode; Δs and Δl along it."""
    env = gym.make("sb3_fair/DelayedImpactLending-v0")
    obs, info = env.reset(seed=0)
    policy = EqualOpportunityPolicy(env, seed=0)
    start = info["credit_pmfs"]
    short, long = [info["short_term_fairness"]], [info["long_term_fairness"]]
    done = False
    while not done:
        obs, _, terminated, truncated, info = env.step(policy.predict(obs)[0])
        short.append(info["short_term_fairness"])
        long.append(info["long_term_fairness"])
        done = terminated or truncated
    end = info["credit_pmfs"]
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.1))
    x = np.arange(7)
    for g, name in enumerate(("group 0 (advantaged)", "group 1 (disadvantaged)")):
        offset = -0.2 if g == 0 else 0.2
        axes[0].bar(x + offset, start[g], 0.4, fill=False, edgecolor=COLOURS[g], lw=1.2, ls="--")
        axes[0].bar(x + offset, end[g], 0.4, color=COLOURS[g], alpha=0.75, label=name)
    axes[0].set_xticks(x)
    axes[0].set_xlabel("credit cluster (repayment probability rises →)")
    axes[0].set_ylabel("share of the group")
    axes[0].set_title("credit pmfs: at reset (dashed), after 2,000 steps (filled)", fontsize=9)
    axes[0].legend(fontsize=7)
    steps = np.arange(len(short))
    axes[1].plot(steps, short, lw=1, label="Δs: windowed TPR gap (Eq. 8)")
    axes[1].plot(steps, long, lw=1, label='Δl: W1 of the windowed credit (long_term="wasserstein")')
    axes[1].set_xlabel("step")
    axes[1].set_title("the env's fairness signals (info)", fontsize=9)
    axes[1].legend(fontsize=7, loc="center", bbox_to_anchor=(0.5, 0.35))
    for ax in axes:
        ax.grid(alpha=0.3)
    _save(fig, "delayed_impact_lending")


# ---------------------------------------------------------------------------------------------------------- attention
def attention_allocation() -> None:
    """Λ per site and the fairness signals over one ProportionalAllocationPolicy episode."""
    env = gym.make("sb3_fair/AttentionAllocation-v0")
    obs, info = env.reset(seed=0)
    policy = ProportionalAllocationPolicy(env)
    rates, short, long = [info["rates"]], [info["short_term_fairness"]], [info["long_term_fairness"]]
    done = False
    while not done:
        obs, _, terminated, truncated, info = env.step(policy.predict(obs)[0])
        rates.append(info["rates"])
        short.append(info["short_term_fairness"])
        long.append(info["long_term_fairness"])
        done = terminated or truncated
    rates = np.array(rates)
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.1))
    shown = 200
    for k in range(rates.shape[1]):
        axes[0].plot(np.arange(shown + 1), rates[: shown + 1, k], color=COLOURS[k], lw=1, label=f"site {k}")
    axes[0].set_title(f"incident rate Λ per site (first {shown} of 1,000 steps)", fontsize=9)
    axes[0].set_ylabel("Λ")
    axes[0].legend(fontsize=7)
    steps = np.arange(len(short))
    axes[1].plot(steps, short, lw=1, label="Δs: allocation-share gap (Eq. 9)")
    axes[1].plot(steps, long, lw=1, label='Δl: max |Λ − mean Λ| (long_term="rates")')
    axes[1].set_title("the env's fairness signals (info)", fontsize=9)
    axes[1].legend(fontsize=7)
    for ax in axes:
        ax.set_xlabel("step")
        ax.grid(alpha=0.3)
    _save(fig, "attention_allocation")


# ---------------------------------------------------------------------------------------------------------- epidemic
def _karate_layout() -> np.ndarray:
    import networkx as nx

    adjacency, _ = karate_graph()
    graph = nx.from_numpy_array(adjacency)
    pos = nx.spring_layout(graph, seed=3)
    return np.array([pos[i] for i in range(len(pos))])


def epidemic_control() -> None:
    """The karate club after the burn-in, and S/I/R per community over a MaxDegreePolicy episode."""
    env = gym.make("sb3_fair/EpidemicControl-v0")
    obs, info = env.reset(seed=0)
    policy = MaxDegreePolicy(env)
    communities = env.unwrapped.communities
    first = info["health_states"].copy()
    states = [first]
    done = False
    while not done:
        obs, _, terminated, truncated, info = env.step(policy.predict(obs)[0])
        states.append(info["health_states"].copy())
        done = terminated or truncated
    states = np.array(states)
    fig, axes = plt.subplots(1, 2, figsize=(8.4, 3.4), gridspec_kw={"width_ratios": [1, 1.25]})
    pos = _karate_layout()
    adjacency, _ = karate_graph()
    ax = axes[0]
    for i, j in zip(*np.nonzero(np.triu(adjacency))):
        ax.plot(pos[[i, j], 0], pos[[i, j], 1], color="#bbbbbb", lw=0.6, zorder=1)
    for c, marker in ((0, "o"), (1, "s")):
        members = np.flatnonzero(communities == c)
        ax.scatter(
            pos[members, 0],
            pos[members, 1],
            c=[STATE_COLOURS[s] for s in first[members]],
            marker=marker,
            s=70,
            edgecolors="k",
            linewidths=0.5,
            zorder=2,
        )
    for i in (0, 33):
        ax.annotate(str(i), pos[i], fontsize=7, ha="center", va="center", color="w", zorder=3)
    ax.set_title("after the burn-in: ● community 0, ■ community 1\ngreen S, red I, blue R", fontsize=8)
    ax.set_axis_off()
    ax = axes[1]
    steps = np.arange(len(states))
    for c, style in ((0, "-"), (1, "--")):
        members = communities == c
        for s, letter in enumerate("SIR"):
            share = (states[:, members] == s).mean(axis=1)
            ax.plot(steps, share, ls=style, color=STATE_COLOURS[s], label=f"{letter}, community {c}")
    v0, v1 = info["vaccinations"]
    ax.set_title(
        f"MaxDegreePolicy: vaccines to community 0 / 1: {v0} / {v1}; final Δs {info['short_term_fairness']:.2f}",
        fontsize=8,
    )
    ax.set_xlabel("step")
    ax.set_ylabel("share of the community")
    ax.legend(fontsize=6, ncol=2)
    ax.grid(alpha=0.3)
    _save(fig, "epidemic_control")


# ---------------------------------------------------------------------------------------------------------- harvest
def allelopathic_harvest() -> None:
    """A frame of the paper-size game, and each agent's return over one game of uniformly random actions."""
    game = ParallelFairnessMonitor(AllelopathicHarvestEnv.from_preset("paper", render_mode="rgb_array"))
    game.reset(seed=0)
    raw = game.unwrapped
    rng = np.random.default_rng(0)
    frame = None
    while game.agents:
        actions = {a: int(rng.integers(8)) for a in game.agents}
        _, _, _, _, infos = game.step(actions)
        if raw.t == 200:
            frame = raw.render()
    summary = infos["agent_0"]["fairness"]
    returns = summary["returns"]
    groups, preferences = raw.groups, raw.preferences
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.7), gridspec_kw={"width_ratios": [1.6, 1]})
    axes[0].imshow(frame, interpolation="nearest")
    axes[0].set_title(
        "render() at step 200: bushes (pale unripe, full ripe),\n"
        "agents (squares in their preferred colour, a dark centre when impaired)",
        fontsize=7,
    )
    axes[0].set_axis_off()
    ax = axes[1]
    labels = []
    for k, (pref, grp) in enumerate(((0, 0), (0, 1), (1, 0), (1, 1))):
        members = returns[(preferences == pref) & (groups == grp)]
        colour = "#c0392b" if pref == 0 else "#2e4ec8"
        ax.bar(k, members.mean(), color=colour, alpha=0.35 if grp else 0.8)
        ax.scatter(np.full(members.size, k) + rng.uniform(-0.2, 0.2, members.size), members, s=8, color="k", zorder=3)
        labels.append(f"{'red' if pref == 0 else 'blue'}\n{'impaired' if grp else 'unimpaired'}")
    ax.set_xticks(range(4))
    ax.set_xticklabels(labels, fontsize=7)
    ax.set_ylabel("episode return")
    ax.set_title(f"random actions, 3,000 steps: dp = {summary['dp']:.0f}", fontsize=8)
    ax.grid(alpha=0.3, axis="y")
    _save(fig, "allelopathic_harvest")


# ---------------------------------------------------------------------------------------------------------- disparity
def disparity_game() -> None:
    """Each agent's return over one game: everybody works, and everybody picks at random."""
    fig, axes = plt.subplots(1, 2, figsize=(8, 2.8), sharey=True)
    for ax, name in zip(axes, ("work", "random")):
        game = ParallelFairnessMonitor(DisparityGame())
        game.reset(seed=0)
        rng = np.random.default_rng(0)
        while game.agents:
            actions = {a: 0 if name == "work" else int(rng.integers(2)) for a in game.agents}
            _, _, _, _, infos = game.step(actions)
        summary = infos["agent_0"]["fairness"]
        groups = game.unwrapped.groups
        ax.bar(np.arange(groups.size), summary["returns"], color=[COLOURS[g] for g in groups])
        ax.set_xticks(np.arange(groups.size))
        ax.set_xticklabels([f"{i}\ng{g}" for i, g in enumerate(groups)], fontsize=7)
        policy = "every agent works (action 0)" if name == "work" else "uniformly random actions"
        ax.set_title(f"{policy}: dp = {summary['dp']:.1f}", fontsize=9)
        ax.set_xlabel("agent, group")
        ax.grid(alpha=0.3, axis="y")
    axes[0].set_ylabel("episode return (20 steps)")
    _save(fig, "disparity_game")


FIGURES: dict[str, Callable[[], None]] = {
    "donut": donut,
    "loan_applicants": loan_applicants,
    "pursuit_evasion": pursuit_evasion,
    "delayed_impact_lending": delayed_impact_lending,
    "attention_allocation": attention_allocation,
    "epidemic_control": epidemic_control,
    "allelopathic_harvest": allelopathic_harvest,
    "disparity_game": disparity_game,
}


def main(names: list[str]) -> None:
    unknown = sorted(set(names) - set(FIGURES))
    if unknown:
        raise SystemExit(f"unknown figures {unknown}; the figures are {sorted(FIGURES)}")
    OUT.mkdir(parents=True, exist_ok=True)
    plt.rcParams.update({"font.size": 8})
    for name in names or FIGURES:
        FIGURES[name]()


if __name__ == "__main__":
    main(sys.argv[1:])
