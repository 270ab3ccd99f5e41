"""CPO: sb3-contrib's TRPO with Constrained Policy Optimization's update on one of the env's fairness gaps."""

from sb3_fair.cpo.cpo import CPO, CPOStep, cpo_step

__all__ = ["CPO", "CPOStep", "cpo_step"]
