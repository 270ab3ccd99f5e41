"""learn(N) -> save (model + replay buffer) -> load -> learn(N) equals learn(2N), wherever SB3's parent achieves it (issue 11 §3).

"Exactly" as SB3 achieves it: in one process, with the process's random state carried over the
save/load (SB3 does not store torch's or NumPy's global generators, and its load re-seeds the
action space) and the same env continuing (``force_reset=False``). sb3-contrib's RecurrentPPO does
not resume exactly even so (measured here: its weights differ after save/load/continue), so
FairRecurrentPPO is not held to it. Private generators of the Fair classes (Fair-ER's permutation sampler,
FairQCM's counterfactual sampler) are saved with the model, so they resume too.
"""

from __future__ import annotations

import random
from typing import Any, Callable

import numpy as np
import pytest
import torch as th
from sb3_contrib import MaskablePPO
from stable_baselines3 import DDPG, DQN, PPO, TD3

from sb3_fair import FairDDPG, FairDQN, FairMaskablePPO, FairPPO, FairTD3
from sb3_fair.envs import AllelopathicHarvestEnv, DelayedImpactLendingEnv, PursuitEvasionEnv, make_donut_allocation
from sb3_fair.envs.disparity import DisparityGame
from sb3_fair.wrappers import make_multiagent_vec_env

OFF = dict(learning_starts=40, buffer_size=2000, batch_size=16, train_freq=4, seed=0)


def _pursuit() -> Any:
    return PursuitEvasionEnv(max_steps=40)


def _harvest() -> Any:
    return make_multiagent_vec_env(AllelopathicHarvestEnv.from_preset("tiny"), n_instances=1)


CASES: dict[str, tuple[type, Callable[[], Any], dict[str, Any], int]] = {
    "DQN": (DQN, make_donut_allocation, dict(OFF, target_update_interval=50), 200),
    "FairDQN (FairQCM)": (FairDQN, make_donut_allocation, dict(OFF, target_update_interval=50, counterfactual=True, max_counterfactuals=4), 200),
    "TD3": (TD3, _pursuit, OFF, 120),
    "FairTD3 (Fair-ER)": (FairTD3, _pursuit, dict(OFF, equivariance_coef=0.5), 120),
    "DDPG": (DDPG, _pursuit, OFF, 120),
    "FairDDPG (Fair-ER)": (FairDDPG, _pursuit, dict(OFF, equivariance_coef=0.5), 120),
    "PPO": (PPO, lambda: make_multiagent_vec_env(DisparityGame(n_agents=4), n_instances=2), dict(n_steps=16, batch_size=32, n_epochs=2, seed=0), 128),
    "FairPPO (group penalty)": (FairPPO, lambda: make_multiagent_vec_env(DisparityGame(n_agents=4), n_instances=2),
                                dict(n_steps=16, batch_size=32, n_epochs=2, seed=0, fairness_coef=0.5), 128),
    "MaskablePPO": (MaskablePPO, _harvest, dict(n_steps=16, batch_size=32, n_epochs=2, seed=0), 64),
    "FairMaskablePPO (group penalty)": (FairMaskablePPO, _harvest, dict(n_steps=16, batch_size=32, n_epochs=2, seed=0,
                                                                        fairness_coef=0.5), 64),
    "FairPPO (F-PPO, massaging)": (FairPPO, lambda: DelayedImpactLendingEnv(horizon=50),
                                   dict(n_steps=32, batch_size=32, n_epochs=2, seed=0, fairness="long_term", fairness_coef=1.0,
                                        massaging=True, massaging_tau=0.3), 96),
}


def _global_state() -> tuple:
    return th.get_rng_state(), np.random.get_state(), random.getstate()


def _set_global_state(state: tuple) -> None:
    th.set_rng_state(state[0])
    np.random.set_state(state[1])
    random.setstate(state[2])


def _params(model: Any) -> dict[str, th.Tensor]:
    return {k: v.detach().clone() for k, v in model.policy.state_dict().items()}


@pytest.mark.parametrize("name", list(CASES))
def test_save_load_continue_equals_uninterrupted(name: str, tmp_path) -> None:
    cls, make_env, kwargs, n = CASES[name]
    policy = "MlpPolicy"

    th.manual_seed(123)
    straight = cls(policy, make_env(), **kwargs)
    straight.learn(n)
    straight.learn(n, reset_num_timesteps=False)

    th.manual_seed(123)
    first = cls(policy, make_env(), **kwargs)
    first.learn(n)
    first.save(tmp_path / "model")
    if hasattr(first, "replay_buffer") and first.replay_buffer is not None:
        first.save_replay_buffer(tmp_path / "buffer")
    state = _global_state()
    resumed = cls.load(tmp_path / "model", env=first.get_env(), force_reset=False)
    if hasattr(resumed, "load_replay_buffer") and (tmp_path / "buffer.pkl").exists():
        resumed.load_replay_buffer(tmp_path / "buffer")
    _set_global_state(state)  # the process state carried over, as SB3's own resume needs
    # SB3's load re-seeds the model's action space (set_random_seed in _setup_model), which DQN's
    # epsilon-greedy samples from: carried over too, so the parent resumes exactly and the Fair class is held to it
    resumed.action_space.np_random.bit_generator.state = first.action_space.np_random.bit_generator.state
    resumed.learn(n, reset_num_timesteps=False)

    a, b = _params(straight), _params(resumed)
    assert a.keys() == b.keys()
    for key in a:
        assert th.equal(a[key], b[key]), f"{name}: {key} differs after save/load/continue"


def test_cli_run_killed_midway_resumes_from_its_checkpoint(tmp_path, capsys) -> None:
    """--checkpoint-every saves model, replay buffer and fairness statistics; --resume goes on from them."""
    from sb3_fair import cli

    env = "sb3_fair/DonutAllocation-v0"
    cli.main(["train", "--algo", "fair_dqn", "--env", env, "--timesteps", "400", "--checkpoint-every", "200",
              "--save", str(tmp_path / "m.zip"), "--eval-episodes", "1", "--checkpoint-buffers", "2"])
    checkpoint = tmp_path / "m" / "model_200_steps.zip"
    assert checkpoint.is_file() and (tmp_path / "m" / "model_replay_buffer_200_steps.pkl").is_file()
    capsys.readouterr()
    # the run "died" after its first checkpoint: go on from it to 600 steps in all
    cli.main(["train", "--timesteps", "600", "--resume", str(checkpoint), "--save", str(tmp_path / "m2.zip"),
              "--eval-episodes", "1"])
    out = capsys.readouterr().out
    assert "resumed" in out and "at 200 steps with its replay buffer" in out
    resumed = FairDQN.load(tmp_path / "m2.zip")
    assert resumed.num_timesteps == 600
    assert resumed.counterfactual, "the checkpoint's settings (its folder's config)"
    # fairness statistics: the doughnut's episodes are 100 steps; the two before the checkpoint are kept
    assert resumed.fairness_episodes is not None and len(resumed.fairness_episodes) == 6


def test_fairness_statistics_survive_save_and_load(tmp_path) -> None:
    model = FairDQN("MlpPolicy", make_donut_allocation(), **OFF)
    model.learn(300)
    assert len(model.fairness_episodes) == 3
    model.save(tmp_path / "m")
    loaded = FairDQN.load(tmp_path / "m", env=make_donut_allocation())
    assert list(loaded.fairness_episodes) == list(model.fairness_episodes)
    loaded.learn(100, reset_num_timesteps=False)
    assert len(loaded.fairness_episodes) == 4 and loaded.fairness_callback.episodes is loaded.fairness_episodes
