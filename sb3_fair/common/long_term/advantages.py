"""Advantage regularisation for long-term fairness (F-PPO) and its A-PPO baseline: pure NumPy.

F-PPO (Hu, Lear, Zhang 2024, *Striking a Balance in Fairness for Dynamic Systems Through
Reinforcement Learning*, arXiv:2401.06318) adds to PPO's advantage a term built from two signals
that the env reports after every step: the short-term gap Δs and the long-term gap Δl (both lower
is fairer; :data:`sb3_fair.common.protocol.SHORT_TERM_FAIRNESS` / ``LONG_TERM_FAIRNESS``):

* Eq. 7: ``R_t = min(0, Δl_t - Δl_{t+1})`` when ``Δs_t > δ`` (short-term fairness is poor: only a
  *rise* of the long-term gap is penalised), else ``max(0, Δl_t - Δl_{t+1})`` (only a *fall* is
  rewarded). :func:`long_term_terms` returns the two branches separately, each zero where the other
  applies.
* Eq. 4: ``A^λ = A + λ R`` (:func:`regularized_advantages` with ``mode="literal"``).

The authors' code does not add ``λ R`` to the raw advantage: per minibatch it min-max scales the
advantage and each branch to [0, 1], weights them (the penalty and reward branches with separate
weights) and sums; PPO's advantage standardisation then follows (``mode="scaled"``, the default of
:class:`~sb3_fair.FairPPO`). Min-max scaling is a positive affine map, so each term keeps its
direction, but a term that varies at all inside a minibatch always spans [0, 1], however small its
raw values; a constant term becomes 0.

A-PPO (Yu, Qin, Lee, Gao 2022, *Policy Optimization with Advantage Regularization for Long-Term
Fairness in Decision Systems* (POCAR), NeurIPS 2022, arXiv:2210.12546), the paper's baseline, adds
two terms of the short-term gap alone (:func:`a_ppo_terms`): the value threshold
``min(0, ω - Δs_t)`` and the decrease in violation ``min(0, -1[Δs_t > ω] (Δs_t - Δs_{t-1}))``,
scaled and weighted the same way. Both compute their terms after the step, from the env's signals.

Nothing here imports torch or Stable-Baselines3.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from sb3_fair._exact import SHORT
from sb3_fair.common.validation import check_coef, check_int, check_weights

#: how the long-term terms enter the advantages (``regularization=``): min-max scaled, or the paper's literal sum
MODES = ("scaled", "literal")


def _array(x: Any, name: str) -> np.ndarray:
    a = np.asarray(x, dtype=np.float64)
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be finite")
    return a


def long_term_terms(short_term: Any, long_term_change: Any, delta: float) -> tuple[np.ndarray, np.ndarray]:
    """The two branches of Hu et al.'s (2024) Eq. 7 as ``(penalty, reward)``.

    :param short_term: Δs after each action, ``Δs(s_t, a_t)``.
    :param long_term_change: the change of the long-term gap over each step, ``Δl_{t+1} - Δl_t``
        (positive when long-term fairness got worse).
    :param delta: δ, the short-term threshold.
    :return: ``penalty = min(0, -(Δl_{t+1} - Δl_t))`` where ``Δs_t > δ`` (else 0), ``<= 0``;
        ``reward = max(0, -(Δl_{t+1} - Δl_t))`` where ``Δs_t <= δ`` (else 0), ``>= 0``. Their sum is
        Eq. 7's ``R(s_t)``.
    """
    ds = _array(short_term, "short_term")
    decrease = -_array(long_term_change, "long_term_change")  # Δl_t - Δl_{t+1}
    if ds.shape != decrease.shape:
        raise ValueError(
            f"short_term and long_term_change must have the same shape, got {ds.shape} and {decrease.shape}"
        )
    poor = ds > delta
    penalty = np.where(poor, np.minimum(0.0, decrease), 0.0)
    reward = np.where(poor, 0.0, np.maximum(0.0, decrease))
    return penalty, reward


def a_ppo_terms(short_term: Any, short_term_change: Any, omega: float) -> tuple[np.ndarray, np.ndarray]:
    """A-PPO's two advantage terms (Yu et al. 2022, POCAR), as ``(value_threshold, decrease_in_violation)``.

    :param short_term: the fairness violation Δs after each action.
    :param short_term_change: its change over the step, ``Δs_t - Δs_{t-1}``.
    :param omega: ω, the violation threshold.
    :return: ``min(0, ω - Δs_t)`` and ``min(0, -1[Δs_t > ω] (Δs_t - Δs_{t-1}))``, both ``<= 0``.
    """
    ds = _array(short_term, "short_term")
    dds = _array(short_term_change, "short_term_change")
    if ds.shape != dds.shape:
        raise ValueError(f"short_term and short_term_change must have the same shape, got {ds.shape} and {dds.shape}")
    value_threshold = np.minimum(0.0, omega - ds)
    decrease = np.minimum(0.0, -np.where(ds > omega, dds, 0.0))
    return value_threshold, decrease


def min_max_scale(x: Any, eps: float = 1e-8) -> np.ndarray:
    """``(x - min) / (max - min + eps)``: [0, 1] for a varying ``x``, zeros for a constant one.

    :param x: the values (one minibatch).
    :param eps: keeps a constant ``x`` from dividing by zero (the authors' 1e-8).
    :return: an array of ``x``'s shape.
    """
    a = np.asarray(x, dtype=np.float64)
    if a.size == 0:
        return a.copy()
    return _min_max_rows(a.reshape(1, -1), eps).reshape(a.shape)[()]  # [()]: a NumPy scalar for a 0-d x, as before


def _min_max_rows(rows: np.ndarray, eps: float = 1e-8) -> np.ndarray:
    """:func:`min_max_scale` of each row of a 2-D float64 array with at least one column (one pass for all rows)."""
    lo = rows.min(axis=1, keepdims=True)
    return (rows - lo) / (rows.max(axis=1, keepdims=True) - lo + eps)


def regularized_advantages(
    advantages: Any, terms: Sequence[Any], weights: Sequence[float], mode: str = "scaled", advantage_weight: float = 1.0
) -> np.ndarray:
    """The advantage plus weighted fairness terms, for one minibatch (or a whole rollout).

    * ``mode="literal"``: ``advantage_weight * A + sum_k w_k T_k`` (Hu et al. 2024, Eq. 4 with
      ``T = (penalty, reward)`` from :func:`long_term_terms` and ``w = (λ, λ)``).
    * ``mode="scaled"``: ``advantage_weight * mm(A) + sum_k w_k mm(T_k)`` with ``mm`` =
      :func:`min_max_scale` over the minibatch, as the code of Hu et al. (2024) and of Yu et al.
      (2022) computes it.

    PPO standardises the result afterwards (``normalize_advantage``), as in both codes. A minibatch of
    one row cannot be min-max scaled (it would become 0): ``"scaled"`` returns its weighted advantage
    ``advantage_weight * A``, which SB3's PPO and MaskablePPO then leave unstandardised, as they do
    any one-row minibatch (RecurrentPPO standardises it into NaN, with or without this term).

    :param advantages: GAE advantages of the minibatch.
    :param terms: the fairness terms, each of the advantages' shape.
    :param weights: one weight per term, each >= 0.
    :param mode: ``"scaled"`` or ``"literal"``.
    :param advantage_weight: the advantage's own weight (β0 in the authors' code).
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {list(MODES)}, got {mode!r}")
    if len(terms) != len(weights):
        raise ValueError(f"one weight per term: got {len(terms)} terms and {len(weights)} weights")
    weights = [check_coef(w, "weights") for w in weights]
    adv = np.asarray(advantages, dtype=np.float64)
    arrays = [np.asarray(term, dtype=np.float64) for term in terms]
    for t in arrays:
        if t.shape != adv.shape:
            raise ValueError(f"each term must have the advantages' shape {adv.shape}, got {t.shape}")
    rows = np.empty((1 + len(arrays), adv.size))
    rows[0] = adv.reshape(-1)
    for k, t in enumerate(arrays, 1):
        rows[k] = t.reshape(-1)
    return weighted_rows(rows, weights, mode, advantage_weight).reshape(adv.shape)[()]  # a NumPy scalar for a 0-d input


