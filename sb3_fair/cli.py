"""The ``sb3-fair`` command: train, evaluate, and compare a baseline with its fair counterpart.

Examples::

    sb3-fair compare --task donut --seeds 2 --episodes 300      # DQN vs FairDQN, fairness table + PNG
    sb3-fair compare --task harvest --seeds 2 --episodes 60     # PPO vs FairPPO on Allelopathic Harvest
    sb3-fair train sb3_fair/DonutAllocation-v0 --preset donut --counterfactual --timesteps 50000 --save fairqcm.zip
    sb3-fair evaluate fairqcm.zip sb3_fair/DonutAllocation-v0 --episodes 50
    sb3-fair train sb3_fair/DelayedImpactLending-v0 --algo fairppo --preset lending --variant f_ppo --timesteps 700000
    sb3-fair evaluate fppo.zip sb3_fair/DelayedImpactLending-v0 --algo fairppo --episodes 10 --env-kwargs horizon=10000
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from sb3_fair.common.validation import MAX_COEF

TASKS = {
    # task: (env id, preset, horizon, figures shown in the table)
    "donut": ("sb3_fair/DonutAllocation-v0", "donut", 100, ["episode_reward", "utilitarian", "egalitarian", "log_nash", "gini", "max_unfairness"]),
    "lending": ("sb3_fair/LoanApplicants-v0", "lending", 40, ["episode_reward", "utilitarian", "group_0_mean", "group_1_mean", "dp", "dp_abs"]),
}


def _int_at_least(minimum: int) -> Any:
    """An argparse ``type``: an int >= ``minimum`` (the error names the argument and the accepted values)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an int >= {minimum}, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be an int >= {minimum}, got {text!r}")
        return value

    return parse


def _number(minimum: float, maximum: float = math.inf, strict: bool = False) -> Any:
    """An argparse ``type``: a finite number in [minimum, maximum] (> minimum where ``strict``)."""
    accepted = f"a finite number {'>' if strict else '>='} {minimum:g}" + ("" if maximum == math.inf else f" and <= {maximum:g}")

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {accepted}, got {text!r}") from None
        if not math.isfinite(value) or value < minimum or (strict and value == minimum) or value > maximum:
            raise argparse.ArgumentTypeError(f"must be {accepted}, got {text!r}")
        return value

    return parse


def _check_output_path(parser: argparse.ArgumentParser, option: str, path: str | None) -> None:
    """Fail before any training when ``path`` cannot be written (a model trained for nothing is lost otherwise)."""
    if not path:
        return
    target = Path(path)
    if target.is_dir():
        parser.error(f"argument {option}: {path!r} is a directory; give a file path")
    ancestor = target.parent
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir() or not os.access(ancestor, os.W_OK):
        parser.error(f"argument {option}: cannot write {path!r} ({ancestor} is not a writable folder)")


