from sb3_fair.common.group_penalty.term import METRICS, advantage_weights
from sb3_fair.ppo.fair_ppo import FairPPO
from sb3_fair.ppo.policies import CnnPolicy, MlpPolicy, MultiInputPolicy

__all__ = ["METRICS", "CnnPolicy", "FairPPO", "MlpPolicy", "MultiInputPolicy", "advantage_weights"]
