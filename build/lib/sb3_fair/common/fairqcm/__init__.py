"""FairQCM (Alamdari et al. 2024, arXiv:2312.04772): the memory of the stakeholders' status (Def. 5.2), the
fairness reward of a memory (Defs. 5.6, 5.8) and the replay buffers that take counterfactual transitions (§5.2,
Eq. 2). :class:`~sb3_fair.wrappers.MemoryAugmentation` and :class:`~sb3_fair.wrappers.FairnessReward` apply the
memory update and the reward to real transitions, :class:`~sb3_fair.FairDQN` to counterfactual ones: the same
functions."""

from sb3_fair.common.fairqcm.buffers import CounterfactualDictReplayBuffer, CounterfactualReplayBuffer
from sb3_fair.common.fairqcm.memory import MemorySpec, counterfactual_memories, update_memory
from sb3_fair.common.fairqcm.reward import RewardSpec, fairness_reward

__all__ = [
    "CounterfactualDictReplayBuffer",
    "CounterfactualReplayBuffer",
    "MemorySpec",
    "RewardSpec",
    "counterfactual_memories",
    "fairness_reward",
    "update_memory",
]
