"""F-PPO's long-term advantage regularisation (and the A-PPO baseline) as a fairness term of any on-policy parent.

Hu, Lear, Zhang (2024), *Striking a Balance in Fairness for Dynamic Systems Through Reinforcement
Learning*, arXiv:2401.06318, Eqs. 4 and 7; A-PPO: Yu, Qin, Lee, Gao (2022), *Policy Optimization with
Advantage Regularization for Long-Term Fairness in Decision Systems*, NeurIPS 2022, arXiv:2210.12546.

Two parts, on the seam of :mod:`sb3_fair.common.fairness_terms`:

* :class:`LongTermTracker`, a callback that reads the env's fairness signals from every step's
  infos (:func:`~sb3_fair.common.protocol.get_fairness_signal_lists`) and writes, for each rollout step,
  Δs after the action, its change ``Δs_t - Δs_{t-1}``, Δl after the step and its change
  ``Δl_{t+1} - Δl_t`` into the rollout buffer's arrays of :data:`SIGNALS` (the parent's own buffer class, whichever
  it chose, with :class:`~sb3_fair.common.fairness_terms.FairnessBufferMixin` mixed in). After an episode ends, the
  "before" values of the next episode's first step are the reset info's (the innermost VecEnv's ``reset_infos``); an
  env that puts no signals in its reset info gives that step changes of 0.
* :class:`LongTermTerm`, which owns the keyword arguments and hands PPO, for every minibatch, the advantages
  regularised as :func:`~sb3_fair.common.long_term.regularized_advantages` computes them (per minibatch, as the
  authors' code does; PPO then standardises them as usual). The value targets (returns) are never touched.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import VecEnv

from sb3_fair.common.fairness_terms.base import FairnessTerm, register_term
from sb3_fair.common.long_term.advantages import MODES, a_ppo_terms, long_term_terms, weighted_rows
from sb3_fair.common.protocol import get_fairness_signal_lists, is_fairness_signals_supported
from sb3_fair.common.validation import check_choice, check_coef, check_weights

if TYPE_CHECKING:
    from stable_baselines3.common.on_policy_algorithm import OnPolicyAlgorithm

#: the ``fairness`` values this term implements
LONG_TERM_METRICS = ("long_term", "a_ppo")
#: the per-step arrays the tracker writes into the rollout buffer
SIGNALS = ("short_term", "short_term_change", "long_term", "long_term_change")


class LongTermTracker(BaseCallback):
    """Writes each rollout step's fairness signals into the model's (long-term) rollout buffer.

    SB3 calls ``on_step`` after ``env.step`` and before adding the step to the buffer, so the step's
    row is the number of steps since the rollout started. Each step's Δs and Δl are read and checked
    at that step (:func:`~sb3_fair.common.protocol.get_fairness_signal_lists`) and kept as Python
    floats; when the rollout ends they go into the buffer as arrays, with their changes computed
    for all rows at once (this runs at every env step, where NumPy's fixed cost per call would
    dominate).
    """

    model: OnPolicyAlgorithm  # the tracker of an on-policy algorithm's rollout buffer

    def __init__(self) -> None:
        super().__init__()
        self._t = 0
        self._before: tuple[np.ndarray, np.ndarray] | None = None  # each sub-env's Δs and Δl before the next row
        self._rows: tuple[list[list[float]], list[list[float]]] = ([], [])  # Δs and Δl of each step not yet written
        self._resets: list[
            tuple[int, int, float, float]
        ] = []  # (row, sub-env, Δs, Δl): a reset state, that row's "before"
        self._first_row = 0  # the buffer row of self._rows[0]

    def restart(self) -> None:
        """Forget the running episodes (the env was reset): the next training start reads the reset infos."""
        self._before = None
        self._rows, self._resets = ([], []), []  # rows of an interrupted learn() belong to episodes that are gone

    def _reset_value(self, i: int) -> tuple[float, float]:
        """Δs and Δl of sub-env ``i``'s reset state (NaN where the reset info has none; a reset info that reports
        them reports finite numbers, checked as every step's are)."""
        reset_infos = getattr(self.training_env.unwrapped, "reset_infos", None) or []
        info = reset_infos[i] if i < len(reset_infos) else {}
        if is_fairness_signals_supported(info):
            ds, dl = get_fairness_signal_lists([info])
            return ds[0], dl[0]
        return math.nan, math.nan

    def _on_training_start(self) -> None:
        if self._before is None:
            n = self.training_env.num_envs
            values = np.array([self._reset_value(i) for i in range(n)], dtype=np.float64).reshape(n, 2)
            self._before = (values[:, 0].copy(), values[:, 1].copy())
        else:  # an earlier learn() that raised mid-rollout left rows: they set each sub-env's "before" value
            self._write()

    def _on_rollout_start(self) -> None:
        self._write()  # nothing in the normal course of a rollout; rows left by an interrupted one otherwise
        self._t = 0
        self._first_row = 0

    def _on_step(self) -> bool:
        if self._t >= self.model.rollout_buffer.buffer_size:
            return True
        ds, dl = get_fairness_signal_lists(self.locals["infos"])
        self._rows[0].append(ds)
        self._rows[1].append(dl)
        dones = np.asarray(self.locals["dones"], dtype=bool)
        if dones.any():
            for i in np.flatnonzero(dones).tolist():
                self._resets.append((self._t + 1, i, *self._reset_value(i)))
        self._t += 1
        return True

    def _on_rollout_end(self) -> None:
        self._write()

    def _on_training_end(self) -> None:
        self._write()  # a rollout that a callback cut short: the next learn() goes on from its last step

    def _write(self) -> None:
        """Put the collected rows into the buffer: Δs and Δl, and their changes over each step.

        A row's "before" value is the previous row's, or the reset state's after an episode ended
        (NaN where the reset info has none: that row's change is then 0), or the last rollout's for
        the first row.
        """
        if not self._rows[0] or self._before is None:
            return
        buf, start = self.model.rollout_buffer, self._first_row
        end = start + len(self._rows[0])
        for k, (name, change) in enumerate((("short_term", "short_term_change"), ("long_term", "long_term_change"))):
            x = np.array(self._rows[k], dtype=np.float64)
            before = np.empty_like(x)
            before[0] = self._before[k]
            before[1:] = x[:-1]
            carry = x[-1].copy()
            for row, i, *reset in self._resets:
                if row - start < len(x):
                    before[row - start, i] = reset[k]
                else:  # the reset after the last row: the next rollout's "before"
                    carry[i] = reset[k]
            np.copyto(before, x, where=np.isnan(before))  # no reset value: no change on the episode's first step
            getattr(buf, name)[start:end] = x
            getattr(buf, change)[start:end] = x - before
            self._before[k][:] = carry
        self._rows = ([], [])
        self._resets = []
        self._first_row = end


