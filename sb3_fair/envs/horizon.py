"""How a fixed-length simulation reports its last step, and how long it may be: one rule for every env with a ``horizon``."""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from sb3_fair.common.validation import check_int

#: the longest episode any env of sb3-fair accepts (``horizon``, ``max_steps``, and timers counted in steps). An
#: episode of 10^9 steps is far beyond any training budget, and the quantities that grow with it stay exact and
#: finite: step counters in int64 and float64 (exact below 2^53), the lending envs' penalties of -10 T in float64
#: and float32, and bounds such as the attention env's ``initial_rate + horizon * increase_rate``. A Python int
#: far beyond int64 (``10**30``) would otherwise fail at the first step, inside NumPy or at a float conversion.
MAX_HORIZON = 10**9


#: the most stakeholders (customers, agents) an env of sb3-fair accepts (``n_customers``, ``n_agents``): arrays,
#: observations and spaces grow with it, and the memory wrapper, the group penalties and the counterfactual sets grow
#: with it again. 10^4 is far beyond any task of the papers (at most 40 agents); a size such as 10^9 would otherwise end
#: in NumPy's ``MemoryError`` at construction, after minutes of allocation, naming no argument.
MAX_STAKEHOLDERS = 10_000


def check_count(
    value: Any,
    name: str,
    minimum: int,
    maximum: int = MAX_STAKEHOLDERS,
    cap: str = "MAX_STAKEHOLDERS",
    why: str = "the env allocates arrays of this size",
) -> int:
    """``value`` as an int in ``[minimum, maximum]``; the error names ``name``, the range, the cap and ``why``."""
    v = check_int(value, name, minimum)
    if v > maximum:
        raise ValueError(f"{name} must be an int in [{minimum}, {maximum}] ({cap}: {why}), got {value!r}")
    return v


def check_horizon(value: Any, name: str = "horizon", minimum: int = 1) -> int:
    """``value`` as an int in ``[minimum, MAX_HORIZON]``; the error names ``name`` and the range (:data:`MAX_HORIZON`)."""
    v = check_int(value, name, minimum)
    if v > MAX_HORIZON:
        raise ValueError(f"{name} must be an int in [{minimum}, {MAX_HORIZON:.0e}] (MAX_HORIZON, steps), got {value!r}")
    return v


def horizon_end(t: int, horizon: int, horizon_terminates: bool = False) -> tuple[bool, bool]:
    """``(terminated, truncated)`` after step ``t`` (1-based) of an episode of ``horizon`` steps.

    A fixed horizon that the observation does not show is a time limit: ``truncated=True`` and SB3
    bootstraps the last step from the value of the next state. ``horizon_terminates=True`` reports it
    as ``terminated=True`` instead (no bootstrap), as the authors' codes of Hu, Lear, Zhang (2024,
    arXiv:2401.06318) and of Yu et al. (2022) did.
    """
    at_horizon = t >= horizon
    return at_horizon and horizon_terminates, at_horizon and not horizon_terminates


class TerminalHorizon(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Report the end of every episode as ``terminated``, never ``truncated``: how sb3-fair 0.1.0's doughnut and
    lending envs ended, so that SB3 did not bootstrap the last step (the ablation of the repository's ``benchmarks/fairqcm.py --ablation``).

    Example::

        env = TerminalHorizon(gym.make("sb3_fair/DonutAllocation-v0"))
    """

    def __init__(self, env: gym.Env) -> None:
        gym.utils.RecordConstructorArgs.__init__(self)
        gym.Wrapper.__init__(self, env)

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        return obs, reward, bool(terminated or truncated), False, info


__all__ = ["MAX_HORIZON", "MAX_STAKEHOLDERS", "TerminalHorizon", "check_count", "check_horizon", "horizon_end"]
