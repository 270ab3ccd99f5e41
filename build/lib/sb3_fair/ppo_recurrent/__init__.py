from sb3_contrib.ppo_recurrent.policies import CnnLstmPolicy, MlpLstmPolicy, MultiInputLstmPolicy

from sb3_fair.ppo_recurrent.fair_ppo_recurrent import FairRecurrentPPO

__all__ = ["CnnLstmPolicy", "FairRecurrentPPO", "MlpLstmPolicy", "MultiInputLstmPolicy"]
