"""Fair-ER and Fair-E (Grupen, Selman, Lee 2022, arXiv:2106.05727): the equivariance regulariser as a mixin for TD3
and DDPG (Eqs. 9-11) and the equivariant actor, for a team env that describes its agent-permutation symmetry (Eq. 8,
:class:`~sb3_fair.common.symmetry.AgentSymmetry`, part of the env protocol and re-exported here)."""

from sb3_fair.common.fair_er.equivariant_actor import EquivariantActor, FairEPolicy
from sb3_fair.common.fair_er.regularizer import DISTANCES, FairERMixin, equivariance_distance
from sb3_fair.common.symmetry import AgentSymmetry

__all__ = ["DISTANCES", "AgentSymmetry", "EquivariantActor", "FairEPolicy", "FairERMixin", "equivariance_distance"]
