"""F-PPO (Hu, Lear, Zhang 2024, *Striking a Balance in Fairness for Dynamic Systems Through Reinforcement
Learning*, arXiv:2401.06318) on its three case studies: Figs. 1, 3 and 4 again, with seeds.

For each case study (``--part lending | attention | epidemic``) and each method, PPO, A-PPO, F-PPO and
F-PPO-L (the ``<env id>@ppo | a_ppo | f_ppo | f_ppo_l`` variants of ``sb3_fair/hyperparams/fair_ppo.yml``,
which ``FairPPO.from_preset(PRESET[part], env, variant=...)`` reads: the authors' settings) train for
``--timesteps`` steps per seed through :func:`sb3_fair.experiment.train`, then run the paper's
evaluation protocol (lending 10 episodes of 10,000 steps, attention 10 of 1,000, epidemic 200 of 20;
sampled actions, no massaging, the same evaluation seeds for every method; F-PPO also with massaging
on, through ``MassagedPredictor``), as does the reference policy (equal opportunity, proportional
attention, Max degree). Each gap is reported twice (:func:`evaluate`): as the paper's figures
compute it, for the comparison with the values read off them, and as sb3-fair's envs report it
per episode. Training records each iteration's Δs (mean and std over the rollout), the share of
massaged actions (Fig. 2), the share of those whose applicant would have defaulted (lending) and the
share of the rollout's steps with Δs <= δ.

On attention the default methods add the paper's learned baseline, CPO (``cpo``: :class:`sb3_fair.CPO` with the
``<env id>@hu2024`` entry of ``sb3_fair/hyperparams/cpo.yml``, the authors' settings), trained and evaluated as the
PPO family. On lending the default methods add F-PPO with the authors' code's three choices (``f_ppo_authors``: ties
flip, training Δl ``counts_sinkhorn``, terminal horizon); ``--methods f_ppo_flip f_ppo_dl f_ppo_horizon``
change one of them each (:data:`AUTHORS_CHOICES`). Each F-PPO method's claims get a table of their own,
with paired tests (:func:`reproduction.paired_test`) over the seeds both methods finished, and a per-seed table
(:func:`per_seed_table`) lists the values they pair.

``--part speed``: FairPPO's steps/s against SB3's PPO with the same settings in one run (lending and
epidemic presets): without massaging (the regulariser on) and with massaging on from the first
iteration. ``--part measures``: what each selectable long-term measure of the envs reads along one
episode of the reference policy.

Every run (and each reference evaluation) is a trial of ``benchmarks/runner.py`` (its spec: part, method, seed,
timesteps, evaluation episodes, quick; :func:`run_trial`), scheduled on Ray (a local Ray by default, a cluster with
``--address``) or without it (``--local``), one CPU and one torch thread each; a finished run's record is written once
to ``<results>/fppo/<trial-id>.json`` (``--results``) and a trial with a record is not run again. Training is
resumable within a trial: each run saves its model and its partial record in ``<results>/fppo/work/`` after every
``--chunk`` steps and stops when ``--deadline-s`` has passed (the trial is then unfinished: no record); run the same
command again to go on (a resumed run starts a fresh training episode, its random streams seeded with the run's seed
plus its step count, so its record differs from an uninterrupted run's). ``--report`` writes the section of
``<out>/RESULTS.md`` and the PNG from the finished runs in ``<results>`` and those kept before the runner
(``benchmarks/archive/records.tar.xz``, ``--archive``), the unfinished ones listed (``--out``, default: the
repository's ``benchmarks/``; ``--date`` the date its heading gives, default today).

Budgets (:data:`BUDGETS`, the default ``--timesteps``): lending the paper's 700,000 steps; attention
200,000 (paper 2,000,000), about an hour for 3 seeds x 4 methods on 2 cores; epidemic 150,000
(paper 500,000), about 1.6 hours: in an hour's budget (~100,000 steps) training would end before
iteration 50 (102,400 steps), where the paper's epidemic massaging schedule starts, and F-PPO
would be F-PPO-L.

``--quick`` is a smoke run of the whole pipeline (train, evaluate, report, PNG) in well under a
minute: 1 seed, 512 steps per run in rollouts of 256 (one epoch each), 2 evaluation episodes of
lending 200 steps, attention 100, epidemic 20 (:data:`QUICK_HORIZON`); its records and PNG go to ``<results>/fppo/quick/`` and its section of
``<out>/RESULTS.md`` has a heading of its own ("F-PPO smoke run, <part>"), so that it never replaces
a real run's.

Usage::

    python benchmarks/fppo.py --part lending --seeds 5 --workers 2
    python benchmarks/fppo.py --part lending --seeds 2 --first-seed 3 --methods f_ppo_dl f_ppo_horizon
    python benchmarks/fppo.py --part epidemic --seeds 3 --report
    python benchmarks/fppo.py --part speed
    python benchmarks/fppo.py --part lending --quick --out /tmp/repro   # smoke run
    python benchmarks/fppo.py --part epidemic --quick --address auto    # on a running Ray cluster
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import time
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

import runner
from sb3_fair.experiment.config import int_at_least, number_in
from reproduction import (Output, add_runner_arguments, archive_arg, archived, check_configs, median_steps_per_s,
                          reproduce_parser, results_root)
from sb3_fair.ppo.presets import ENV_IDS, PAPER_TIMESTEPS

#: the benchmark's folder under ``<results>/`` (and its records' folder in the archive, ``out/fppo/``)
RUNS_NAME = "fppo"
#: the sidecar's fields a flat record takes back (:func:`records_on_disk`): the training time the tables report, and
#: the steps between checkpoints
TIMINGS = ("train_s", "chunk")
METHODS = ("ppo", "a_ppo", "f_ppo", "f_ppo_l")
#: lending only: F-PPO with the authors' code's choices, all three or one at a time: method -> (the ``fair_ppo.yml``
#: variant it starts from, what it changes in that entry)
AUTHORS_CHOICES: dict[str, tuple[str, dict[str, Any]]] = {
    "f_ppo_authors": ("f_ppo_authors", {}),  # ties flip, training Δl counts_sinkhorn, terminal horizon
    "f_ppo_flip": ("f_ppo", {"massaging_ties": "flip"}),
    "f_ppo_dl": ("f_ppo", {"env_kwargs": {"long_term": "counts_sinkhorn"}}),
    "f_ppo_horizon": ("f_ppo", {"env_kwargs": {"horizon_terminates": True}}),
}
AUTHORS_METHODS = tuple(AUTHORS_CHOICES)
#: attention only: the paper's learned baseline, CPO (sb3_fair.CPO), with the authors' settings (``cpo.yml``'s
#: ``<env id>@hu2024`` entry), and sb3-contrib's TRPO with the same settings and no constraint (what the constraint
#: changes)
CPO_METHODS = ("cpo", "trpo")
#: the methods of one case study only: ``(methods, case study, why)``
PART_ONLY = ((AUTHORS_METHODS, "lending", "the authors' lending code's choices"),
             (CPO_METHODS, "attention", "the paper's CPO baseline and its unconstrained TRPO control"))
#: every trained method, in the tables' order
TRAINED = (*METHODS, *AUTHORS_METHODS, *CPO_METHODS)
#: the methods that massage in training, so are also evaluated with massaging on
MASSAGING = ("f_ppo", *AUTHORS_METHODS)
LABELS = {"ppo": "PPO", "a_ppo": "A-PPO", "f_ppo": "F-PPO", "f_ppo_l": "F-PPO-L", "reference": "reference",
          "f_ppo_massaged": "F-PPO, massaged at evaluation", "f_ppo_authors": "F-PPO (authors' choices)",
          "f_ppo_flip": "F-PPO, ties flip only", "f_ppo_dl": "F-PPO, training Δl counts_sinkhorn only",
          "f_ppo_horizon": "F-PPO, terminal horizon only", "cpo": "CPO",
          "trpo": "TRPO (CPO's settings, no constraint)"}
LABELS.update({f"{m}_massaged": f"{LABELS[m]}, massaged at evaluation" for m in AUTHORS_METHODS})
REFERENCE = {"lending": "EO (equal opportunity)", "attention": "proportional heuristic", "epidemic": "Max (highest degree)"}
# evaluation protocol: (episodes, horizon)
PROTOCOL = {"lending": (10, 10_000), "attention": (10, 1_000), "epidemic": (200, 20)}
EVAL_SEED = 10_000
# training steps per run (module docstring): the paper's for lending, what fits the time budget elsewhere
#: each case study (``--part``) -> its FairPPO preset name
PRESET = {"lending": "delayed_impact_lending", "attention": "attention", "epidemic": "epidemic"}
BUDGETS = {"lending": PAPER_TIMESTEPS[PRESET["lending"]], "attention": 200_000, "epidemic": 150_000}
#: --quick: seeds, training steps, steps between checkpoints, evaluation episodes
QUICK = {"seeds": 1, "timesteps": 512, "chunk": 256, "eval_episodes": 2}
#: --quick: the evaluation episodes' length
QUICK_HORIZON = {"lending": 200, "attention": 100, "epidemic": 20}
#: --quick: hyper-parameters over the preset's (short rollouts, one epoch), so that a smoke run takes seconds
QUICK_OVERRIDES = {"n_steps": 256, "n_epochs": 1}
# Values read off the paper's figures (final time step; about ±2% of each axis).
PAPER = {
    "lending": {"short_term": {"PPO": "0.15-0.31", "A-PPO": "0-0.10", "F-PPO": "0.06-0.08", "reference": "0-0.07"},
                "long_term": {"PPO": 0.16, "A-PPO": 0.43, "F-PPO": 0.115, "reference": 0.26},
                "utility": {"PPO": 11745, "A-PPO": 11800, "F-PPO": 11630, "reference": 11660}},
    "attention": {"short_term": {"PPO": 0.077, "A-PPO": 0.053, "F-PPO": 0.067, "CPO": 0.077},
                  "long_term": {"PPO": "~1.3", "A-PPO": "~4.0", "F-PPO": "~1.3 (lowest)", "CPO": "~1.3"},
                  "utility": {"PPO": "2.2-2.7", "A-PPO": "1.5-1.9", "F-PPO": "2.2-2.55", "CPO": "1.6-1.85"}},
    "epidemic": {"short_term": {"PPO": 1.44, "A-PPO": 0.16, "F-PPO": 0.46, "reference": 1.82},
                 "long_term": {"PPO": 4.4, "A-PPO": 2.95, "F-PPO": 2.55, "reference": 6.9},
                 "utility": {"PPO": 0.22, "A-PPO": 0.155, "F-PPO": 0.19, "reference": 0.29}},
}
# table formats: (Δs, Δl, utility)
FORMATS = {"lending": ("{:.3f}", "{:.3f}", "{:.0f}"), "attention": ("{:.3f}", "{:.2f}", "{:.2f}"),
           "epidemic": ("{:.2f}", "{:.2f}", "{:.3f}")}
UTILITY = {"lending": "bank cash at the end (start 10,000)", "attention": "reward per step (mean over the episode)",
           "epidemic": "fraction not infected at the last step"}


def make_env(part: str, evaluation: bool = False, horizon: int | None = None) -> Any:
    """The case study's env: training's (its own horizon), or the evaluation protocol's (``horizon``, default
    :data:`PROTOCOL`'s); used for evaluation, the reference policies and the throughput timings."""
    from sb3_fair.envs import AttentionAllocationEnv, DelayedImpactLendingEnv, EpidemicControlEnv

    cls = {"lending": DelayedImpactLendingEnv, "attention": AttentionAllocationEnv, "epidemic": EpidemicControlEnv}[part]
    return cls(horizon=horizon or PROTOCOL[part][1]) if evaluation else cls()