def weighted_rows(
    rows: np.ndarray, weights: Sequence[float], mode: str = "scaled", advantage_weight: float = 1.0
) -> np.ndarray:
    """:func:`regularized_advantages` of checked inputs stacked as rows: the advantages first, then one row per term.

    The one implementation of the regularisation: :func:`regularized_advantages` checks its inputs and
    calls it; :class:`~sb3_fair.common.long_term.LongTermTerm` calls it directly for
    every minibatch (its weights were checked at construction, its rows come from its own buffer).

    :param rows: a float64 array of shape ``(1 + len(weights), batch)``.
    :param weights: one weight >= 0 per term row.
    :param mode: ``"scaled"`` or ``"literal"``.
    :param advantage_weight: the advantage's own weight.
    :return: the regularised advantages, shape ``(batch,)``.
    """
    if mode == "scaled":
        if rows.shape[1] <= 1:
            # one row has no range to scale by (min-max would zero it): keep its (weighted) advantage
            return advantage_weight * rows[0]
        rows = _min_max_rows(rows)
    out = advantage_weight * rows[0]
    for k, w in enumerate(weights, 1):
        if w:
            out = out + w * rows[k]
    return out


def massaging_choice(probabilities: Any, short_term: Any, tau: float, ties: str = "keep") -> int:
    """Action massaging (Hu et al. 2024, Eq. 6): which candidate to execute instead of the sampled action.

    Among the candidates whose probability under the policy is within ``tau`` of the sampled
    action's (``|π(a_t|s_t) - π(a'|s_t)| < τ``), the one with the lowest short-term gap Δs; among
    equally fair ones, the most probable (the least change to what the policy wanted). Candidate 0
    is the sampled action itself. With ``ties="keep"`` (the paper's text: "if the alternative action is
    fairer") it is kept unless another candidate is *strictly* fairer. With ``ties="flip"`` (the authors'
    lending code, which compares with ``>=``) the fairest other candidate replaces it when it is at least
    as fair, so an applicant whose outcome the flip cannot change is flipped too. For a continuous action,
    ``probabilities`` are densities.

    :param probabilities: ``π(a'|s_t)`` of each candidate (the sampled action first).
    :param short_term: Δs each candidate would leave.
    :param tau: the closeness threshold τ (``<= 0``: no massaging).
    :param ties: ``"keep"`` or ``"flip"`` (:data:`MASSAGING_TIES`): what an equally fair alternative does.
    :return: the index of the candidate to execute (0: keep the sampled action).
    :raises ValueError: when a probability or a Δs is NaN or ``-inf`` (naming the candidate): the
        fairest candidate would be undefined.
    """
    p = np.asarray(probabilities, dtype=np.float64)
    ds = np.asarray(short_term, dtype=np.float64)
    if p.shape != ds.shape or p.ndim != 1 or p.size == 0:
        raise ValueError(
            f"probabilities and short_term must be 1-D of the same non-zero length, got {p.shape} and {ds.shape}"
        )
    # +inf marks a candidate that cannot be executed (massage_actions: probability 0); NaN has no order at all
    for values, name in ((p, "probabilities"), (ds, "short_term")):
        bad = np.flatnonzero(np.isnan(values) | (values == -np.inf))
        if bad.size:
            raise ValueError(
                f"{name} must be numbers (+inf only for a candidate that cannot be executed): candidate "
                f"{int(bad[0])} has {values[bad[0]]}"
            )
    return int(_choices(p[:, None], ds[:, None], tau, check_massaging_ties(ties))[0])


