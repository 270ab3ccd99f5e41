"""Gymnasium wrappers (fairness monitor, memory augmentation, fairness-scheme rewards) and the
multi-agent adapters (PettingZoo -> SB3 VecEnv, counterfactual twin pair)."""

from sb3_fair.common.monitor import FairnessMonitor, ParallelFairnessMonitor
from sb3_fair.wrappers.fairness_reward import FairnessReward
from sb3_fair.wrappers.fairness_signals import FairnessSignals, ParallelFairnessSignals
from sb3_fair.wrappers.memory_augmentation import MemoryAugmentation
from sb3_fair.wrappers.multiagent import CounterfactualPair, PettingZooVecEnv, make_multiagent_vec_env

__all__ = [
    "CounterfactualPair",
    "FairnessMonitor",
    "FairnessReward",
    "FairnessSignals",
    "MemoryAugmentation",
    "ParallelFairnessMonitor",
    "ParallelFairnessSignals",
    "PettingZooVecEnv",
    "make_multiagent_vec_env",
]