def eval_horizon(job: dict[str, Any]) -> int:
    """The evaluation episodes' length of a job: the protocol's, or :data:`QUICK_HORIZON` in a smoke run."""
    return QUICK_HORIZON[job["part"]] if job.get("quick") else PROTOCOL[job["part"]][1]


def run_name(job: dict[str, Any]) -> str:
    """A run's name, ``<part>_<method>_<seed>_<steps>`` (the reference: no budget): its files' stem in the work folder
    and before the runner, and its trial id's readable prefix."""
    budget = "" if job["method"] == "reference" else f"_{job['timesteps']}"
    return f"{job['part']}_{job['method']}_{job['seed']}{budget}"


def paths(job: dict[str, Any], runs: str | Path) -> tuple[Path, Path]:
    """A run's model and partial record under the work folder ``runs`` (``<results>/fppo/work``): :func:`run_name`
    (``.zip``, ``.json``; the reference has no model), under ``quick/`` in a smoke run."""
    stem = Path(runs) / ("quick" if job.get("quick") else "") / run_name(job)
    return stem.with_suffix(".zip"), stem.with_suffix(".json")


def experiment_config(part: str, method: str, seed: int, n_timesteps: int, quick: bool = False) -> Any:
    """The :class:`~sb3_fair.experiment.ExperimentConfig` of one run: the ``<env id>@<method>`` entry of
    ``fair_ppo.yml`` (the keyword arguments ``FairPPO.from_preset(PRESET[part], env, variant=method)`` builds),
    no evaluation by :func:`~sb3_fair.experiment.train` (the paper's protocol runs afterwards: :func:`evaluate`),
    nothing saved by it (:func:`run_job` saves the model itself, under the runs' names)."""
    from sb3_fair.experiment import ExperimentConfig

    if method in CPO_METHODS:  # the authors' CPO settings; TRPO has no epochs
        config = ExperimentConfig.from_hyperparams("cpo", ENV_IDS[PRESET[part]], variant="hu2024",
                                                   overrides={"n_steps": QUICK_OVERRIDES["n_steps"]} if quick else None,
                                                   seed=seed, n_timesteps=n_timesteps, eval_episodes=0)
        if method == "trpo":  # the same settings without the constraint's
            data = {**config.to_dict(), "algo": "trpo", "variant": None}
            data["hyperparams"] = {k: v for k, v in data["hyperparams"].items() if not k.startswith("cost_")}
            config = ExperimentConfig.from_dict(data)
        return config
    variant, updates = AUTHORS_CHOICES.get(method, (method, {}))
    return ExperimentConfig.from_hyperparams("fair_ppo", ENV_IDS[PRESET[part]], variant=variant, updates=updates or None,
                                             overrides=QUICK_OVERRIDES if quick else None, seed=seed,
                                             n_timesteps=n_timesteps, eval_episodes=0)


def saved_timesteps(model_path: Path) -> int:
    """The step count of a saved model, read from its zip without loading it."""
    with zipfile.ZipFile(model_path) as z:
        return int(json.loads(z.read("data"))["num_timesteps"])


def fresh_streams(seed: int) -> Any:
    """A callback for a run resumed from its checkpoint: at the training start, the model's random streams
    (Python, NumPy, torch, the action space, the env) seeded with ``seed`` plus the step count, and the env
    reset with them, rather than step 0's streams again, which loading restores (SB3's ``load`` seeds with
    the run's seed). The long-term tracker of the regularised variants reads the new reset's Δs and Δl."""
    from stable_baselines3.common.callbacks import BaseCallback

    class FreshStreams(BaseCallback):
        def _on_training_start(self) -> None:
            model = self.model
            model.set_random_seed(seed + model.num_timesteps)
            model._last_obs = model.env.reset()  # the seeds take effect at the next reset
            model._last_episode_starts = np.ones((model.env.num_envs,), dtype=bool)
            tracker = getattr(model, "_long_term_tracker", None)
            if tracker is not None:  # it read the infos of the reset before this one
                tracker.restart()
                tracker._on_training_start()

        def _on_step(self) -> bool:
            return True

    return FreshStreams()


