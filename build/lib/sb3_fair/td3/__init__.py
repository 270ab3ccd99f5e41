from sb3_fair.common.fair_er.regularizer import equivariance_distance
from sb3_fair.td3.fair_td3 import FairTD3
from sb3_fair.td3.policies import CnnPolicy, EquivariantActor, FairEPolicy, MlpPolicy, MultiInputPolicy

__all__ = [
    "CnnPolicy",
    "EquivariantActor",
    "FairEPolicy",
    "FairTD3",
    "MlpPolicy",
    "MultiInputPolicy",
    "equivariance_distance",
]
