"""FairPPO (demographic-parity penalty) against PPO on a small Allelopathic Harvest (La Malfa et al. 2025).

One policy is shared by all 8 agents of 4 games played side by side; half of the agents are
impaired (they act only every second step), which is the protected attribute.

    python examples/fair_ppo_harvest.py       # 3 min 51 s on 2 cores shared with a sweep

Measured (seed 0): PPO returns 1083.7 to the unimpaired agents and 489.2 to the impaired, normalised DP
unfairness 0.378; FairPPO 343.4 and 356.2, 0.022; price of fairness -68 % (unimpaired), -27 % (impaired).
The settings are the tuned entry of ``sb3_fair/hyperparams/fair_ppo.yml`` (its comment gives the sweeps that found them).
"""

import torch
from stable_baselines3 import PPO

from sb3_fair import FairPPO
from sb3_fair.common.evaluation import evaluate_group_fairness, price_of_fairness_table
from sb3_fair.envs import AllelopathicHarvestEnv
from sb3_fair.wrappers import make_multiagent_vec_env

torch.set_num_threads(1)  # small networks train faster on one thread (docs/threads-and-parallel-runs.md)
STEPS = 500_000  # agent-steps (208 games of 8 agents); the paper trains 1000 games of 40 agents x 3000 steps
KW = dict(n_steps=150, batch_size=600, n_epochs=10, learning_rate=1e-3, ent_coef=0.01, seed=0)


def vec_env():
    return make_multiagent_vec_env(AllelopathicHarvestEnv.from_preset("small"), n_instances=4)


models = {
    "PPO": PPO("MlpPolicy", vec_env(), **KW),
    # alpha = beta = 0.5, one of the fair-PPO paper's four fairest DP settings (Table 1)
    "FairPPO": FairPPO("MlpPolicy", vec_env(), fairness="dp", alpha=0.5, beta=0.5, **KW),
}
results = {}
for name, model in models.items():
    model.learn(STEPS)
    results[name] = evaluate_group_fairness(model, AllelopathicHarvestEnv.from_preset("small"), n_episodes=10)
    table = results[name]["table"]
    print(f"{name:8s} return unimpaired {table[0]['mean_return']:6.1f}, impaired {table[1]['mean_return']:6.1f}, "
          f"normalised DP unfairness {abs(results[name]['dp_norm']):.3f}")
pof = price_of_fairness_table(results["FairPPO"], results["PPO"])
print(f"price of fairness: unimpaired {pof[0]:+.0f} %, impaired {pof[1]:+.0f} %")