def massaged_defaulters(model: Any, infos: list[dict[str, Any]]) -> tuple[int, int]:
    """This step's massaged actions on lending applicants, and how many of them would have defaulted: the rows of
    ``model.massaged_rows`` whose info carries lending's ``would_repay`` (``(0, 0)`` on another env or without
    massaging)."""
    rows = [i for i in getattr(model, "massaged_rows", ()) if "would_repay" in infos[i]]
    return len(rows), sum(not infos[i]["would_repay"] for i in rows)


class RolloutSignals:
    """Each training iteration's Δs (mean, std over the rollout's steps), share of massaged actions, share of the
    massaged actions whose applicant would have defaulted (lending's ``info["would_repay"]``; ``None`` where none was
    massaged or the env has no such flag) and share of the rollout's steps with Δs <= δ (``None``: not defined)."""

    def __init__(self) -> None:
        from stable_baselines3.common.callbacks import BaseCallback

        from sb3_fair.common.protocol import get_fairness_signals

        record = self

        class Callback(BaseCallback):
            def _on_rollout_start(self) -> None:
                record.current, record.defaulters, record.massaged = [], 0, 0
                self._cpo_step()

            def _on_training_end(self) -> None:
                self._cpo_step()

            def _cpo_step(self) -> None:  # CPO: the step of the update that has just run (once per update)
                step = getattr(self.model, "last_step", None)
                if step is not None and step is not record.last_step:
                    record.cpo_steps.append([step.case, step.lam, step.nu, bool(self.model.last_step_accepted)])
                    record.last_step = step

            def _on_step(self) -> bool:
                infos = self.locals["infos"]
                record.current.extend(get_fairness_signals(infos)[0].tolist())
                massaged, defaulters = massaged_defaulters(self.model, infos)
                record.massaged += massaged
                record.defaulters += defaulters
                return True

            def _on_rollout_end(self) -> None:
                replaced, proposed = getattr(self.model, "_massaged", (0, 0))  # this rollout's counts
                delta = getattr(self.model, "delta", None)
                current = np.asarray(record.current)
                record.rows.append([float(current.mean()), float(current.std()),
                                    float(replaced / proposed) if proposed else 0.0,
                                    record.defaulters / record.massaged if record.massaged else None,
                                    float(np.mean(current <= delta)) if delta is not None else None])

        self.rows: list[list[float]] = []
        #: CPO's updates: ``[case, λ, ν, whether the line search kept a fraction of the step]`` each
        self.cpo_steps: list[list[Any]] = []
        self.last_step: Any = None
        self.current: list[float] = []
        self.defaulters, self.massaged = 0, 0
        self.callback = Callback()


