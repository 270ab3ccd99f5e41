"""Trained-parameter fingerprints of short seeded runs of every fairness method, for a refactor that must not change them.

``python tests/fingerprint_runs.py OUT.json`` trains each run of :data:`RUNS` (a few thousand steps, one torch thread)
and writes the sha256 of each model's parameters (``policy.state_dict()``, in order) and of what its last rollout or
replay buffer holds. Run it before and after a change that should leave training bit for bit as it was, on the same
machine, and compare the two files (``python tests/fingerprint_runs.py --compare A.json B.json``). The hashes depend on
the machine's floating-point kernels, so they are compared between two runs on one machine, never committed as
goldens (the portable goldens of ``tests/test_env_trajectories.py`` and ``tests/test_fairness_goldens.py`` do that).

Runs: FairQCM and potential shaping (FairDQN), Fair-ER on FairTD3 and FairDDPG, F-PPO with one and two envs, F-PPO
without massaging, A-PPO, FairPPO with DP, CSP and CF, FairMaskablePPO and FairRecurrentPPO with the DP penalty and
with F-PPO's regulariser, and CPO.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Callable
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np
import torch as th


def _digest(model: Any) -> dict[str, str]:
    h = hashlib.sha256()
    for name, tensor in model.policy.state_dict().items():
        h.update(name.encode())
        h.update(tensor.detach().cpu().numpy().tobytes())
    out = {"params": h.hexdigest()}
    buf = getattr(model, "rollout_buffer", None) or getattr(model, "replay_buffer", None)
    if buf is not None:
        b = hashlib.sha256()
        for attr in ("observations", "actions", "rewards", "advantages", "returns", "values", "log_probs"):
            value = getattr(buf, attr, None)
            if isinstance(value, np.ndarray):
                b.update(attr.encode())
                b.update(np.ascontiguousarray(value).tobytes())
        out["buffer"] = b.hexdigest()
    return out


def _fairqcm(shaping: bool) -> Any:
    from sb3_fair import FairDQN
    from sb3_fair.envs import make_donut_allocation

    kw: dict[str, Any] = {"learning_starts": 100, "seed": 0}
    if shaping:
        kw["potential_shaping"] = True
    return FairDQN.from_preset("donut", make_donut_allocation(), counterfactual=True, **kw).learn(1500)


def _fair_er(algo: str) -> Any:
    import gymnasium as gym

    from sb3_fair import FairDDPG, FairTD3

    cls = FairTD3 if algo == "td3" else FairDDPG
    env = gym.make("sb3_fair/PursuitEvasion-v0", max_steps=60)
    return cls("MlpPolicy", env, equivariance_coef=0.5, learning_starts=50, batch_size=32, seed=0).learn(600)


def _f_ppo(variant: str, n_envs: int) -> Any:
    from stable_baselines3.common.env_util import make_vec_env

    from sb3_fair import FairPPO

    env = make_vec_env("sb3_fair/DelayedImpactLending-v0", n_envs=n_envs, seed=0) if n_envs > 1 else None
    env = env if env is not None else "sb3_fair/DelayedImpactLending-v0"
    model = FairPPO.from_preset("delayed_impact_lending", env, variant=variant, seed=0, n_steps=256, batch_size=64)
    return model.learn(1024)


def _f_ppo_kw(**kw: Any) -> Any:
    from sb3_fair import FairPPO

    model = FairPPO("MlpPolicy", "sb3_fair/DelayedImpactLending-v0", n_steps=128, batch_size=32, n_epochs=2, seed=0, **kw)
    return model.learn(512)


def _group(cls_name: str, fairness: str, **kw: Any) -> Any:
    import sb3_fair
    from sb3_fair.envs import AllelopathicHarvestEnv
    from sb3_fair.wrappers import CounterfactualPair, make_multiagent_vec_env

    cls = getattr(sb3_fair, cls_name)
    game = AllelopathicHarvestEnv.from_preset("tiny")
    if fairness == "cf":
        game = CounterfactualPair(game)
    env = make_multiagent_vec_env(game, n_instances=2)
    policy = "MlpLstmPolicy" if cls_name == "FairRecurrentPPO" else "MlpPolicy"
    model = cls(policy, env, fairness=fairness, alpha=0.5, beta=0.5, fairness_coef=0.3, n_steps=64, batch_size=64,
                n_epochs=2, seed=0, **kw)
    return model.learn(256)


def _long_term_on(cls_name: str) -> Any:
    import sb3_fair

    import gymnasium as gym
    from sb3_contrib.common.wrappers import ActionMasker

    cls = getattr(sb3_fair, cls_name)
    policy = "MlpLstmPolicy" if cls_name == "FairRecurrentPPO" else "MlpPolicy"
    env: Any = "sb3_fair/DelayedImpactLending-v0"
    if cls_name == "FairMaskablePPO":  # every action valid: MaskablePPO needs the masks
        env = ActionMasker(gym.make(env), lambda e: np.ones(e.action_space.n, dtype=bool))
    model = cls(policy, env, fairness="long_term", fairness_coef=(0.5, 0.5),
                n_steps=128, batch_size=32, n_epochs=2, seed=0)
    return model.learn(512)


def _cpo() -> Any:
    from sb3_fair import CPO

    return CPO("MlpPolicy", "sb3_fair/DelayedImpactLending-v0", n_steps=256, batch_size=64, seed=0).learn(512)


RUNS: dict[str, Callable[[], Any]] = {
    "fairqcm": lambda: _fairqcm(False),
    "fairqcm_shaping": lambda: _fairqcm(True),
    "fair_er_td3": lambda: _fair_er("td3"),
    "fair_er_ddpg": lambda: _fair_er("ddpg"),
    "f_ppo_1env": lambda: _f_ppo("f_ppo", 1),
    "f_ppo_2env": lambda: _f_ppo("f_ppo", 2),
    "f_ppo_l": lambda: _f_ppo("f_ppo_l", 1),
    "a_ppo": lambda: _f_ppo("a_ppo", 1),
    "ppo_variant": lambda: _f_ppo("ppo", 1),
    "fair_ppo_dp": lambda: _group("FairPPO", "dp"),
    "fair_ppo_csp": lambda: _group("FairPPO", "csp"),
    "fair_ppo_cf": lambda: _group("FairPPO", "cf"),
    "fair_maskable_dp": lambda: _group("FairMaskablePPO", "dp"),
    "fair_recurrent_dp": lambda: _group("FairRecurrentPPO", "dp"),
    "fair_maskable_long_term": lambda: _long_term_on("FairMaskablePPO"),
    "fair_recurrent_long_term": lambda: _long_term_on("FairRecurrentPPO"),
    "fair_ppo_a_ppo_literal": lambda: _f_ppo_kw(fairness="a_ppo", regularization="literal", fairness_coef=(0.2, 0.1)),
    "cpo": _cpo,
}


def main(argv: list[str]) -> int:
    if argv[:1] == ["--compare"]:
        a, b = (json.load(open(p)) for p in argv[1:3])
        bad = sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))
        for k in bad:
            print(f"DIFFERS {k}: {a.get(k)} vs {b.get(k)}")
        print(f"{len(a.keys() | b.keys()) - len(bad)} same, {len(bad)} differ")
        return 1 if bad else 0
    th.set_num_threads(1)
    only = argv[1:] or list(RUNS)
    out: dict[str, Any] = {}
    for name in only:
        try:
            out[name] = _digest(RUNS[name]())
        except Exception as exc:  # noqa: BLE001 - a run that fails is recorded as such (and then differs)
            out[name] = {"error": f"{type(exc).__name__}: {exc}"}
        print(name, out[name], flush=True)
    with open(argv[0], "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
