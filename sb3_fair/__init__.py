"""sb3-fair: fairness for Stable-Baselines3.

Swap ``PPO`` for :class:`FairPPO`, ``DQN`` for :class:`FairDQN`, ``DDPG``/``TD3`` for
:class:`FairDDPG`/:class:`FairTD3`, sb3-contrib's ``MaskablePPO``/``RecurrentPPO`` for
:class:`FairMaskablePPO`/:class:`FairRecurrentPPO` (or wrap an env with :mod:`sb3_fair.wrappers`)
and get fairness figures logged next to the reward under ``fairness/``.
"""

from sb3_fair import envs  # noqa: F401  (registers the environments)
from sb3_fair.common.stakeholders import Stakeholders
from sb3_fair.ddpg import FairDDPG
from sb3_fair.dqn import FairDQN
from sb3_fair.ppo import FairPPO
from sb3_fair.ppo_mask import FairMaskablePPO
from sb3_fair.ppo_recurrent import FairRecurrentPPO
from sb3_fair.td3 import FairTD3

__version__ = "0.2.0"

__all__ = ["FairDDPG", "FairDQN", "FairMaskablePPO", "FairPPO", "FairRecurrentPPO", "FairTD3", "Stakeholders", "__version__"]
