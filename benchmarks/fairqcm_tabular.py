"""Tabular FairQCM (Alamdari et al. 2024, Algorithm 1, A.2, Fig. 4): Q-learning with full, min and reset memory
against tabular FairQCM on the 3-customer, 12-step doughnut task.

Alamdari, Klassen, Creager, McIlraith (2024), *Remembering to Be Fair: Non-Markovian Fairness in Sequential
Decision Making*, ICML 2024, arXiv:2312.04772. Algorithm 1 is FairQCM in its tabular form: after each real
experience, Q-learning updates on the real transition and on the counterfactual ones of Eq. 2. A.2 runs it on the
doughnut task with n = 3 customers and T = 12 steps (``sb3_fair/DonutAllocationTabular-v0``) against Q-learning with
the full, min and reset memories, 10 runs of 100,000 time steps each, and reports (Fig. 4) the accumulated Nash
welfare at the end of the episode and the doughnuts not wasted: "FairQCM outperforms other approaches in terms of
both NSW scores, and number of samples needed to train".

SB3 has no tabular learner, so :class:`TabularQ` is written here, as A.2's technical details describe it:
γ = 0.99, learning rate α = 0.1, ε-greedy with an ε per (augmented) state that starts at 1.0 and is multiplied by
0.95 at every visit while it stays above 0.2, Q initialised to 0, greedy ties broken at random (as the authors'
``ql.py`` does). A time-limit end bootstraps, as sb3-fair's FairDQN does. The counterfactual transitions are not
re-derived here: each step's set ``M'_t`` is :func:`sb3_fair.common.fairqcm.memory.counterfactual_memories` (A.2:
"8 counterfactual experiences per time step", every ``m'`` with ``m_i < m'_i <= m_i + 2``, the library's default
offsets 1 and 2), drawn before the step, and their observations and rewards come from
:meth:`sb3_fair.FairDQN.counterfactual_transitions` of a FairDQN built on the same env (its network is never used),
the function FairDQN's own replay uses. Each update is applied in turn, the real one first (Algorithm 1).

After every training episode the greedy policy plays one fresh episode (the authors' protocol); its accumulated
reward (Σ_t log-Nash welfare, 0 for a wasted doughnut) and its doughnuts delivered are the run's curve. The same
episode seeds serve every method, so runs are paired by seed. References: a random policy and the greedy
"fewest so far among present customers" rule (:func:`sb3_fair.envs.greedy_allocation`), standing in for A.2's
oracle.

Usage::

    python benchmarks/fairqcm_tabular.py                 # 10 seeds x 100,000 steps per method (A.2)
    python benchmarks/fairqcm_tabular.py --quick         # smoke run

Every run is a trial of ``benchmarks/runner.py`` (its spec: method, seed, steps and the method's settings;
:func:`run_trial`), on Ray (a local Ray by default, ``--address`` for a cluster) or without it (``--local``). Writes each
run's record once to ``<results>/fairqcm_tabular/<trial-id>.json`` (``--results``; a later call trains only the missing
runs; a smoke run's under ``quick/``) and its section of ``<out>/RESULTS.md``, from those records and the ones kept
before the runner (``benchmarks/archive/records.tar.xz``, ``--archive``).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import runner
from reproduction import (DATA, Output, add_runner_arguments, archive_arg, paired_table, records_by_file, reproduce_parser,
                          results_root)
from sb3_fair.common.fairqcm.memory import counterfactual_memories
from sb3_fair.common.protocol import BENEFITS
from sb3_fair.experiment.config import int_at_least

#: the benchmark's folder under ``<results>/`` (and its records' folder in the archive, ``out/fairqcm_tabular/``)
RUNS_NAME = "fairqcm_tabular"
ENV_ID = "sb3_fair/DonutAllocationTabular-v0"
#: A.2's methods (the memory of the observation and whether counterfactual updates are made), then FairQCM with the
#: choices of the authors' tabular code (``ql.py``): its counterfactual set {m_i, m_i + 1}^n (offsets 0 and 1, where
#: A.2's text and their deep code have 1 and 2; m_t left out, as Algorithm 1 says), and, in the last row, all of
#: ``ql.py``'s choices (``authors_updates``): m_t itself in the set, after a wasted doughnut each counterfactual memory
#: (m_t too) moved to m~ + e_a with reward 0 instead of staying m~ (their deep code does this too), and a state's ε
#: decayed only when it explores
METHODS = {
    "Full": dict(memory="full", counterfactual=False),
    "Min": dict(memory="min", counterfactual=False),
    "Reset": dict(memory="reset", counterfactual=False),
    "FairQCM": dict(memory="full", counterfactual=True),
    "FairQCM, offsets 0 and 1": dict(memory="full", counterfactual=True, offsets=(0.0, 1.0)),
    "FairQCM, as the authors' ql.py": dict(memory="full", counterfactual=True, offsets=(0.0, 1.0), authors_updates=True),
}
#: the methods A.2 compares FairQCM with
BASELINES = ("Full", "Min", "Reset")
#: the authors' code's figures (``benchmarks/data/authors_code_fairqcm.json``, ``"tabular_donut"``): their method
#: names are A.2's, their FairQCM is the last row of :data:`METHODS`
AUTHORS_KEY = "tabular_donut"
AUTHORS_AS = {"Full": "Full", "Min": "Min", "Reset": "Reset", "FairQCM, as the authors' ql.py": "FairQCM"}
#: A.2's technical details
GAMMA, ALPHA, EPS_DECAY, EPS_MIN = 0.99, 0.1, 0.95, 0.2
#: spans of the curve, as fractions of the training episodes (fairqcm.py's windows of its 1000 episodes)
WINDOWS = ((0.0, 0.2), (0.2, 0.4), (0.4, 0.6), (0.6, 1.0))
#: seeds of the training and the evaluation episodes: run ``seed``'s episode ``e`` is reset with
#: ``TRAIN_SEED + seed * SEED_STRIDE + e`` (evaluation: ``EVAL_SEED + ...``), the same for every method
TRAIN_SEED, EVAL_SEED, SEED_STRIDE = 1_000_000, 50_000_000, 100_000
QUICK = dict(seeds=1, steps=600)
#: a record's curve: the greedy scores averaged over blocks of this many training episodes
CURVE_BLOCK = 100


class TabularQ:
    """Q-learning on a table keyed by the observation's bytes (the augmented state ⟨s, m⟩), with A.2's per-state
    ε and, with ``counterfactual=True``, Algorithm 1's counterfactual updates.

    :param env: the task (``gym.make(ENV_ID, memory=...)``).
    :param counterfactual: make FairQCM's counterfactual updates (needs ``memory="full"`` or ``"min"``).
    :param seed: seeds the exploration, the tie-breaks and the counterfactual draws.
    :param offsets: the counterfactual set's per-entry offsets, FairDQN's ``counterfactual_offsets`` (``None``: its
        default, A.2's 1 and 2).
    :param authors_updates: the authors' ``ql.py``'s other choices (:data:`METHODS`): m_t in the counterfactual set
        (on a delivered doughnut, the real transition again), after a wasted doughnut the counterfactual
        transitions ``(m~, a, m~ + e_a, 0)``, and ε decayed (while above 0.2) only on the visits that explore.
    """

    def __init__(self, env: gym.Env, counterfactual: bool, seed: int, offsets: tuple[float, ...] | None = None,
                 authors_updates: bool = False) -> None:
        self.env, self.counterfactual, self.authors_updates = env, counterfactual, authors_updates
        self.n_actions = int(env.action_space.n)
        self.rng = np.random.default_rng(seed)
        self.q: dict[bytes, np.ndarray] = {}
        self.eps: dict[bytes, float] = {}
        self.updates = 0
        self.fair_dqn: Any = None
        if counterfactual:
            from sb3_fair import FairDQN

            # the library's counterfactual set and transitions (Eq. 2) for this env; A.2's full set of 2^3 = 8 memories
            set_kwargs = {} if offsets is None else {"counterfactual_offsets": offsets}
            self.fair_dqn = FairDQN("MlpPolicy", env, counterfactual=True, max_counterfactuals=None, seed=seed, **set_kwargs)

    def values(self, obs: np.ndarray) -> np.ndarray:
        return self.q.setdefault(np.asarray(obs, dtype=np.float32).tobytes(), np.zeros(self.n_actions))

    def greedy(self, obs: np.ndarray) -> int:
        q = self.values(obs)
        return int(self.rng.choice(np.flatnonzero(q >= q.max() - 1e-9)))

    def act(self, obs: np.ndarray) -> int:
        """ε-greedy with the state's own ε, which decays at every visit (A.2; with ``authors_updates``, as ``ql.py``:
        only at the visits that explore, while it is above 0.2)."""
        key = np.asarray(obs, dtype=np.float32).tobytes()
        eps = self.eps.get(key, 1.0)
        explore = self.rng.random() < eps
        if not self.authors_updates:
            self.eps[key] = max(eps * EPS_DECAY, EPS_MIN)
        elif explore and eps > EPS_MIN:
            self.eps[key] = eps * EPS_DECAY
        return int(self.rng.integers(self.n_actions)) if explore else self.greedy(obs)

    def update(self, obs: np.ndarray, action: int, reward: float, next_obs: np.ndarray, terminal: bool) -> None:
        target = reward + (0.0 if terminal else GAMMA * float(self.values(next_obs).max()))
        q = self.values(obs)
        q[action] += ALPHA * (target - q[action])
        self.updates += 1

    def train_episode(self, seed: int) -> None:
        obs, _ = self.env.reset(seed=seed)
        done = False
        while not done:
            cf_memories = None
            if self.counterfactual:  # M'_t, chosen from m_t before the step (Thm. 5.7)
                memory = self.env.get_wrapper_attr("memory")
                model = self.fair_dqn
                cf_memories = counterfactual_memories(model.memory_spec, memory, model.counterfactual_offsets, None)
                if self.authors_updates:  # ql.py's set holds m_t itself
                    cf_memories = np.vstack([memory[None], cf_memories])
            action = self.act(obs)
            next_obs, reward, terminated, truncated, info = self.env.step(action)
            self.update(obs, action, float(reward), next_obs, terminated)
            if cf_memories is not None:
                for o, n, r in zip(*self.counterfactuals(obs, next_obs, info, action, cf_memories)):
                    self.update(o, action, float(r), n, terminated)
            obs, done = next_obs, terminated or truncated

    def counterfactuals(self, obs: np.ndarray, next_obs: np.ndarray, info: dict[str, Any], action: int,
                        memories: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The step's counterfactual transitions (:meth:`sb3_fair.FairDQN.counterfactual_transitions`, Eq. 2); with
        ``authors_updates`` and a wasted doughnut, those of a delivered one with reward 0, as the authors' code builds them."""
        if not len(memories):
            return np.zeros((0, *np.shape(obs))), np.zeros((0, *np.shape(obs))), np.zeros(0)
        if self.authors_updates and not np.any(info[BENEFITS]):
            delivered = np.eye(self.n_actions)[action]
            obs_cf, next_cf, rew_cf = self.fair_dqn.counterfactual_transitions(obs, next_obs, {**info, BENEFITS: delivered},
                                                                               memories)
            return obs_cf, next_cf, np.zeros_like(rew_cf)
        return self.fair_dqn.counterfactual_transitions(obs, next_obs, info, memories)

    def evaluate(self, seed: int) -> tuple[float, int]:
        """One greedy episode: its accumulated reward and its doughnuts delivered."""
        obs, _ = self.env.reset(seed=seed)
        done, total = False, 0.0
        while not done:
            obs, reward, terminated, truncated, _ = self.env.step(self.greedy(obs))
            total, done = total + float(reward), terminated or truncated
        return total, int(self.env.unwrapped.counts.sum())