#: what an alternative as fair as the sampled action does: ``"keep"`` the sampled action (the paper's text), or
#: ``"flip"`` to the alternative (the authors' lending code)
MASSAGING_TIES = ("keep", "flip")


def check_massaging_ties(ties: Any, name: str = "ties") -> str:
    """``ties`` checked to be one of :data:`MASSAGING_TIES`."""
    if not isinstance(ties, str) or ties not in MASSAGING_TIES:
        raise ValueError(f"{name} must be one of {list(MASSAGING_TIES)}, got {ties!r}")
    return ties


def _choices(p: np.ndarray, ds: np.ndarray, tau: float, ties: str = "keep") -> np.ndarray:
    """:func:`massaging_choice` of each column of ``(candidates, batch)`` arrays of checked probabilities and Δs
    (the one implementation of Eq. 6's choice; :func:`~sb3_fair.common.long_term.massaging.massage_actions` calls it once for
    a batch of sub-envs).

    Per column: the candidates within ``tau`` of candidate 0's probability (candidate 0 always), the
    fairest of them, the most probable among equally fair ones (the first of equal ones), kept only
    if strictly fairer than candidate 0 (``ties="flip"``: the fairest of the other candidates, executed if at
    least as fair as candidate 0). A small batch is compared on Python floats, a large one in
    NumPy: comparisons and ``abs(p - p0)`` are exact in both, so both give the same choices.
    """
    k, n = p.shape
    if k * n <= SHORT:  # candidates x sub-envs: compared on Python floats at every rollout step
        return np.array(_choice_lists(p.tolist(), ds.tolist(), tau, ties), dtype=np.int64)
    allowed = np.abs(p - p[0]) < tau
    allowed[0] = ties == "keep"  # "flip": the best alternative, then compared with the sampled action
    fairest = np.where(allowed, ds, np.inf)
    equal = fairest == fairest.min(axis=0)
    # the most probable of the fairest (argmax: the first of equal ones); probabilities are >= 0
    best = np.where(equal, p, -np.inf).argmax(axis=0)
    columns = np.arange(n)
    if ties == "flip":
        return np.where(fairest[best, columns] <= ds[0], best, 0)
    return np.where(ds[best, columns] < ds[0], best, 0)


