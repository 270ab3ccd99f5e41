"""FairDDPG uses TD3's policies, as SB3's DDPG does (Fair-E included)."""

from sb3_fair.td3.policies import CnnPolicy, EquivariantActor, FairEPolicy, MlpPolicy, MultiInputPolicy

__all__ = ["CnnPolicy", "EquivariantActor", "FairEPolicy", "MlpPolicy", "MultiInputPolicy"]