def choices(method: str) -> dict[str, Any]:
    """:class:`TabularQ`'s keyword arguments of ``method``'s row of :data:`METHODS` (beside the memory and
    ``counterfactual``)."""
    return {k: v for k, v in METHODS[method].items() if k in ("offsets", "authors_updates")}


def horizon() -> int:
    return int(gym.make(ENV_ID).unwrapped.horizon)


def run_trial(job: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The runner's trial function: train one method for one seed (``job``, its spec: method, seed, steps, and the
    method's settings as ``"spec"``).

    :returns: ``(result, meta)``: the scores' spans and curve, the updates and states, and the training's seconds (the
        sidecar's).
    """
    import torch as th

    th.set_num_threads(1)
    import sb3_fair  # noqa: F401  (registers the ids)

    spec = METHODS[job["method"]]
    env = gym.make(ENV_ID, memory=spec["memory"])
    agent = TabularQ(env, spec["counterfactual"], job["seed"], **choices(job["method"]))
    episodes = job["steps"] // horizon()
    scores, delivered = [], []
    t0 = time.perf_counter()
    for e in range(episodes):
        agent.train_episode(TRAIN_SEED + job["seed"] * SEED_STRIDE + e)
        score, n = agent.evaluate(EVAL_SEED + job["seed"] * SEED_STRIDE + e)
        scores.append(score)
        delivered.append(n)
    result = {"episodes": episodes, **summary(scores, delivered), "updates": agent.updates, "states": len(agent.q)}
    seconds = time.perf_counter() - t0
    print(f"[done] {job['method']} seed={job['seed']} {seconds:.0f}s last span={result['spans'][-1]:.2f}", flush=True)
    return result, {"seconds": seconds}


def records(results: Path, quick: bool, archive: Path | None) -> dict[str, dict[str, Any]]:
    """Every record, flat (spec, result and the sidecar's ``seconds``, as before the runner), by its file name before
    the runner (:func:`job_file`): the archived ones (not for a smoke run), then the runner's in the order they
    finished, a later one of a name taking the place of an earlier."""
    folder = f"{RUNS_NAME}/quick" if quick else RUNS_NAME
    return records_by_file(RUNS_NAME, folder, results, quick, archive, job_file)


def summary(scores: list[float], delivered: list[int]) -> dict[str, list[float]]:
    """What a run's record keeps of its per-episode greedy scores and doughnuts delivered: their :func:`spans`, and the
    score's curve as means over blocks of :data:`CURVE_BLOCK` episodes."""
    n = len(scores) // CURVE_BLOCK
    return {"spans": spans(scores), "delivered_spans": spans(delivered),
            "curve": [float(np.mean(scores[CURVE_BLOCK * j:CURVE_BLOCK * (j + 1)])) for j in range(n)]}


def plain_spec(method: str) -> dict[str, Any]:
    """``METHODS[method]`` as its record stores it (JSON: lists for tuples), to tell a stale record from a current one."""
    return json.loads(json.dumps(METHODS[method]))


def on_disk(record: dict[str, Any] | None, method: str) -> bool:
    """Whether ``record`` is one of ``method`` with its current settings."""
    return record is not None and record.get("spec") == plain_spec(method)


def job_file(job: dict[str, Any]) -> str:
    slug = "".join(c if c.isalnum() else "_" for c in job["method"]).strip("_")
    return f"{slug}_{job['seed']}_{job['steps']}.json"


def references(episodes: int) -> dict[str, tuple[float, float]]:
    """The random policy's and the greedy rule's accumulated reward per episode and doughnuts delivered."""
    import sb3_fair  # noqa: F401
    from sb3_fair.envs import greedy_allocation

    rng = np.random.default_rng(0)
    env = gym.make(ENV_ID)
    rules = {"random policy": lambda base: int(rng.integers(env.action_space.n)),
             "greedy rule (fewest so far among present)": lambda base: greedy_allocation(base.present, base.counts)}
    refs = {}
    for name, rule in rules.items():
        totals, delivered = [], []
        for e in range(episodes):
            env.reset(seed=EVAL_SEED + e)
            done, total = False, 0.0
            while not done:
                _, reward, terminated, truncated, _ = env.step(rule(env.unwrapped))
                total, done = total + float(reward), terminated or truncated
            totals.append(total)
            delivered.append(int(env.unwrapped.counts.sum()))
        refs[name] = (float(np.mean(totals)), float(np.mean(delivered)))
    return refs


def spans(values: list[float]) -> list[float]:
    """The mean of ``values`` (one per training episode) over the whole run, then over each of :data:`WINDOWS`."""
    v, n = np.asarray(values, dtype=np.float64), len(values)
    return [float(v.mean()), *(float(v[int(a * n):int(b * n)].mean()) for a, b in WINDOWS)]


def window_names(episodes: int) -> list[str]:
    return ["whole run", *(f"episodes {int(a * episodes) + 1}–{int(b * episodes)}" for a, b in WINDOWS)]


def table(records: list[dict[str, Any]], refs: dict[str, tuple[float, float]]) -> list[str]:
    """Per method: mean ± sd over seeds of the greedy episode's reward in each span, and the doughnuts delivered."""
    names = window_names(records[0]["episodes"])
    lines = ["| method | seeds | " + " | ".join(names) + f" | doughnuts delivered ({names[-1]}, of {horizon()}) | "
             "Q-table states | seconds per run |", "|---|---|" + "---|" * len(names) + "---|---|---|"]
    for method in METHODS:
        runs = [r for r in records if r["method"] == method]
        if not runs:
            continue
        s = np.array([r["spans"] for r in runs])
        d = np.array([r["delivered_spans"][-1] for r in runs])
        lines.append(f"| {method} | {len(runs)} | " + " | ".join(f"{s[:, k].mean():.2f} ± {s[:, k].std():.2f}" for k in range(len(names)))
                     + f" | {d.mean():.2f} ± {d.std():.2f} | {np.mean([r['states'] for r in runs]):.0f} | "
                     f"{np.mean([r['seconds'] for r in runs]):.0f} |")
    for name, (total, delivered) in refs.items():
        lines.append(f"| {name} | — | {total:.2f} per episode |" + " — |" * len(WINDOWS) + f" {delivered:.2f} | — | — |")
    return lines


def paired(records: list[dict[str, Any]], a: str, others: tuple[str, ...]) -> list[str]:
    """``a`` minus each of ``others``, seed by seed, in each span: in how many seeds ``a`` is higher, and the tests."""
    scores = {(r["method"], r["seed"]): r["spans"] for r in records}
    return paired_table(scores, a, others, window_names(records[0]["episodes"]), "{:.2f}", seeds_column=False)


def load_authors() -> dict[str, Any]:
    """The authors' code's figures (:data:`AUTHORS_KEY` of ``authors_code_fairqcm.json``), or ``{}``."""
    path = DATA / "authors_code_fairqcm.json"
    return json.loads(path.read_text()).get(AUTHORS_KEY, {}) if path.exists() else {}


def versus_authors(records: list[dict[str, Any]], authors: dict[str, Any]) -> list[str]:
    """Each method beside the authors' code's run of it (:data:`AUTHORS_AS`), per span: mean ± sd over seeds, ours /
    theirs, two-sided Mann-Whitney U over seeds (different code: no pairing)."""
    from scipy.stats import mannwhitneyu

    runs = authors.get("runs", {})
    if not runs or not records or records[0]["episodes"] != authors.get("episodes"):
        return []
    names = window_names(records[0]["episodes"])
    lines = ["| method (ours / the authors' code) | seeds | " + " | ".join(f"{n}: ours / theirs (p)" for n in names)
             + " | doughnuts delivered, last span |", "|---|---|" + "---|" * (len(names) + 1)]
    for ours, theirs in AUTHORS_AS.items():
        mine = [r for r in records if r["method"] == ours]
        if not mine or theirs not in runs:
            continue
        a = np.array([r["spans"] for r in mine])
        b = np.array([row[:len(names)] for row in runs[theirs]])
        cells = [f"{a[:, k].mean():.2f} / {b[:, k].mean():.2f} ({mannwhitneyu(a[:, k], b[:, k]).pvalue:.2f})" for k in range(len(names))]
        d_ours = np.mean([r["delivered_spans"][-1] for r in mine])
        d_theirs = np.mean([row[len(names)] for row in runs[theirs]])
        lines.append(f"| {ours} / {theirs} | {len(a)} / {len(b)} | " + " | ".join(cells) + f" | {d_ours:.2f} / {d_theirs:.2f} |")
    return lines if len(lines) > 2 else []


def main(argv: list[str] | None = None) -> None:
    parser = reproduce_parser("fairqcm_tabular", __doc__)
    parser.add_argument("--seeds", type=int_at_least(1), default=10)
    parser.add_argument("--steps", type=int_at_least(12), default=100_000, help="training time steps per run (A.2: 100,000)")
    parser.add_argument("--jobs", type=int_at_least(1), default=os.cpu_count() or 1,
                        help="runs at a time on a local Ray or --local pool, one CPU each")
    parser.add_argument("--quick", action="store_true", help="a smoke run (records under <results>/fairqcm_tabular/quick/)")
    add_runner_arguments(parser)
    args = parser.parse_args(argv)
    if args.quick:
        for key, value in QUICK.items():
            setattr(args, key, value)
    results, archive = results_root(args), archive_arg(args)
    output = Output(args.out, RUNS_NAME)
    jobs = [dict(method=m, seed=s, steps=args.steps, spec=plain_spec(m)) for s in range(args.seeds) for m in METHODS]
    have = records(results, args.quick, archive)
    todo = [j for j in jobs if args.quick or not on_disk(have.get(job_file(j)), j["method"])]
    t0 = time.perf_counter()
    if todo:
        summary_ = runner.run(f"{RUNS_NAME}/quick" if args.quick else RUNS_NAME, todo, run_trial, results=results,
                              address=args.address, local=args.local, jobs=args.jobs,
                              label=lambda j: job_file(j).removesuffix(".json"))
        runner.check_summary(summary_)
        have = records(results, args.quick, archive)
    records_ = [have[job_file(j)] for j in jobs]
    refs = references(200)
    cmd = "python benchmarks/fairqcm_tabular.py" + (" --quick" if args.quick else "") + (
        "" if args.quick or (args.seeds, args.steps) == (10, 100_000) else f" --seeds {args.seeds} --steps {args.steps}")
    name = "Tabular FairQCM (Alamdari et al. 2024, A.2)" + (", smoke run" if args.quick else "")
    section = [f"## {name}: `{cmd}`", "",
               f"`{ENV_ID}` (3 customers, 12 steps), {args.seeds} seeds x {args.steps:,} time steps "
               f"({records_[0]['episodes']} episodes) per method; tabular Q-learning with A.2's settings (γ {GAMMA}, α {ALPHA}, "
               f"per-state ε from 1.0, x{EPS_DECAY} per visit, at least {EPS_MIN}); FairQCM adds Algorithm 1's updates on the "
               "counterfactual transitions (the library's, 8 per step at most). After every training episode one greedy "
               "episode on fresh seeds, the same for every method; its accumulated reward (Σ log-Nash welfare, 0 when a "
               f"doughnut is wasted) is the score. Mean ± sd over seeds; "
               + (f"wall time {(time.perf_counter() - t0) / 60:.0f} min (runs already on disk are kept)" if todo
                  else "every run was on disk") + ". References over 200 episodes.", "",
               *table(records_, refs), "",
               "FairQCM minus each method, seed by seed (the same episodes): mean difference ± sd, two-sided paired t-test and "
               "exact Wilcoxon signed-rank test:", "", *paired(records_, "FairQCM", tuple(m for m in METHODS if m != "FairQCM")), "",
               "FairQCM with the authors' code's choices minus A.2's baselines, as above:", "",
               *(line for variant in list(METHODS)[len(BASELINES) + 1:]
                 for line in [*paired(records_, variant, BASELINES), ""])]
    authors = load_authors()
    if table_ := versus_authors(records_, authors):
        section += [f"Beside the authors' code (`data/authors_code_fairqcm.json`, \"{AUTHORS_KEY}\": {authors.get('how', '')}); "
                    "p: two-sided Mann–Whitney U over seeds:", "", *table_, ""]
    output.write_section(name, "\n".join(section))
    print("\n".join(section))


if __name__ == "__main__":
    main()