def _choice_lists(probs: list[list[float]], gaps: list[list[float]], tau: float, ties: str = "keep") -> list[int]:
    """:func:`_choices` on Python floats: ``probs[c][j]`` and ``gaps[c][j]`` of candidate ``c`` of sub-env ``j``."""
    out = []
    flip = ties == "flip"
    for j in range(len(probs[0])):
        p0, d0 = probs[0][j], gaps[0][j]
        # "keep": candidate 0 competes; "flip": the best other candidate, compared with candidate 0 at the end
        best, best_d, best_p = (0, math.inf, -math.inf) if flip else (0, d0, p0)
        for c in range(1, len(probs)):
            pc, dc = probs[c][j], gaps[c][j]
            if abs(pc - p0) < tau and (dc < best_d or (dc == best_d and pc > best_p)):
                best, best_d, best_p = c, dc, pc
        out.append(best if (best_d <= d0 if flip else best_d < d0) else 0)
    return out


def _iteration(iteration: Any) -> int:
    """The 0-based PPO iteration as an int (a NumPy int too; not a bool, a float or a string)."""
    if isinstance(iteration, (bool, np.bool_)) or not isinstance(iteration, (int, np.integer)):
        raise ValueError(f"iteration must be an int (the 0-based PPO iteration), got {iteration!r}")
    return int(iteration)


def _scaled_power(scale: float, base: float, exponent: int) -> float:
    """``scale * base ** exponent`` for ``scale, base >= 0`` and ``exponent >= 0``, ``inf`` where it overflows.

    Python's float power raises ``OverflowError`` past 1.8e308 (``1.2 ** 3940``), NumPy's warns and
    gives inf; this gives inf silently, which a cap then turns into the cap. Underflow gives 0.
    """
    if scale == 0.0:
        return 0.0
    try:
        return scale * base**exponent
    except OverflowError:
        return math.inf