def _parse_kv(items: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items or []:
        if "=" not in item:
            raise SystemExit(f"--env-kwargs takes key=value pairs, got {item!r}")
        key, value = item.split("=", 1)
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


ALGOS = ("fairdqn", "fairppo")
DQN_PRESETS = ("donut", "lending")
PPO_PRESETS = ("lending", "attention", "epidemic")


def _make_model(algo: str, env: Any, preset: str | None, counterfactual: bool, seed: int, wandb: bool,
                tensorboard_log: str | None, learning_rate: float | None = None, verbose: int = 0,
                variant: str = "f_ppo") -> Any:
    from sb3_fair import FairDQN, FairPPO

    if algo not in ALGOS:
        raise SystemExit(f"--algo must be one of {list(ALGOS)}, got {algo!r}")
    kwargs: dict[str, Any] = dict(seed=seed, wandb=wandb, tensorboard_log=tensorboard_log, verbose=verbose)
    if learning_rate is not None:
        kwargs["learning_rate"] = learning_rate
    if algo == "fairppo":
        if preset not in PPO_PRESETS:
            raise SystemExit(f"--algo fairppo needs --preset, one of {list(PPO_PRESETS)} (Hu et al. 2024), got {preset!r}")
        return FairPPO.from_preset(preset, env, variant=variant, **kwargs)
    if preset is not None and preset not in DQN_PRESETS:
        raise SystemExit(f"--algo fairdqn takes --preset one of {list(DQN_PRESETS)}, got {preset!r}")
    if preset:
        return FairDQN.from_preset(preset, env, counterfactual=counterfactual, **kwargs)
    return FairDQN("MlpPolicy", env, counterfactual=counterfactual, **kwargs)


def _checkpoint_files(checkpoint: Path) -> tuple[Path, Path | None]:
    """A model checkpoint of :class:`CheckpointCallback` (``<prefix>_<N>_steps.zip``) and its replay buffer, if saved."""
    stem = checkpoint.name[: -len(".zip")] if checkpoint.name.endswith(".zip") else checkpoint.name
    prefix, _, steps = stem.rpartition("_")[0].rpartition("_")
    buffer = checkpoint.parent / f"{prefix}_replay_buffer_{steps}_steps.pkl"
    return checkpoint.parent / f"{stem}.zip", (buffer if buffer.exists() else None)


def cmd_train(args: argparse.Namespace) -> None:
    import gymnasium as gym
    from stable_baselines3.common.callbacks import CheckpointCallback

    import sb3_fair  # noqa: F401
    from sb3_fair import FairDQN, FairPPO

    env = gym.make(args.env, **_parse_kv(args.env_kwargs))
    if args.resume:
        path, buffer = _checkpoint_files(Path(args.resume))
        overrides: dict[str, Any] = {"tensorboard_log": args.tensorboard_log}
        if args.wandb:  # the checkpoint's own setting otherwise
            overrides["wandb"] = True
        model = (FairPPO if args.algo == "fairppo" else FairDQN).load(path, env=env, **overrides)
        if buffer is not None and hasattr(model, "load_replay_buffer"):
            model.load_replay_buffer(buffer)
        print(f"resumed {path} at {model.num_timesteps} steps" + (f" with its replay buffer ({buffer.name})" if buffer else ""))
    else:
        model = _make_model(args.algo, env, args.preset, args.counterfactual, args.seed, args.wandb, args.tensorboard_log,
                            learning_rate=args.learning_rate, verbose=args.verbose, variant=args.variant)
    callback = None
    if args.checkpoint_every:
        folder = Path(args.save).with_suffix("") if args.save else Path("checkpoints")
        callback = CheckpointCallback(args.checkpoint_every, str(folder), name_prefix="model", save_replay_buffer=True)
        print(f"checkpoints every {args.checkpoint_every} steps in {folder}/ (resume with --resume {folder}/model_<N>_steps.zip)")
    remaining = args.timesteps - model.num_timesteps
    if remaining > 0:
        model.learn(remaining, progress_bar=args.progress_bar, callback=callback, reset_num_timesteps=not args.resume)
    if args.save:
        model.save(args.save)
        print(f"saved {args.save}")
    _evaluate_and_print(model, args.env, _parse_kv(args.env_kwargs), args.eval_episodes, "model")


def _evaluate_and_print(model: Any, env_id: str, env_kwargs: dict[str, Any], episodes: int, name: str) -> None:
    """The fairness table of ``model``: long-term signals (Δs, Δl) for an env that reports them, else the episode figures."""
    import gymnasium as gym

    from sb3_fair.common.evaluation import evaluate_fairness, evaluate_long_term
    from sb3_fair.common.protocol import is_fairness_signals_supported

    env = gym.make(env_id, **env_kwargs)
    _, info = env.reset(seed=0)
    if is_fairness_signals_supported(info):
        res = evaluate_long_term(model, env, n_episodes=episodes)
        result = {k: res[k] for k in ("episode_reward", "episode_reward_std", "short_term_mean", "long_term_mean", "long_term_final")}
    else:
        result = evaluate_fairness(model, env, n_episodes=episodes)
    _print_table({name: result}, [k for k in result if k != "episodes"], title=f"{env_id}: {episodes} evaluation episodes")


def cmd_evaluate(args: argparse.Namespace) -> None:
    import sb3_fair  # noqa: F401
    from sb3_fair import FairDQN, FairPPO

    model = (FairPPO if args.algo == "fairppo" else FairDQN).load(args.model, device="cpu")
    _evaluate_and_print(model, args.env, _parse_kv(args.env_kwargs), args.episodes, Path(args.model).stem)


HARVEST_FIGURES = ["episode_return", "group_0_mean", "group_1_mean", "dp_normalized", "csp_mean_abs", "pof_group_0", "pof_group_1"]


def _compare_harvest(args: argparse.Namespace) -> None:
    """PPO vs FairPPO on Allelopathic Harvest (La Malfa et al. 2025): one shared policy, 4 games side by side."""
    from stable_baselines3 import PPO

    from sb3_fair import FairPPO
    from sb3_fair.common.evaluation import evaluate_group_fairness, price_of_fairness_table
    from sb3_fair.envs import AllelopathicHarvestEnv
    from sb3_fair.wrappers import CounterfactualPair, make_multiagent_vec_env

    def game() -> Any:
        return AllelopathicHarvestEnv.from_preset(args.preset)

    def vec_env(cf: bool) -> Any:
        return make_multiagent_vec_env(CounterfactualPair(game) if cf else game(), 2 if cf else 4)

    base = game()
    steps = args.episodes * base.max_steps * base.n_agents
    kw: dict[str, Any] = dict(n_steps=150, batch_size=600, n_epochs=4, ent_coef=0.01, tensorboard_log=args.tensorboard_log)
    if args.learning_rate is not None:
        kw["learning_rate"] = args.learning_rate
    name_fair = f"FairPPO ({args.fairness}, alpha={args.alpha:g}, beta={args.beta:g})"
    per_seed: dict[str, list[dict[str, Any]]] = {"PPO": [], name_fair: []}
    t0 = time.perf_counter()
    for seed in range(args.seeds):
        results = {}
        for name in per_seed:
            print(f"training {name}, seed {seed}: {args.episodes} games of Allelopathic Harvest ({args.preset})", flush=True)
            if name == "PPO":
                model = PPO("MlpPolicy", vec_env(False), seed=seed, **kw)
            else:
                model = FairPPO("MlpPolicy", vec_env(args.fairness == "cf"), fairness=args.fairness, alpha=args.alpha, beta=args.beta,
                                seed=seed, wandb=args.wandb, **kw)
            model.learn(steps, progress_bar=args.progress_bar)
            results[name] = evaluate_group_fairness(model, game(), n_episodes=args.eval_episodes, seed=10_000 + seed)
        pof = price_of_fairness_table(results[name_fair], results["PPO"])
        for name, res in results.items():
            row = {k: res.get(k, float("nan")) for k in HARVEST_FIGURES}
            row["dp_normalized"] = abs(row["dp_normalized"])
            row.update({f"pof_group_{g}": (pof[g] if name != "PPO" else 0.0) for g in (0, 1)})
            per_seed[name].append(row)
    table = {name: {k: float(np.mean([r[k] for r in runs])) for k in HARVEST_FIGURES} for name, runs in per_seed.items()}
    spread = {name: {k: float(np.std([r[k] for r in runs])) for k in HARVEST_FIGURES} for name, runs in per_seed.items()}
    _print_table(table, HARVEST_FIGURES, spread=spread,
                 title=f"Allelopathic Harvest ({args.preset}): {args.seeds} seed(s) x {args.episodes} training games, {args.eval_episodes} "
                       f"evaluation games each; dp_normalized = |Table 1 unfairness|, pof = price of fairness in % "
                       f"({time.perf_counter() - t0:.0f} s)")
    if args.plot:
        _plot_tradeoff(per_seed, ["dp_normalized"], Path(args.plot), "Allelopathic Harvest", x_key="episode_return")
        print(f"wrote {args.plot}")


def cmd_compare(args: argparse.Namespace) -> None:
    import gymnasium as gym
    from stable_baselines3.common.callbacks import StopTrainingOnMaxEpisodes

    import sb3_fair  # noqa: F401
    from sb3_fair.common.evaluation import evaluate_fairness
    from sb3_fair.dqn import PAPER_EPISODES

    if args.task == "harvest":
        _compare_harvest(args)
        return
    env_id, preset, horizon, figures = TASKS[args.task]
    variants = {"DQN (full memory)": False, "FairDQN (FairQCM)": True}
    per_seed: dict[str, list[dict[str, Any]]] = {name: [] for name in variants}
    t0 = time.perf_counter()
    for seed in range(args.seeds):
        for name, cf in variants.items():
            print(f"training {name}, seed {seed}: {args.episodes} episodes of {env_id}", flush=True)
            # Alamdari et al. 2024 runs FairQCM on lending with the min-normalised group memory (A.4.2)
            env_kwargs = {"memory": "min"} if (cf and args.task == "lending") else {}
            model = _make_model("fairdqn", gym.make(env_id, **env_kwargs), preset, cf, seed, args.wandb, args.tensorboard_log,
                                learning_rate=args.learning_rate)
            # epsilon follows the schedule of the paper's 1000-episode run; fewer episodes train its first part
            model.learn(max(args.episodes, PAPER_EPISODES) * horizon, progress_bar=args.progress_bar,
                        callback=StopTrainingOnMaxEpisodes(max_episodes=args.episodes))
            res = evaluate_fairness(model, gym.make(env_id, **env_kwargs), n_episodes=args.eval_episodes)
            per_seed[name].append(res)
            if args.wandb:
                import wandb

                from sb3_fair.common.logging import finish_wandb_run

                if wandb.run is not None:
                    wandb.run.summary.update({f"eval/{k}": v for k, v in res.items() if k != "episodes"})
                    finish_wandb_run(wandb.run)
    table = {name: {k: float(np.mean([r[k] for r in runs])) for k in figures} for name, runs in per_seed.items()}
    spread = {name: {k: float(np.std([r[k] for r in runs])) for k in figures} for name, runs in per_seed.items()}
    _print_table(table, figures, spread=spread,
                 title=f"{env_id}: {args.seeds} seed(s) x {args.episodes} training episodes, {args.eval_episodes} greedy evaluation episodes each "
                       f"({time.perf_counter() - t0:.0f} s)")
    if args.plot:
        _plot_tradeoff(per_seed, figures, Path(args.plot), env_id)
        print(f"wrote {args.plot}")


def _print_table(rows: dict[str, dict[str, Any]], columns: list[str], title: str, spread: dict[str, dict[str, float]] | None = None) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title)
    table.add_column("")
    for col in columns:
        table.add_column(col, justify="right")
    for name, row in rows.items():
        cells = []
        for col in columns:
            value = row.get(col, float("nan"))
            cell = f"{value:.3f}" if isinstance(value, float) else str(value)
            if spread is not None:
                cell += f" ± {spread[name][col]:.2f}"
            cells.append(cell)
        table.add_row(name, *cells)
    Console(width=200).print(table)


