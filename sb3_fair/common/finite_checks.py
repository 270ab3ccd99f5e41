"""The finite-input guard of every Fair class: :class:`FiniteInputCheck` stops training at the step whose observation
or reward is NaN or inf, before the policy or the buffer sees it; :func:`all_finite` and :func:`first_bad_row` are its
checks (also read by :class:`~sb3_fair.common.fair_algorithm.FairAlgorithmMixin` to name the cause when the network
turns NaN)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch as th
from stable_baselines3.common.callbacks import BaseCallback


def all_finite(values: Any) -> bool:
    """Whether an observation (an array, a dict of arrays as in a Dict space, or ``None``) holds no NaN or inf.

    Integer and boolean arrays (images, discrete observations) cannot hold either and are not scanned.
    """
    if values is None:
        return True
    if isinstance(values, dict):
        return all(all_finite(v) for v in values.values())
    if isinstance(values, th.Tensor):
        return not values.is_floating_point() or bool(th.isfinite(values).all())
    arr = np.asarray(values)
    return arr.dtype.kind not in "fc" or bool(np.isfinite(arr).all())


def first_bad_row(values: Any) -> int:
    """The first sub-env whose observation (a batch, or a dict of batches) holds NaN or inf."""
    if isinstance(values, dict):
        rows = [first_bad_row(v) for v in values.values() if not all_finite(v)]
        return min(rows) if rows else -1
    arr = np.asarray(values)
    bad = ~np.isfinite(arr.reshape(len(arr), -1)).all(axis=1) if arr.ndim else np.array([True])
    return int(np.flatnonzero(bad)[0]) if bad.any() else -1


class FiniteInputCheck(BaseCallback):
    """Stops training with a clear error at the step whose observation or reward is NaN or inf, before the
    policy or the buffer sees it.

    SB3 hands each observation to the policy at the next step; a NaN would make every action
    distribution NaN (torch's ``Categorical`` then raises its own ``ValueError``) or, off-policy,
    reach the network's weights at the next update; a NaN reward turns the value targets NaN, which an
    off-policy run may train on for many updates before its weights show it. Checked: the
    observation the rollout starts from, every step's ``new_obs`` and ``rewards``, and the terminal
    observation of an episode that ended (SB3 bootstraps from it). Two ``np.isfinite`` per step; no
    random number is drawn.
    """

    def _fail(self, where: str, sub_env: int, what: str = "an observation") -> None:
        raise ValueError(
            f"{type(self.model).__name__}: the env returned {what} holding NaN or inf ({where}, sub-env {sub_env}, "
            f"{self.model.num_timesteps} timesteps): the env's {'rewards' if what == 'a reward' else 'observations'} are "
            "the cause; check the env and its wrappers (or VecNormalize). SB3 would train on it, and the network would "
            "become NaN"
        )

    def _on_training_start(self) -> None:
        last = getattr(self.model, "_last_obs", None)
        if not all_finite(last):
            self._fail("the observation training starts from", first_bad_row(last))

    def _on_step(self) -> bool:
        new_obs, rewards = self.locals.get("new_obs"), self.locals.get("rewards")
        # the common case in one test: float observations and numeric rewards whose float64 sum is finite. A NaN or
        # inf entry makes that sum non-finite, so a finite sum means every entry is; a sum that overflows (float64
        # observations near 1e308) goes to the exact checks below
        fast = (
            type(new_obs) is np.ndarray
            and type(rewards) is np.ndarray
            and new_obs.dtype.kind == "f"
            and rewards.dtype.kind in "fiub"
            and math.isfinite(new_obs.sum(dtype=np.float64) + rewards.sum(dtype=np.float64))
        )
        if not fast:
            if not all_finite(new_obs):
                self._fail("the observation after this step", first_bad_row(new_obs))
            if not all_finite(rewards):
                self._fail(
                    "the reward of this step",
                    first_bad_row(np.asarray(rewards, dtype=np.float64).reshape(-1, 1)),
                    "a reward",
                )
        dones = self.locals.get("dones")
        if dones is not None and dones.any():
            infos = self.locals.get("infos") or ()
            for i in np.flatnonzero(dones):
                if i < len(infos) and not all_finite(infos[i].get("terminal_observation")):
                    self._fail("the terminal observation of the episode that ended", int(i))
        return True


__all__ = ["FiniteInputCheck", "all_finite", "first_bad_row"]
