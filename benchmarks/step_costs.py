"""Where a Fair class's extra time goes, per env step: its fairness functions timed inside a real run.

``benchmarks/speed.py`` gives each Fair class's ratio to its parent; this script says where the
difference goes, for the rows that miss their target. It wraps the named functions with
``time.perf_counter_ns`` timers (about 0.3 µs of its own per call) and divides their totals by the
steps run, one torch thread, in this process. A wrapped function includes what it calls.

Usage::

    python benchmarks/step_costs.py massaging   # F-PPO's collection at the lending preset, massaging on (τ = 0.71)
    python benchmarks/step_costs.py shaping     # FairDQN with potential shaping against DQN, doughnuts
    python benchmarks/step_costs.py fairqcm     # the same, and FairQCM (shaping and counterfactual replay)
    python benchmarks/step_costs.py fairppo     # FairPPO / PPO with the DP penalty, harvest game: steps per CPU second

Figures printed, nothing written; ``benchmarks/RESULTS.md`` quotes them with this command.
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

Timers = dict[str, int]


def _wrap(owner: Any, name: str, key: str, timers: Timers) -> None:
    """Replace ``owner.name`` by a copy that adds its wall time (ns) to ``timers[key]``."""
    f = getattr(owner, name)
    timers[key] = 0  # the printing order is the wrapping order

    def timed(*args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter_ns()
        try:
            return f(*args, **kwargs)
        finally:
            timers[key] = timers.get(key, 0) + time.perf_counter_ns() - t0

    setattr(owner, name, timed)


def _per_step(timers: Timers, steps: int) -> dict[str, float]:
    return {k: round(v / steps / 1000, 1) for k, v in timers.items()}


def massaging(steps: int = 2000, repeats: int = 4) -> None:
    """µs per step of F-PPO's collection (lending preset) without and with massaging, and of the massaging hook."""
    import gymnasium as gym
    from stable_baselines3.common.vec_env import DummyVecEnv

    import sb3_fair.common.long_term.massaging as msg
    from sb3_fair import FairPPO
    from sb3_fair.ppo.presets import preset_kwargs

    timers: Timers = {}
    _wrap(msg.ActionMassagingMixin, "_massaging_hook", "massaging hook", timers)
    _wrap(msg, "massage_actions", "  massage_actions", timers)
    _wrap(msg, "get_what_if", "    what-if query", timers)
    _wrap(msg, "candidate_log_probs", "    candidate log-probabilities", timers)
    _wrap(msg, "_choices", "    Eq. 6 choice", timers)
    _wrap(DummyVecEnv, "step_wait", "env step (VecEnv)", timers)
    lending = preset_kwargs("delayed_impact_lending", "f_ppo")
    best: dict[str, dict[str, float]] = {}
    for _ in range(repeats):
        for name, kwargs in (("F-PPO-L", {"massaging": False}), ("F-PPO, massaging", {"massaging_tau": 0.71})):
            model = FairPPO("MlpPolicy", gym.make("sb3_fair/DelayedImpactLending-v0"), seed=0, **{**lending, **kwargs})
            model._setup_learn(steps, None)
            callback = model._init_callback(None)
            callback.on_training_start(locals(), globals())
            timers.update(dict.fromkeys(timers, 0))
            t0 = time.process_time_ns()
            model.collect_rollouts(model.env, callback, model.rollout_buffer, steps)
            row = {"collection (CPU)": (time.process_time_ns() - t0) / steps / 1000, **_per_step(timers, steps)}
            best[name] = {k: min(v, best.get(name, {}).get(k, v)) for k, v in row.items()}
    for name, row in best.items():
        print(f"{name}, µs per step (least of {repeats}):")
        for k, v in row.items():
            print(f"  {k}: {v:.1f}")


