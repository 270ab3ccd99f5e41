from sb3_fair.dqn.fair_dqn import FairDQN
from sb3_fair.dqn.policies import CnnPolicy, MlpPolicy, MultiInputPolicy
from sb3_fair.dqn.presets import PAPER_EPISODES, PRESETS, preset_kwargs

__all__ = ["PAPER_EPISODES", "PRESETS", "CnnPolicy", "FairDQN", "MlpPolicy", "MultiInputPolicy", "preset_kwargs"]
