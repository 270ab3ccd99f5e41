"""FairQCM: Alamdari et al.'s deep-RL comparisons: doughnut allocation (Fig. 2) and simulated lending (Fig. 3).

Alamdari, Klassen, Creager, McIlraith (2024), *Remembering to Be Fair: Non-Markovian Fairness in
Sequential Decision Making*, ICML 2024, arXiv:2312.04772.

DQN with full, min and reset memory against FairDQN (FairQCM) with the paper's hyperparameters
(the ``paper_dqn`` / ``paper_fairqcm`` variants of ``sb3_fair/hyperparams/fair_dqn.yml``, which
``FairDQN.from_preset`` reads: Tables 1-2, learning rate 1e-4, the authors' orthogonal initialisation),
over several seeds and the paper's budget of 1000 episodes, plus a random policy and the greedy
"fewest-so-far among present customers" reference. Every ``--eval-every`` training episodes the
greedy (deterministic) policy is evaluated on ``--eval-episodes`` fresh episodes; the score is the
episode's undiscounted return, i.e. the accumulated Nash welfare (doughnuts) or accumulated relaxed
DP score with penalties (lending), as in the paper's figures. Every run goes through
:func:`sb3_fair.experiment.train`.

Beside the paper's methods, ``FairQCM-noCF``: FairQCM's preset and memory without the counterfactual transitions.
The paper's DQN baselines also differ from FairQCM in replay buffer, batch size and ``learning_starts`` (its Tables
1-2); this control differs by the counterfactuals alone.

Each run also records, after every training episode, one greedy episode with the target network (the
authors' code's evaluation) and one with the online network on the same episode seed, so that the section can
show each method's score and stuck seeds under all three evaluations (:func:`protocols`).

Beside them, the figures measured by running the authors' own code (``praal/remembering-to-be-fair``)
on the project's machine, shipped as sb3-fair's data file ``authors_code_fairqcm.json`` (numbers only:
the greedy score their script records after every training episode, averaged over blocks of 20
episodes, per seed); the table compares the two per method and time window, with a two-sided
Mann-Whitney U test over seeds.

It also times FairDQN(counterfactual=False) against SB3's DQN on the same env and settings, and the
cost of counterfactual transitions per env step, in the same run.

Scale: the paper's own settings (1000 episodes per run, its hyperparameters); 5 seeds per method by
default.

Usage::

    python benchmarks/fairqcm.py                       # full run (about 2.5 hours on 2 cores)
    python benchmarks/fairqcm.py --quick               # smoke run (well under a minute)
    python benchmarks/fairqcm.py --ablation --seeds 3  # 0.1.0's faults put back, the authors' ε and target copies
    python benchmarks/fairqcm.py --factors --seeds 5   # why seeds get stuck: the evaluation, the target copies, the init
    python benchmarks/fairqcm.py --tasks lending_gaussian   # A.3, Fig. 5: lending with Gaussian credit changes

``--tasks lending_gaussian`` runs the appendix's lending task with Gaussian credit changes (A.3, Fig. 5;
``sb3_fair/LoanApplicantsGaussian-v0`` with the lending presets, which A.3 keeps) and writes a section of its own;
the authors' code has no such variant, so there is nothing of theirs beside it.

``--factors`` (doughnuts, default method DQN-Full) trains the preset and two variants of it, each changing one
factor (:data:`FACTORS`: the target network copied as the authors' code counts, :class:`AuthorsTargetSync`; the
Q-network's initial weights drawn from another seed, :class:`ReinitQNetwork`), and writes the section "FairQCM's
stuck seeds, one factor at a time": each preset run under the three evaluations it records (:data:`EVALUATIONS`),
and each variant against the preset, seed by seed with paired tests. Replay sampling is not a factor: SB3's buffer
and the authors' code both draw a batch uniformly with replacement from the whole buffer, which is full when learning
starts (SB3 starts a few env steps after the authors' code: DQN-Full 1, FairQCM about 7).

Every run is a trial of ``benchmarks/runner.py`` (its spec: task, method, seed, episodes, learning rate, evaluation
settings and ablation; :func:`run_trial`), scheduled on Ray (a local Ray by default, a cluster with ``--address``) or
without it (``--local``), one CPU and one torch thread each. Writes each run's record once to
``<results>/fairqcm/<trial-id>.json`` (``--results``; a trial with a record is not run again), the throughput to
``<results>/fairqcm/throughput.json``, the PNG curves beside ``<out>/RESULTS.md``, and the results section of
``<out>/RESULTS.md`` (``--out``, default: the repository's ``benchmarks/``), from the records in ``<results>`` and
those kept before the runner (``benchmarks/archive/records.tar.xz``, ``--archive``). A ``--quick`` run keeps its
records and PNGs under ``<results>/fairqcm/quick/`` and writes a section of its own ("smoke run"),
so that it never replaces a real run's (a real run's section takes its place when there is no real one yet).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from stable_baselines3.common.callbacks import BaseCallback

import runner
from sb3_fair.experiment.config import int_at_least, number_in
from reproduction import (DATA, Output, add_runner_arguments, archive_arg, archive_files, check_configs, records_by_file,
                          median_steps_per_s, reproduce_parser, results_root)

#: the benchmark's folder under ``<results>/`` (and its records' folder in the archive, ``out/fairqcm/``)
RUNS_NAME = "fairqcm"
#: the sidecar's fields a flat record takes back (:func:`records`): the timings the tables report
TIMINGS = ("seconds",)

#: each task's methods: the memory, whether counterfactual transitions are stored, and the variant of ``fair_dqn.yml``
#: (``paper_fairqcm`` for FairQCM, ``paper_dqn`` for the DQN baselines). The paper's DQN baselines differ from FairQCM
#: in their replay buffer, batch size and ``learning_starts`` too (its Tables 1-2), so ``FairQCM-noCF`` (not in the
#: paper) is the control that differs from FairQCM by the counterfactual transitions alone: FairQCM's preset and
#: memory with ``counterfactual=False``
DONUT_METHODS = {
    "DQN-Full": dict(memory="full", counterfactual=False, variant="paper_dqn"),
    "DQN-Min": dict(memory="min", counterfactual=False, variant="paper_dqn"),
    "DQN-Reset": dict(memory="reset", counterfactual=False, variant="paper_dqn"),
    "FairQCM": dict(memory="full", counterfactual=True, variant="paper_fairqcm"),
    "FairQCM-noCF": dict(memory="full", counterfactual=False, variant="paper_fairqcm"),
}
LENDING_METHODS = {
    "DQN-Full": dict(memory="full", counterfactual=False, variant="paper_dqn"),
    "DQN-Min": dict(memory="min", counterfactual=False, variant="paper_dqn"),
    "FairQCM": dict(memory="min", counterfactual=True, variant="paper_fairqcm"),
    "FairQCM-noCF": dict(memory="min", counterfactual=False, variant="paper_fairqcm"),
}
#: the methods of each task; ``lending_gaussian`` is the lending task with Gaussian credit changes (A.3, Fig. 5:
#: "the rest of the environment and the baselines are the same as Section 6.2")
TASK_METHODS = {"donut": DONUT_METHODS, "lending": LENDING_METHODS, "lending_gaussian": LENDING_METHODS}
HORIZON = {"donut": 100, "lending": 40, "lending_gaussian": 40}
#: the Gymnasium id of each task (the env ids of the presets in ``fair_dqn.yml``)
ENV_IDS = {"donut": "sb3_fair/DonutAllocation-v0", "lending": "sb3_fair/LoanApplicants-v0",
           "lending_gaussian": "sb3_fair/LoanApplicantsGaussian-v0"}
#: each task's heading in its section, and its figure's title
TITLES = {"donut": "Doughnut allocation (Fig. 2): accumulated log-Nash welfare per episode",
          "lending": "Simulated lending (Fig. 3): accumulated relaxed DP score (with penalties) per episode",
          "lending_gaussian": "Simulated lending with Gaussian credit changes (A.3, Fig. 5): accumulated relaxed DP score "
                              "(with penalties) per episode"}
FIGURES = {"donut": "Fig. 2 (doughnuts)", "lending": "Fig. 3 (lending)", "lending_gaussian": "Fig. 5 (lending, Gaussian credit)"}
#: RESULTS.md's sections and the tasks each reports: the main text's two case studies, and the appendix's A.3
SECTIONS = {"FairQCM (Alamdari et al. 2024)": ("donut", "lending"),
            "FairQCM, lending with Gaussian credit changes (Alamdari et al. 2024, A.3)": ("lending_gaussian",)}
#: the section of the main text's two case studies (and of the throughput)
MAIN_SECTION = next(iter(SECTIONS))
AUTHORS = DATA / "authors_code_fairqcm.json"
WINDOWS = ((0, 200), (200, 400), (400, 600), (600, 1000))
# --ablation: the preset with one or both of sb3-fair 0.1.0's two faults put back
ABLATIONS = {
    "as in 0.1.0 (terminal horizon, PyTorch's default init)": dict(terminal_horizon=True, ortho_init=False),
    "terminal horizon only": dict(terminal_horizon=True, ortho_init=True),
    "PyTorch's default init only": dict(terminal_horizon=False, ortho_init=False),
    # not a fault of 0.1.0 but the presets' remaining deviation: the authors' per-episode epsilon
    "fixed, with the authors' per-episode ε (exploration_decay=0.999)": dict(terminal_horizon=False, ortho_init=True,
                                                                            exploration_decay=0.999),
    # the other remaining difference in the training loop: when the target network is copied
    "fixed, target copied every target_update_interval gradient steps from the first (the authors' count)": dict(
        terminal_horizon=False, ortho_init=True, authors_target=True),
    # not a difference from the authors' code but a lead: a stuck seed's network, drawn again from another seed
    "fixed, the Q-network initialised from another seed (the run's + 1000; env, exploration and replay draws unchanged)":
        dict(terminal_horizon=False, ortho_init=True, init_seed_offset=1000),
}
#: --factors: the ablation rows that change one training factor of the fixed preset each, by short name
FACTORS = {"target copied as the authors' code counts": list(ABLATIONS)[4],
           "the Q-network drawn from another seed": list(ABLATIONS)[5]}
#: --ablation's rows: 0.1.0's faults and the remaining differences from the authors' code (not --factors' other network)
ABLATION_ROWS = [v for v, a in ABLATIONS.items() if "init_seed_offset" not in a]
#: --quick: seeds, eval_every, eval_episodes, throughput steps, reference episodes
QUICK = dict(seeds=1, eval_every=3, eval_episodes=1, throughput_steps=500, reference_episodes=20)
#: --quick: training episodes per task, a few past the presets' ``learning_starts`` (400 / 200 doughnut steps,
#: 1000 / 730 lending steps), so that every run takes gradient steps
QUICK_EPISODES = {"donut": 6, "lending": 30, "lending_gaussian": 30}
#: episodes of the random and greedy references
REFERENCE_EPISODES = 200


#: the ablation's ``env_wrapper`` entry: every episode end reported as ``terminated``, as sb3-fair 0.1.0's doughnut env did
TERMINAL_HORIZON = "sb3_fair.envs.horizon:TerminalHorizon"


def make_env(task: str, memory: str | None):
    """The task's env with ``memory``, built by its factory (for the references)."""
    from sb3_fair.envs import make_donut_allocation, make_loan_applicants

    if task == "donut":
        return make_donut_allocation(memory=memory)
    return make_loan_applicants(memory=memory, credit_change=gym.spec(ENV_IDS[task]).kwargs.get("credit_change", "fixed"))