def shaping(steps: int = 3000, repeats: int = 2, fairqcm: bool = False) -> None:
    """µs per step of DQN and FairDQN with potential shaping on the doughnuts (and FairQCM with ``fairqcm``), and of
    FairDQN's per-step parts."""
    from stable_baselines3 import DQN
    from stable_baselines3.common.callbacks import CallbackList
    from stable_baselines3.common.off_policy_algorithm import OffPolicyAlgorithm
    from stable_baselines3.common.vec_env import DummyVecEnv

    from sb3_fair.common import buffers
    import sb3_fair.common.callbacks as callbacks
    import sb3_fair.common.fair_algorithm as fair_algorithm
    import sb3_fair.dqn.fair_dqn as fair_dqn
    from sb3_fair import FairDQN

    timers: Timers = {}
    _wrap(DummyVecEnv, "step_wait", "env step (VecEnv)", timers)
    _wrap(OffPolicyAlgorithm, "_store_transition", "store transition (SB3's)", timers)
    _wrap(fair_dqn.FairDQN, "_store_transition", "store transition (FairDQN's, with SB3's)", timers)
    _wrap(fair_dqn.FairDQN, "_row_welfare", "  memory welfare", timers)
    if fairqcm:
        _wrap(fair_dqn.FairDQN, "_counterfactual_rows", "  counterfactual transitions", timers)
        _wrap(fair_dqn.FairDQN, "_shaping", "  counterfactual shaping", timers)
        _wrap(buffers.CounterfactualRows, "add_batch", "  counterfactual rows stored", timers)
        _wrap(fair_dqn.FairDQN, "_sample_action", "action and counterfactual set (FairDQN's)", timers)
        _wrap(fair_dqn, "counterfactual_memories", "  counterfactual set", timers)
    _wrap(CallbackList, "on_step", "callbacks", timers)
    _wrap(fair_algorithm.FiniteInputCheck, "_on_step", "  input check", timers)
    _wrap(callbacks.FairnessCallback, "_on_step", "  fairness logging", timers)
    _wrap(DQN, "train", "DQN update", timers)
    donut = dict(learning_rate=5e-4, batch_size=256, train_freq=1, target_update_interval=1000, learning_starts=100, seed=0)
    makers: dict[str, Callable[[], Any]] = {
        "DQN": lambda: DQN("MlpPolicy", "sb3_fair/DonutAllocation-v0", **donut),
        "FairDQN, shaping": lambda: FairDQN("MlpPolicy", "sb3_fair/DonutAllocation-v0", potential_shaping=True, **donut),
    }
    if fairqcm:
        makers["FairQCM, shaping"] = lambda: FairDQN("MlpPolicy", "sb3_fair/DonutAllocation-v0", counterfactual=True,
                                                     potential_shaping=True, **donut)
    best: dict[str, dict[str, float]] = {}
    for _ in range(repeats):
        for name, make in makers.items():
            model = make()
            timers.update(dict.fromkeys(timers, 0))
            t0 = time.process_time_ns()
            model.learn(steps)
            row = {"total (CPU)": (time.process_time_ns() - t0) / steps / 1000, **_per_step(timers, steps)}
            best[name] = {k: min(v, best.get(name, {}).get(k, v)) for k, v in row.items()}
    for name, row in best.items():
        print(f"{name}, µs per step (least of {repeats}):")
        for k, v in row.items():
            print(f"  {k}: {v:.1f}")


def fairppo(steps: int = 4096, repeats: int = 7) -> None:
    """FairPPO (DP penalty, α = β = 0.5) against PPO on the harvest game: median steps per CPU second."""
    from stable_baselines3 import PPO

    from sb3_fair import FairPPO
    from sb3_fair.envs import AllelopathicHarvestEnv
    from sb3_fair.wrappers import make_multiagent_vec_env

    def game() -> Any:
        return make_multiagent_vec_env(AllelopathicHarvestEnv.from_preset("tiny"), n_instances=2)

    small = dict(n_steps=128, batch_size=64, n_epochs=2, seed=0)
    runs: dict[str, list[float]] = {"PPO": [], "FairPPO": []}
    for _ in range(repeats):
        for name in runs:
            model = PPO("MlpPolicy", game(), **small) if name == "PPO" else FairPPO(
                "MlpPolicy", game(), **small, fairness="dp", alpha=0.5, beta=0.5)
            t0 = time.process_time()
            model.learn(steps)
            runs[name].append(steps / (time.process_time() - t0))
    med = {k: float(np.median(v)) for k, v in runs.items()}
    print(f"PPO {med['PPO']:.0f}, FairPPO {med['FairPPO']:.0f} steps per CPU second (median of {repeats}): "
          f"{med['FairPPO'] / med['PPO']:.3f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["massaging", "shaping", "fairqcm", "fairppo"])
    args = parser.parse_args()
    import torch

    torch.set_num_threads(1)
    warnings.filterwarnings("ignore")
    run: dict[str, Callable[[], None]] = {"massaging": massaging, "shaping": shaping, "fairppo": fairppo,
                                          "fairqcm": lambda: shaping(fairqcm=True)}
    run[args.what]()


if __name__ == "__main__":
    main()
