from sb3_contrib.ppo_mask.policies import CnnPolicy, MlpPolicy, MultiInputPolicy

from sb3_fair.ppo_mask.fair_ppo_mask import FairMaskablePPO

__all__ = ["CnnPolicy", "FairMaskablePPO", "MlpPolicy", "MultiInputPolicy"]
