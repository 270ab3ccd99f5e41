"""FairDQN with FairQCM counterfactual replay on the FairQCM paper's doughnut task, against SB3's DQN.

Five customers, one doughnut per step for 100 steps; the reward is the log-Nash welfare of what each
customer has received so far (Alamdari et al. 2024, arXiv:2312.04772), so a good policy keeps every
customer served. Settings: the tuned entry of ``sb3_fair/hyperparams/fair_dqn.yml`` (what
``sb3-fair compare --task donut`` runs; the sweeps that found it are in its comment).

    python examples/fair_dqn.py            # 34 s on this project's 2 cores

One run (training seed 0, 4,000 steps each; 20 greedy evaluation episodes on an unseeded env):
DQN without memory 970.3 accumulated Nash welfare, fewest doughnuts to one customer 5.8, Gini 0.406;
DQN with full memory 1049.2, 6.2, 0.309; FairDQN with potential-based shaping only 1089.0, 11.3, 0.125;
FairQCM with the shaping (the tuned entry) 1102.4, 18.4, 0.031. For scale: a random policy scores about
790, a random choice among the customers present 1083 and 15.2, the greedy rule 1103 and 19.7
(``benchmarks/donut_references.py``). Over 10 seeds the tuned entry gives the least-served customer more
than full-memory DQN and than the shaping alone on every seed (18.6 against 10.5 and 16.5,
``benchmarks/RESULTS.md``).
"""

import gymnasium as gym
import torch
from stable_baselines3 import DQN

import sb3_fair  # noqa: F401  (registers sb3_fair/DonutAllocation-v0)
from sb3_fair import FairDQN
from sb3_fair.common.evaluation import evaluate_fairness

torch.set_num_threads(1)  # small networks train faster on one thread (docs/threads-and-parallel-runs.md)
ENV = "sb3_fair/DonutAllocation-v0"
STEPS = 4_000
TUNED = dict(learning_rate=5e-4, batch_size=256, train_freq=1, target_update_interval=1000, seed=0)

agents = {  # name: (algorithm, env arguments, algorithm arguments)
    # the bare env: the observation says who is waiting, not what each customer has had
    "DQN, no memory": (DQN, {"memory": None}, {}),
    # the env's default: each customer's doughnut count in the observation
    "DQN, full memory": (DQN, {}, {}),
    # the same memory, the reward shaped by the potential W(m) / (1 - gamma) of the welfare reached
    "FairDQN, shaping only": (FairDQN, {}, {"potential_shaping": True}),
    # the tuned entry: shaping plus counterfactual replay (every transition also stored for other memories)
    "FairDQN (FairQCM)": (FairDQN, {}, {"counterfactual": True, "potential_shaping": True}),
}
for name, (algo, env_kwargs, kwargs) in agents.items():
    model = algo("MlpPolicy", gym.make(ENV, **env_kwargs), **kwargs, **TUNED).learn(STEPS)
    result = evaluate_fairness(model, gym.make(ENV, **env_kwargs), n_episodes=20)
    print(f"{name:21s} accumulated Nash welfare {result['episode_reward']:7.1f}, doughnuts handed out "
          f"{result['utilitarian']:5.1f}, fewest to one customer {result['egalitarian']:5.1f}, Gini {result['gini']:.3f}")
