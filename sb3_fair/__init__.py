"""sb3-fair: fairness for Stable-Baselines3.

Swap ``PPO`` for :class:`FairPPO`, ``DQN`` for :class:`FairDQN`, ``DDPG``/``TD3`` for
:class:`FairDDPG`/:class:`FairTD3`, sb3-contrib's ``MaskablePPO``/``RecurrentPPO`` for
:class:`FairMaskablePPO`/:class:`FairRecurrentPPO` (or wrap an env with :mod:`sb3_fair.wrappers`)
and get fairness figures logged next to the reward under ``fairness/``.

References (docstrings cite them by authors and year):

* La Malfa, Zhang, Luck, Black (2024), *Using Protected Attributes to Consider Fairness in Multi-Agent
  Systems*, AEQUITAS workshop at ECAI 2024, arXiv:2410.12889: the group metrics (DP, CF, CSP).
* La Malfa, Zhang, Luck, Black (2025), *Fairness Aware Reinforcement Learning via Proximal Policy
  Optimization*, arXiv:2502.03953: fair-PPO's group penalties, Allelopathic Harvest.
* Grupen, Selman, Lee (2022), *Cooperative Multi-Agent Fairness and Equivariant Policies*, AAAI 2022,
  arXiv:2106.05727: team fairness, Fair-E, Fair-ER, pursuit-evasion.
* Alamdari, Klassen, Creager, McIlraith (2024), *Remembering to Be Fair: Non-Markovian Fairness in
  Sequential Decision Making*, ICML 2024, arXiv:2312.04772: fairness schemes, memory, FairQCM,
  doughnuts and lending.
* Hu, Lear, Zhang (2024), *Striking a Balance in Fairness for Dynamic Systems Through Reinforcement
  Learning*, arXiv:2401.06318: short- and long-term fairness, F-PPO.
"""

# envs registers the environments and its factories' env classes; wrappers the wrappers those factories compose
# (registration hooks, sb3_fair.common.registration)
from sb3_fair import _moved, envs, wrappers  # noqa: F401
from sb3_fair.common.stakeholders import Stakeholders
from sb3_fair.cpo import CPO
from sb3_fair.ddpg import FairDDPG
from sb3_fair.dqn import FairDQN
from sb3_fair.ppo import FairPPO
from sb3_fair.ppo_mask import FairMaskablePPO
from sb3_fair.ppo_recurrent import FairRecurrentPPO
from sb3_fair.td3 import FairTD3

__version__ = "0.4.0"

_moved.install()  # the module paths of 0.3.0 that saved models name

__all__ = [
    "CPO",
    "FairDDPG",
    "FairDQN",
    "FairMaskablePPO",
    "FairPPO",
    "FairRecurrentPPO",
    "FairTD3",
    "Stakeholders",
    "__version__",
]