def check_coef_pair(value: Any, name: str = "fairness_coef") -> tuple[float, float]:
    """A weight or a pair of weights as a pair of numbers in ``[0, MAX_COEF]``."""
    if isinstance(value, (tuple, list, np.ndarray)):
        if len(value) != 2:
            raise ValueError(f"{name} must be a number >= 0 or a pair of them, got {value!r}")
        return check_coef(value[0], name), check_coef(value[1], name)
    w = check_coef(value, name)
    return w, w


class LongTermTerm(FairnessTerm):
    """F-PPO's long-term advantage regularisation, or A-PPO's, as a :class:`~sb3_fair.common.fairness_terms.FairnessTerm`
    of an on-policy parent (``fairness="long_term"`` or ``"a_ppo"`` of :class:`~sb3_fair.FairPPO`,
    :class:`~sb3_fair.FairMaskablePPO`, :class:`~sb3_fair.FairRecurrentPPO`).

    The env reports Δs and Δl in its infos (:mod:`sb3_fair.common.protocol`; checked at the first step, with an error
    naming the keys); a :class:`LongTermTracker` writes them and their changes into the rollout buffer's
    :data:`SIGNALS` arrays.

    * ``"long_term"`` (F-PPO, Hu et al. 2024, Eqs. 4 and 7): the terms are Eq. 7's two branches, ``penalty =
      min(0, Δl_t - Δl_{t+1})`` where ``Δs_t > delta`` and ``reward = max(0, Δl_t - Δl_{t+1})`` where ``Δs_t <=
      delta``, weighted by ``fairness_coef`` (λ, or a pair ``(penalty weight, reward weight)``, the authors' β3 and
      β4).
    * ``"a_ppo"`` (Yu et al. 2022): the value threshold ``min(0, omega - Δs_t)`` and the decrease in violation
      ``min(0, -1[Δs_t > omega] (Δs_t - Δs_{t-1}))``, weighted by ``fairness_coef`` (a weight or the pair (β1, β2)).

    ``regularization="scaled"`` (default) min-max scales the advantage and each term to [0, 1] within every minibatch
    before weighting them, as both authors' codes do; ``"literal"`` adds the weighted raw terms to the advantage (Eq.
    4: ``A + λ R``), where λ must be of the advantages' scale to matter. PPO's advantage standardisation follows
    either way. The critic's targets are untouched. With ``fairness_coef=0`` the class is its parent exactly.

    :param method: ``"long_term"`` or ``"a_ppo"``.
    :param fairness_coef: a weight >= 0, or a pair of them (one per term).
    :param delta: δ of Eq. 7, the short-term gap above which only a rise of Δl counts (paper: 0.05);
        ``fairness="long_term"`` only.
    :param omega: ω of A-PPO, the violation threshold; ``fairness="a_ppo"`` only.
    :param regularization: ``"scaled"`` or ``"literal"``.

    Logged under ``fairness/``: each term's rollout mean (``long_term_penalty`` and ``long_term_reward``, or
    ``a_ppo_value_threshold`` and ``a_ppo_decrease``) and, for F-PPO, ``within_delta`` (the share of the rollout's
    steps in Eq. 7's reward branch).
    """

    methods: ClassVar[tuple[str, ...]] = LONG_TERM_METRICS
    used_by: ClassVar[dict[str, tuple[str, ...]]] = {"delta": ("long_term",), "omega": ("a_ppo",)}
    signals: ClassVar[tuple[str, ...]] = SIGNALS

    def __init__(
        self,
        method: str = "long_term",
        fairness_coef: Any = 1.0,
        delta: float = 0.05,
        omega: float = 0.05,
        regularization: str = "scaled",
    ) -> None:
        self.method = check_choice(method, "fairness", LONG_TERM_METRICS)
        checked = self.check_arguments({"delta": delta, "omega": omega, "regularization": regularization})
        self.delta: float = checked["delta"]
        self.omega: float = checked["omega"]
        self.regularization: str = checked["regularization"]
        self.fairness_coef = check_coef_pair(fairness_coef)
        self.tracker: LongTermTracker | None = None

    @classmethod
    def check_arguments(cls, values: dict[str, Any]) -> dict[str, Any]:
        """``delta`` and ``omega`` (numbers >= 0) and ``regularization`` (one of :data:`MODES`), those given."""
        out = dict(values)
        for name in ("delta", "omega"):
            if name in out:
                out[name] = check_weights(out[name], name)
        if "regularization" in out:
            out["regularization"] = check_choice(out["regularization"], "regularization", MODES)
        return out

    @property
    def active(self) -> bool:
        """Whether the regularisation is on (a weight > 0)."""
        return any(w > 0 for w in self.fairness_coef)

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "tracker": None}  # the next training start reads the env's reset infos

    def setup(self, model: Any, env: VecEnv) -> None:
        self.tracker = None  # a new env: the next training start reads its reset infos
        if not self.active:
            return
        if self.regularization == "scaled" and not getattr(model, "normalize_advantage", True):
            raise ValueError(
                "regularization='scaled' needs normalize_advantage=True: min-max scaling makes every advantage >= 0, "
                "which only the standardisation turns back into a signed signal (or use regularization='literal')"
            )

    def callbacks(self, model: Any, env_was_reset: bool) -> list[BaseCallback]:
        if self.tracker is None:
            self.tracker = LongTermTracker()
        if env_was_reset:
            self.tracker.restart()
        return [self.tracker]

    def config(self) -> dict[str, Any]:
        return {
            "fairness": self.method,
            "fairness_coef": list(self.fairness_coef),
            "delta": self.delta,
            "omega": self.omega,
            "regularization": self.regularization,
        }

    def terms(self, buffer: Any) -> tuple[np.ndarray, np.ndarray]:
        """The two terms of every row of the rollout: Eq. 7's ``(penalty, reward)``, or A-PPO's
        ``(value threshold, decrease in violation)``."""
        if self.method == "long_term":
            return long_term_terms(buffer.short_term, buffer.long_term_change, self.delta)
        return a_ppo_terms(buffer.short_term, buffer.short_term_change, self.omega)

    def regularize(self, rows: np.ndarray) -> np.ndarray:
        """A minibatch's advantages regularised by its rows of the fairness terms (``rows``: advantages first, then
        each term), by :func:`~sb3_fair.common.long_term.weighted_rows`: the computation of
        :func:`~sb3_fair.common.long_term.regularized_advantages`, whose checks the weights passed at construction."""
        return weighted_rows(rows, self.fairness_coef, mode=self.regularization)

    def before_update(self, model: Any, buffer: Any) -> None:
        """Log the rollout's mean terms and regularise every minibatch's advantages during the update.

        The terms are computed once for the whole rollout (they are row by row); each minibatch's advantages are then
        regularised with its rows (min-max scaling is per minibatch). (The rollout's mean Δs and Δl are logged by
        :class:`~sb3_fair.common.callbacks.FairnessCallback`, with or without the regularisation.)
        """
        first, second = self.terms(buffer)
        names = (
            ("long_term_penalty", "long_term_reward")
            if self.method == "long_term"
            else ("a_ppo_value_threshold", "a_ppo_decrease")
        )
        logger = model.logger
        logger.record(f"fairness/{names[0]}", float(first.mean()))
        logger.record(f"fairness/{names[1]}", float(second.mean()))
        if self.method == "long_term":  # the share of the rollout's steps in Eq. 7's reward branch
            logger.record("fairness/within_delta", float(np.mean(np.asarray(buffer.short_term) <= self.delta)))
        buffer.transform_minibatches((first, second), self.regularize)


register_term(LongTermTerm)

#: the defaults of :class:`LongTermTerm`'s own arguments (given unchanged, an argument the mode ignores is accepted)
LONG_TERM_DEFAULTS: dict[str, Any] = {k: v for k, v in LongTermTerm.arguments.items() if k != "fairness_coef"}

__all__ = [
    "LONG_TERM_DEFAULTS",
    "LONG_TERM_METRICS",
    "SIGNALS",
    "LongTermTerm",
    "LongTermTracker",
    "check_coef_pair",
]