def lending_massaging_threshold(iteration: int, tau_s: float = 0.5, i_s: int = 17, gamma: float = 0.985) -> float:
    """τ of Hu et al.'s (2024) bank-loan case study (§VI-A): ``1 - 2 τ(i)``, ``τ(i) = τ_s γ^(i - i_s)``
    for ``i >= i_s``, else 0.5 (so no massaging up to iteration ``i_s``, then a band that widens to 1).

    A total function: in [0, 1] for every iteration (``γ^(i - i_s)`` underflows to 0 for a huge ``i``).

    :param iteration: the 0-based PPO iteration (rollout) index.
    :param tau_s: τ_s (paper: 0.5), in [0, 0.5] (a larger one would make τ negative).
    :param i_s: the first iteration of the decay (paper: 17), an int >= 0.
    :param gamma: the decay factor γ (paper: 0.985), in (0, 1] (a larger one would make τ go to -inf).
    :return: τ for :func:`massaging_choice`.
    """
    i = _iteration(iteration)
    tau_s = check_weights(tau_s, "tau_s")
    gamma = check_weights(gamma, "gamma", allow_zero=False)
    i_s = check_int(i_s, "i_s", 0)
    if tau_s > 0.5:
        raise ValueError(
            f"tau_s must be a number in [0, 0.5] (τ = 1 - 2 τ_s γ^(i - i_s) must stay >= 0), got {tau_s!r}"
        )
    if gamma > 1.0:
        raise ValueError(
            f"gamma must be a number in (0, 1] (a decay: τ = 1 - 2 τ_s γ^(i - i_s) must stay >= 0), got {gamma!r}"
        )
    t = _scaled_power(tau_s, gamma, i - i_s) if i >= i_s else 0.5
    return 1.0 - 2.0 * t


def attention_massaging_threshold(iteration: int, tau: float = 0.08, i_s: int = 16) -> float:
    """τ of Hu et al.'s (2024) attention case study (§VI-B): the static 0.08 of the paper, from iteration
    ``i_s`` on (the authors' code massages for iterations > 15), else 0.

    The action is a Gaussian over five logits, so Eq. 6 compares densities, as the authors' code does.

    :param iteration: the 0-based PPO iteration (rollout) index.
    :param tau: τ (paper: 0.08), a finite number >= 0.
    :param i_s: the first iteration of massaging (code: 16), an int >= 0.
    :return: τ for :func:`massaging_choice`.
    """
    i = _iteration(iteration)
    tau = check_weights(tau, "tau")
    return tau if i >= check_int(i_s, "i_s", 0) else 0.0


def epidemic_massaging_threshold(
    iteration: int, tau_e: float = 0.35, tau_s: float = 0.01, i_s: int = 50, gamma: float = 1.2
) -> float:
    """τ of Hu et al.'s (2024) epidemic case study (§VI-C): ``min(τ_e, τ_s γ^(i - i_s))`` for ``i >= i_s``, else 0.

    A total function: in [0, τ_e] for every iteration. ``γ^(i - i_s)`` overflows a float from
    ``i - i_s = 3,893`` on (γ = 1.2); the cap τ_e is then the value, as it is long before.

    The paper uses it as Eq. 6's closeness threshold; the authors' code instead massages only when
    the sampled action's own probability is at most τ (for iterations > 50), with no closeness test.

    :param iteration: the 0-based PPO iteration (rollout) index.
    :param tau_e: the cap τ_e (paper: 0.35), a finite number >= 0.
    :param tau_s: τ_s (paper: 0.01), a finite number >= 0.
    :param i_s: the first iteration of massaging (paper: 50), an int >= 0.
    :param gamma: the growth factor γ (paper: 1.2), a finite number > 0.
    :return: τ for :func:`massaging_choice`.
    """
    i = _iteration(iteration)
    tau_e = check_weights(tau_e, "tau_e")
    tau_s = check_weights(tau_s, "tau_s")
    gamma = check_weights(gamma, "gamma", allow_zero=False)
    i_s = check_int(i_s, "i_s", 0)
    return float(min(tau_e, _scaled_power(tau_s, gamma, i - i_s))) if i >= i_s else 0.0


__all__ = [
    "MASSAGING_TIES",
    "MODES",
    "a_ppo_terms",
    "attention_massaging_threshold",
    "check_massaging_ties",
    "epidemic_massaging_threshold",
    "lending_massaging_threshold",
    "long_term_terms",
    "massaging_choice",
    "min_max_scale",
    "regularized_advantages",
    "weighted_rows",
]
