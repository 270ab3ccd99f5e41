"""FairTD3's policies: SB3's TD3 policies and the Fair-E policy."""

from stable_baselines3.td3.policies import CnnPolicy, MlpPolicy, MultiInputPolicy

from sb3_fair.common.fair_er.equivariant_actor import EquivariantActor, FairEPolicy

__all__ = ["CnnPolicy", "EquivariantActor", "FairEPolicy", "MlpPolicy", "MultiInputPolicy"]
