"""sb3-fair: fairness for Stable-Baselines3.

Swap ``DQN`` for :class:`FairDQN` (or wrap an env with :mod:`sb3_fair.wrappers`) and get fairness
figures logged next to the reward under ``fairness/``.
"""

from sb3_fair import envs  # noqa: F401  (registers the environments)
from sb3_fair.common.stakeholders import Stakeholders
from sb3_fair.dqn import FairDQN

__version__ = "0.1.0"

__all__ = ["FairDQN", "Stakeholders", "__version__"]
