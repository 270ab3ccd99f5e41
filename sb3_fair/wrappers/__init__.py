"""Gymnasium wrappers: fairness monitor, memory augmentation and fairness-scheme rewards."""

from sb3_fair.wrappers.memory import MemoryAugmentation
from sb3_fair.wrappers.monitor import FairnessMonitor
from sb3_fair.wrappers.reward import FairnessReward

__all__ = ["FairnessMonitor", "FairnessReward", "MemoryAugmentation"]