def evaluate(policy_fn, env, episodes: int, seed: int) -> list[float]:
    """Undiscounted episode returns of ``policy_fn(obs, env)`` over ``episodes`` episodes."""
    scores = []
    for e in range(episodes):
        obs, _ = env.reset(seed=seed + e)
        done, total = False, 0.0
        while not done:
            obs, r, term, trunc, _ = env.step(policy_fn(obs, env))
            total += float(r)
            done = term or trunc
        scores.append(total)
    return scores


def greedy_policy(task: str):
    from sb3_fair.envs import greedy_allocation

    def donut(obs, env):
        base = env.unwrapped
        return greedy_allocation(base.present, base.counts)

    def lending(obs, env):
        # loan to an applicant of the group with fewer loans so far (highest credit first)
        base = env.unwrapped
        status = env.get_wrapper_attr("_status")
        groups = base.stakeholders.groups
        totals = {g: status[groups == g].sum() for g in (0, 1)}
        applicants = np.flatnonzero(base.applied)
        if applicants.size == 0:
            return 0
        order = sorted(applicants, key=lambda i: (totals[groups[i]], -base.credit[i]))
        return int(order[0])

    return donut if task == "donut" else lending


def job_config(job: dict[str, Any]):
    """The :class:`~sb3_fair.experiment.ExperimentConfig` of one run: the paper's variant of ``fair_dqn.yml``
    (``paper_fairqcm`` or ``paper_dqn``), the method's memory, and the learning rate and ablation of ``job``."""
    from sb3_fair.experiment import ExperimentConfig

    task, method = job["task"], job["method"]
    spec = TASK_METHODS[task][method]
    overrides: dict[str, Any] = {"env_kwargs.memory": spec["memory"], "counterfactual": spec["counterfactual"]}
    if not spec["counterfactual"]:  # FairQCM-noCF: the preset's counterfactual settings set back to their unused defaults
        from sb3_fair.common.fairqcm.mixin import COUNTERFACTUAL_DEFAULTS

        overrides.update({k: list(v) if isinstance(v, tuple) else v for k, v in COUNTERFACTUAL_DEFAULTS.items()})
    if job["learning_rate"] is not None:
        overrides["learning_rate"] = job["learning_rate"]
    ablation = ABLATIONS.get(job.get("ablation"))
    if ablation is not None:
        if ablation["terminal_horizon"]:
            overrides["env_wrapper"] = TERMINAL_HORIZON
        overrides["policy_kwargs.ortho_init"] = ablation["ortho_init"]
        if "exploration_decay" in ablation:
            overrides["exploration_decay"] = ablation["exploration_decay"]
        if ablation.get("authors_target"):
            overrides["target_update_interval"] = NEVER  # AuthorsTargetSync copies instead
    return ExperimentConfig.from_hyperparams(
        "fair_dqn", ENV_IDS[task], variant=spec["variant"], overrides=overrides,
        seed=job["seed"], n_timesteps=job["episodes"] * HORIZON[task], eval_episodes=0,
        name=f"fairqcm-{task}-{method}-seed{job['seed']}", group="fairqcm")


