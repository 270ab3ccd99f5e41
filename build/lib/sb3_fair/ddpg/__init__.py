from sb3_fair.common.fair_er.regularizer import equivariance_distance
from sb3_fair.ddpg.fair_ddpg import FairDDPG
from sb3_fair.ddpg.policies import CnnPolicy, EquivariantActor, FairEPolicy, MlpPolicy, MultiInputPolicy

__all__ = [
    "CnnPolicy",
    "EquivariantActor",
    "FairDDPG",
    "FairEPolicy",
    "MlpPolicy",
    "MultiInputPolicy",
    "equivariance_distance",
]
