"""sb3-fair: fairness for Stable-Baselines3.

Swap ``PPO`` for :class:`FairPPO`, ``DQN`` for :class:`FairDQN` (``DDPG``/``TD3`` for :class:`FairDDPG`/:class:`FairTD3`) (or wrap an env with :mod:`sb3_fair.wrappers`) and get fairness
figures logged next to the reward under ``fairness/``.
"""

from sb3_fair import envs  # noqa: F401  (registers the environments)
from sb3_fair.common.stakeholders import Stakeholders
from sb3_fair.ddpg import FairDDPG, FairTD3
from sb3_fair.dqn import FairDQN
from sb3_fair.ppo import FairPPO

__version__ = "0.2.0"

__all__ = ["FairDDPG", "FairDQN", "FairPPO", "FairTD3", "Stakeholders", "__version__"]