#: the ablation's target_update_interval when :class:`AuthorsTargetSync` copies the target network instead of SB3
NEVER = 10**12


class AuthorsTargetSync(BaseCallback):
    """The target network copied as the authors' code copies it: before gradient steps 0, ``interval``,
    ``2 * interval``, ... counted from the first gradient step (SB3's DQN counts env steps from the start of
    training, learning starts included). For DQN with ``train_freq=1, gradient_steps=1`` (the presets): the
    gradient step that follows env step ``t`` is number ``t - learning_starts - 1``."""

    def __init__(self, interval: int) -> None:
        super().__init__()
        self.interval = interval
        self.copies = 0

    def _on_step(self) -> bool:
        step = self.model.num_timesteps - self.model.learning_starts - 1
        if step >= 0 and step % self.interval == 0:
            self.model.q_net_target.load_state_dict(self.model.q_net.state_dict())
            self.copies += 1
        return True


class ReinitQNetwork(BaseCallback):
    """Before the first step, the Q-network's weights drawn again (orthogonal, gain 1, zero biases, as the preset's
    ``ortho_init``) from torch seed ``seed``, and the target network set to a copy; torch's global random streams are
    restored afterwards, so the env, exploration and replay draws of the run are those of the preset."""

    def __init__(self, seed: int) -> None:
        super().__init__()
        self.seed = seed

    def _on_training_start(self) -> None:
        import torch as th

        from sb3_fair.dqn.policies import orthogonal_init_

        with th.random.fork_rng():
            th.manual_seed(self.seed)
            orthogonal_init_(self.model.q_net)
        self.model.q_net_target.load_state_dict(self.model.q_net.state_dict())

    def _on_step(self) -> bool:
        return True


def greedy_return(q_net: Any, model: Any, env: gym.Env, seed: int) -> float:
    """The undiscounted return of one episode of ``env`` (reset with ``seed``) acting greedily on ``q_net``
    (the model's online ``q_net`` or its ``q_net_target``)."""
    import torch as th

    def act(obs: Any, _env: gym.Env) -> int:
        with th.no_grad():
            return int(q_net(model.policy.obs_to_tensor(obs)[0]).argmax(dim=1)[0])

    return evaluate(act, env, 1, seed)[0]


class GreedyEvaluation(BaseCallback):
    """Every ``every`` training episodes, the mean undiscounted return of the greedy policy on ``episodes`` fresh
    episodes of ``eval_env`` (:attr:`curve`: ``(training episode, score)``); :attr:`train_returns` per episode.

    Also after every training episode, the authors' code's protocol: one greedy episode with the target network
    (:attr:`per_episode` ``["target"]``), and one with the online network on the same episode seed
    (``["online"]``), so that the network (target or online) and the number of episodes (1 after each training
    episode or ``episodes`` every ``every``) can be told apart in one run."""

    def __init__(self, eval_env: gym.Env, every: int, episodes: int) -> None:
        super().__init__()
        self.eval_env, self.every, self.episodes = eval_env, every, episodes
        self.curve: list[tuple[int, float]] = []
        self.train_returns: list[float] = []
        self.per_episode: dict[str, list[float]] = {"target": [], "online": []}

    def _on_step(self) -> bool:
        for info in self.locals["infos"]:
            if "episode" in info:
                self.train_returns.append(float(info["episode"]["r"]))
                n = len(self.train_returns)
                for net in ("target", "online"):
                    q_net = self.model.q_net_target if net == "target" else self.model.q_net
                    self.per_episode[net].append(greedy_return(q_net, self.model, self.eval_env, seed=20_000 + n))
                if n % self.every == 0:
                    pol = lambda obs, _env: int(self.model.predict(obs, deterministic=True)[0])  # noqa: E731
                    s = evaluate(pol, self.eval_env, self.episodes, seed=10_000 + 97 * n)
                    self.curve.append((n, float(np.mean(s))))
        return True


