"""F-PPO's long-term advantage regularisation (and the A-PPO baseline) as a mixin for any on-policy parent.

Hu, Lear, Zhang (2024), *Striking a Balance in Fairness for Dynamic Systems Through Reinforcement
Learning*, arXiv:2401.06318, Eqs. 4 and 7; A-PPO: Yu, Qin, Lee, Gao (2022), *Policy Optimization with
Advantage Regularization for Long-Term Fairness in Decision Systems*, NeurIPS 2022, arXiv:2210.12546.

Three parts, each at one of SB3's seams:

* :class:`LongTermTracker`, a callback that reads the env's fairness signals from every step's
  infos (:func:`~sb3_fair.common.protocol.get_fairness_signal_lists`) and writes, for each rollout step,
  Δs after the action, its change ``Δs_t - Δs_{t-1}``, Δl after the step and its change
  ``Δl_{t+1} - Δl_t`` into the rollout buffer. After an episode ends, the "before" values of the
  next episode's first step are the reset info's (the innermost VecEnv's ``reset_infos``); an env
  that puts no signals in its reset info gives that step changes of 0.
* :class:`LongTermBufferMixin`, mixed into the parent's own rollout-buffer class (whichever it
  chose: SB3's, MaskablePPO's, RecurrentPPO's), which keeps those four arrays and hands PPO, for
  every minibatch, the advantages regularised as :func:`~sb3_fair.common.long_term.regularized_advantages` computes them
  (per minibatch, as the authors' code does; PPO then standardises them as usual). The value
  targets (returns) are never touched.
* :class:`LongTermPenaltyMixin`, which owns the keyword arguments and wires the two in.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from stable_baselines3.common.buffers import RolloutBuffer
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import VecEnv

from sb3_fair.common.group_penalty.mixin import GROUP_PENALTY_DEFAULTS
from sb3_fair.common.group_penalty.mixin import METRICS as GROUP_METRICS
from sb3_fair.common.long_term.advantages import MODES, a_ppo_terms, long_term_terms, weighted_rows
from sb3_fair.common.protocol import get_fairness_signal_lists, is_fairness_signals_supported
from sb3_fair.common.validation import check_choice, check_coef, check_unused, check_weights

if TYPE_CHECKING:
    from stable_baselines3.common.on_policy_algorithm import OnPolicyAlgorithm

    # the type checker sees each mixin as what it is mixed into (see FairAlgorithmMixin); at run time both are plain
    # classes
    from sb3_fair.common.group_penalty.mixin import GroupPenaltyMixin as _PenaltyBase

    _BufferBase = RolloutBuffer
else:
    _BufferBase = _PenaltyBase = object

#: the ``fairness`` values this mixin implements
LONG_TERM_METRICS = ("long_term", "a_ppo")
#: the per-step arrays the tracker writes into the rollout buffer
SIGNALS = ("short_term", "short_term_change", "long_term", "long_term_change")

#: ``regularize(rows)``: a minibatch's advantages regularised, from its rows stacked (advantages first, then each
#: fairness term's)
Regularizer = Callable[[np.ndarray], np.ndarray]


class LongTermBufferMixin(_BufferBase):
    """Adds the four per-step signal arrays of :data:`SIGNALS` to an on-policy rollout buffer, and
    regularises the advantages of each minibatch it hands out when :attr:`regularize` is set.

    Before an update, the algorithm gives the fairness terms of every row (:meth:`set_terms`, computed
    once per rollout) and sets ``regularize(rows)``, which gets the minibatch's rows stacked (its
    advantages first, then each term's) and returns its regularised advantages; the buffer's own
    advantages are left as they are.
    """

    regularize: Regularizer | None = None
    _term_rows: np.ndarray | None = None
    # the arrays of SIGNALS, made by reset()
    short_term: np.ndarray
    short_term_change: np.ndarray
    long_term: np.ndarray
    long_term_change: np.ndarray

    def reset(self) -> None:
        super().reset()
        shape = (self.buffer_size, self.n_envs)
        for name in SIGNALS:  # float64: a Δs exactly at δ must compare as the env reported it
            setattr(self, name, np.zeros(shape, dtype=np.float64))
        self._term_rows = None

    def set_terms(self, terms: Sequence[np.ndarray]) -> None:
        """The fairness terms of every row of the rollout, each of the signals' shape (before or after :meth:`get`
        flattened them); kept stacked, one row per term, in the order :meth:`get` hands the rows out."""
        flat = [(self.swap_and_flatten(t) if not self.generator_ready else t).reshape(-1) for t in terms]
        self._term_rows = np.stack(flat).astype(np.float64, copy=False)

    def get(self, batch_size: int | None = None) -> Any:
        if not self.generator_ready:
            for name in SIGNALS:  # flattened exactly as the parent flattens its own arrays
                setattr(self, name, self.swap_and_flatten(getattr(self, name)))
        yield from super().get(batch_size)

    def _get_samples(self, batch_inds: np.ndarray, *args: Any, **kwargs: Any) -> Any:
        if self.regularize is None:
            return super()._get_samples(batch_inds, *args, **kwargs)
        if self._term_rows is None:
            raise RuntimeError("set_terms() must give the fairness terms before a regularised minibatch is sampled")
        advantages = self.advantages
        raw = advantages[batch_inds]  # a copy (fancy indexing): the rows are put back after sampling
        # one (1 + terms, batch) array: the regularisation scales all its rows in one pass
        rows = np.empty((1 + len(self._term_rows), raw.size))
        rows[0] = raw.reshape(-1)
        rows[1:] = self._term_rows[:, np.asarray(batch_inds).reshape(-1)]
        advantages[batch_inds] = self.regularize(rows).astype(advantages.dtype).reshape(raw.shape)
        try:
            return super()._get_samples(batch_inds, *args, **kwargs)
        finally:
            advantages[batch_inds] = raw


_BUFFER_CLASSES: dict[type, type] = {}


def long_term_buffer_class(buffer_class: type[RolloutBuffer]) -> type[RolloutBuffer]:
    """``buffer_class`` with :class:`LongTermBufferMixin` mixed in (one class per parent class)."""
    if issubclass(buffer_class, LongTermBufferMixin):
        return buffer_class
    if buffer_class not in _BUFFER_CLASSES:
        _BUFFER_CLASSES[buffer_class] = type(
            f"LongTerm{buffer_class.__name__}", (LongTermBufferMixin, buffer_class), {"__module__": __name__}
        )
    return _BUFFER_CLASSES[buffer_class]


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


class LongTermPenaltyMixin(_PenaltyBase):
    """F-PPO's long-term advantage regularisation, or A-PPO's, for an on-policy parent.

    ``class FairX(LongTermPenaltyMixin, GroupPenaltyMixin, FairAlgorithmMixin, X)``: with
    ``fairness="long_term"`` or ``"a_ppo"`` this mixin is active and the group penalty is off; with
    any other ``fairness`` it passes every argument on. The env reports Δs and Δl in its infos
    (:mod:`sb3_fair.common.protocol`; checked at the first step, with an error naming the keys).

    * ``fairness="long_term"`` (F-PPO, Hu et al. 2024, Eqs. 4 and 7): the terms are Eq. 7's two
      branches, ``penalty = min(0, Δl_t - Δl_{t+1})`` where ``Δs_t > delta`` and ``reward =
      max(0, Δl_t - Δl_{t+1})`` where ``Δs_t <= delta``, weighted by ``fairness_coef`` (λ, or a pair
      ``(penalty weight, reward weight)``, the authors' β3 and β4).
    * ``fairness="a_ppo"`` (Yu et al. 2022): the value threshold ``min(0, omega - Δs_t)`` and the
      decrease in violation ``min(0, -1[Δs_t > omega] (Δs_t - Δs_{t-1}))``, weighted by
      ``fairness_coef`` (a weight or the pair (β1, β2)).

    ``regularization="scaled"`` (default) min-max scales the advantage and each term to [0, 1] within
    every minibatch before weighting them, as both authors' codes do; ``"literal"`` adds the weighted
    raw terms to the advantage (Eq. 4: ``A + λ R``), where λ must be of the advantages' scale to
    matter. PPO's advantage standardisation follows either way. The critic's targets are untouched.
    With ``fairness_coef=0`` the class is its parent exactly.

    An argument that the chosen ``fairness`` does not use is refused (``ValueError`` naming it, the
    mode and the mode that uses it) unless it is left at its default: the group penalty's ``alpha``,
    ``beta``, ``protected_group`` and ``agents_per_instance`` with ``"long_term"`` / ``"a_ppo"``;
    ``delta`` with anything but ``"long_term"``; ``omega`` with anything but ``"a_ppo"``;
    ``regularization`` with ``"dp"``, ``"csp"`` or ``"cf"``.

    :param fairness: ``"long_term"`` or ``"a_ppo"`` for this mixin; anything else goes to the next one.
    :param fairness_coef: a weight >= 0, or a pair of them (one per term).
    :param delta: δ of Eq. 7, the short-term gap above which only a rise of Δl counts (paper: 0.05);
        ``fairness="long_term"`` only.
    :param omega: ω of A-PPO, the violation threshold; ``fairness="a_ppo"`` only.
    :param regularization: ``"scaled"`` or ``"literal"``; ``fairness="long_term"`` or ``"a_ppo"`` only.
    """

    #: the values of ``fairness=`` this mixin implements
    FAIRNESS_METHODS: ClassVar[tuple[str, ...]] = LONG_TERM_METRICS

    def __init__(
        self,
        *args: Any,
        fairness: str = "dp",
        fairness_coef: Any = 1.0,
        delta: float = 0.05,
        omega: float = 0.05,
        regularization: str = "scaled",
        **kwargs: Any,
    ) -> None:
        check_choice(fairness, "fairness", (*GROUP_METRICS, *LONG_TERM_METRICS))
        self.delta = check_weights(delta, "delta")
        self.omega = check_weights(omega, "omega")
        self.regularization = check_choice(regularization, "regularization", MODES)
        self._refuse_unused(fairness, {"delta": delta, "omega": omega, "regularization": regularization}, kwargs)
        self._long_term = fairness if fairness in LONG_TERM_METRICS else None
        self._long_term_coef = check_coef_pair(fairness_coef) if self._long_term else (0.0, 0.0)
        self._long_term_tracker: LongTermTracker | None = None
        # fairness= goes on as it is: the next mixin that implements it (FAIRNESS_METHODS) turns itself on, the others
        # stay off; with this mixin's, the weights passed on are the checked pair
        coef = self._long_term_coef if self._long_term else fairness_coef
        super().__init__(*args, fairness=fairness, fairness_coef=coef, **kwargs)

    @staticmethod
    def _refuse_unused(fairness: str, own: dict[str, Any], kwargs: dict[str, Any]) -> None:
        """Refuse the arguments that ``fairness`` ignores, when given with another value than their default.

        The group penalty's (``alpha``, ``beta``, ``protected_group``, ``agents_per_instance``) with
        ``"long_term"`` / ``"a_ppo"``; ``delta`` with anything but ``"long_term"``; ``omega`` with anything but
        ``"a_ppo"``; ``regularization`` with the group penalty's metrics.
        """
        mode = f"fairness={fairness!r}"
        if fairness in LONG_TERM_METRICS:
            for name, default in GROUP_PENALTY_DEFAULTS.items():
                if name in kwargs:
                    check_unused(name, kwargs[name], default, mode, GROUP_SETTINGS)
        for name, used_by in USED_BY.items():
            if fairness not in used_by:
                check_unused(
                    name, own[name], LONG_TERM_DEFAULTS[name], mode, "fairness=" + " or ".join(repr(m) for m in used_by)
                )

    @property
    def long_term_regularized(self) -> bool:
        """Whether the long-term (or A-PPO) regularisation is on (``fairness`` is one of its and a weight > 0)."""
        return self._long_term is not None and any(w > 0 for w in self._long_term_coef)

    def _setup_fairness(self, env: VecEnv) -> None:
        super()._setup_fairness(env)
        self._long_term_coef = check_coef_pair(
            self._long_term_coef
        )  # a list after loading (checked again: the file could be edited)
        if self._long_term is not None:
            self.fairness_coef = self._long_term_coef
        self._long_term_tracker = None  # a new env: the next training start reads its reset infos
        if not self.long_term_regularized:
            return
        if self.regularization == "scaled" and not getattr(self, "normalize_advantage", True):
            raise ValueError(
                "regularization='scaled' needs normalize_advantage=True: min-max scaling makes every advantage >= 0, "
                "which only the standardisation turns back into a signed signal (or use regularization='literal')"
            )
        buf = self.rollout_buffer
        if not isinstance(buf, LongTermBufferMixin):
            # the same buffer (sizes, spaces, device, arrays) as an instance of its long-term subclass
            cls = long_term_buffer_class(type(buf))
            new = cls.__new__(cls)
            new.__dict__.update(buf.__dict__)
            new.reset()
            self.rollout_buffer = new

    def _fairness_callbacks(self) -> list[BaseCallback]:
        callbacks = super()._fairness_callbacks()
        if not self.long_term_regularized:
            return callbacks
        if self._long_term_tracker is None:
            self._long_term_tracker = LongTermTracker()
        if getattr(self, "_env_was_reset", True):
            self._long_term_tracker.restart()
        return [self._long_term_tracker, *callbacks]

    def _excluded_save_params(self) -> list[str]:
        return [*super()._excluded_save_params(), "_long_term_tracker"]

    def fairness_config(self) -> dict[str, Any]:
        """The fairness hyperparameters (stored in the W&B run config)."""
        if self._long_term is None:
            return super().fairness_config()
        return {
            **super().fairness_config(),  # the group penalty's, off: nothing (it reports its settings when chosen)
            "fairness": self._long_term,
            "fairness_coef": list(self._long_term_coef),
            "delta": self.delta,
            "omega": self.omega,
            "regularization": self.regularization,
        }

    def _fairness_terms(self, buf: LongTermBufferMixin) -> tuple[np.ndarray, np.ndarray]:
        """The two terms of every row of the rollout: Eq. 7's ``(penalty, reward)``, or A-PPO's
        ``(value threshold, decrease in violation)``."""
        if self._long_term == "long_term":
            return long_term_terms(buf.short_term, buf.long_term_change, self.delta)
        return a_ppo_terms(buf.short_term, buf.short_term_change, self.omega)

    def _regularize(self, rows: np.ndarray) -> np.ndarray:
        """A minibatch's advantages regularised by its rows of the fairness terms (``rows``: advantages first, then
        each term), by :func:`~sb3_fair.common.long_term.weighted_rows`: the computation of
        :func:`~sb3_fair.common.long_term.regularized_advantages`, whose checks the weights passed at construction."""
        return weighted_rows(rows, self._long_term_coef, mode=self.regularization)

    def train(self) -> None:
        """Log the rollout's mean terms, regularise every minibatch's advantages, then the parent's update.

        The terms are computed once for the whole rollout (they are row by row); each minibatch's
        advantages are then regularised with its rows (min-max scaling is per minibatch). (The
        rollout's mean Δs and Δl are logged by :class:`~sb3_fair.common.callbacks.FairnessCallback`,
        with or without the regularisation.)
        """
        buf = self.rollout_buffer
        if self.long_term_regularized and isinstance(buf, LongTermBufferMixin):
            first, second = self._fairness_terms(buf)
            buf.set_terms((first, second))
            names = (
                ("long_term_penalty", "long_term_reward")
                if self._long_term == "long_term"
                else ("a_ppo_value_threshold", "a_ppo_decrease")
            )
            logger = self.logger
            logger.record(f"fairness/{names[0]}", float(first.mean()))
            logger.record(f"fairness/{names[1]}", float(second.mean()))
            if self._long_term == "long_term":  # the share of the rollout's steps in Eq. 7's reward branch
                logger.record("fairness/within_delta", float(np.mean(np.asarray(buf.short_term) <= self.delta)))
            buf.regularize = self._regularize
            try:
                super().train()
            finally:
                buf.regularize = None
            return
        super().train()


#: the defaults of :class:`LongTermPenaltyMixin`'s own arguments (given unchanged, an argument the mode ignores is accepted)
LONG_TERM_DEFAULTS: dict[str, Any] = {
    name: p.default
    for name, p in inspect.signature(LongTermPenaltyMixin.__init__).parameters.items()
    if name in ("delta", "omega", "regularization")
}
#: the ``fairness`` values that use each of :class:`LongTermPenaltyMixin`'s own arguments
USED_BY: dict[str, tuple[str, ...]] = {
    "delta": ("long_term",),
    "omega": ("a_ppo",),
    "regularization": LONG_TERM_METRICS,
}
#: the settings that use the group penalty's arguments (for the error messages)
GROUP_SETTINGS = "fairness=" + ", ".join(repr(m) for m in GROUP_METRICS[:-1]) + f" or {GROUP_METRICS[-1]!r}"

__all__ = [
    "LONG_TERM_METRICS",
    "SIGNALS",
    "LongTermBufferMixin",
    "LongTermPenaltyMixin",
    "LongTermTracker",
    "check_coef_pair",
    "long_term_buffer_class",
]
