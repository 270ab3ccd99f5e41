"""FairTD3 with Fair-ER against SB3's TD3 on the Fair-ER paper's pursuit-evasion task, and their team fairness I(R;Z).

Three pursuers (one joint action) chase a faster-thinking evader on a torus; the team reward is +50 for a
capture and -0.1 per step. Fair-ER (Grupen, Selman, Lee 2022, arXiv:2106.05727, Eq. 10) adds an
equivariance penalty to the actor loss so that permuting the pursuers permutes their actions, which
spreads the capture credit; I(R;Z) in bits measures how much the credit depends on who the pursuer is
(0 = fair, log2(3) = one pursuer always credited). Settings: the tuned entry of
``sb3_fair/hyperparams/fair_td3.yml`` (its comment gives the sweep that found it).

    python examples/fair_td3_pursuit.py     # 6 min 27 s on this project's 2 cores

The evaluation is at pursuer speed 1.5 (training lowers it from 2 to 1), 20 greedy episodes. Measured (seed 0):
both capture in every episode; TD3's captures are credited 0.10 / 0.80 / 0.15 per pursuer, I(R;Z) 0.680 bits,
FairTD3's 0.80 / 0 / 0.35, 0.916 bits; the greedy chase 0.45 / 0.30 / 0.35, 0.071 bits. On this seed Fair-ER does
not spread the credit; over 3 seeds it does on 2 of them (benchmarks/RESULTS.md, "FairTD3 on pursuit-evasion with
the Fair-ER paper's I(R;Z)").
"""

import gymnasium as gym
import numpy as np
import torch
from stable_baselines3 import TD3
from stable_baselines3.common.noise import NormalActionNoise

import sb3_fair  # noqa: F401  (registers sb3_fair/PursuitEvasion-v0)
from sb3_fair import FairTD3
from sb3_fair.common.evaluation import evaluate_team_fairness
from sb3_fair.envs import GreedyPursuitPolicy, SpeedCurriculum

torch.set_num_threads(1)  # small networks train faster on one thread (docs/threads-and-parallel-runs.md)
ENV = "sb3_fair/PursuitEvasion-v0"
ARENA = dict(size=4, max_steps=200)  # Grupen et al. 2022: a 6 x 6 torus and 500 steps
STEPS = 50_000  # the paper trains 125,000 episodes
TUNED = dict(learning_rate=1e-3, batch_size=256, buffer_size=200_000, learning_starts=1000, gamma=0.99, tau=0.005,
             policy_kwargs={"net_arch": [128, 128]}, seed=0)

agents = {"TD3": (TD3, {}), "FairTD3 (Fair-ER, lambda = 0.5)": (FairTD3, {"equivariance_coef": 0.5})}
for name, (algo, kwargs) in agents.items():
    env = gym.make(ENV, **ARENA)
    noise = NormalActionNoise(np.zeros(env.action_space.shape), 0.2 * np.ones(env.action_space.shape))
    model = algo("MlpPolicy", env, action_noise=noise, **kwargs, **TUNED)
    model.learn(STEPS, callback=SpeedCurriculum(start=2.0, end=1.0))  # the pursuers slow down as they learn
    res = evaluate_team_fairness(model, gym.make(ENV, pursuer_speed=1.5, **ARENA), n_episodes=20)
    print(f"{name:32s} capture success {res['capture_success']:.2f}, captures credited per pursuer "
          f"{np.round(res['credit'].mean(axis=0), 2)}, I(R;Z) {res['team_fairness']:.3f} bits")

env = gym.make(ENV, pursuer_speed=1.5, **ARENA)
res = evaluate_team_fairness(GreedyPursuitPolicy(env), env, n_episodes=20)
print(f"{'greedy chase (App. C)':32s} capture success {res['capture_success']:.2f}, captures credited per pursuer "
      f"{np.round(res['credit'].mean(axis=0), 2)}, I(R;Z) {res['team_fairness']:.3f} bits")
