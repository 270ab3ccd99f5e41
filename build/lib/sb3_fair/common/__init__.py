"""What two or more parts of sb3-fair share: the stakeholder contract and its protocol, the figure table, the
monitors, memory, fairness reward, logging."""

from sb3_fair.common.protocol import get_benefits, get_stakeholders
from sb3_fair.common.stakeholders import Stakeholders

__all__ = ["Stakeholders", "get_benefits", "get_stakeholders"]
