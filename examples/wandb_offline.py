"""Stream FairDQN's logs (reward, fairness/*, train/*) to Weights & Biases.

Without credentials the run is written offline under ./wandb (upload later with `wandb sync`).

    WANDB_MODE=offline python examples/wandb_offline.py
"""

import gymnasium as gym
import torch

import sb3_fair  # noqa: F401
from sb3_fair import FairDQN

torch.set_num_threads(1)  # small networks train faster on one thread (docs/threads-and-parallel-runs.md)
env = gym.make("sb3_fair/LoanApplicants-v0", memory="min")
model = FairDQN.from_preset("loan_applicants", env, counterfactual=True, wandb={"project": "sb3-fair-examples"}, seed=0)
model.learn(40 * 30)

run = model.fairness_callback.wandb_run  # the run learn() started, and finished when training ended
if run is not None:
    print("W&B run:", run.id, "mode:", run.settings.mode, "config keys:", sorted(run.config.keys())[:6], "...")
