from sb3_fair.common.fair_er.regularizer import equivariance_distance
from sb3_fair.ddpg.fair_ddpg import FairDDPG
from sb3_fair.ddpg.policies import CnnPolicy, EquivariantActor, FairEPolicy, MlpPolicy, MultiInputPolicy
from sb3_fair.td3.fair_td3 import FairTD3

__all__ = [
    "CnnPolicy",
    "EquivariantActor",
    "FairDDPG",
    "FairEPolicy",
    "FairTD3",
    "MlpPolicy",
    "MultiInputPolicy",
    "equivariance_distance",
]