def run_trial(job: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The runner's trial function: train one run (``job``, its spec: task, method, seed, episodes, learning_rate,
    eval_every, eval_episodes, optionally ablation) through :func:`~sb3_fair.experiment.train`.

    :returns: ``(result, meta)``: the curves, counts and config (deterministic given ``job``), and the training's
        wall seconds (the sidecar's).
    """
    import torch as th

    th.set_num_threads(1)
    from sb3_fair.experiment import train
    from sb3_fair.experiment.registry import make_eval_env

    config = job_config(job)
    # the evaluation env: the run's env and memory, without the ablation's wrapper (episodes end alike)
    eval_env = make_eval_env(config.env, config.hyperparams.get("env_kwargs"))
    callback = GreedyEvaluation(eval_env, job["eval_every"], job["eval_episodes"])
    ablation = ABLATIONS.get(job.get("ablation")) or {}
    # the authors' target copies, every interval of the paper's variant (the config's is NEVER then)
    sync = AuthorsTargetSync(int(job_config({**job, "ablation": None}).hyperparams["target_update_interval"])) \
        if ablation.get("authors_target") else None
    reinit = ReinitQNetwork(job["seed"] + ablation["init_seed_offset"]) if "init_seed_offset" in ablation else None
    result = train(config, callback=[c for c in (callback, sync, reinit) if c is not None])
    model = result.model
    curve = callback.curve
    out = {"learning_rate": float(model.learning_rate), "curve": curve, "train_returns": callback.train_returns,
           "per_episode": callback.per_episode,
           "counterfactuals": int(getattr(model.replay_buffer, "n_counterfactual", 0)),
           "config": config.to_plain_dict(), **({"target_copies": sync.copies} if sync else {})}
    print(f"[done] {job['task']} {job['method']} seed={job['seed']} {result.train_time_s:.0f}s "
          f"final={curve[-1][1] if curve else float('nan'):.2f}", flush=True)
    return out, {"seconds": result.train_time_s}


def job_name(job: dict[str, Any]) -> str:
    """A trial's readable id prefix: its file name before the runner, without ``.json``."""
    return job_file(job).removesuffix(".json")


def bench(args: argparse.Namespace) -> str:
    """The folder of this call's records under ``<results>``: ``fairqcm``, or ``fairqcm/quick`` for a smoke run."""
    return f"{RUNS_NAME}/quick" if args.quick else RUNS_NAME


def records(args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    """Every record this call reads, flat (spec, result and the sidecar's :data:`TIMINGS` in one dict, as a record was
    before the runner), by its file name before the runner (:func:`job_file`): the archived ones first (not for a smoke
    run), then the runner's in the order they finished, a later one of a name taking the place of an earlier (as a run
    trained again replaced its file)."""
    return records_by_file(RUNS_NAME, bench(args), args.results, args.quick, args.archive, job_file, TIMINGS)


def throughput_record(args: argparse.Namespace) -> dict[str, Any]:
    """The throughput summary the main section reports: this benchmark's ``throughput.json`` under ``<results>``,
    else the archived one."""
    path = Path(args.results) / bench(args) / "throughput.json"
    if path.exists():
        return json.loads(path.read_text())
    kept = archive_files(RUNS_NAME + "/throughput.json", args.archive) if not args.quick else {}
    if not kept:
        raise SystemExit(f"no throughput record in {path.parent} (train first, or give --archive)")
    return json.loads(next(iter(kept.values())))


def job_file(job: dict[str, Any]) -> str:
    lr = 1e-4 if job["learning_rate"] is None else job["learning_rate"]
    tag = "" if job.get("ablation") is None else "_ablation" + str(list(ABLATIONS).index(job["ablation"]))
    return f"{job['task']}_{job['method']}_{job['seed']}_lr{lr:g}{tag}.json"


def references(task: str, episodes: int) -> dict[str, float]:
    env = make_env(task, "full")
    rng = np.random.default_rng(0)
    rand = evaluate(lambda obs, e: int(rng.integers(e.action_space.n)), env, episodes, seed=5000)
    greedy = evaluate(greedy_policy(task), env, episodes, seed=5000)
    return {"random": float(np.mean(rand)), "random_std": float(np.std(rand)),
            "greedy": float(np.mean(greedy)), "greedy_std": float(np.std(greedy))}


def throughput(steps: int) -> dict[str, float]:
    """FairDQN(counterfactual=False) vs SB3 DQN steps/s, and the per-step cost of counterfactuals."""
    import torch as th

    th.set_num_threads(1)
    from stable_baselines3 import DQN

    from sb3_fair import FairDQN
    from sb3_fair.envs import make_donut_allocation

    kw = dict(learning_starts=400, buffer_size=6400, batch_size=64, train_freq=1, target_update_interval=1000, seed=0)

    med = median_steps_per_s({
        "dqn": lambda: DQN("MlpPolicy", make_donut_allocation(), **kw),
        "fairdqn": lambda: FairDQN("MlpPolicy", make_donut_allocation(), counterfactual=False, **kw),
        "fairdqn_cf": lambda: FairDQN("MlpPolicy", make_donut_allocation(), counterfactual=True, **kw),
    }, steps)
    return {
        "steps": steps,
        "dqn_steps_per_s": med["dqn"],
        "fairdqn_steps_per_s": med["fairdqn"],
        "fairdqn_cf_steps_per_s": med["fairdqn_cf"],
        "ratio_fairdqn_vs_dqn": med["fairdqn"] / med["dqn"],
        "cf_cost_ms_per_step": 1000.0 * (1.0 / med["fairdqn_cf"] - 1.0 / med["fairdqn"]),
    }


def load_authors(task: str, block: int) -> dict[str, list[list[float]]]:
    """The authors' code's greedy scores per method and seed, as means over blocks of ``block`` episodes."""
    if not AUTHORS.exists():
        return {}
    data = json.loads(AUTHORS.read_text())
    if data.get("block") != block:
        return {}
    return data.get(task, {})


def window_means(curve_x: list[int], curve_y: list[float]) -> list[float]:
    """Mean score in each of :data:`WINDOWS` (evaluation points n with a < n <= b)."""
    x, y = np.asarray(curve_x), np.asarray(curve_y)
    return [float(y[(x > a) & (x <= b)].mean()) if ((x > a) & (x <= b)).any() else float("nan") for a, b in WINDOWS]


def authors_curves(authors: dict[str, list[list[float]]], method: str, block: int) -> list[tuple[list[int], list[float]]]:
    return [([block * (j + 1) for j in range(len(run))], run) for run in authors.get(method, [])]


def plot(task: str, results: list[dict], refs: dict[str, float], path: Path, authors: dict[str, list[list[float]]], block: int) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    methods = sorted({r["method"] for r in results} | set(authors))
    colours = dict(zip(methods, plt.rcParams["axes.prop_cycle"].by_key()["color"]))
    for method in methods:
        sources = [("sb3-fair", "-", [(list(map(int, np.array(r["curve"])[:, 0])), list(np.array(r["curve"])[:, 1]))
                                      for r in results if r["method"] == method and r["curve"]]),
                   ("authors' code", "--", authors_curves(authors, method, block))]
        for label, style, runs in sources:
            if not runs:
                continue
            n = min(len(xs) for xs, _ in runs)
            x = np.array(runs[0][0][:n])
            ys = np.array([ys[:n] for _, ys in runs])
            mean, se = ys.mean(0), ys.std(0) / np.sqrt(len(ys))
            ax.plot(x, mean, style, color=colours[method], label=f"{method}, {label} (n={len(ys)})")
            ax.fill_between(x, mean - 1.96 * se, mean + 1.96 * se, color=colours[method], alpha=0.12)
    ax.axhline(refs["greedy"], color="k", ls=":", lw=1, label="greedy reference")
    ax.axhline(refs["random"], color="gray", ls=":", lw=1, label="random")
    ax.set_xlabel("training episode")
    ax.set_ylabel("accumulated Nash welfare" if task == "donut" else "accumulated relaxed DP score")
    ax.set_title(f"Alamdari et al. 2024, {FIGURES[task]}: sb3-fair (solid) vs authors' code (dashed)",
                 fontsize=9)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def episodes_to_reach(curve: list[tuple[int, float]], target: float) -> int | None:
    for n, score in curve:
        if score >= target:
            return n
    return None


def _ms(values: list[float]) -> str:
    return f"{np.mean(values):.1f} ± {np.std(values):.1f}"


def summarise(task: str, results: list[dict], refs: dict[str, float], last_k: int) -> list[str]:
    win = " | ".join(f"episodes {a + 1}–{b}" for a, b in WINDOWS)
    lines = [f"| method | seeds | final score (last {last_k} evals) | whole curve | {win} | episodes to 95 % of greedy (per seed) | train time / seed (s) |",
             "|---|---|---|---|" + "---|" * len(WINDOWS) + "---|---|"]
    target = 0.95 * refs["greedy"]
    for method in sorted({r["method"] for r in results}):
        runs = [r for r in results if r["method"] == method]
        finals = [np.mean([p[1] for p in r["curve"][-last_k:]]) for r in runs]
        areas = [np.mean([p[1] for p in r["curve"]]) for r in runs]
        wins = np.array([window_means([p[0] for p in r["curve"]], [p[1] for p in r["curve"]]) for r in runs])
        reach = [episodes_to_reach(r["curve"], target) for r in runs] if task == "donut" and refs["greedy"] > 0 else []
        reach_s = ", ".join("—" if e is None else str(e) for e in reach) if reach else "n/a"
        lines.append(f"| {method} | {len(runs)} | {_ms(finals)} | {_ms(areas)} | " + " | ".join(_ms(wins[:, k]) for k in range(len(WINDOWS)))
                     + f" | {reach_s} | {np.mean([r['seconds'] for r in runs]):.0f} |")
    lines.append(f"| random policy | — | {refs['random']:.1f} ± {refs['random_std']:.1f} (per episode) | — |" + " — |" * len(WINDOWS) + " — | — |")
    lines.append(f"| greedy reference | — | {refs['greedy']:.1f} ± {refs['greedy_std']:.1f} (per episode) | — |" + " — |" * len(WINDOWS) + " — | — |")
    return lines


def curve_scores(record: dict[str, Any]) -> list[float]:
    """A run's mean greedy score over its whole curve, then over each of :data:`WINDOWS`."""
    xs, ys = [p[0] for p in record["curve"]], [p[1] for p in record["curve"]]
    return [float(np.mean(ys)), *window_means(xs, ys)]


def authors_scores(authors: dict[str, list[list[float]]], method: str, block: int) -> np.ndarray:
    """The authors' code's runs of ``method``, one row per seed: the mean over the whole curve, then over each of
    :data:`WINDOWS` (the columns of :func:`curve_scores`)."""
    return np.array([[np.mean(ys), *window_means(xs, ys)] for xs, ys in authors_curves(authors, method, block)])


def mann_whitney_cells(a: np.ndarray, b: np.ndarray) -> list[str]:
    """Per column of two seed-by-column score arrays: ``mean ± sd of a / of b (two-sided Mann-Whitney U p)``."""
    from scipy.stats import mannwhitneyu

    return [f"{_ms(a[:, k])} / {_ms(b[:, k])} ({mannwhitneyu(a[:, k], b[:, k], alternative='two-sided').pvalue:.2f})"
            for k in range(a.shape[1])]


def versus_authors(results: list[dict], authors: dict[str, list[list[float]]], block: int) -> list[str]:
    """sb3-fair against the authors' code, per method: whole curve and each window, Mann-Whitney U over seeds."""
    if not authors:
        return ["(no figures from the authors' code for this task)"]
    cols = ["whole curve", *[f"episodes {a + 1}–{b}" for a, b in WINDOWS]]
    lines = ["| method | seeds (ours / authors') | " + " | ".join(f"{c}: ours / authors' (p)" for c in cols) + " |",
             "|---|---|" + "---|" * len(cols)]
    for method in sorted(set(authors) & {r["method"] for r in results}):
        o = np.array([curve_scores(r) for r in results if r["method"] == method])
        t = authors_scores(authors, method, block)
        lines.append(f"| {method} | {len(o)} / {len(t)} | " + " | ".join(mann_whitney_cells(o, t)) + " |")
    return lines


#: methods of the paper that only the authors' code was run for: the RNN baseline (``dqn-recurrent.py``,
#: ``dqn-recurrent-lending.py``), which sb3-fair does not implement (``docs/reproductions.md`` says why)
AUTHORS_ONLY = ("RNN",)


def versus_authors_only(results: list[dict], authors: dict[str, list[list[float]]], block: int) -> list[str]:
    """FairQCM, sb3-fair's runs and the authors' code's, against each :data:`AUTHORS_ONLY` method of the authors' code:
    whole curve and each window, mean ± sd over seeds, two-sided Mann-Whitney U over seeds (different code: no pairing)."""
    cols = ["whole curve", *[f"episodes {a + 1}–{b}" for a, b in WINDOWS]]
    lines = ["| FairQCM, from | against (authors' code) | seeds | " + " | ".join(f"{c}: FairQCM / it (p)" for c in cols) + " |",
             "|---|---|---|" + "---|" * len(cols)]
    ours = np.array([curve_scores(r) for r in results if r["method"] == "FairQCM"])
    theirs = authors_scores(authors, "FairQCM", block)
    for method in (m for m in AUTHORS_ONLY if authors.get(m)):
        other = authors_scores(authors, method, block)
        for label, fair in (("sb3-fair", ours), ("the authors' code", theirs)):
            if len(fair):
                lines.append(f"| {label} | {method} | {len(fair)} / {len(other)} | " + " | ".join(mann_whitney_cells(fair, other)) + " |")
    return lines if len(lines) > 2 else []


def block_means(scores: list[float], block: int) -> tuple[list[int], list[float]]:
    """Per-training-episode scores as means over whole blocks of ``block`` episodes, at the block's last episode
    (the form of the authors' figures in ``authors_code_fairqcm.json``)."""
    n = len(scores) // block
    return [block * (j + 1) for j in range(n)], [float(np.mean(scores[block * j:block * (j + 1)])) for j in range(n)]


def protocols(results: list[dict], authors: dict[str, list[list[float]]], refs: dict[str, float], block: int,
              episodes: int) -> list[str]:
    """Each method's whole-curve score and its number of stuck seeds under the three evaluations a run records
    (:class:`GreedyEvaluation`), beside the authors' code's; a seed is stuck when its mean score over episodes
    601-1000 is below the random policy's."""
    from scipy.stats import mannwhitneyu

    results = [r for r in results if "per_episode" in r]
    if not results:
        return ["(the runs on disk predate the per-episode evaluations)"]
    last = len(WINDOWS) - 1

    def row(curves: list[tuple[list[int], list[float]]]) -> tuple[np.ndarray, str]:
        whole = np.array([np.mean(ys) for _, ys in curves])
        stuck = sum(window_means(xs, ys)[last] < refs["random"] for xs, ys in curves)
        return whole, f"{_ms(whole)} ({stuck}/{len(curves)} stuck)"

    lines = [f"| method | seeds (ours / authors') | {episodes} online episode{'s' if episodes != 1 else ''} every {block} (the tables above) "
             f"| 1 online episode after each training episode | 1 target-network episode after each (the authors' protocol) "
             f"| authors' code (their protocol) | the authors' protocol, ours / theirs: p |", "|---|---|---|---|---|---|---|"]
    for method in sorted({r["method"] for r in results}):
        runs = [r for r in results if r["method"] == method]
        cells, target = [], None
        for curves in ([([int(x) for x, _ in r["curve"]], [y for _, y in r["curve"]]) for r in runs],
                       [block_means(r["per_episode"]["online"], block) for r in runs],
                       [block_means(r["per_episode"]["target"], block) for r in runs]):
            whole, text = row(curves)
            cells.append(text)
            target = whole
        theirs = authors_curves(authors, method, block)
        if theirs:
            whole, text = row(theirs)
            p = mannwhitneyu(target, whole, alternative="two-sided").pvalue
            cells += [text, f"{p:.2f}"]
        else:
            cells += ["—", "—"]
        lines.append(f"| {method} | {len(runs)} / {len(theirs)} | " + " | ".join(cells) + " |")
    return lines


def paired(results: list[dict], a: str, baselines: list[str]) -> list[str]:
    """A table of ``a`` minus each of ``baselines``, seed by seed (same seed = same env draws at the start), over the
    whole curve and each of :data:`WINDOWS`: in how many seeds ``a`` is higher, and :func:`reproduction.paired_test`."""
    from reproduction import paired_table

    scores = {(r["method"], r["seed"]): curve_scores(r) for r in results}
    cols = ["whole curve", *[f"episodes {lo + 1}–{hi}" for lo, hi in WINDOWS]]
    return paired_table(scores, a, baselines, cols, "{:.1f}")


def _run_jobs(jobs: list[dict[str, Any]], workers: int, args: argparse.Namespace | None = None) -> None:
    """Check every run's settings, then hand the runs to the runner (:func:`runner.run`, :func:`run_trial`)."""
    if not jobs:
        return
    check_configs([job_config(j) for j in jobs])  # every run's settings, before the first trains
    summary = runner.run(bench(args) if args else RUNS_NAME, jobs, run_trial,
                         results=getattr(args, "results", None), address=getattr(args, "address", None),
                         local=bool(getattr(args, "local", False)), jobs=workers, label=job_name)
    runner.check_summary(summary)


def ablation(args: argparse.Namespace, output: Output) -> None:
    """Train the doughnut preset with each of :data:`ABLATIONS` and write the 'what was wrong' section."""
    methods = args.methods or ["DQN-Full"]
    jobs = [dict(task="donut", method=m, seed=seed, episodes=args.task_episodes["donut"], learning_rate=args.learning_rate, eval_every=args.eval_every,
                 eval_episodes=args.eval_episodes, ablation=variant)
            for variant in ABLATION_ROWS for m in methods for seed in range(args.seeds)]
    have = records(args)
    jobs = [j for j in jobs if args.quick or job_file(j) not in have]
    t0 = time.perf_counter()
    if not args.no_train:
        _run_jobs(jobs, args.workers, args)
        have = records(args)
    lr = 1e-4 if args.learning_rate is None else args.learning_rate
    refs = references("donut", args.reference_episodes)
    cmd = ("python benchmarks/fairqcm.py --ablation" + (" --quick" if args.quick else f" --seeds {args.seeds}")
           + ("" if methods == ["DQN-Full"] else " --methods " + " ".join(methods)))
    lines = [f"## What was wrong with the paper-003 preset in sb3-fair 0.1.0 (ablation){', smoke run' if args.quick else ''}: `{cmd}`", "",
             f"The doughnut preset (learning rate {lr:g}, {args.task_episodes['donut']} episodes, greedy evaluation every {args.eval_every} episodes on "
             f"{args.eval_episodes} fresh episodes) with one or both of 0.1.0's faults put back: the horizon reported as `terminated` "
             "(the last step of every episode not bootstrapped) and PyTorch's default initialisation instead of the authors' "
             f"orthogonal one. The last row of each method is the fixed preset, from the main section's runs of the same seeds; the two "
             "rows before it change one thing of the fixed preset each: its exploration to the authors' per-episode schedule "
             "ε = max(0.2, 0.999^episode) (still 0.37 after 1000 episodes, where the preset's linear schedule reaches 0.2 at episode "
             "500), and when the target network is copied: every target_update_interval gradient steps counted from the first one, "
             "as the authors' code counts them, instead of SB3's env steps counted from the start (`AuthorsTargetSync`). "
             f"Wall time {(time.perf_counter() - t0) / 60:.0f} min (the last run's).", "",
             "| method | variant | seeds | whole curve | " + " | ".join(f"episodes {a + 1}–{b}" for a, b in WINDOWS) + " |",
             "|---|---|---|---|" + "---|" * len(WINDOWS)]
    for m in methods:
        rows = [(v, [have[k] for sd in range(args.seeds)
                     if (k := job_file(dict(task="donut", method=m, seed=sd, learning_rate=args.learning_rate, ablation=v))) in have])
                for v in ABLATION_ROWS]
        fixed = [have[k] for sd in range(args.seeds)
                 if (k := job_file(dict(task="donut", method=m, seed=sd, learning_rate=args.learning_rate))) in have]
        for variant, done in [*rows, ("fixed (the preset now)", fixed)]:
            if not done:
                continue
            area = [np.mean([p[1] for p in r["curve"]]) for r in done]
            wins = np.array([window_means([p[0] for p in r["curve"]], [p[1] for p in r["curve"]]) for r in done])
            lines.append(f"| {m} | {variant} | {len(done)} | {_ms(area)} | " + " | ".join(_ms(wins[:, k]) for k in range(len(WINDOWS))) + " |")
    lines += [f"| random policy | — | — | {refs['random']:.1f} (per episode) |" + " — |" * len(WINDOWS),
              "| every doughnut to one customer | — | — | about 280 (per episode) |" + " — |" * len(WINDOWS)]
    output.write_section("(ablation), smoke run" if args.quick else "(ablation)", "\n".join(lines))
    print("\n".join(lines))


#: --factors: the three evaluations every run records, by label (:class:`GreedyEvaluation`)
EVALUATIONS = ("online network, the tables' evaluation", "online network, 1 episode after each",
               "target network, 1 episode after each (the authors')")


def evaluation_curves(record: dict[str, Any], block: int) -> dict[str, tuple[list[int], list[float]]]:
    """A run's score curve under each of :data:`EVALUATIONS` (the per-episode ones as means over blocks of ``block``)."""
    return {EVALUATIONS[0]: ([int(x) for x, _ in record["curve"]], [float(y) for _, y in record["curve"]]),
            EVALUATIONS[1]: block_means(record["per_episode"]["online"], block),
            EVALUATIONS[2]: block_means(record["per_episode"]["target"], block)}


def factors(args: argparse.Namespace, output: Output) -> None:
    """Why some doughnut seeds get stuck, one factor at a time: the preset's runs under the three evaluations each
    records, and the preset with one training factor changed (:data:`FACTORS`), seed by seed with paired tests."""
    from reproduction import paired_test

    methods = args.methods or ["DQN-Full"]
    base = dict(task="donut", episodes=args.task_episodes["donut"], learning_rate=args.learning_rate,
                eval_every=args.eval_every, eval_episodes=args.eval_episodes)
    variants = {"the preset": None, **FACTORS}

    def job(variant: str | None, method: str, seed: int) -> dict[str, Any]:
        return {**base, "method": method, "seed": seed, **({} if variant is None else {"ablation": variant})}

    settings = ("episodes", "eval_every", "eval_episodes")
    have = records(args)

    def load(j: dict[str, Any]) -> dict[str, Any] | None:
        return have.get(job_file(j))

    jobs = [job(v, m, sd) for v in variants.values() for m in methods for sd in range(args.seeds)]
    if not args.quick:  # the preset's runs are the main run's records: never shadow one trained otherwise
        other = [job_file(j) for j in jobs if (r := load(j)) is not None
                 and ([r.get(k) for k in settings] != [j[k] for k in settings] or "per_episode" not in r)]
        if other:
            raise SystemExit(f"--factors: {', '.join(other)} in {args.results / RUNS_NAME} (or the archive) were trained "
                             "with other settings (--episodes, --eval-every, --eval-episodes) or before the per-episode "
                             "evaluations; choose another --results")
    todo = [j for j in jobs if args.quick or load(j) is None]
    todo.sort(key=lambda j: j["method"] != "FairQCM")  # the longest runs first
    t0 = time.perf_counter()
    if not args.no_train:
        _run_jobs(todo, args.workers, args)
        have = records(args)
    refs = references("donut", args.reference_episodes)
    block, last = args.eval_every, len(WINDOWS) - 1
    cmd = ("python benchmarks/fairqcm.py --factors" + (" --quick" if args.quick else f" --seeds {args.seeds}")
           + ("" if methods == ["DQN-Full"] else " --methods " + " ".join(methods)))
    # the heading, command included, is the section's key: another --methods or --seeds is another section
    heading = f"FairQCM's stuck seeds, one factor at a time{', smoke run' if args.quick else ''}: `{cmd}`"
    lines = [f"## {heading}", "",
             f"The doughnut preset (`FairDQN.from_preset`, the paper's settings, {args.task_episodes['donut']} episodes per run). "
             f"A seed is stuck when its mean score over episodes {WINDOWS[last][0] + 1}–{WINDOWS[last][1]} is below the "
             f"random policy's {refs['random']:.1f}. Per-seed values are those means, seeds 0, 1, ... in order ('-': not finished); paired "
             "tests pair the seeds by number (two-sided)." + ("" if args.no_train else
                                                            f" Wall time {(time.perf_counter() - t0) / 60:.0f} min (this "
                                                            "call's; runs already on disk are kept)."), "",
             "**The evaluation.** The preset's runs, each scored three ways: the tables' evaluation (the online network, "
             f"mean of {args.eval_episodes} fresh episodes every {block} training episodes) and, after every training episode, "
             "one greedy episode with the online network and one with the target network on the same episode seed (the "
             f"authors' code's evaluation), as means over blocks of {block}.", "",
             "| method | evaluation | seeds | whole curve | late mean per seed | stuck | − the authors' evaluation, whole curve |",
             "|---|---|---|---|---|---|---|"]
    # each finished run's whole-curve mean and late-window mean under each evaluation, by (variant, method) and seed
    scores: dict[tuple[str | None, str], dict[int, dict[str, tuple[float, float]]]] = {}
    for v in variants.values():
        for m in methods:
            done = [r for r in (load(job(v, m, sd)) for sd in range(args.seeds)) if r is not None]
            scores[(v, m)] = {r["seed"]: {e: (float(np.mean(ys)), window_means(xs, ys)[last])
                                          for e, (xs, ys) in evaluation_curves(r, block).items()} for r in done}

    def column(runs: dict[int, dict[str, tuple[float, float]]], e: str, k: int) -> dict[int, float]:
        """Seed -> the whole-curve (k = 0) or late-window (k = 1) mean under evaluation ``e``."""
        return {sd: by_e[e][k] for sd, by_e in runs.items()}

    def per_seed(values: dict[int, float]) -> str:  # seeds 0, 1, ... in order, "-" for one not finished
        return " / ".join(f"{values[sd]:.0f}" if sd in values else "-" for sd in range(args.seeds))

    def stuck(values: dict[int, float]) -> int:
        return sum(x < refs["random"] for x in values.values())

    for m in methods:
        done = scores[(None, m)]
        if not done:
            continue
        for e in EVALUATIONS:
            whole, late = column(done, e, 0), column(done, e, 1)
            versus = "—" if e == EVALUATIONS[2] else paired_test(whole, column(done, EVALUATIONS[2], 0), "{:.1f}")
            lines.append(f"| {m} | {e} | {len(done)} | {_ms(list(whole.values()))} | {per_seed(late)} | "
                         f"{stuck(late)} of {len(done)} | {versus} |")
    lines += ["", "**The training factors.** The preset with one thing changed: the target network copied as the authors' "
              "code copies it (every `target_update_interval` gradient steps counted from the first, `AuthorsTargetSync`, "
              "instead of SB3's count of env steps from the start), or the Q-network's initial weights drawn from another "
              "seed with everything else of the run unchanged (`ReinitQNetwork`). Scored by the tables' evaluation; stuck "
              "seeds also by the authors' evaluation.", "",
              "| method | variant | seeds | whole curve | late mean per seed | stuck (tables' / authors' evaluation) | "
              "− the preset, whole curve |", "|---|---|---|---|---|---|---|"]
    for m in methods:
        for name, v in variants.items():
            done = scores[(v, m)]
            if not done:
                continue
            whole, late = column(done, EVALUATIONS[0], 0), column(done, EVALUATIONS[0], 1)
            versus = "—" if v is None else paired_test(whole, column(scores[(None, m)], EVALUATIONS[0], 0), "{:.1f}")
            lines.append(f"| {m} | {name} | {len(done)} | {_ms(list(whole.values()))} | {per_seed(late)} | "
                         f"{stuck(late)} / {stuck(column(done, EVALUATIONS[2], 1))} of {len(done)} | {versus} |")
    missing = [f"{m}, {name}, seed {sd}" for name, v in variants.items() for m in methods for sd in range(args.seeds)
               if sd not in scores[(v, m)]]
    if missing:
        lines += ["", f"Not finished (left out): {', '.join(missing)}."]
    output.write_section(heading, "\n".join(lines) + "\n")
    print("\n".join(lines))


def main(argv: list[str] | None = None) -> None:
    parser = reproduce_parser("fairqcm", __doc__)
    parser.add_argument("--seeds", type=int_at_least(1), default=5)
    parser.add_argument("--episodes", type=int_at_least(1), default=1000)
    parser.add_argument("--eval-every", type=int_at_least(1), default=20)
    parser.add_argument("--eval-episodes", type=int_at_least(1), default=5)
    parser.add_argument("--tasks", nargs="+", default=None, choices=list(TASK_METHODS),
                        help="default: donut and lending (lending_gaussian: the appendix's A.3, a section of its own; "
                             "--ablation and --factors: the doughnut task only)")
    parser.add_argument("--methods", nargs="+", default=None, choices=sorted({*DONUT_METHODS, *LENDING_METHODS}),
                        help="only these methods (default: all of the task)")
    parser.add_argument("--jobs", "--workers", dest="workers", metavar="N", type=int_at_least(1), default=os.cpu_count() or 1,
                        help="runs at a time on a local Ray or --local pool, each with one torch thread (default: one per "
                             "core; a cluster's --address runs as many as it has CPUs)")
    parser.add_argument("--learning-rate", type=number_in(0.0, strict=True), default=None,
                        help="for every method (default: the preset's, the paper's 1e-4)")
    parser.add_argument("--throughput-steps", type=int_at_least(1), default=5000)
    parser.add_argument("--quick", action="store_true",
                        help="tiny budget, to check the pipeline runs (records and PNGs under <results>/fairqcm/quick/, "
                             "a 'smoke run' section of its own in RESULTS.md)")
    parser.add_argument("--no-train", action="store_true",
                        help="only re-summarise the records in <results>/fairqcm and the archive")
    parser.add_argument("--ablation", action="store_true",
                        help="doughnuts only: the preset with sb3-fair 0.1.0's terminal horizon and/or default init put back "
                             "(default method DQN-Full), beside the main run's figures")
    parser.add_argument("--factors", action="store_true",
                        help="doughnuts only: why some seeds get stuck, one factor at a time (the three evaluations of the "
                             "preset's runs; the authors' target copies; another initial network), default method DQN-Full")
    add_runner_arguments(parser)
    args = parser.parse_args(argv)
    args.results, args.archive = results_root(args), archive_arg(args)
    if args.ablation and args.factors:
        parser.error("--ablation and --factors are two different runs: choose one")
    if (args.ablation or args.factors) and args.tasks and args.tasks != ["donut"]:
        parser.error("--tasks: --ablation and --factors run the doughnut task only")
    args.tasks = args.tasks or ["donut", "lending"]
    args.reference_episodes = REFERENCE_EPISODES
    args.task_episodes = {task: args.episodes for task in HORIZON}
    if args.quick:
        for key, value in QUICK.items():
            setattr(args, key, value)
        args.task_episodes = dict(QUICK_EPISODES)
    output = Output(args.out, RUNS_NAME)
    if args.ablation or args.factors:
        (ablation if args.ablation else factors)(args, output)
        return
    have = records(args)  # a smoke run's records are its own: it never shadows a real one
    jobs = []
    for task in args.tasks:
        methods = TASK_METHODS[task]
        for seed in range(args.seeds):
            for method in methods:
                if args.methods and method not in args.methods:
                    continue
                job = dict(task=task, method=method, seed=seed, episodes=args.task_episodes[task],
                           learning_rate=args.learning_rate, eval_every=args.eval_every, eval_episodes=args.eval_episodes)
                old = have.get(job_file(job))
                if old is not None and not args.quick and old.get("episodes") == job["episodes"] \
                        and old.get("eval_every") == job["eval_every"]:
                    continue  # already recorded (or archived) with the same settings
                jobs.append(job)
    # longest jobs first so that the two workers finish together
    jobs.sort(key=lambda j: (j["task"] != "donut", j["method"] != "FairQCM"))
    t0 = time.perf_counter()
    if not args.no_train:
        _run_jobs(jobs, args.workers, args)
        if any(task in SECTIONS[MAIN_SECTION] for task in args.tasks):  # the throughput belongs to the main section
            tp = throughput(args.throughput_steps)
            tp["wall_seconds"] = time.perf_counter() - t0
            path = Path(args.results) / bench(args) / "throughput.json"  # a summary, replaced by each call that times
            path.parent.mkdir(parents=True, exist_ok=True)
            path.with_suffix(".tmp").write_text(json.dumps(tp))
            path.with_suffix(".tmp").replace(path)
    have = records(args)
    for name, tasks in SECTIONS.items():
        if any(task in args.tasks for task in tasks):
            write_section(args, output, have, name, [task for task in args.tasks if task in tasks])


def write_section(args: argparse.Namespace, output: Output, have: dict[str, dict[str, Any]], name: str,
                  tasks: list[str]) -> None:
    """RESULTS.md's section ``name`` (one of :data:`SECTIONS`) for ``tasks``, from the records ``have``
    (:func:`records`); the main section also reports the throughput record, and the wall time of the call that
    wrote it."""
    lr = 1e-4 if args.learning_rate is None else args.learning_rate
    main = name == MAIN_SECTION
    tp = throughput_record(args) if main else {}
    cmd = "python benchmarks/fairqcm.py" + (" --quick" if args.quick else "") + (
        "" if main else " --tasks " + " ".join(tasks)) + (
        "" if args.quick or args.seeds == 5 else f" --seeds {args.seeds}") + (
        "" if args.quick or args.episodes == 1000 else f" --episodes {args.episodes}") + (
        "" if args.learning_rate is None else f" --learning-rate {args.learning_rate:g}")
    episodes = " / ".join(f"{args.task_episodes[t]} ({t})" for t in tasks) if args.quick else args.episodes
    section = [f"## {name}{', smoke run' if args.quick else ''}: `{cmd}`", "",
               f"Measured on this project's 2-core CPU machine; {args.seeds} seeds x {episodes} episodes per method, "
               f"the paper's hyperparameters (`FairDQN.from_preset`: learning rate {lr:g}, MSE loss, the authors' orthogonal "
               f"initialisation, the horizon as a time limit), greedy evaluation every {args.eval_every} training episodes on "
               f"{args.eval_episodes} fresh episodes" + (
                   f"; wall time {tp['wall_seconds'] / 60:.0f} min (the last run's; runs already on disk are kept)." if main
                   else "."), ""]  # only the main section keeps its last call's wall time (its throughput record)
    for task in tasks:
        results = [have[k] for k in sorted(have) if k.startswith(f"{task}_") and not have[k].get("ablation")]
        results = [r for r in results if r["task"] == task and r["episodes"] == args.task_episodes[task] and r["seed"] < args.seeds
                   and r.get("learning_rate") == lr and (not args.methods or r["method"] in args.methods)]
        authors = load_authors(task, args.eval_every)
        refs = references(task, args.reference_episodes)
        png = Path(args.results) / bench(args) / f"fairqcm_{task}.png" if args.quick else output.png(f"fairqcm_{task}.png")
        plot(task, results, refs, png, authors, args.eval_every)
        section += [f"### {TITLES[task]}", "", "Mean ± sd over seeds of each run's mean greedy score in the column's span.", "",
                    *summarise(task, results, refs, last_k=5), "",
                    *(["FairQCM against each baseline, seed by seed (seeds paired by number: the same env draws at the "
                       "start); mean difference ± sd, two-sided paired t-test and exact Wilcoxon signed-rank test:", "",
                       *table, ""] if (table := paired(results, "FairQCM", sorted({r["method"] for r in results} - {"FairQCM"})))
                      else []),
                    f"sb3-fair beside the authors' code (`{AUTHORS.name}`; p: two-sided Mann–Whitney U over seeds):", "",
                    *versus_authors(results, authors, args.eval_every), "",
                    *(["The paper's RNN baseline, run with the authors' code only (sb3-fair has no recurrent DQN; "
                       "`docs/reproductions.md` says what that code trains), against FairQCM (p: two-sided Mann–Whitney U "
                       "over seeds):", "", *table, ""]
                      if (table := versus_authors_only(results, authors, args.eval_every)) else []),
                    "The three evaluations each run records, and the stuck seeds (mean score over episodes 601–1000 below the "
                    f"random policy's {refs['random']:.1f}) under each (whole-curve mean ± sd; p: two-sided Mann–Whitney U):", "",
                    *protocols(results, authors, refs, args.eval_every, args.eval_episodes), "",
                    f"![{task}]({Path(os.path.relpath(png, output.root)).as_posix()})", ""]
    if main:
        section += ["### Throughput (doughnut env, one core, same settings: batch 64, buffer 6400, train every step)", "",
                    "| SB3 DQN | FairDQN(counterfactual=False) | ratio | FairDQN(counterfactual=True) | cost of 32 counterfactuals per env step |",
                    "|---|---|---|---|---|",
                    f"| {tp['dqn_steps_per_s']:.0f} steps/s | {tp['fairdqn_steps_per_s']:.0f} steps/s | {tp['ratio_fairdqn_vs_dqn']:.3f} "
                    f"| {tp['fairdqn_cf_steps_per_s']:.0f} steps/s | {tp['cf_cost_ms_per_step']:.2f} ms |", ""]
    output.write_section(f"{name}, smoke run" if args.quick else name, "\n".join(section))
    print("\n".join(section))


if __name__ == "__main__":
    main()
