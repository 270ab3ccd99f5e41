"""What two or more parts of sb3-fair share: the stakeholder contract, memory, fairness reward, logging."""

from sb3_fair.common.stakeholders import Stakeholders, get_benefits, get_stakeholders

__all__ = ["Stakeholders", "get_benefits", "get_stakeholders"]
