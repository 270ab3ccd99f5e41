"""Gymnasium wrappers (stakeholder declaration, fairness monitor, memory augmentation, fairness-scheme rewards, derived
fairness signals) and the multi-agent adapters (PettingZoo -> SB3 VecEnv, black death, counterfactual twin pair)."""

from sb3_fair.common.monitor import FairnessMonitor, ParallelFairnessMonitor
from sb3_fair.common.registration import register_wrapper
from sb3_fair.wrappers.fairness_reward import FairnessReward
from sb3_fair.wrappers.fairness_signals import FairnessSignals, ParallelFairnessSignals
from sb3_fair.wrappers.memory_augmentation import MemoryAugmentation
from sb3_fair.wrappers.multiagent import BlackDeath, CounterfactualPair, PettingZooVecEnv, make_multiagent_vec_env
from sb3_fair.wrappers.stakeholders import DeclareStakeholders, ParallelDeclareStakeholders

# the factories of sb3_fair.envs (make_donut_allocation, make_loan_applicants) compose these two: the envs may not
# import the wrappers (a sibling of their layer), so they find them here (a registration hook)
register_wrapper(MemoryAugmentation)
register_wrapper(FairnessReward)

__all__ = [
    "BlackDeath",
    "CounterfactualPair",
    "DeclareStakeholders",
    "FairnessMonitor",
    "FairnessReward",
    "FairnessSignals",
    "MemoryAugmentation",
    "ParallelDeclareStakeholders",
    "ParallelFairnessMonitor",
    "ParallelFairnessSignals",
    "PettingZooVecEnv",
    "make_multiagent_vec_env",
]
