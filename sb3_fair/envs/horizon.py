"""How a fixed-length simulation reports its last step: one rule for every env with a ``horizon``."""

from __future__ import annotations

from typing import Any

import gymnasium as gym


def horizon_end(t: int, horizon: int, horizon_terminates: bool = False) -> tuple[bool, bool]:
    """``(terminated, truncated)`` after step ``t`` (1-based) of an episode of ``horizon`` steps.

    A fixed horizon that the observation does not show is a time limit: ``truncated=True`` and SB3
    bootstraps the last step from the value of the next state. ``horizon_terminates=True`` reports it
    as ``terminated=True`` instead (no bootstrap), as the authors' codes of Hu, Lear, Zhang (2024,
    arXiv:2401.06318) and of Yu et al. (2022) did.
    """
    at_horizon = t >= horizon
    return at_horizon and horizon_terminates, at_horizon and not horizon_terminates


class TerminalHorizon(gym.Wrapper):
    """Report the end of every episode as ``terminated``, never ``truncated``: how sb3-fair 0.1.0's doughnut and
    lending envs ended, so that SB3 did not bootstrap the last step (the ablation of ``sb3-fair reproduce paper003``).

    Example::

        env = TerminalHorizon(gym.make("sb3_fair/DonutAllocation-v0"))
    """

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        return obs, reward, bool(terminated or truncated), False, info


__all__ = ["TerminalHorizon", "horizon_end"]