def evaluate(part: str, model: Any, episodes: int | None = None, env: Any = None,
             horizon: int | None = None) -> dict[str, Any]:
    """The paper's protocol for one model (or a reference policy bound to ``env``): per-step curves and summaries.

    Two statistics per gap. sb3-fair's: the env's Δs and Δl (its default measures) per episode,
    averaged over episodes. The paper's, as its figures compute them: lending Δs
    = |mean over episodes of TPR_0 - mean of TPR_1| (windowed TPRs), Δl = W1 between the cloud of
    the 10 episodes' group-0 pmfs and that of their group-1 pmfs; attention Δs = Eq. 9's gap over
    the whole episode so far, Δl = max|Λ - mean Λ|; epidemic Δs = the env's (episode-cumulative,
    as theirs), Δl = W1 between the clouds of the 200 episodes' S/I/R count vectors of each community.
    ``horizon`` shortens the episodes of the env built here (smoke runs).
    """
    from sb3_fair import metrics
    from sb3_fair.common.evaluation import evaluate_long_term

    n, _horizon = PROTOCOL[part]
    env = env if env is not None else make_env(part, evaluation=True, horizon=horizon)
    keys = {"lending": ("credit_pmfs", "bank_cash", "tpr"), "attention": ("allocation",), "epidemic": ("health_states",)}[part]
    res = evaluate_long_term(model, env, n_episodes=episodes or n, seed=EVAL_SEED, info_keys=keys)
    steps = res["reward"].shape[1]
    if part == "lending":
        tpr = res["tpr"].mean(axis=0)  # (T, 2): mean over episodes first, then the gap
        paper_ds = np.abs(tpr[:, 0] - tpr[:, 1])
        pm = res["credit_pmfs"]
        paper_dl = np.array([metrics.point_cloud_wasserstein(pm[:, t, 0], pm[:, t, 1]) for t in range(steps)])
        utility = res["bank_cash"][:, -1]
    elif part == "attention":
        cumulative = np.cumsum(res["allocation"], axis=1)
        paper_ds = np.array([[metrics.allocation_share_gap(row) for row in ep] for ep in cumulative]).mean(axis=0)
        paper_dl = res["long_term"].mean(axis=0)  # the env's default Δl is the paper's evaluation measure
        utility = np.nanmean(res["reward"], axis=1)
    else:
        groups = env.unwrapped.communities
        states = res["health_states"].astype(np.int64)  # (E, T, 34)
        counts = np.stack([np.stack([(states[..., groups == g] == k).sum(-1) for k in range(3)], axis=-1)
                           for g in (0, 1)], axis=2)  # (E, T, 2 communities, 3 states)
        paper_ds = res["short_term"].mean(axis=0)
        paper_dl = np.array([metrics.point_cloud_wasserstein(counts[:, t, 0], counts[:, t, 1]) for t in range(steps)])
        utility = res["reward"][:, -1]
    step = max(1, steps // 1000)  # at most 1000 points per curve in the record
    curves = {"short_term": res["short_term"].mean(0), "long_term": res["long_term"].mean(0), "paper_short_term": paper_ds,
              "paper_long_term": paper_dl, "reward": res["reward"].mean(0)}
    if part == "lending":
        curves["bank_cash"] = res["bank_cash"].mean(0)
    return {"short_term_mean": res["short_term_mean"], "long_term_final": res["long_term_final"],
            "paper_short_term_final": float(paper_ds[-1]), "paper_short_term_mean": float(paper_ds.mean()),
            "paper_long_term_final": float(paper_dl[-1]), "utility": float(utility.mean()),
            "episode_reward": res["episode_reward"], "curves": {k: v[::step].tolist() for k, v in curves.items()},
            "curve_step": step}


def run_job(job: dict[str, Any], runs: str) -> dict[str, Any]:
    """Train (or go on training) one run until its budget or the deadline, then evaluate it once.

    Training goes through :func:`~sb3_fair.experiment.train` in chunks of ``job["chunk"]`` steps (rounded
    down to whole rollouts), the model and the record saved after each: the first chunk of this call is a
    ``train()`` of the run's config (from scratch, or ``resume=`` its checkpoint, with fresh random streams:
    :func:`fresh_streams`), and the further chunks go on with the same model and env,
    ``learn(chunk, reset_num_timesteps=False)``, as one uninterrupted run would.
    """
    import torch as th

    th.set_num_threads(1)
    from sb3_contrib import TRPO

    from sb3_fair import CPO, FairPPO
    from sb3_fair.experiment import train

    model_path, record_path = paths(job, runs)
    model_path.parent.mkdir(parents=True, exist_ok=True)
    record = json.loads(record_path.read_text()) if record_path.exists() else {**job, "steps": 0, "train_s": 0.0,
                                                                                "iterations": []}
    if record.get("timesteps") != job["timesteps"]:
        record.update(timesteps=job["timesteps"])
    if record["steps"] < job["timesteps"] and time.time() < job["deadline"]:
        config = experiment_config(job["part"], job["method"], job["seed"], job["timesteps"], quick=bool(job.get("quick")))
        n_steps = int(config.hyperparams["n_steps"])
        resume = model_path.exists()
        if resume:
            # the checkpoint is the truth (a crash may have come between saving it and writing the record)
            record["steps"] = saved_timesteps(model_path)
            del record["iterations"][record["steps"] // n_steps:]
            if "cpo_steps" in record:
                del record["cpo_steps"][record["steps"] // n_steps:]
        else:  # no checkpoint (e.g. the record came from another machine): the run starts again
            record.update(steps=0, train_s=0.0, iterations=[])
        signals = RolloutSignals()
        per_chunk = max(n_steps, job["chunk"] // n_steps * n_steps)
        model = None
        while (model.num_timesteps if model is not None else record["steps"]) < job["timesteps"] and time.time() < job["deadline"]:
            if model is None:
                done = record["steps"] if resume else 0
                chunk = config.replace(n_timesteps=done + min(per_chunk, job["timesteps"] - done))
                callbacks = [fresh_streams(job["seed"]), signals.callback] if resume else [signals.callback]
                result = train(chunk, callback=callbacks, resume=model_path if resume else None)
                model, seconds = result.model, result.train_time_s
            else:
                t0 = time.perf_counter()
                model.learn(min(per_chunk, job["timesteps"] - model.num_timesteps), callback=signals.callback,
                            reset_num_timesteps=False)
                seconds = time.perf_counter() - t0
            record["train_s"] += seconds
            record["iterations"].extend(signals.rows)
            signals.rows.clear()
            if signals.cpo_steps:
                record.setdefault("cpo_steps", []).extend(signals.cpo_steps)
                signals.cpo_steps.clear()
            record["steps"] = int(model.num_timesteps)
            record.pop("evaluation", None)  # of fewer steps
            record.pop("evaluation_massaged", None)
            model.save(model_path)
            record_path.write_text(json.dumps(record))
    massaged = job["method"] in MASSAGING  # also evaluated with massaging on
    if record["steps"] >= job["timesteps"] and ("evaluation" not in record or (massaged and "evaluation_massaged" not in record)):
        model = {"cpo": CPO, "trpo": TRPO}.get(job["method"], FairPPO).load(model_path, device="cpu")
        horizon = eval_horizon(job)
        if "evaluation" not in record:
            record["evaluation"] = evaluate(job["part"], model, job.get("eval_episodes"), horizon=horizon)
            record_path.write_text(json.dumps(record))
        if massaged and "evaluation_massaged" not in record:
            # the paper claims short-term fairness at deployment through massaging; the authors evaluate without it
            from sb3_fair.common.long_term.massaging import MassagedPredictor

            env = make_env(job["part"], evaluation=True, horizon=horizon)
            record["evaluation_massaged"] = evaluate(job["part"], MassagedPredictor(model, env), job.get("eval_episodes"),
                                                     env=env)
            record["evaluation_massaged"]["tau"] = model.current_massaging_tau()
            record_path.write_text(json.dumps(record))
    return record


def run_reference(job: dict[str, Any], runs: str) -> dict[str, Any]:
    """Evaluate the case study's reference policy (once: its record is kept)."""
    import torch as th

    th.set_num_threads(1)
    from sb3_fair.envs import EqualOpportunityPolicy, MaxDegreePolicy, ProportionalAllocationPolicy

    _, record_path = paths(job, runs)
    record_path.parent.mkdir(parents=True, exist_ok=True)
    if record_path.exists():
        return json.loads(record_path.read_text())
    env = make_env(job["part"], evaluation=True, horizon=eval_horizon(job))
    policy = {"lending": lambda: EqualOpportunityPolicy(env, seed=job["seed"]), "attention": lambda: ProportionalAllocationPolicy(env),
              "epidemic": lambda: MaxDegreePolicy(env)}[job["part"]]()
    record = {**job, "evaluation": evaluate(job["part"], policy, job.get("eval_episodes"), env=env)}
    record_path.write_text(json.dumps(record))
    return record


def bench(quick: bool) -> str:
    """The folder of the records under ``<results>``: ``fppo``, or ``fppo/quick`` for a smoke run."""
    return f"{RUNS_NAME}/quick" if quick else RUNS_NAME


def work_folder(results: str | Path) -> Path:
    """Where the runs keep their checkpoints and partial records: ``<results>/fppo/work``."""
    return Path(results) / RUNS_NAME / "work"


def flat_records(results: str | Path, quick: bool = False, archive: str | Path | None = None) -> dict[str, dict[str, Any]]:
    """Every run's record, flat (spec, result and the sidecar's :data:`TIMINGS` in one dict, as a record was before the
    runner), by :func:`run_name`: the archived ones (not for a smoke run), the unfinished runs' partial records in the
    work folder, then the runner's records in the order they finished, each taking the place of one of the same name
    before it (as a run trained again replaced its file)."""
    out: dict[str, dict[str, Any]] = {}
    if not quick:
        for name, record in archived(RUNS_NAME + "/", archive).items():
            out[Path(name).stem] = record
    for path in sorted((work_folder(results) / ("quick" if quick else "")).glob("*.json")):
        out[path.stem] = json.loads(path.read_text())
    for _, flat in runner.load_flat(results, bench(quick), TIMINGS):
        out[run_name(flat)] = flat
    return out


def records_on_disk(part: str, timesteps: int, results: str | Path, quick: bool = False,
                    archive: str | Path | None = None) -> list[dict[str, Any]]:
    """The records of every run of ``part`` at ``timesteps`` steps and of the part's reference (:func:`flat_records`:
    the runner's, the unfinished ones and the archived ones), ordered by method and seed."""
    records = flat_records(results, quick, archive).values()
    order = [*TRAINED, "reference"]
    return sorted((r for r in records if r.get("method") in order and r.get("part") == part
                   and (r["method"] == "reference" or r.get("timesteps") == timesteps)),
                  key=lambda r: (order.index(r["method"]), r["seed"]))


def run(job: dict[str, Any], runs: str) -> dict[str, Any]:
    """One job: a trained method's run or the reference policy's evaluation, with its files in the work folder
    ``runs``."""
    return run_reference(job, runs) if job["method"] == "reference" else run_job(job, runs)


def trial_spec(part: str, method: str, seed: int, timesteps: int, eval_episodes: int | None, quick: bool) -> dict[str, Any]:
    """A run's spec for the runner: what its record depends on (the reference: no budget)."""
    spec = {"part": part, "method": method, "seed": seed, "eval_episodes": eval_episodes, "quick": bool(quick)}
    return spec if method == "reference" else {**spec, "timesteps": timesteps}


def finished(record: dict[str, Any]) -> bool:
    """Whether a run's record is complete: evaluated (the massaging methods also with massaging on)."""
    return "evaluation" in record and (record["method"] not in MASSAGING or "evaluation_massaged" in record)


def run_trial(spec: dict[str, Any], work: str, chunk: int, deadline: float) -> tuple[dict[str, Any], dict[str, Any]]:
    """The runner's trial function: :func:`run` the run of ``spec`` with its checkpoints in ``work`` every ``chunk``
    steps until its budget or ``deadline`` (``time.time()``).

    :returns: ``(result, meta)``: what the record holds besides the spec (deterministic given ``spec`` for a run not
        resumed from a checkpoint), and the training's seconds and ``chunk`` (the sidecar's).
    :raises runner.Unfinished: the deadline came first (the checkpoint and partial record stay in ``work``).
    """
    record = run({**spec, "chunk": chunk, "deadline": deadline}, work)
    if not finished(record):
        raise runner.Unfinished(f"{record.get('steps', 0):,} of {spec['timesteps']:,} steps (its checkpoint is in {work})")
    result = {k: v for k, v in record.items() if k not in (*spec, "chunk", "deadline", "train_s")}
    return result, ({"train_s": record["train_s"], "chunk": chunk} if "train_s" in record else {})


# ------------------------------------------------------------------------------------------- report
def mean_sd(values: list[float], fmt: str) -> str:
    if not values:
        return "-"
    return fmt.format(np.mean(values)) + (f" ± {fmt.format(np.std(values))}" if len(values) > 1 else "")


def by_seed(runs: list[dict[str, Any]], value: Any) -> dict[int, float]:
    return {r["seed"]: float(value(r)) for r in runs}


def seed_values(by_method: dict[str, list[dict[str, Any]]]) -> dict[str, dict[str, dict[int, float]]]:
    """Each run's figures at the end of its evaluation, by quantity (``"long_term"``, ``"short_term"``, both the paper's
    statistic, and ``"utility"``), method and seed: what the claims and the per-seed table are read from."""
    keys = {"long_term": "paper_long_term_final", "short_term": "paper_short_term_final", "utility": "utility"}
    return {q: {m: by_seed(runs, lambda r, k=k: r["evaluation"][k]) for m, runs in by_method.items()} for q, k in keys.items()}


def per_seed_table(part: str, values: dict[str, dict[str, dict[int, float]]], training: dict[str, dict[int, float]]) -> list[str]:
    """Markdown rows: each quantity of :func:`seed_values` and the training Δs (second half), a row per method with a
    column per seed ("-": the run did not finish)."""
    fmt = FORMATS[part]
    quantities = (("Δl at the end, paper's statistic", values["long_term"], fmt[1]),
                  ("Δs at the end, paper's statistic", values["short_term"], fmt[0]),
                  (f"utility: {UTILITY[part]}", values["utility"], fmt[2]),
                  ("Δs during training, second half", training, "{:.3f}"))
    seeds = sorted({s for _, by_m, _ in quantities for m, v in by_m.items() if m != "reference" for s in v})
    if not seeds:  # only the reference finished
        return []
    lines = ["| quantity | method | " + " | ".join(f"seed {s}" for s in seeds) + " |", "|---|---|" + "---|" * len(seeds)]
    for name, by_m, f in quantities:
        for m, v in by_m.items():
            if v and m != "reference":  # the reference's seeds are evaluation seeds, not paired with training seeds
                lines.append(f"| {name} | {LABELS[m]} | " + " | ".join(f.format(v[s]) if s in v else "-" for s in seeds) + " |")
    return lines


def claims_table(part: str, values: dict[str, dict[str, dict[int, float]]], training: dict[str, dict[int, float]],
                 fppo: str = "f_ppo") -> list[str]:
    """The paper's headline claims for the F-PPO method ``fppo`` (``"f_ppo"``, or on lending one with the authors'
    choices), each checked seed by seed (training seeds paired by their number) with paired tests
    (:func:`reproduction.paired_test`), from ``values`` (:func:`seed_values`) and the training Δs."""
    from reproduction import paired_test

    final, short, utility = values["long_term"], values["short_term"], values["utility"]
    fmt = FORMATS[part]
    name, massaged = LABELS[fppo], f"{fppo}_massaged"
    trained = ("ppo", "a_ppo", fppo, "f_ppo_l")  # the four trained methods the paper's claim ranks

    def test(a: str, b: str, values: dict[str, dict[int, float]], f: str) -> str:
        return f"{LABELS[a]} − {LABELS[b]}: {paired_test(values.get(a, {}), values.get(b, {}), f)}"

    def cell(m: str, values: dict[str, dict[int, float]], f: str) -> str:
        return f"{LABELS[m]} {mean_sd(list(values.get(m, {}).values()), f)}"

    rows = []
    # only seeds on which all four methods finished are compared (no verdict from a partial set)
    complete = [s for s in final.get(fppo, {}) if all(s in final.get(m, {}) for m in trained)]
    wins = sum(final[fppo][s] <= min(final[m][s] for m in trained) for s in complete)
    outcome = f"lowest of the four trained methods in {wins} of {len(complete)} seeds on which all four finished"
    if final.get("reference") and final.get(fppo):
        ref = np.mean(list(final["reference"].values()))
        outcome += f"; below the reference's mean in {sum(v < ref for v in final[fppo].values())} of {len(final[fppo])}"
    if final.get("cpo") and final.get(fppo):  # attention: the paper ranks F-PPO against its CPO baseline too
        k, n = paired(final[fppo], final["cpo"], lambda a, b: a < b)
        outcome += f"; below CPO in {k} of {n} seeds"
    outcome += "; " + "; ".join(test(fppo, m, final, fmt[1]) for m in ("ppo", "a_ppo", "f_ppo_l", "cpo") if final.get(m))
    rows.append(f"| {name} has the lowest long-term gap (paper's statistic at the end) | "
                f"{'; '.join(cell(m, final, fmt[1]) for m in (*trained, 'cpo', 'reference') if final.get(m))} | {outcome} |")
    # the fair baselines: A-PPO, and lending's equal-opportunity policy (the other references are not fair policies)
    fair = [m for m in ("a_ppo", "reference") if short.get(m) and (m == "a_ppo" or part == "lending")]
    if fair:
        bound = max(np.mean(list(short[m].values())) for m in fair)
        near = {m: sum(v <= bound for v in short.get(m, {}).values()) for m in (fppo, massaged)}
        outcome = (f"at or below the larger fair baseline mean ({fmt[0].format(bound)}) in {near[fppo]} of "
                   f"{len(short.get(fppo, {}))} seeds without massaging, {near[massaged]} of "
                   f"{len(short.get(massaged, {}))} with it")
        if short.get("a_ppo"):
            outcome += "; " + test(fppo, "a_ppo", short, fmt[0])
    else:
        outcome = "no fair baseline finished"
    rows.append(f"| {name}'s short-term gap is near the fair baselines' ({', '.join(LABELS[m] for m in fair) or '-'}) | "
                f"{'; '.join(cell(m, short, fmt[0]) for m in ('ppo', 'a_ppo', fppo, massaged, 'cpo', 'reference') if short.get(m))} | "
                f"{outcome} |")
    # comparable: no more than 5% of PPO's gain below it (lending: the profit over the starting cash)
    base = 10_000 if part == "lending" else 0
    fair_u, ppo_u = utility.get(fppo, {}), utility.get("ppo", {})
    k, n = paired(fair_u, ppo_u, lambda a, b: a - base >= (b - base) - 0.05 * abs(b - base))
    rows.append(f"| {name}'s utility is comparable to PPO's{' (profit over the starting 10,000)' if base else ''} | "
                f"{cell('ppo', utility, fmt[2])}; {cell(fppo, utility, fmt[2])} | "
                f"{test(fppo, 'ppo', utility, fmt[2])}; at most 5% of PPO's {'profit' if base else 'utility'} below it in "
                f"{k} of {n} seeds |")
    if fppo == "f_ppo":  # a claim about A-PPO, once
        k, n = paired(final.get("a_ppo", {}), final.get("ppo", {}), lambda a, b: a > b)
        rows.append(f"| A-PPO worsens the long-term gap (above PPO's) | {cell('ppo', final, fmt[1])}; {cell('a_ppo', final, fmt[1])} | "
                    f"A-PPO above PPO in {k} of {n} seeds; {test('a_ppo', 'ppo', final, fmt[1])} |")
    k1, n1 = paired(training.get(fppo, {}), training.get("f_ppo_l", {}), lambda a, b: a < b)
    k2, n2 = paired(training.get(fppo, {}), training.get("ppo", {}), lambda a, b: a < b)
    rows.append(f"| Massaging keeps Δs low during training (Fig. 2a) | "
                f"{'; '.join(cell(m, training, fmt[0]) for m in trained if training.get(m))} (second half of training) | "
                f"{name} below F-PPO-L in {k1} of {n1} seeds, below PPO in {k2} of {n2}; "
                f"{test(fppo, 'f_ppo_l', training, fmt[0])} |")
    return rows


def cpo_steps_table(finished: list[dict[str, Any]]) -> list[str]:
    """Markdown lines: what CPO's updates were (the share of each :data:`sb3_fair.cpo.cpo.CASES`, the share the line
    search kept, the constraint's multiplier ν of the constrained ones), a row per CPO method with recorded updates
    (none: no lines)."""
    from sb3_fair.cpo.cpo import CASES

    rows = []
    for m in CPO_METHODS:
        runs = [r["cpo_steps"] for r in finished if r["method"] == m and r.get("cpo_steps")]
        if not runs:
            continue
        shares = {case: [np.mean([s[0] == case for s in steps]) for steps in runs] for case in CASES}
        nus = [float(np.median([s[2] for s in steps if s[0] == "constrained"])) for steps in runs
               if any(s[0] == "constrained" for s in steps)]
        kept = [float(np.mean([s[3] for s in steps])) for steps in runs if all(len(s) > 3 for s in steps)]
        rows.append(f"| {LABELS[m]} | {len(runs)} | {mean_sd([len(steps) for steps in runs], '{:.0f}')} | "
                    + " | ".join(mean_sd(shares[case], "{:.2f}") for case in CASES)
                    + f" | {mean_sd(kept, '{:.2f}')} | {mean_sd(nus, '{:.2f}')} |")
    if not rows:
        return []
    return ["", "CPO's updates (`sb3_fair.cpo.cpo_step`'s cases): the share of each kind of step, per run, the share "
            "whose line search kept a fraction of the step, and the median multiplier ν of the constrained steps of each "
            "run:", "",
            "| method | runs | updates | " + " | ".join(f"{case} share" for case in CASES)
            + " | kept by the line search | median ν, constrained |",
            "|---|---|---|" + "---|" * len(CASES) + "---|---|", *rows]


def constraint_effect(part: str, values: dict[str, dict[str, dict[int, float]]],
                      training: dict[str, dict[int, float]]) -> list[str]:
    """Markdown lines: CPO against TRPO with the same settings and no constraint, paired by seed (what the constraint
    changes), for each quantity of :func:`seed_values` and the training Δs; none unless both ran."""
    from reproduction import paired_test

    if not (values["short_term"].get("cpo") and values["short_term"].get("trpo")):
        return []
    fmt = FORMATS[part]
    rows = []
    for name, by_m, f in (("Δs at the end, paper's statistic", values["short_term"], fmt[0]),
                          ("Δs during training, second half", training, "{:.3f}"),
                          ("Δl at the end, paper's statistic", values["long_term"], fmt[1]),
                          (f"utility: {UTILITY[part]}", values["utility"], fmt[2])):
        cpo, free = by_m.get("cpo", {}), by_m.get("trpo", {})
        k, n = paired(cpo, free, lambda a, b: a < b)
        rows.append(f"| {name} | {mean_sd(list(cpo.values()), f)} | {mean_sd(list(free.values()), f)} | "
                    f"{paired_test(cpo, free, f)} | {k} of {n} |")
    return ["", "What CPO's constraint changes: CPO against TRPO with the same settings and no constraint, paired by "
            "seed (two-sided tests):", "", "| quantity | CPO | TRPO, no constraint | CPO − TRPO | CPO lower in |",
            "|---|---|---|---|---|", *rows]


def paired(a: dict[int, float], b: dict[int, float], holds: Any) -> tuple[int, int]:
    """How many of the seeds both have satisfy ``holds(a[seed], b[seed])``, and how many they have."""
    seeds = sorted(set(a) & set(b))
    return sum(bool(holds(a[s], b[s])) for s in seeds), len(seeds)


def report(part: str, records: list[dict[str, Any]], args: argparse.Namespace, output: Output) -> None:
    """The section ``F-PPO, <part>`` of ``<out>/RESULTS.md`` and ``<out>/fppo_<part>.png`` from the runs' records
    (a smoke run: the section ``F-PPO smoke run, <part>`` and the PNG under ``<out>/out/fppo/quick/``)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    finished = [r for r in records if "evaluation" in r]
    trained = [m for m in TRAINED if any(r["method"] == m for r in records)]
    by_method = {m: [r for r in finished if r["method"] == m] for m in (*trained, "reference")}
    # the massaging methods evaluated with massaging on (MassagedPredictor, τ of the iteration after training), a row each
    for m in MASSAGING:
        by_method[f"{m}_massaged"] = [{**r, "evaluation": r["evaluation_massaged"]} for r in by_method.get(m, [])
                                      if "evaluation_massaged" in r]
    fmt = FORMATS[part]
    paper_ds = {"lending": "\\|mean TPR₀ − mean TPR₁\\| (window 300)", "attention": "Eq. 9 gap over the episode so far",
                "epidemic": "Eq. 10 gap, episode-cumulative"}[part]
    paper_dl = {"lending": "W1 between the episodes' pmf clouds", "attention": "max\\|Λ − mean Λ\\|",
                "epidemic": "W1 between the episodes' S/I/R count clouds"}[part]
    ours_dl = {"lending": "W1 on the credit axis, windowed", "attention": "max\\|Λ − mean Λ\\|",
               "epidemic": "S/I/R fraction distance"}[part]
    n, horizon = PROTOCOL[part]
    quick = " --quick" if args.quick else ""
    date = args.date or time.strftime("%Y-%m-%d")
    if args.quick:  # a smoke run's own protocol
        n, horizon = args.eval_episodes, QUICK_HORIZON[part]
    title = "F-PPO smoke run" if args.quick else "F-PPO"
    lines = [f"## {title}, {part} (Hu et al. 2024, {'Fig. 1' if part == 'lending' else 'Fig. 3' if part == 'attention' else 'Fig. 4'})",
             "",
             f"`python benchmarks/fppo.py --part {part} --seeds {1 + max((r['seed'] for r in records), default=0)} "
             f"--timesteps {args.timesteps}{quick} --report`"
             f" (runs resumed across calls; {date}). FairPPO.from_preset(\"{PRESET[part]}\", variant=...)"
             + (" and CPO with cpo.yml's `@hu2024` entry (the authors' CPO settings; TRPO: the same without the constraint)"
               if "cpo" in trained else "") + ", "
             f"{args.timesteps:,} training steps per run (paper: {PAPER_TIMESTEPS[PRESET[part]]:,}), evaluated over {n} episodes of "
             f"{horizon} steps (seeds {EVAL_SEED}+), sampled actions, no massaging. Mean ± std over training seeds "
             f"(reference: over its own seeds); in brackets the paper's value, one seed, read off its figure. "
             f"\"Paper's statistic\" is computed as the paper's figure computes it; \"env\" is the env's own signal "
             f"per episode, averaged over episodes.", "",
             f"| method | runs | Δs at the end, paper's statistic: {paper_ds} | Δs env, mean over t | "
             f"Δl at the end, paper's statistic: {paper_dl} | Δl env at the end: {ours_dl} | "
             f"utility: {UTILITY[part]} | training steps/s |",
             "|---|---|---|---|---|---|---|---|"]
    for m, runs in by_method.items():
        if not runs:
            continue
        label = LABELS[m] if m != "reference" else REFERENCE[part]
        key = "reference" if m == "reference" else LABELS[m]  # the paper's values are PPO's, A-PPO's, F-PPO's, CPO's
        ev = [r["evaluation"] for r in runs]
        speed = [r["steps"] / r["train_s"] for r in runs if r.get("train_s")]
        paper = {k: PAPER[part][k].get(key, "-") for k in ("short_term", "long_term", "utility")}
        lines.append(f"| {label} | {len(runs)} | {mean_sd([e['paper_short_term_final'] for e in ev], fmt[0])} "
                     f"({paper['short_term']}) | {mean_sd([e['short_term_mean'] for e in ev], fmt[0])} | "
                     f"{mean_sd([e['paper_long_term_final'] for e in ev], fmt[1])} ({paper['long_term']}) | "
                     f"{mean_sd([e['long_term_final'] for e in ev], fmt[1])} | {mean_sd([e['utility'] for e in ev], fmt[2])} "
                     f"({paper['utility']}) | {mean_sd(speed, '{:.0f}') if speed else '-'} |")
    fig, axes = plt.subplots(1, 5, figsize=(25, 4))
    for m, runs in by_method.items():
        if not runs:
            continue
        label = LABELS[m] if m != "reference" else REFERENCE[part]
        keys = ("paper_short_term", "paper_long_term", "long_term", "bank_cash" if part == "lending" else "reward")
        for ax, key in zip(axes[:4], keys):
            curves = np.array([r["evaluation"]["curves"][key] for r in runs])
            x = np.arange(curves.shape[1]) * runs[0]["evaluation"]["curve_step"]
            mu, sd = curves.mean(0), curves.std(0)
            ax.plot(x, mu, label=label)
            ax.fill_between(x, mu - sd, mu + sd, alpha=0.2)
    # training-time Δs (Fig. 2a) of the finished runs (the same budget, so the same iterations)
    training_rows = []
    training: dict[str, dict[int, float]] = {}  # each run's mean Δs over the second half of its training
    for m in trained:
        runs = [r for r in finished if r["method"] == m and r.get("iterations")]
        if not runs:
            continue
        # columns: Δs mean, Δs std, massaged share, would-default share of the massaged, share within δ (records
        # before 2026-11-27 have the first three)
        it = [np.array([row + [None] * (5 - len(row)) for row in r["iterations"]], dtype=float) for r in runs]  # None: NaN
        k = min(len(a) for a in it)
        mu, within = np.mean([a[:k, 0] for a in it], axis=0), np.mean([a[:k, 1] for a in it], axis=0)
        axes[4].plot(np.arange(k), mu, label=LABELS[m])
        axes[4].fill_between(np.arange(k), mu - within, mu + within, alpha=0.2)
        late = [float(a[k // 2 : k, 0].mean()) for a in it]
        massaged = [float(a[k // 2 : k, 2].mean()) for a in it]
        # the would-default share over the second half's massaged iterations, weighted by what each massaged
        defaulters = [float(np.nansum(a[k // 2 : k, 2] * a[k // 2 : k, 3]) / a[k // 2 : k, 2].sum())
                      for a in it if a[k // 2 : k, 2].sum() > 0 and not np.all(np.isnan(a[k // 2 : k, 3]))]
        # Δs <= δ of the long-term term's methods (PPO's zero-weight term has another δ: not comparable)
        near = [float(np.nanmean(a[k // 2 : k, 4])) for a in it
                if m not in ("ppo", "a_ppo") and not np.all(np.isnan(a[k // 2 : k, 4]))]
        training_rows.append(f"| {LABELS[m]} | {len(it)} | {k} | {mean_sd(late, '{:.3f}')} | {mean_sd(massaged, '{:.3f}')} | "
                             f"{mean_sd(defaulters, '{:.3f}')} | {mean_sd(near, '{:.3f}')} |")
        training[m] = {r["seed"]: v for r, v in zip(runs, late)}
    titles = (f"Δs: {paper_ds}", f"Δl: {paper_dl}", f"Δl (env): {ours_dl}",
              "bank cash" if part == "lending" else "reward per step", "Δs during training, mean ± within-rollout std")
    for ax, panel in zip(axes, titles):  # not `title`: that names the section written below
        ax.set_title(panel.replace("\\", ""), fontsize=9)
        ax.set_xlabel("iteration" if panel.startswith("Δs during") else "t")
        ax.legend(fontsize=7)
    fig.tight_layout()
    png = (Path(args.results) / bench(True) / f"fppo_{part}.png") if args.quick else output.png(f"fppo_{part}.png")
    png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(png, dpi=90)
    plt.close(fig)
    if training_rows:
        lines += ["", "Δs during training (Fig. 2a; finished runs): the mean of the rollouts' mean Δs over "
                  "the second half of the iterations, the share of massaged actions over the same iterations, the share "
                  "of those massaged actions whose applicant would have defaulted (lending), and the share of the "
                  "rollouts' steps with Δs <= δ (the methods with the long-term term; \"-\": not recorded).", "",
                  "| method | runs | iterations | Δs, second half | massaged share, second half | of them would default | "
                  "steps with Δs <= δ |", "|---|---|---|---|---|---|---|",
                  *training_rows]
    lines += cpo_steps_table(finished)
    values = seed_values(by_method)  # what both the claims and the per-seed table read
    lines += constraint_effect(part, values, training)
    claims = [row for m in ("f_ppo", "f_ppo_authors") if by_method.get(m) for row in claims_table(part, values, training, m)]
    if claims:
        lines += ["", "The paper's headline claims, checked seed by seed (seeds paired by number; mean ± std over seeds; "
                  "differences with their paired tests, two-sided):", "", "| claim | values | outcome |", "|---|---|---|",
                  *claims]
    seed_rows = per_seed_table(part, values, training)
    if seed_rows:
        lines += ["", "Per seed (the values the claims pair; the paper's statistics as in the first table):", "", *seed_rows]
    lines += ["", f"![{part}]({Path(os.path.relpath(png, output.root)).as_posix() if args.quick else png.name})", ""]
    missing = [f"{LABELS[r['method']]} seed {r['seed']} ({r.get('steps', 0):,} steps)" for r in records if "evaluation" not in r]
    if missing:
        lines += [f"Not finished (left out of the table): {', '.join(missing)}.", ""]
    output.write_section(f"{title}, {part}", "\n".join(lines))
    print("\n".join(lines))


def speed(args: argparse.Namespace, output: Output) -> None:
    """FairPPO vs SB3 PPO steps/s with the same preset settings, interleaved repeats in one run."""
    import torch as th

    th.set_num_threads(1)
    from stable_baselines3 import PPO

    from sb3_fair import FairPPO
    from sb3_fair.ppo.presets import preset_kwargs

    lines = ["## F-PPO, speed (Hu et al. 2024)", "",
             f"`python benchmarks/fppo.py --part speed` ({args.date or time.strftime('%Y-%m-%d')}): median steps/s of "
             "3 interleaved repeats of two iterations each, one thread, same settings (the preset's); targets: FairPPO "
             "without massaging >= 0.95x PPO, with massaging >= 0.8x.", "",
             "| case study | PPO | FairPPO, regulariser on, no massaging | ratio | FairPPO, regulariser and massaging (τ 0.5 from "
             "iteration 0) | ratio |", "|---|---|---|---|---|---|"]
    for part in ("lending", "epidemic"):
        plain = preset_kwargs(PRESET[part], "ppo")
        for k in ("fairness", "fairness_coef"):
            plain.pop(k)
        makers = {"ppo": lambda: PPO("MlpPolicy", make_env(part), seed=0, **plain),
                  "f_ppo_l": lambda: FairPPO.from_preset(PRESET[part], make_env(part), variant="f_ppo_l", seed=0),
                  "f_ppo": lambda: FairPPO.from_preset(PRESET[part], make_env(part), variant="f_ppo", seed=0, massaging_tau=0.5)}
        steps = 2 * plain["n_steps"]
        sps = median_steps_per_s(makers, steps, repeats=1 if args.quick else 3)
        lines.append(f"| {part} | {sps['ppo']:.0f} | {sps['f_ppo_l']:.0f} | {sps['f_ppo_l'] / sps['ppo']:.2f}x | "
                     f"{sps['f_ppo']:.0f} | {sps['f_ppo'] / sps['ppo']:.2f}x |")
        print(lines[-1], flush=True)
    if not args.quick:
        output.write_section("F-PPO, speed", "\n".join(lines) + "\n")
    print("\n".join(lines))


def measure_table(name: str, options: tuple[str, ...], checkpoints: tuple[int, ...], make: Any, reference: Any) -> list[str]:
    """Markdown rows: Δl of each ``long_term`` option at reset and at ``checkpoints`` along the reference policy's episode."""
    from sb3_fair.common.protocol import LONG_TERM_FAIRNESS

    lines = [f"| {name} `long_term` | reset | " + " | ".join(f"t = {t}" for t in checkpoints) + " |",
             "|---|---|" + "---|" * len(checkpoints)]
    for measure in options:
        env = make(measure)
        obs, info = env.reset(seed=0)
        policy = reference(env)
        row = [info[LONG_TERM_FAIRNESS]]
        for t in range(1, checkpoints[-1] + 1):
            obs, _, _, _, info = env.step(policy.predict(obs)[0])
            if t in checkpoints:
                row.append(info[LONG_TERM_FAIRNESS])
        lines.append(f"| `{measure}` | " + " | ".join(f"{v:.3f}" for v in row) + " |")
    return lines


def measures(args: argparse.Namespace, output: Output) -> None:
    """What each selectable long-term measure reads: at reset (lending's initial pmfs, one cluster apart) and
    along one episode of the reference policy (the same seed for every measure, so the same trajectory)."""
    from sb3_fair.envs import EpidemicControlEnv, EqualOpportunityPolicy, MaxDegreePolicy
    from sb3_fair.envs.delayed_impact import LONG_TERM_MEASURES as LENDING
    from sb3_fair.envs.delayed_impact import DelayedImpactLendingEnv
    from sb3_fair.envs.epidemic import LONG_TERM_MEASURES as EPIDEMIC

    lines = ["## F-PPO, the long-term measures (Hu et al. 2024)", "",
             f"`python benchmarks/fppo.py --part measures` ({args.date or time.strftime('%Y-%m-%d')}). Δl as the env "
             "reports it with each `long_term` option: at reset, and after t steps of the reference policy (env seed 0, "
             "policy seed 0: the same trajectory for every option).", ""]
    lines += measure_table("lending", LENDING, (1, 300, 1000, 2000), lambda m: DelayedImpactLendingEnv(long_term=m),
                           lambda env: EqualOpportunityPolicy(env, seed=0))
    lines += [""] + measure_table("epidemic", EPIDEMIC, (1, 5, 10, 20), lambda m: EpidemicControlEnv(long_term=m),
                                  MaxDegreePolicy)
    text = "\n".join(lines) + "\n"
    if not args.quick:
        output.write_section("F-PPO, the long-term measures", text)
    print(text)


def method_seed(text: str) -> tuple[str, int]:
    """An argparse ``type``: ``"METHOD:SEED"`` (``"f_ppo_authors:3"``) as ``(method, seed)``."""
    method, _, seed = text.partition(":")
    choices = [*TRAINED, "reference"]
    if method not in choices or not seed.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not METHOD:SEED with METHOD one of {choices} and SEED >= 0")
    return method, int(seed)


def main(argv: list[str] | None = None) -> None:
    p = reproduce_parser("fppo", __doc__)
    p.add_argument("--part", choices=["lending", "attention", "epidemic", "speed", "measures"], required=True)
    p.add_argument("--seeds", type=int_at_least(1), default=3)
    p.add_argument("--timesteps", type=int_at_least(1), default=None, help="training steps per run (default: BUDGETS)")
    p.add_argument("--methods", nargs="+", default=None, choices=[*TRAINED, "reference"],
                   help="default: PPO, A-PPO, F-PPO, F-PPO-L and the reference, on lending F-PPO with the authors' "
                        "choices (f_ppo_authors; f_ppo_flip, f_ppo_dl and f_ppo_horizon change one of them, lending only), "
                        "on attention CPO and TRPO with its settings and no constraint (cpo, trpo, attention only)")
    p.add_argument("--first-seed", type=int_at_least(0), default=0, help="the seeds are first-seed .. first-seed + seeds - 1")
    p.add_argument("--runs", nargs="+", metavar="METHOD:SEED", type=method_seed, default=None,
                   help="these runs, in this order, instead of --methods x seeds (e.g. f_ppo_authors:1 ppo:3 reference:3)")
    p.add_argument("--jobs", "--workers", dest="workers", metavar="N", type=int_at_least(1), default=os.cpu_count() or 1,
                   help="runs at a time on a local Ray or --local pool, each with one torch thread (default: one per "
                        "core; a cluster's --address runs as many as it has CPUs)")
    p.add_argument("--chunk", type=int_at_least(1), default=50_000, help="steps between checkpoints")
    p.add_argument("--deadline-s", type=number_in(0.0, strict=True), default=float("inf"), help="stop training (after a chunk) after this many seconds")
    p.add_argument("--eval-episodes", type=int_at_least(1), default=None, help="override the protocol's episode count")
    p.add_argument("--report", action="store_true", help="write RESULTS.md and the PNG")
    p.add_argument("--report-only", action="store_true", help="no training, only the report of what is on disk")
    p.add_argument("--date", default=None, metavar="YYYY-MM-DD",
                   help="the date the section's heading gives (default: today; to regenerate a section as it was)")
    p.add_argument("--quick", action="store_true",
                   help="smoke run of the whole pipeline (reports too): 1 seed, 512 steps in rollouts of 256, 2 evaluation "
                        "episodes of a shortened horizon; runs and PNG under <results>/fppo/quick/")
    add_runner_arguments(p)
    args = p.parse_args(argv)
    args.results, args.archive = results_root(args), archive_arg(args)
    output = Output(args.out, RUNS_NAME)
    if args.part in ("speed", "measures"):
        (speed if args.part == "speed" else measures)(args, output)
        return
    if args.quick:
        args.seeds, args.timesteps, args.eval_episodes, args.chunk = (QUICK["seeds"], args.timesteps or QUICK["timesteps"],
                                                                      QUICK["eval_episodes"], QUICK["chunk"])
        args.report = True
    args.timesteps = args.timesteps or BUDGETS[args.part]
    if args.methods is None:
        args.methods = [*METHODS, *(("f_ppo_authors",) if args.part == "lending" else ()),
                        *(CPO_METHODS if args.part == "attention" else ()), "reference"]
    for flag, chosen in (("--methods", args.methods), ("--runs", [m for m, _ in args.runs or ()])):
        for methods, part, why in PART_ONLY:
            if args.part != part and set(chosen) & set(methods):
                p.error(f"{flag}: {' '.join(methods)} are {part}'s only ({why})")
    deadline = time.time() + args.deadline_s
    pairs = args.runs or [(m, s) for s in range(args.first_seed, args.first_seed + args.seeds) for m in args.methods]
    specs = [trial_spec(args.part, m, s, args.timesteps, args.eval_episodes, args.quick) for m, s in pairs]
    if not args.quick:  # a run the archive holds finished is not trained again (as its file was kept before the runner)
        kept = {name for name, r in flat_records(args.results, False, args.archive).items() if finished(r)}
        specs = [sp for sp in specs if run_name(sp) not in kept]
    if not args.report_only:  # every run's settings, before the first trains
        check_configs([experiment_config(sp["part"], sp["method"], sp["seed"], sp["timesteps"], quick=bool(sp["quick"]))
                       for sp in specs if sp["method"] != "reference"])  # the reference policy is scripted, not trained
        trial = functools.partial(run_trial, work=str(work_folder(args.results)), chunk=args.chunk, deadline=deadline)
        summary = runner.run(bench(args.quick), specs, trial, results=args.results, address=args.address,
                             local=args.local, jobs=args.workers, label=run_name)
        runner.check_summary(summary)
    if args.report or args.report_only:
        # every run of this part and budget on disk, whichever command ran it (seeds added later join the tables)
        report(args.part, records_on_disk(args.part, args.timesteps, args.results, args.quick, args.archive), args, output)
    else:
        for r in records_on_disk(args.part, args.timesteps, args.results, args.quick, args.archive):
            if (r["method"], r["seed"]) in set(pairs):
                print(r["method"], r["seed"], r.get("steps"), "evaluated" if "evaluation" in r else "")


if __name__ == "__main__":
    main()
