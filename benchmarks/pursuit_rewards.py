"""Mutual or individual reward: does coordination need the shared reward? (Grupen et al. 2022, §5.1, Fig. 2.)

Grupen, Selman, Lee (2022), *Cooperative Multi-Agent Fairness and Equivariant Policies*, AAAI 2022,
arXiv:2106.05727, §5.1: pursuers trained with the mutual reward (each gets the team's reward) keep capturing as
their speed falls below the evader's; pursuers trained with individual rewards (only the capturer is paid) fall off
from |v_p| = 1.0. The paper trains one DDPG per pursuer.

sb3-fair's :class:`~sb3_fair.envs.PursuitEvasionEnv` is one joint env with one team reward. Here each pursuer is an
agent of a PettingZoo game (:class:`PursuerTeam`): it sees its own egocentric view (the env's relative observation
block) and, by default, a one-hot of its index, so that one network shared by the pursuers (SB3's TD3 through
:func:`sb3_fair.wrappers.make_multiagent_vec_env`) can still give each pursuer its own behaviour, as separate networks
would; ``reward="mutual"`` pays every pursuer the team reward (-0.1 per step, +50 on a capture), ``"individual"``
pays the +50 only to the capturing pursuer(s). Trained with FairTD3's tuned pursuit entry (4 x 4 torus, 200-step
episodes, speed curriculum 2 -> 1, lr 1e-3, batch 256, Gaussian noise 0.2; ``--size`` changes the torus), for as
many env steps as the entry (each env step is one transition per pursuer), then played greedily by
:class:`TeamPolicy` on the joint env at each pursuer speed (capture success and I(R;Z),
:func:`sb3_fair.common.evaluation.evaluate_team_fairness`), and the two rewards are compared seed by seed.

``--learners separate`` trains one TD3 per pursuer instead, as the paper does (each on its own view, no index): the
pursuers' learners run in threads and the game advances when all of them have acted (:class:`Lockstep`), so each
learner is SB3's own ``learn`` loop on a single-agent env (:class:`Seat`) and makes one update per env step.

Usage::

    python benchmarks/pursuit_rewards.py --seeds 10              # both rewards, 4 x 4 torus
    python benchmarks/pursuit_rewards.py --seeds 10 --size 2     # the 2 x 2 torus, where a scripted team captures at |v_p| < 1
    python benchmarks/pursuit_rewards.py --seeds 10 --size 2 --learners separate   # one TD3 per pursuer, as the paper
    python benchmarks/pursuit_rewards.py --quick                 # smoke run

Every run is a trial of ``benchmarks/runner.py`` (its spec: reward, seed, size, env steps, evaluation episodes and
speeds, learners; :func:`run_trial`), on Ray (a local Ray by default, ``--address`` for a cluster) or without it
(``--local``). Writes each run's record once to ``<results>/pursuit_rewards/<trial-id>.json`` (``--results``; a later
call trains only the missing runs; a smoke run's under ``quick/``) and its section of ``<out>/RESULTS.md``, from those
records and the ones kept before the runner (``benchmarks/archive/records.tar.xz``, ``--archive``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from fair_er import evaluate_speeds
from gymnasium import spaces
from pettingzoo import ParallelEnv
from reproduction import (Output, add_runner_arguments, archive_arg, paired_test, records_by_file,
                          reproduce_parser, results_root)

import runner
from sb3_fair.experiment.config import int_at_least, number_in

#: the benchmark's folder under ``<results>/`` (and its records' folder in the archive, ``out/pursuit_rewards/``)
RUNS_NAME = "pursuit_rewards"

REWARDS = ("mutual", "individual")
#: one network shared by the pursuers (with their one-hot index), or one learner per pursuer (the paper's)
LEARNERS = ("shared", "separate")
SPEEDS = (2.0, 1.5, 1.2, 1.0, 0.8, 0.6)
#: FairTD3's tuned pursuit entry (``sb3_fair/hyperparams/fair_td3.yml``), Fair-ER off
ENTRY = dict(learning_rate=1e-3, batch_size=256, buffer_size=200_000, learning_starts=1000, gamma=0.99, tau=0.005,
             policy_kwargs={"net_arch": [128, 128]})
ENV_STEPS, MAX_STEPS, CURRICULUM, NOISE = 50_000, 200, (2.0, 1.0), 0.2
QUICK = dict(env_steps=600, speeds=(2.0, 0.8), episodes=2)


class PursuerTeam(ParallelEnv):
    """The pursuers of a :class:`~sb3_fair.envs.PursuitEvasionEnv` as agents of a PettingZoo parallel game.

    Agent ``pursuer_i`` observes block i of the env's relative observation (its displacement to the evader, then to
    the other pursuers, nearest first), followed by a one-hot of i when ``agent_id``; it acts with its own 2-D
    heading. Reward: ``"mutual"`` gives every pursuer the env's team reward; ``"individual"`` gives each -0.1 per
    step and the +50 of a capture only to a pursuer that captures (the env's ``info["benefits"]``). Setting
    ``pursuer_speed`` (:class:`~sb3_fair.envs.SpeedCurriculum` through ``set_wrapper_attr``) reaches the env.

    :param reward: ``"mutual"`` or ``"individual"``.
    :param agent_id: append the pursuer's one-hot index to its observation.
    :param env_kwargs: for :class:`~sb3_fair.envs.PursuitEvasionEnv` (relative observations only).
    """

    metadata: ClassVar[dict[str, Any]] = {"name": "pursuer_team_v0", "is_parallelizable": True}

    def __init__(self, reward: str = "mutual", agent_id: bool = True, **env_kwargs: Any) -> None:
        from sb3_fair.envs import PursuitEvasionEnv

        if reward not in REWARDS:
            raise ValueError(f"reward must be one of {REWARDS}, got {reward!r}")
        if env_kwargs.get("observation", "relative") != "relative":
            raise ValueError(f"env_kwargs: PursuerTeam needs observation='relative', got {env_kwargs['observation']!r}")
        self.env = PursuitEvasionEnv(**env_kwargs)
        self.reward, self.agent_id = reward, bool(agent_id)
        self.render_mode = None
        self.n = self.env.n
        self.possible_agents = [f"pursuer_{i}" for i in range(self.n)]
        self.agents: list[str] = []
        width = 2 * self.n + (self.n if self.agent_id else 0)
        self._obs_space = spaces.Box(-1.0, 1.0, (width,), np.float32)
        self._act_space = spaces.Box(-1.0, 1.0, (2,), np.float32)

    def observation_space(self, agent: str) -> spaces.Box:
        return self._obs_space

    def action_space(self, agent: str) -> spaces.Box:
        return self._act_space

    def set_wrapper_attr(self, name: str, value: Any) -> None:
        """Set an attribute of the pursuit env (the speed curriculum's hook)."""
        setattr(self.env, name, value)

    def _views(self, joint: np.ndarray) -> dict[str, np.ndarray]:
        return dict(zip(self.possible_agents, views(joint, self.n, self.agent_id)))

    def reset(self, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        joint, _ = self.env.reset(seed=seed, options=options)
        self.agents = list(self.possible_agents)
        return self._views(joint), {a: {} for a in self.agents}

    def step(self, actions: dict[str, np.ndarray]) -> tuple[dict, dict, dict, dict, dict]:
        joint_action = np.concatenate([np.asarray(actions[a], dtype=np.float32).ravel() for a in self.possible_agents])
        joint, team, terminated, truncated, info = self.env.step(joint_action)
        credit = np.asarray(info["benefits"], dtype=np.float64)
        paid = np.full(self.n, team) if self.reward == "mutual" else -0.1 + 50.0 * credit
        agents = self.possible_agents
        out = (self._views(joint), {a: float(paid[i]) for i, a in enumerate(agents)},
               {a: bool(terminated) for a in agents}, {a: bool(truncated) for a in agents},
               {a: {"captured": bool(info["captured"]), "capturer": bool(credit[i])} for i, a in enumerate(agents)})
        if terminated or truncated:
            self.agents = []
        return out


def views(joint: np.ndarray, n: int, agent_id: bool) -> np.ndarray:
    """Each pursuer's observation (``(n, width)``) from the joint relative observation: its block, then its one-hot."""
    blocks = np.asarray(joint, dtype=np.float32).reshape(n, 2 * n)
    return np.concatenate([blocks, np.eye(n, dtype=np.float32)], axis=1) if agent_id else blocks


class TeamPolicy:
    """Models trained on :class:`PursuerTeam` played as one joint policy of :class:`~sb3_fair.envs.PursuitEvasionEnv`:
    pursuer i's view goes through ``models[i]`` (one model per pursuer) or through the one shared model, and the
    headings are concatenated in pursuer order. ``predict`` follows SB3's signature, so
    :func:`~sb3_fair.common.evaluation.evaluate_team_fairness` plays it.

    :param models: one SB3 model shared by the pursuers, or a sequence of one model per pursuer.
    :param n: the number of pursuers.
    :param agent_id: whether the models saw the pursuer's one-hot index.
    """

    def __init__(self, models: Any, n: int, agent_id: bool = True) -> None:
        self.shared = not isinstance(models, Sequence)
        self.models = [models] * n if self.shared else list(models)
        if len(self.models) != n:
            raise ValueError(f"models: one shared model or one per pursuer ({n}), got {len(self.models)}")
        self.n, self.agent_id = n, agent_id

    def _joint(self, observation: np.ndarray, deterministic: bool) -> np.ndarray:
        v = views(observation, self.n, self.agent_id)
        if self.shared:  # one batched call
            return self.models[0].predict(v, deterministic=deterministic)[0].ravel()
        return np.concatenate([m.predict(v[i], deterministic=deterministic)[0].ravel() for i, m in enumerate(self.models)])

    def predict(self, observation: np.ndarray, state: Any = None, episode_start: Any = None,
                deterministic: bool = True) -> tuple[np.ndarray, None]:
        obs = np.asarray(observation)
        actions = [self._joint(o, deterministic) for o in obs.reshape(-1, obs.shape[-1])]
        return (actions[0] if obs.ndim == 1 else np.stack(actions)), None


class Lockstep:
    """A :class:`PursuerTeam` played by one single-agent learner per pursuer, each through its :class:`Seat`: a
    seat's ``reset`` or ``step`` waits until every seat has called it (a :class:`threading.Barrier`), then the game
    resets or steps once with every pursuer's action, and each seat returns its own share. The learners run in
    threads; one that fails breaks the barrier, so the others stop too.

    :param game: the game; its episodes end for every pursuer at once.
    """

    def __init__(self, game: PursuerTeam) -> None:
        self.game = game
        self.n = len(game.possible_agents)
        self.barrier = threading.Barrier(self.n, action=self._advance, timeout=600)
        self.calls: list[str | None] = [None] * self.n
        self.actions: list[np.ndarray | None] = [None] * self.n
        self.reset_args: tuple[int | None, dict | None] = (None, None)
        self.result: tuple = ()

    def _advance(self) -> None:  # runs once per round, in the last seat to arrive
        if len(set(self.calls)) != 1:
            raise RuntimeError(f"the seats are out of step: {self.calls}")
        if self.calls[0] == "reset":
            self.result = self.game.reset(*self.reset_args)
        else:
            self.result = self.game.step(dict(zip(self.game.possible_agents, self.actions)))

    def play(self, index: int, call: str, action: np.ndarray | None = None) -> tuple:
        """Seat ``index``'s share of the next ``call`` (``"reset"`` or ``"step"``) of the game."""
        self.calls[index], self.actions[index] = call, action
        self.barrier.wait()
        agent = self.game.possible_agents[index]
        return tuple(part[agent] for part in self.result)


class Seat(gym.Env):
    """Pursuer ``index`` of a :class:`Lockstep` game as a single-agent Gymnasium env (its view, its action, its
    reward). Setting ``pursuer_speed`` (the speed curriculum) sets it on the game.

    :param lockstep: the shared game.
    :param index: the pursuer.
    """

    def __init__(self, lockstep: Lockstep, index: int) -> None:
        self.lockstep, self.index = lockstep, index
        agent = lockstep.game.possible_agents[index]
        self.observation_space = lockstep.game.observation_space(agent)
        self.action_space = lockstep.game.action_space(agent)

    @property
    def pursuer_speed(self) -> float:
        return self.lockstep.game.env.pursuer_speed

    @pursuer_speed.setter
    def pursuer_speed(self, value: float) -> None:
        self.lockstep.game.env.pursuer_speed = value

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        if self.index == 0:  # the game is seeded by pursuer 0's learner
            self.lockstep.reset_args = (seed, options)
        return self.lockstep.play(self.index, "reset")

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict]:
        return self.lockstep.play(self.index, "step", np.asarray(action, dtype=np.float32))


def job_file(job: dict[str, Any]) -> str:
    separate = "_separate" if job.get("learners", "shared") == "separate" else ""
    return f"{job['reward']}{separate}_size{job['size']:g}_{job['seed']}.json"


def train_separate(job: dict[str, Any]) -> list[Any]:
    """One TD3 per pursuer on its :class:`Seat` of a :class:`Lockstep` game, each for ``env_steps`` steps, side by
    side in threads; pursuer 0's learner drives the speed curriculum and seeds the game."""
    from stable_baselines3 import TD3
    from stable_baselines3.common.noise import NormalActionNoise

    from sb3_fair.envs.pursuit import SpeedCurriculum

    lockstep = Lockstep(PursuerTeam(job["reward"], agent_id=False, max_steps=MAX_STEPS, size=job["size"]))
    models = [TD3("MlpPolicy", Seat(lockstep, i), seed=job["seed"] * lockstep.n + i, verbose=0,
                  action_noise=NormalActionNoise(np.zeros(2), NOISE * np.ones(2)), **ENTRY) for i in range(lockstep.n)]
    errors: list[BaseException] = []

    def learn(i: int) -> None:
        try:
            models[i].learn(job["env_steps"], callback=SpeedCurriculum(*CURRICULUM) if i == 0 else None)
        except BaseException as err:  # noqa: BLE001 - reported below, after the other threads stop
            errors.append(err)
            lockstep.barrier.abort()

    threads = [threading.Thread(target=learn, args=(i,)) for i in range(lockstep.n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    first = [e for e in errors if not isinstance(e, threading.BrokenBarrierError)] or errors
    if first:
        raise RuntimeError("a pursuer's learner failed") from first[0]
    return models


def run_trial(job: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The runner's trial function: train one run (``job``, its spec; SB3's TD3: one network shared by the pursuers,
    or one per pursuer), evaluate it at each speed.

    :returns: ``(result, meta)``: the scores at each speed, and the training's seconds (the sidecar's).
    """
    import torch
    from stable_baselines3 import TD3
    from stable_baselines3.common.noise import NormalActionNoise

    from sb3_fair.envs.pursuit import SpeedCurriculum
    from sb3_fair.wrappers import make_multiagent_vec_env

    torch.set_num_threads(1)
    t0 = time.perf_counter()
    if job.get("learners", "shared") == "separate":
        models = train_separate(job)
        policy = TeamPolicy(models, len(models), agent_id=False)
    else:
        game = PursuerTeam(job["reward"], max_steps=MAX_STEPS, size=job["size"])
        venv = make_multiagent_vec_env(game)
        model = TD3("MlpPolicy", venv, seed=job["seed"], verbose=0,
                    action_noise=NormalActionNoise(np.zeros(2), NOISE * np.ones(2)), **ENTRY)
        model.learn(job["env_steps"] * game.n, callback=SpeedCurriculum(*CURRICULUM))
        policy = TeamPolicy(model, game.n)
    seconds = time.perf_counter() - t0
    scores = evaluate_speeds(policy, MAX_STEPS, job["episodes"], 10_000 + job["seed"], tuple(job["speeds"]), job["size"])
    print(f"[done] {job['reward']} ({job.get('learners', 'shared')}) size {job['size']:g} seed {job['seed']}: {seconds:.0f} s",
          flush=True)
    return {"eval": scores}, {"seconds": seconds}


def records(results: Path, quick: bool, archive: Path | None) -> dict[str, dict[str, Any]]:
    """Every record, flat (spec, result and the sidecar's ``seconds``, as before the runner), by its file name before
    the runner (:func:`job_file`): the archived ones (not for a smoke run), then the runner's in the order they
    finished, a later one of a name taking the place of an earlier."""
    folder = f"{RUNS_NAME}/quick" if quick else RUNS_NAME
    return records_by_file(RUNS_NAME, folder, results, quick, archive, job_file)


def report(records: list[dict[str, Any]], speeds: tuple[float, ...], cmd: str, quick: bool, learners: str = "shared") -> str:
    """The section: per reward, capture success and I(R;Z) at each speed (mean ± sd over seeds); mutual minus
    individual paired by seed."""
    by = {r: {rec["seed"]: rec for rec in records if rec["reward"] == r} for r in REWARDS}
    cols = [f"capture @ {v:g}" for v in speeds] + [f"I(R;Z) @ {v:g}" for v in speeds]
    lines = [f"## Mutual or individual reward (Grupen et al. 2022, §5.1){', smoke run' if quick else ''}: `{cmd}`", "",
             ("SB3's TD3, one network shared by the pursuers, each seeing its own view and its one-hot index (`PursuerTeam`)"
              if learners == "shared" else
              "SB3's TD3, one per pursuer (as the paper), each on its own view, the pursuers' learners in lockstep "
              "(`Lockstep`)") + ", FairTD3's tuned pursuit entry otherwise; greedy evaluation on the joint env. Mean ± sd over "
             "seeds; I(R;Z) in bits (0: fair; log2 3 = 1.585: one pursuer makes every capture).", "",
             "| reward | seeds | " + " | ".join(cols) + " |", "|---|---|" + "---|" * len(cols)]
    for r in REWARDS:
        runs = list(by[r].values())
        if not runs:
            continue
        cells = [f"{np.mean(x):.2f} ± {np.std(x):.2f}" for key in ("capture_success", "team_fairness") for v in speeds
                 for x in [[run["eval"][str(v)][key] for run in runs]]]
        lines.append(f"| {r} | {len(runs)} | " + " | ".join(cells) + " |")
    lines += ["", "Mutual minus individual, paired by seed (mean ± sd; two-sided paired t and Wilcoxon):", "",
              "| speed | capture success | I(R;Z) |", "|---|---|---|"]
    for v in speeds:
        cells = [paired_test({s: rec["eval"][str(v)][key] for s, rec in by["mutual"].items()},
                             {s: rec["eval"][str(v)][key] for s, rec in by["individual"].items()})
                 for key in ("capture_success", "team_fairness")]
        lines.append(f"| {v:g} | " + " | ".join(cells) + " |")
    seconds = [rec["seconds"] for rec in records]
    lines += ["", f"Training time per run: median {np.median(seconds):.0f} s (one torch thread)."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = reproduce_parser("pursuit_rewards", __doc__)
    parser.add_argument("--seeds", type=int_at_least(1), default=10)
    parser.add_argument("--size", type=number_in(1.0), default=4.0, help="torus side (the entry's 4)")
    parser.add_argument("--env-steps", type=int_at_least(1), default=ENV_STEPS, help="joint env steps per run")
    parser.add_argument("--episodes", type=int_at_least(1), default=30, help="evaluation episodes per speed")
    parser.add_argument("--jobs", type=int_at_least(1), default=2,
                        help="runs at a time on a local Ray or --local pool, one CPU each")
    parser.add_argument("--learners", choices=LEARNERS, default="shared",
                        help="one TD3 network shared by the pursuers (default) or one TD3 per pursuer (the paper's)")
    parser.add_argument("--quick", action="store_true", help="a smoke run (a few hundred steps, 2 speeds)")
    add_runner_arguments(parser)
    args = parser.parse_args(argv)
    results, archive = results_root(args), archive_arg(args)
    speeds = QUICK["speeds"] if args.quick else SPEEDS
    steps, episodes = (QUICK["env_steps"], QUICK["episodes"]) if args.quick else (args.env_steps, args.episodes)
    output = Output(args.out, RUNS_NAME)
    learners = {"learners": "separate"} if args.learners == "separate" else {}  # shared runs' records have no key
    jobs = [dict(reward=r, seed=s, size=args.size, env_steps=steps, episodes=episodes, speeds=list(speeds), **learners)
            for s in range(args.seeds) for r in REWARDS]
    have = records(results, args.quick, archive)
    todo = [j for j in jobs if args.quick or job_file(j) not in have]
    if todo:
        summary = runner.run(f"{RUNS_NAME}/quick" if args.quick else RUNS_NAME, todo, run_trial, results=results,
                             address=args.address, local=args.local, jobs=args.jobs,
                             label=lambda j: job_file(j).removesuffix(".json"))
        runner.check_summary(summary)
        have = records(results, args.quick, archive)
    keys = ("env_steps", "episodes", "speeds")
    found = [have[job_file(j)] for j in jobs if job_file(j) in have and all(have[job_file(j)][k] == j[k] for k in keys)]
    setting = ("python benchmarks/pursuit_rewards.py" + (" --quick" if args.quick else "")
               + ("" if args.size == 4.0 else f" --size {args.size:g}") + ("" if args.learners == "shared" else " --learners separate"))
    text = report(found, tuple(speeds), setting if args.quick else f"{setting} --seeds {args.seeds}", args.quick, args.learners)
    # the section of this setting whatever its number of seeds (a later call with more seeds replaces it)
    output.write_section(text.splitlines()[0].removeprefix("## ") if args.quick else f"`{setting} --seeds ", text)
    print(text)


if __name__ == "__main__":
    main()
