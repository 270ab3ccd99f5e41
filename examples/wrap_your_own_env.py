"""Make your own Gymnasium env fairness-aware: honour the stakeholder contract, then wrap it.

    python examples/wrap_your_own_env.py
"""

import gymnasium as gym
import numpy as np
import torch
from gymnasium import spaces

from sb3_fair import FairDQN, Stakeholders
from sb3_fair.wrappers import FairnessMonitor, FairnessReward, MemoryAugmentation

torch.set_num_threads(1)  # small networks train faster on one thread (docs/threads-and-parallel-runs.md)


class WaterTanks(gym.Env):
    """Each step one of three villages gets a water delivery; village 2 is harder to reach."""

    def __init__(self):
        # The contract, part 1: who the stakeholders are and their protected attribute.
        self.stakeholders = Stakeholders(names=("north", "south", "hill"), groups=np.array([0, 0, 1]))
        self.observation_space = spaces.Box(0.0, 1.0, (3,), np.float32)
        self.action_space = spaces.Discrete(3)
        self.horizon = 30

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return self.np_random.random(3).astype(np.float32), {}

    def step(self, action):
        self.t += 1
        success = self.np_random.random() < (0.5 if action == 2 else 0.9)
        benefits = np.zeros(3)
        benefits[action] = float(success)
        obs = self.np_random.random(3).astype(np.float32)
        # The contract, part 2: what each stakeholder received at this step.
        # The horizon is a time limit the observation does not show: report it as truncated (not
        # terminated) so that SB3 bootstraps the last step instead of treating it as an end state.
        return obs, float(success), False, self.t >= self.horizon, {"benefits": benefits}


env = WaterTanks()
env = MemoryAugmentation(env, kind="full", encoding="scaled")        # remember who got what
env = FairnessReward(env, welfare="log_nash")                        # reward: log-Nash welfare of deliveries
env = FairnessMonitor(env)                                           # fairness figures per episode

# Counterfactual replay works on any env with memory + fairness reward; with counterfactual=False this is
# SB3's DQN (plain DQN plus sb3_fair.common.callbacks.FairnessCallback logs the same fairness/* figures).
model = FairDQN("MlpPolicy", env, counterfactual=True, learning_starts=500, exploration_fraction=0.3,
                target_update_interval=500, train_freq=1, batch_size=256, gamma=0.9, seed=0)
model.learn(5_000)  # logs fairness/* next to rollout/ep_rew_mean
# 5k steps only show the plumbing: like the FairQCM paper's doughnuts (100k steps), learning to serve the hill
# village its share takes far longer; see benchmarks/fairqcm.py for full-length runs.

obs, _ = env.reset(seed=1)
done = False
while not done:
    obs, _, terminated, truncated, info = env.step(int(model.predict(obs, deterministic=True)[0]))
    done = terminated or truncated
print("per-village deliveries:", info["fairness"]["returns"], "Gini:", round(info["fairness"]["gini"], 3),
      "log-Nash:", round(info["fairness"]["log_nash"], 3))