def _plot_tradeoff(per_seed: dict[str, list[dict[str, Any]]], figures: list[str], path: Path, env_id: str, x_key: str = "utilitarian") -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    y_key = figures[0]
    fig, ax = plt.subplots(figsize=(5.5, 4))
    for name, runs in per_seed.items():
        ax.scatter([r[x_key] for r in runs], [r[y_key] for r in runs], label=name, s=40)
    ax.set_xlabel("utility: total benefit per episode" if x_key == "utilitarian" else f"utility ({x_key})")
    ax.set_ylabel(f"fairness score ({y_key})" if x_key == "utilitarian" else f"unfairness ({y_key}, lower = fairer)")
    ax.set_title(f"fairness-utility trade-off, {env_id}")
    ax.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sb3-fair", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--wandb", action="store_true", help="stream logs to Weights & Biases (offline without credentials)")
        p.add_argument("--tensorboard-log", default=None, help="TensorBoard log folder")
        p.add_argument("--progress-bar", action="store_true", help="show SB3's progress bar")

    p = sub.add_parser("train", help="train a model and print its fairness table")
    p.add_argument("env", help="a Gymnasium id, e.g. sb3_fair/DonutAllocation-v0")
    p.add_argument("--algo", default="fairdqn", choices=list(ALGOS))
    p.add_argument("--preset", choices=sorted({*DQN_PRESETS, *PPO_PRESETS}), default=None,
                   help="fairdqn: donut | lending (Alamdari et al. 2024); fairppo: lending | attention | epidemic (Hu et al. 2024)")
    p.add_argument("--variant", choices=["f_ppo", "f_ppo_l", "a_ppo", "ppo"], default="f_ppo",
                   help="fairppo: F-PPO, F-PPO without massaging, A-PPO, or PPO (Hu et al. 2024)")
    p.add_argument("--counterfactual", action="store_true", help="fairdqn: FairQCM counterfactual replay")
    p.add_argument("--timesteps", type=_int_at_least(1), default=20_000)
    p.add_argument("--seed", type=_int_at_least(0), default=0)
    p.add_argument("--save", default=None, help="path of the saved model (checked to be writable before training)")
    p.add_argument("--checkpoint-every", type=_int_at_least(1), default=None, metavar="STEPS",
                   help="save the model, its replay buffer and its fairness statistics every STEPS steps (next to --save)")
    p.add_argument("--resume", default=None, metavar="CHECKPOINT",
                   help="go on from a checkpoint (model_<N>_steps.zip) up to --timesteps steps in all, with its replay buffer")
    p.add_argument("--eval-episodes", type=_int_at_least(1), default=20)
    p.add_argument("--env-kwargs", nargs="*", default=[], metavar="KEY=VALUE")
    p.add_argument("--learning-rate", type=_number(0.0, strict=True), default=None, help="override the preset's learning rate")
    p.add_argument("--verbose", type=_int_at_least(0), default=0)
    common(p)
    p.set_defaults(func=cmd_train)

    p = sub.add_parser("evaluate", help="evaluate a saved FairDQN or FairPPO and print its fairness table")
    p.add_argument("model")
    p.add_argument("env")
    p.add_argument("--algo", default="fairdqn", choices=list(ALGOS))
    p.add_argument("--episodes", type=_int_at_least(1), default=20)
    p.add_argument("--env-kwargs", nargs="*", default=[], metavar="KEY=VALUE")
    p.set_defaults(func=cmd_evaluate)

    p = sub.add_parser("compare", help="baseline vs fair counterpart over seeds: table + trade-off plot")
    p.add_argument("--task", choices=[*sorted(TASKS), "harvest"], default="donut",
                   help="donut/lending: DQN vs FairDQN (Alamdari et al. 2024); harvest: PPO vs FairPPO (La Malfa et al. 2025)")
    p.add_argument("--seeds", type=_int_at_least(1), default=2)
    p.add_argument("--episodes", type=_int_at_least(1), default=300, help="training episodes (harvest: games) per run; donut/lending: the first N of a run whose "
                        "exploration schedule spans Alamdari et al.'s (2024) 1000 episodes (or N, if larger)")
    p.add_argument("--eval-episodes", type=_int_at_least(1), default=20)
    p.add_argument("--learning-rate", type=_number(0.0, strict=True), default=None,
                   help="for both models (donut/lending default: the preset's, Alamdari et al.'s (2024) 1e-4)")
    p.add_argument("--fairness", choices=["dp", "csp", "cf"], default="dp", help="harvest: FairPPO's penalty")
    p.add_argument("--alpha", type=_number(0.0, MAX_COEF), default=0.5, help="harvest: weight of the retrospective part")
    p.add_argument("--beta", type=_number(0.0, MAX_COEF), default=0.5, help="harvest: weight of the prospective part")
    p.add_argument("--preset", choices=["tiny", "small", "medium", "paper"], default="small", help="harvest: game size")
    p.add_argument("--plot", default="sb3_fair_compare.png", help="PNG path for the fairness-utility plot ('' for none)")
    common(p)
    p.set_defaults(func=cmd_compare)
    return parser


def main(argv: list[str] | None = None) -> None:
    """Parse and check every argument (paths included) before anything trains, then run the command."""
    parser = build_parser()
    args = parser.parse_args(argv)
    for option in ("save", "plot"):
        _check_output_path(parser, f"--{option}", getattr(args, option, None))
    if getattr(args, "tensorboard_log", None) and Path(args.tensorboard_log).exists() and not Path(args.tensorboard_log).is_dir():
        parser.error(f"argument --tensorboard-log: {args.tensorboard_log!r} is a file; give a folder")
    if hasattr(args, "env_kwargs"):
        _parse_kv(args.env_kwargs)
    if getattr(args, "resume", None) and not _checkpoint_files(Path(args.resume))[0].is_file():
        parser.error(f"argument --resume: no checkpoint {args.resume!r}")
    args.func(args)


if __name__ == "__main__":
    main(sys.argv[1:])
