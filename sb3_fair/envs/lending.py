"""Simulated lending (Alamdari et al. 2024, §6.2, A.4.2; Gaussian credit changes, A.3)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from sb3_fair.common.protocol import BENEFITS
from sb3_fair.common.stakeholders import Stakeholders
from sb3_fair.common.validation import as_float_array, check_probability
from sb3_fair.envs.horizon import check_horizon
from sb3_fair.envs.rendering import RENDER_MODES, bars_rgb, check_render_mode

CREDIT_MIN, CREDIT_MAX = 0.2, 0.9


def credit_after(credit: float, delta: float) -> float:
    """An applicant's credit after a change: ``credit + delta`` rounded to 10 decimals and clipped to [0.2, 0.9].

    Bit for bit ``float(np.clip(np.round(credit + delta, 10), CREDIT_MIN, CREDIT_MAX))``, on Python floats (the
    NumPy calls cost about 5 µs a loan): NumPy rounds to 10 decimals as ``rint(x * 1e10) / 1e10``, and ``rint``
    rounds ties to even as Python's ``round`` does; the clip is a max and a min.

    :param credit: the applicant's credit before the loan.
    :param delta: the change (finite).
    :return: the new credit.
    """
    rounded = float(round((credit + delta) * 1e10)) / 1e10
    return min(max(rounded, CREDIT_MIN), CREDIT_MAX)


class LoanApplicantsEnv(gym.Env):
    """A bank grants one loan per step to one of a finite pool of applicants (Alamdari et al. 2024, §6.2, A.4.2).

    Four applicants: group A = {0, 1} (the protected group, ``groups = 1``) starts with credit 0.5,
    group B = {2, 3} (``groups = 0``) with 0.9. Credit is the repayment probability and stays in
    [0.2, 0.9]. Each applicant applies with probability 0.9 at every step. Action ``i`` grants a
    loan to applicant i: if i applied, the bank gains 1 on repayment (and i's credit rises by 0.1)
    or loses 1 on default (credit falls by 0.1); ``info["benefits"]`` is 1 for the borrower.

    The bare env's reward holds the task penalties of the paper: ``-horizon`` for a loan to
    someone who did not apply (the episode goes on) and ``-10 * horizon`` at the end unless
    ``repaid - defaulted >= horizon / 10`` (the 10 % profit margin). The fairness part of the
    paper's reward, ``-|U_A - U_B|`` for a valid loan, comes from
    :class:`~sb3_fair.wrappers.FairnessReward` (``welfare="parity", aggregate="group"``), composed by
    ``gym.make("sb3_fair/LoanApplicants-v0")``.

    Observation: ``[applied (4), credit (4), (repaid - defaulted) / horizon]``.

    The episode ends after ``horizon`` steps with ``truncated=True`` (``terminated=False``): the
    observation carries no clock, and the authors' code bootstraps the last transition like every
    other (its replay memory has no done flag), so the horizon is a time limit in Gymnasium's terms.
    The end penalty stays in the last step's reward.

    Deviation from the authors' code, which uses integer credit levels 0..7 with repayment
    probability (level + 2) / 10, starts group A at level 4 (0.6), codes the observation in binary and
    adds the end penalty by *replacing* the last reward: we follow the paper's text (credit as
    probability in [0.2, 0.9], steps of 0.1, group A at 0.5) and *add* the end penalty to the last
    step's reward. The authors' own DQN learns less on this env than on theirs, and as on theirs with
    ``initial_credit=(0.6, 0.6, 0.9, 0.9)`` (the documentation's reproduction page, "Alamdari et al.
    2024: FairQCM").

    :param horizon: episode length T (paper: 40), at most :data:`~sb3_fair.envs.horizon.MAX_HORIZON`.
    :param apply_prob: probability that an applicant applies at a step (paper: 0.9).
    :param initial_credit: credit of the four applicants at the start (paper: 0.5, 0.5, 0.9, 0.9).
    :param credit_change: ``"fixed"`` (+-0.1, §6.2) or ``"gaussian"`` (A.3: N(+0.05, 0.1) on
        repayment, N(-0.05, 0.1) on default).
    """

    metadata = {"render_modes": RENDER_MODES, "render_fps": 4}

    def __init__(
        self,
        horizon: int = 40,
        apply_prob: float = 0.9,
        initial_credit: tuple[float, ...] = (0.5, 0.5, 0.9, 0.9),
        credit_change: str = "fixed",
        render_mode: str | None = None,
    ) -> None:
        self.horizon = check_horizon(horizon)  # the rewards -T and -10 T stay exact floats
        self.apply_prob = check_probability(apply_prob, "apply_prob")
        accepted = f"4 values in [{CREDIT_MIN}, {CREDIT_MAX}]"
        credit = as_float_array(initial_credit, "initial_credit", accepted)
        if credit.shape != (4,) or not np.all((credit >= CREDIT_MIN) & (credit <= CREDIT_MAX)):  # also False for NaN
            raise ValueError(f"initial_credit must be 4 values in [{CREDIT_MIN}, {CREDIT_MAX}], got {initial_credit!r}")
        if credit_change not in ("fixed", "gaussian"):
            raise ValueError(f"credit_change must be one of ['fixed', 'gaussian'], got {credit_change!r}")
        self.initial_credit = credit
        self.credit_change = credit_change
        self.render_mode = check_render_mode(render_mode)
        self.gamma = 0.95
        self.n = 4
        self.stakeholders = Stakeholders(
            names=("A0", "A1", "B0", "B1"), groups=np.array([1, 1, 0, 0]), group_names={1: "A", 0: "B"}
        )
        low = np.concatenate([np.zeros(4), np.full(4, CREDIT_MIN), [-1.0]]).astype(np.float32)
        high = np.concatenate([np.ones(4), np.full(4, CREDIT_MAX), [1.0]]).astype(np.float32)
        self.observation_space = spaces.Box(low=low, high=high, dtype=np.float32)
        self.action_space = spaces.Discrete(4)
        self.credit = credit.copy()
        self.applied = np.zeros(4, dtype=np.int8)
        self.repaid = 0
        self.defaulted = 0
        self.t = 0

    @property
    def profit(self) -> int:
        """Repaid minus defaulted loans so far (each worth +-1 to the bank)."""
        return self.repaid - self.defaulted

    def _obs(self) -> np.ndarray:
        # [applied, credit, profit / horizon], each part cast to float32 as its concatenation was, written into
        # one new array (a concatenation and a cast cost more than the step's dynamics)
        obs = np.empty(9, dtype=np.float32)
        obs[:4] = self.applied
        obs[4:8] = self.credit
        obs[8] = self.profit / self.horizon
        return obs

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.credit = self.initial_credit.copy()
        self.repaid = self.defaulted = self.t = 0
        self.applied = (self.np_random.random(4) < self.apply_prob).astype(np.int8)
        return self._obs(), {"profit": 0}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        a = int(action)
        if not 0 <= a < 4:
            raise ValueError(f"action must be in [0, 4), got {action!r}")
        benefits = np.zeros(4, dtype=np.float64)
        reward = 0.0
        repaid = None
        if self.applied[a]:
            benefits[a] = 1.0
            repaid = bool(self.np_random.random() < self.credit[a])
            if self.credit_change == "fixed":
                delta = 0.1 if repaid else -0.1
            else:
                delta = self.np_random.normal(0.05 if repaid else -0.05, 0.1)
            self.credit[a] = credit_after(float(self.credit[a]), delta)
            if repaid:
                self.repaid += 1
            else:
                self.defaulted += 1
        else:
            reward -= self.horizon
        self.t += 1
        truncated = self.t >= self.horizon
        margin_met = self.profit >= self.horizon / 10
        if truncated and not margin_met:
            reward -= 10.0 * self.horizon
        self.applied = (self.np_random.random(4) < self.apply_prob).astype(np.int8)
        info = {
            BENEFITS: benefits,
            "valid_loan": repaid is not None,
            "repaid": repaid,
            "profit": self.profit,
            "margin_met": margin_met,
        }
        return self._obs(), reward, False, truncated, info

    def render(self) -> str | np.ndarray | None:
        if self.render_mode == "ansi":
            return f"t={self.t} applied={self.applied.tolist()} credit={np.round(self.credit, 2).tolist()} profit={self.profit}"
        if self.render_mode == "rgb_array":
            return bars_rgb(self.credit, CREDIT_MAX, self.stakeholders.groups, self.applied)
        return None
