"""FairDQN uses SB3's DQN policies unchanged: fairness enters through the replay buffer, not the network."""

from stable_baselines3.dqn.policies import CnnPolicy, DQNPolicy, MlpPolicy, MultiInputPolicy, QNetwork

__all__ = ["CnnPolicy", "DQNPolicy", "MlpPolicy", "MultiInputPolicy", "QNetwork"]
