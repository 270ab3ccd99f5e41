"""Delayed-impact bank lending (Liu et al. 2018; Hu, Lear, Zhang 2024, §VI-A) and its equal-opportunity baseline.

The dynamics are those of Liu, Dean, Rolf, Simchowitz, Hardt (2018), *Delayed Impact of Fair Machine
Learning*, arXiv:1803.04383, in the form ml-fairness-gym gives them (its ``DelayedImpactEnv``); the
observation, the window and the fairness signals are those of Hu, Lear, Zhang (2024), *Striking a
Balance in Fairness for Dynamic Systems Through Reinforcement Learning*, arXiv:2401.06318, §VI-A
(short-term gap: Eq. 8; long-term gap: the Wasserstein distance that follows it).
"""

from __future__ import annotations

from bisect import bisect_right
from collections import deque
from collections.abc import Sequence
from typing import Any, cast

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env import VecEnv

from sb3_fair.common.protocol import BENEFITS, LONG_TERM_FAIRNESS, SHORT_TERM_FAIRNESS
from sb3_fair.common.stakeholders import Stakeholders
from sb3_fair.common.validation import (
    as_float_array,
    check_bool,
    check_choice,
    check_discrete_action,
    check_probability,
    check_weights,
)
from sb3_fair.envs.horizon import check_horizon, horizon_end
from sb3_fair.envs.rendering import RENDER_MODES, bars_rgb, check_render_mode
from sb3_fair.metrics import (
    count_vector_distance,
    l2_distribution_gap,
    sinkhorn_count_distance,
    true_positive_rates,
    wasserstein_1,
)
from sb3_fair.metrics.distances import _geomloss_samples_loss

#: float32's largest value: SB3 stores rewards in float32 and sums them into episode returns
FLOAT32_MAX = float(np.finfo(np.float32).max)

N_CLUSTERS = 7
#: initial credit-cluster pmfs of group 0 (advantaged) and group 1 (disadvantaged, one cluster lower)
INITIAL_PMFS = ((0.0, 0.1, 0.1, 0.2, 0.3, 0.3, 0.0), (0.1, 0.1, 0.2, 0.3, 0.3, 0.0, 0.0))
#: probability that an applicant of each credit cluster repays
SUCCESS_PROBS = (0.1, 0.2, 0.45, 0.6, 0.65, 0.7, 0.7)
LONG_TERM_MEASURES = ("wasserstein", "pmf_wasserstein", "pmf_l2", "counts_sinkhorn", "counts_geomloss")
OBS_SIZE = 3 * N_CLUSTERS + 4  # 7 + 2 + 2 + 7 + 7 = 25
_SUPPORT = np.arange(N_CLUSTERS, dtype=np.float64)


def _cumsum(values: list[float]) -> list[float]:
    """``np.cumsum(values)`` as Python floats: the same additions in the same order (left to right)."""
    out = []
    acc = 0.0
    for i, v in enumerate(values):
        acc = v if i == 0 else acc + v
        out.append(acc)
    return out


def _w1_unit_support(p: list[float], q: list[float]) -> float:
    """:func:`~sb3_fair.metrics.wasserstein_1` of ``p`` and ``q`` on the support 0, 1, .., n - 1, bit for bit.

    The closed form of W1 on an ordered support, the sum over the gaps of ``|CDF_p - CDF_q| * gap``, in the
    arithmetic of :func:`scipy.stats.wasserstein_distance`: the CDFs are the cumulative sums divided by the total
    (``np.cumsum``, left to right), the gaps are 1 (between the n support points; the zero gaps between the two
    copies of each point add 0), and the terms are summed left to right from 0.0, as its dot product of the
    ``2n - 1`` terms does (a BLAS ``ddot`` of fewer than 16 terms sums them in order). Weights: >= 0, positive
    totals (the env's smoothed or true pmfs). ``tests/test_env_trajectories.py`` checks the equality on random
    weights; it is many times faster than the general function, which sorts and validates.
    """
    cp, cq = _cumsum(p), _cumsum(q)
    tp, tq = cp[-1], cq[-1]
    w = 0.0
    for k in range(len(p) - 1):
        w += abs(cp[k] / tp - cq[k] / tq)
    return w


class DelayedImpactLendingEnv(gym.Env):
    """A bank decides on one loan applicant per step; loans shift the applicant group's credit distribution.

    **Dynamics** (Liu et al. 2018, arXiv:1803.04383; Hu, Lear, Zhang 2024, arXiv:2401.06318, §VI-A). Each
    step shows one applicant: a group (0 = advantaged, 1 = disadvantaged; group 0 with probability
    ``group_0_prob``), a credit cluster 0..6 drawn from the group's current pmf, and whether the
    applicant would repay, drawn from the cluster's repayment probability *when the applicant is
    drawn* (hidden from the agent). Action 0 rejects, 1 accepts. On acceptance the bank's cash, and the
    reward, change by ``+loan_amount * interest_rate`` on repayment and ``-loan_amount`` on default (+1 / -1
    with the defaults), and a mass ``min(cluster_shift_increment, pmf[c])`` of the applicant group's
    pmf moves from the applicant's cluster c one cluster up on repayment, one down on default
    (nothing moves at the ends). A rejection pays 0 and moves nothing. The next applicant is then
    drawn from the updated pmfs. ``reset`` restores the initial pmfs and the starting cash and empties
    the window.

    **The window** holds the last ``window`` *decided* applicants (group, cluster, would-repay,
    decision). In ``step`` the current applicant and its decision are added (and the oldest entry
    dropped once the window is full) right after the decision takes effect and *before* the next
    applicant is drawn; the signals and the observation's window features are then read from it. So
    after step t the window holds the decisions of steps t - window + 1 .. t, and the applicant shown
    in the returned observation is not in it yet. Eq. 8 sums over steps t - w .. t, i.e. w + 1 decisions,
    while this window holds w = ``window`` decisions. (The authors' code reads Δs with ``window + 1``
    decisions, adding the new one before the oldest leaves; its cluster counts hold the last ``window``
    decided applicants, as here.)

    **Observation** (25 float32 in [0, 1], in this order): the applicant's cluster one-hot (7), its
    group one-hot (2), the windowed TPR of group 0 and of group 1 (2), then the windowed cluster counts
    of group 0 and of group 1 (7 + 7), each divided by (number of entries in the window + 1). Bank
    cash is not observed. The authors' Box had ``low=+inf``; this one has the right bounds.

    **Fairness signals** in every step's info (and in the reset info), read after the step:

    * ``info[SHORT_TERM_FAIRNESS]``, Δs (Eq. 8): ``|TPR_0 - TPR_1|`` over the window, where TPR_g is
      the fraction of group g's would-repay applicants in the window that were accepted (0 when the
      window holds none of group g).
    * ``info[LONG_TERM_FAIRNESS]``, Δl, chosen by ``long_term``:

      - ``"wasserstein"`` (default; the paper's definition): exact Wasserstein-1, in clusters, between
        the two groups' windowed credit distributions, each smoothed with ``prior_weight`` = k
        pseudo-counts spread as the group's current true pmf
        (:func:`~sb3_fair.metrics.smoothed_distribution`): ``(window counts of g + k * pmf_g) / (n_g + k)``,
        n_g being group g's applicants in the window. With few applicants in the window it is close to
        the W1 of the true pmfs (1.0 at reset) instead of 0 until both groups are seen and then jumping
        with every applicant (noise that F-PPO's min-max scaling would amplify); with a full window
        (n_g ≈ 150) the prior's weight k / (n_g + k) is small (about 6 % for k = 10). Through the prior
        an accepted loan's credit shift shows at once, with that small weight; otherwise Δl depends
        on an action only through later applicants, drawn from the shifted pmfs. ``prior_weight=0``
        gives the raw normalised histograms, and then Δl is 0 while a group has no applicant in the
        window (at reset and for the first few steps).
      - ``"pmf_wasserstein"``: the same distance between the two groups' current *true* pmfs (1.0
        at reset); it responds at once to the credit shift an accepted loan causes, without
        sampling noise.
      - ``"pmf_l2"``: the Euclidean distance between the two current true pmfs (0.346 at reset),
        the quantity the authors' evaluation figure plots.
      - ``"counts_sinkhorn"``: the authors' training quantity, 1-D W1 between the two groups'
        windowed count vectors read as two multisets of 7 values
        (:func:`~sb3_fair.metrics.count_vector_distance`). It is invariant to permuting the clusters,
        so it does **not** measure a shift in credit score (it is exactly 0 for the initial pmfs'
        expected counts, which lie one cluster apart); provided to reproduce the authors' runs. It is
        computed on the raw window counts: ``prior_weight`` does not apply, since smoothing would change
        the authors' quantity. It is the exact W1; the authors' code computes it with geomloss's
        ``SamplesLoss("sinkhorn", p=1, blur=0.01)``, whose value is below the exact W1 (by about 1 on
        average, up to 4.5, on random count vectors of a 300-applicant window, measured with geomloss 0.2.5).
      - ``"counts_geomloss"``: the same quantity computed as the authors' code computes it, with geomloss
        (:func:`~sb3_fair.metrics.sinkhorn_count_distance`; ``pip install "sb3-fair[authors]"``). In the
        authors' code F-PPO's early training changes with this approximation (``benchmarks/RESULTS.md``).
        Slower: a geomloss call per step.

    Other info keys: ``"credit_pmfs"`` (the two groups' current pmfs, shape (2, 7); also in the reset
    info), ``"tpr"`` (the two windowed TPRs), ``"bank_cash"``, and in step infos ``"applicant_group"``,
    ``"applicant_cluster"``, ``"would_repay"`` and ``"accepted"`` for the decided applicant.

    **Stakeholders** are the two groups (``groups = [0, 1]``, group 1 the protected one);
    ``info["benefits"]`` is 1.0 for the applicant's group when its loan was granted and 0 otherwise.

    **Rendering.** ``"ansi"`` gives a one-line text summary; ``"rgb_array"`` draws the two groups'
    current pmfs as 14 bars (group 0's seven clusters, then group 1's), with a white mark over the
    current applicant's cluster.

    **What-if** (action massaging, Hu et al. 2024, Eq. 6): :meth:`fairness_what_if` gives Δs for
    accepting and rejecting the current applicant, using its (hidden) repayment outcome, as the
    authors' oracle does.

    **Episode end.** After ``horizon`` steps (default 2,000, the authors' training length;
    their evaluation runs 10,000) the episode is cut with ``truncated=True``, so SB3 bootstraps the
    value of the last state (:func:`~sb3_fair.envs.horizon.horizon_end`). The authors treated the cut
    as terminal (no bootstrap); pass ``horizon_terminates=True`` to get ``terminated=True`` instead.
    The episode also terminates if the bank's cash falls below ``loan_amount`` (never with the
    defaults in practice).

    Example::

        env = DelayedImpactLendingEnv(long_term="wasserstein")
        obs, info = env.reset(seed=0)
        policy = EqualOpportunityPolicy(env, seed=0)
        action, _ = policy.predict(obs)
        obs, reward, terminated, truncated, info = env.step(action)
        info[SHORT_TERM_FAIRNESS], info[LONG_TERM_FAIRNESS], info["credit_pmfs"]

    :param horizon: episode length (authors: 2,000 for training, 10,000 for evaluation). Not called
        ``max_episode_steps``: ``gym.make`` would take that keyword for its own ``TimeLimit`` wrapper,
        which the env would never see (and which ignores ``horizon_terminates``).
    :param window: sliding-window length w (paper: 300), an int >= 1.
    :param long_term: which Δl to report: ``"wasserstein"``, ``"pmf_wasserstein"``, ``"pmf_l2"``,
        ``"counts_sinkhorn"`` or ``"counts_geomloss"`` (see above; the last needs geomloss).
    :param horizon_terminates: end the episode at the horizon with ``terminated=True`` (the authors'
        treatment) instead of ``truncated=True``.
    :param interest_rate: the bank's gain per unit lent on repayment, > 0 (authors: 1.0).
    :param loan_amount: the amount lent per accepted loan, > 0 (1.0).
    :param bank_starting_cash: the bank's cash at reset, >= ``loan_amount`` (10,000).
    :param cluster_shift_increment: the pmf mass moved by one loan outcome, >= 0 (0.01).
    :param group_0_prob: probability that an applicant belongs to group 0, in [0, 1] (0.5).
    :param initial_pmfs: the two groups' credit-cluster pmfs at reset, shape (2, 7) (default
        :data:`INITIAL_PMFS`).
    :param success_probs: the repayment probability of each cluster, 7 values in (0, 1] (default
        :data:`SUCCESS_PROBS`).
    :param render_mode: ``None``, ``"ansi"`` or ``"rgb_array"``.
    :param prior_weight: pseudo-counts k >= 0 that smooth the windowed distributions of
        ``long_term="wasserstein"`` towards the groups' current true pmfs (10.0; 0 for none; see above).
    """

    metadata = {"render_modes": RENDER_MODES, "render_fps": 4}

    def __init__(
        self,
        horizon: int = 2000,
        window: int = 300,
        long_term: str = "wasserstein",
        horizon_terminates: bool = False,
        interest_rate: float = 1.0,
        loan_amount: float = 1.0,
        bank_starting_cash: float = 10_000.0,
        cluster_shift_increment: float = 0.01,
        group_0_prob: float = 0.5,
        initial_pmfs: Any = INITIAL_PMFS,
        success_probs: Any = SUCCESS_PROBS,
        render_mode: str | None = None,
        prior_weight: float = 10.0,
    ) -> None:
        self.horizon = check_horizon(horizon)
        self.window = check_horizon(window, "window")
        self.long_term = check_choice(long_term, "long_term", LONG_TERM_MEASURES)
        if self.long_term == "counts_geomloss":
            _geomloss_samples_loss()  # an optional dependency: fail here, naming the extra
        self.horizon_terminates = check_bool(horizon_terminates, "horizon_terminates")
        self.interest_rate = check_weights(interest_rate, "interest_rate", allow_zero=False)
        self.loan_amount = check_weights(loan_amount, "loan_amount", allow_zero=False)
        self.bank_starting_cash = check_weights(bank_starting_cash, "bank_starting_cash")
        if self.bank_starting_cash < self.loan_amount:
            raise ValueError(
                f"bank_starting_cash must be a finite number >= loan_amount ({self.loan_amount}), "
                f"got {bank_starting_cash!r}"
            )
        # an accepted repayer earns loan_amount * interest_rate, a defaulter costs loan_amount: an episode's rewards
        # must stay finite in SB3's float32 buffers, and the bank's cash in float64
        largest = self.loan_amount * max(self.interest_rate, 1.0) * self.horizon
        if not largest <= FLOAT32_MAX:
            raise ValueError(
                f"loan_amount * max(interest_rate, 1) * horizon must be at most {FLOAT32_MAX:.3g} (float32's largest value: an "
                f"episode's rewards are stored and summed in float32), got {largest:.3g} (loan_amount={loan_amount!r}, "
                f"interest_rate={interest_rate!r}, horizon={horizon!r})"
            )
        self.cluster_shift_increment = check_weights(cluster_shift_increment, "cluster_shift_increment")
        self.group_0_prob = check_probability(group_0_prob, "group_0_prob")
        self.prior_weight = check_weights(prior_weight, "prior_weight")
        self.render_mode = check_render_mode(render_mode)
        pmfs = as_float_array(initial_pmfs, "initial_pmfs", f"two pmfs over {N_CLUSTERS} clusters")
        if (
            pmfs.shape != (2, N_CLUSTERS)
            or np.any(~np.isfinite(pmfs))
            or np.any(pmfs < 0)
            or not np.allclose(pmfs.sum(axis=1), 1.0)
        ):
            raise ValueError(
                f"initial_pmfs must be two pmfs over {N_CLUSTERS} clusters (shape (2, 7), rows summing to 1), "
                f"got {initial_pmfs!r}"
            )
        probs = as_float_array(success_probs, "success_probs", f"{N_CLUSTERS} probabilities in (0, 1]")
        if probs.shape != (N_CLUSTERS,) or np.any(~np.isfinite(probs)) or np.any(probs <= 0) or np.any(probs > 1):
            raise ValueError(f"success_probs must be {N_CLUSTERS} probabilities in (0, 1], got {success_probs!r}")
        self.initial_pmfs = pmfs / pmfs.sum(axis=1, keepdims=True)
        self.success_probs = probs
        self.stakeholders = Stakeholders(
            names=("group_0", "group_1"), groups=np.array([0, 1]), group_names={0: "advantaged", 1: "disadvantaged"}
        )
        self.observation_space = spaces.Box(0.0, 1.0, (OBS_SIZE,), np.float32)
        self.action_space = spaces.Discrete(2)
        self._pmfs = self.initial_pmfs.copy()
        self.bank_cash = self.bank_starting_cash
        self.t = 0
        self.applicant_group = 0
        self.applicant_cluster = 0
        self._would_repay = False
        self._entries: deque[tuple[int, int, bool, bool]] = deque()
        # the window's counters, as Python ints (read at every step): applicants per group and cluster, applicants
        # per group, would-repay applicants per group (pos) and accepted ones among them (tp)
        self._count_lists = [[0] * N_CLUSTERS for _ in range(2)]
        self._n = [0, 0]
        self._pos = [0, 0]
        self._tp = [0, 0]
        # per group, derived from self._pmfs (refreshed whenever a pmf changes): the cumulative pmf that draws the
        # applicant's cluster, and the prior part of the smoothed distribution, k * pmf / sum(pmf)
        self._cdfs: list[list[float]] = [[], []]
        self._priors: list[list[float] | None] = [None, None]
        self._prior_k = self.prior_weight
        self._pmf_long_term: float | None = None  # Δl of "pmf_wasserstein" / "pmf_l2", until a pmf changes
        self._pmfs_changed()

    # ---------------------------------------------------------------- state read-outs
    @property
    def credit_pmfs(self) -> np.ndarray:
        """The two groups' current credit-cluster pmfs, shape (2, 7) (a copy)."""
        return self._pmfs.copy()

    @property
    def tpr(self) -> np.ndarray:
        """The windowed true-positive rate of each group (0 for a group with no would-repay applicant)."""
        return true_positive_rates(self._tp, self._pos)

    @property
    def _counts(self) -> np.ndarray:
        """The window's applicants per group and cluster, shape (2, 7), as an int array (of :attr:`_count_lists`)."""
        return np.array(self._count_lists, dtype=np.int64)

    @staticmethod
    def _tprs(tp: Sequence[int], pos: Sequence[int]) -> tuple[float, float]:
        """The two groups' TPRs of the int counters ``tp`` and ``pos`` as Python floats:
        :func:`~sb3_fair.metrics.true_positive_rates`' arithmetic (``tp / pos``, 0 for ``pos == 0``), without
        its checks (the counters are the env's own); ``|TPR_0 - TPR_1|`` of them is
        :func:`~sb3_fair.metrics.equal_opportunity_gap`, Δs (Eq. 8)."""
        (tp0, tp1), (pos0, pos1) = tp, pos
        return (tp0 / pos0 if pos0 > 0 else 0.0), (tp1 / pos1 if pos1 > 0 else 0.0)

    def _rates(self) -> tuple[float, float]:
        """The windowed TPRs (:meth:`_tprs` of the window's counters)."""
        return self._tprs(self._tp, self._pos)

    def _pmfs_changed(self) -> None:
        """Refresh what is derived from ``self._pmfs`` (call after every change of a pmf)."""
        self._cdfs = [_cumsum(row) for row in self._pmfs.tolist()]
        self._priors = [None, None]
        self._pmf_long_term = None

    def _prior(self, g: int) -> list[float]:
        """``k * pmf_g / sum(pmf_g)`` as :func:`~sb3_fair.metrics.smoothed_distribution` computes it (cached)."""
        if self._prior_k != self.prior_weight:
            self._priors, self._prior_k = [None, None], self.prior_weight
        prior = self._priors[g]
        if prior is None:
            q = self._pmfs[g]
            prior = self._priors[g] = (self.prior_weight * q / q.sum()).tolist()
        return prior

    def _smoothed(self, g: int) -> list[float]:
        """:func:`~sb3_fair.metrics.smoothed_distribution` of group g's window counts and pmf, in its arithmetic
        (``(count + k * pmf / sum(pmf)) / (n_g + k)`` element by element), as Python floats."""
        total = self._n[g] + self.prior_weight
        return [(c + p) / total for c, p in zip(self._count_lists[g], self._prior(g))]

    def _long_term(self) -> float:
        if self.long_term == "wasserstein":
            if self.prior_weight == 0 and (self._n[0] == 0 or self._n[1] == 0):
                return 0.0
            return _w1_unit_support(self._smoothed(0), self._smoothed(1))
        if self.long_term == "counts_sinkhorn":
            counts = self._counts
            return count_vector_distance(counts[0], counts[1])
        if self.long_term == "counts_geomloss":
            counts = self._counts
            return sinkhorn_count_distance(counts[0], counts[1])
        if self._pmf_long_term is None:  # "pmf_l2" and "pmf_wasserstein" change only with the pmfs
            if self.long_term == "pmf_l2":
                self._pmf_long_term = l2_distribution_gap(self._pmfs[0], self._pmfs[1])
            else:
                self._pmf_long_term = wasserstein_1(_SUPPORT, self._pmfs[0], self._pmfs[1])
        return self._pmf_long_term

    def _obs(self, rates: tuple[float, float]) -> np.ndarray:
        obs = np.zeros(OBS_SIZE, dtype=np.float32)
        obs[self.applicant_cluster] = 1.0
        obs[N_CLUSTERS + self.applicant_group] = 1.0
        obs[N_CLUSTERS + 2 : N_CLUSTERS + 4] = rates
        d = len(self._entries) + 1.0
        c0, c1 = self._count_lists
        obs[N_CLUSTERS + 4 :] = [c / d for c in c0] + [c / d for c in c1]
        return obs

    def _info(self, rates: tuple[float, float]) -> dict[str, Any]:
        return {
            # equal_opportunity_gap of the window's counters: |TPR_0 - TPR_1|
            SHORT_TERM_FAIRNESS: abs(rates[0] - rates[1]),
            LONG_TERM_FAIRNESS: self._long_term(),
            "credit_pmfs": self._pmfs.copy(),
            "tpr": np.array(rates),
            "bank_cash": self.bank_cash,
        }

    # ---------------------------------------------------------------- dynamics
    def _draw_applicant(self) -> None:
        # three uniforms, as three rng.random() calls would draw them: group, cluster (inverse CDF of the group's
        # pmf, np.searchsorted(cdf, u * cdf[-1], "right") on the sorted cumulative sums) and repayment
        u_group, u_cluster, u_repay = self.np_random.random(3).tolist()
        g = 0 if u_group < self.group_0_prob else 1
        cdf = self._cdfs[g]
        c = min(bisect_right(cdf, u_cluster * cdf[-1]), N_CLUSTERS - 1)
        self.applicant_group, self.applicant_cluster = g, c
        self._would_repay = bool(u_repay < self.success_probs[c])

    def _window_after(self, accept: bool) -> tuple[list[int], list[int], tuple[int, int, bool, bool] | None]:
        """``(tp, pos, dropped)``: the TPR counters once the current applicant, decided by ``accept``, joins
        the window, and the entry that leaves it then (``None`` while the window is not full)."""
        tp, pos = list(self._tp), list(self._pos)
        g, repay = self.applicant_group, self._would_repay
        pos[g] += repay
        tp[g] += repay and accept
        dropped = self._entries[0] if len(self._entries) >= self.window else None
        if dropped is not None:
            dg, _, d_repay, d_accept = dropped
            pos[dg] -= d_repay
            tp[dg] -= d_repay and d_accept
        return tp, pos, dropped

    def fairness_what_if(self, action: Any) -> tuple[np.ndarray, np.ndarray]:
        """``(candidates, short_term)`` for action massaging (Hu et al. 2024, Eq. 6), with no side effect.

        ``candidates = [action, 1 - action]``; ``short_term[i]`` is the Δs (Eq. 8) that executing
        ``candidates[i]`` for the current applicant now would leave, i.e. the ``info[SHORT_TERM_FAIRNESS]``
        of that step. It uses whether the applicant would repay (an oracle, as the authors' code
        does). State, window and random generator are left untouched.

        :param action: the action the agent proposes, 0 (reject) or 1 (accept): an int or a
            one-element integer array.
        :return: ``candidates``, int64 array ``[action, 1 - action]``, and ``short_term``, float64
            array of the Δs each candidate would leave, in the same order.
        :raises ValueError: for anything but a whole 0 or 1 (e.g. 0.7 or a 2-element array).
        """
        a = check_discrete_action(action, 2)
        short_term = []
        for c in (a, 1 - a):  # Δs as the step's info computes it (equal_opportunity_gap's arithmetic)
            rate_0, rate_1 = self._tprs(*self._window_after(bool(c))[:2])
            short_term.append(abs(rate_0 - rate_1))
        return np.array([a, 1 - a], dtype=np.int64), np.array(short_term)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self._pmfs = self.initial_pmfs.copy()
        self.bank_cash = self.bank_starting_cash
        self.t = 0
        self._entries = deque()
        self._count_lists = [[0] * N_CLUSTERS for _ in range(2)]
        self._n = [0, 0]
        self._pos = [0, 0]
        self._tp = [0, 0]
        self._pmfs_changed()
        self._draw_applicant()
        rates = self._rates()
        return self._obs(rates), self._info(rates)

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        a = check_discrete_action(action, 2)
        g, c, repay, accept = self.applicant_group, self.applicant_cluster, self._would_repay, a == 1
        reward = 0.0
        benefits = np.zeros(2, dtype=np.float64)
        if accept:
            benefits[g] = 1.0
            reward = self.loan_amount * self.interest_rate if repay else -self.loan_amount
            self.bank_cash += reward
            target = min(c + 1, N_CLUSTERS - 1) if repay else max(c - 1, 0)
            if target != c:
                mass = min(self.cluster_shift_increment, self._pmfs[g, c])
                self._pmfs[g, c] -= mass
                self._pmfs[g, target] += mass
                self._pmfs_changed()
        # the decided applicant joins the window (the oldest entry leaves once it is full): the TPR counters as
        # fairness_what_if previews them, then the applicant counts
        self._tp, self._pos, dropped = self._window_after(accept)
        n, counts = self._n, self._count_lists
        if dropped is not None:
            dg, dc = dropped[0], dropped[1]
            self._entries.popleft()
            n[dg] -= 1
            counts[dg][dc] -= 1
        self._entries.append((g, c, repay, accept))
        n[g] += 1
        counts[g][c] += 1
        self.t += 1
        terminated, truncated = horizon_end(self.t, self.horizon, self.horizon_terminates)
        if self.bank_cash < self.loan_amount:  # the bank cannot fund the next loan
            terminated, truncated = True, False
        self._draw_applicant()
        rates = self._rates()
        info = self._info(rates)
        info[BENEFITS] = benefits
        info["applicant_group"] = g
        info["applicant_cluster"] = c
        info["would_repay"] = repay
        info["accepted"] = accept
        return self._obs(rates), float(reward), bool(terminated), bool(truncated), info

    def render(self) -> str | np.ndarray | None:
        if self.render_mode == "ansi":
            return (
                f"t={self.t} cash={self.bank_cash:.1f} applicant=(group {self.applicant_group}, cluster "
                f"{self.applicant_cluster}) tpr={np.round(self.tpr, 3).tolist()} "
                f"pmfs={np.round(self._pmfs, 3).tolist()}"
            )
        if self.render_mode == "rgb_array":
            marked = np.zeros(2 * N_CLUSTERS, dtype=bool)
            marked[self.applicant_group * N_CLUSTERS + self.applicant_cluster] = True
            groups = np.repeat(np.arange(2), N_CLUSTERS)
            return bars_rgb(self._pmfs.ravel(), max(float(self._pmfs.max()), 1e-9), groups, marked)
        return None


class EqualOpportunityPolicy:
    """The equal-opportunity threshold bank (Hu et al. 2024's "EO" baseline, §VI-A; Hardt, Price, Srebro 2016).

    Equal opportunity is that of Hardt, Price, Srebro (2016), *Equality of Opportunity in Supervised
    Learning*, arXiv:1610.02413: equal true-positive rates across the groups.

    The oracle threshold agent of ml-fairness-gym with equal-opportunity thresholds: at every decision
    it fits one threshold per group on the credit cluster to the *current true* applicant distribution
    (the env's pmfs, group probability and repayment probabilities) so as to maximise the expected
    profit per applicant (``+loan_amount * interest_rate`` for an accepted repayer, ``-loan_amount`` for an
    accepted defaulter, 0 for a rejection; +1 / -1 / 0 with the defaults) subject to equal true-positive
    rates in the two groups.

    Method. A group's threshold is randomised: accept every cluster above k, accept cluster k with
    probability β, reject the rest. Sweeping it from "accept nobody" down to "accept everybody"
    raises the group's TPR from 0 to 1 piecewise linearly, one piece per cluster, and its expected
    profit is concave in the TPR (the profit per qualified applicant accepted falls as the clusters
    fall). For a shared TPR level τ, each group's (k, β) is the one that reaches TPR τ; the total
    expected profit is concave and piecewise linear in τ, so its maximum lies at a piece boundary of one
    of the groups: the policy evaluates all of them (and 0 and 1) and takes the best (the lowest τ on
    a tie). The randomisation at cluster k uses the policy's own generator (``seed``), whatever
    ``deterministic`` says: equal TPRs need it. Thresholds are refitted only when the pmfs changed.

    Example::

        env = DelayedImpactLendingEnv()
        policy = EqualOpportunityPolicy(env, seed=0)
        obs, _ = env.reset(seed=0)
        action, _ = policy.predict(obs)

    :param env: the :class:`DelayedImpactLendingEnv` (possibly wrapped) whose observations are answered,
        or a VecEnv of them (row i of a batch of observations is then answered from sub-env i).
    :param seed: seed of the generator used at the randomised threshold cluster.
    """

    def __init__(self, env: gym.Env | VecEnv, seed: int | None = None) -> None:
        self.vec_env = env if isinstance(env, VecEnv) else None
        if self.vec_env is not None:
            attrs = ("credit_pmfs", "success_probs", "group_0_prob", "interest_rate", "loan_amount")
            if not all(self.vec_env.has_attr(name) for name in attrs):
                raise ValueError("env must be a DelayedImpactLendingEnv or a VecEnv of them")
            src = None
            self.success_probs = np.asarray(self.vec_env.get_attr("success_probs", indices=[0])[0], dtype=np.float64)
            self.group_0_prob = float(self.vec_env.get_attr("group_0_prob", indices=[0])[0])
            rate = float(self.vec_env.get_attr("interest_rate", indices=[0])[0])
            amount = float(self.vec_env.get_attr("loan_amount", indices=[0])[0])
        else:
            src = env.unwrapped
            if not isinstance(src, DelayedImpactLendingEnv):
                raise ValueError(f"env must be a DelayedImpactLendingEnv or a VecEnv of them, got {type(src).__name__}")
            self.success_probs = src.success_probs.copy()
            self.group_0_prob = src.group_0_prob
            rate, amount = src.interest_rate, src.loan_amount
        # the bare env (checked above), or None for a VecEnv (read through vec_env)
        self.env = cast("DelayedImpactLendingEnv | None", src)
        self.gain = amount * rate  # profit of an accepted repayer
        self.loss = amount  # cost of an accepted defaulter
        self.rng = np.random.default_rng(seed)
        self._cache: dict[bytes, np.ndarray] = {}

    def thresholds(self, pmfs: Any) -> np.ndarray:
        """Per group, ``(k, β, τ)``: accept clusters > k, cluster k with probability β; τ is the shared TPR.

        :param pmfs: the two groups' credit-cluster pmfs, shape (2, 7) (e.g. the env's ``credit_pmfs``).
        :return: float64 array of shape (2, 3), row g = ``(k, β, τ)`` for group g; k is a cluster
            0..6, or 7 (accept nobody) when τ = 0. Cached per ``pmfs`` value.
        """
        pmfs = np.asarray(pmfs, dtype=np.float64)
        key = pmfs.tobytes()
        if key not in self._cache:
            if len(self._cache) > 4096:
                self._cache.clear()
            self._cache[key] = self._fit(pmfs)
        return self._cache[key]

    def _fit(self, pmfs: np.ndarray) -> np.ndarray:
        p = self.success_probs
        weights = np.array([self.group_0_prob, 1.0 - self.group_0_prob])
        qualified = pmfs * p  # (2, 7) mass of would-repay applicants
        profit = pmfs * (p * self.gain - (1.0 - p) * self.loss)  # expected profit of accepting each cluster
        # accepting from the top cluster down: cumulative TPR and profit at each piece boundary
        tpr_b = np.concatenate([np.zeros((2, 1)), np.cumsum(qualified[:, ::-1], axis=1)], axis=1)
        tpr_b /= tpr_b[:, -1:]
        profit_b = np.concatenate([np.zeros((2, 1)), np.cumsum(profit[:, ::-1], axis=1)], axis=1)
        levels = np.unique(np.clip(tpr_b.ravel(), 0.0, 1.0))
        totals = sum(weights[g] * np.interp(levels, tpr_b[g], profit_b[g]) for g in range(2))
        tau = float(levels[int(np.argmax(totals))])
        out = np.zeros((2, 3))
        for g in range(2):
            # the first top-down piece whose end reaches tau (zero-qualified clusters are skipped)
            j = int(np.searchsorted(tpr_b[g], tau, side="left"))
            if j == 0:  # tau == 0: accept nobody
                out[g] = (N_CLUSTERS, 0.0, tau)
                continue
            k = N_CLUSTERS - j  # the cluster that piece j adds
            width = tpr_b[g, j] - tpr_b[g, j - 1]
            beta = 1.0 if width <= 0 else float(np.clip((tau - tpr_b[g, j - 1]) / width, 0.0, 1.0))
            out[g] = (k, beta, tau)
        return out

    def _pmfs(self, row: int) -> np.ndarray:
        if self.vec_env is not None:
            return np.asarray(self.vec_env.get_attr("credit_pmfs", indices=[row])[0])
        assert self.env is not None  # not a VecEnv: the env itself
        return self.env.credit_pmfs

    def _single(self, obs: np.ndarray, row: int) -> int:
        cluster = int(np.argmax(obs[:N_CLUSTERS]))
        group = int(np.argmax(obs[N_CLUSTERS : N_CLUSTERS + 2]))
        k, beta, _ = self.thresholds(self._pmfs(row))[group]
        if cluster > k:
            return 1
        if cluster == k and beta > 0:
            return int(self.rng.random() < beta)
        return 0

    def predict(
        self, observation: np.ndarray, state: Any = None, episode_start: Any = None, deterministic: bool = True
    ) -> tuple[np.ndarray, None]:
        """SB3-style ``(actions, None)`` for one observation (shape (25,)) or a batch (shape (n, 25)).

        The applicant's group and cluster are read from the observation, the thresholds from the
        current pmfs of the env (row i of a batch: sub-env i of the VecEnv).

        :param observation: one observation or a batch of them.
        :param state: ignored (no recurrent state).
        :param episode_start: ignored.
        :param deterministic: ignored: the randomised threshold cluster always draws from the policy's
            generator, as equal TPRs need.
        :return: ``(actions, None)``: an int64 0-d array (one observation) or array of shape (n,).
        """
        obs = np.asarray(observation, dtype=np.float64)
        if obs.ndim == 1:
            return np.array(self._single(obs, 0), dtype=np.int64), None
        return np.array([self._single(o, i) for i, o in enumerate(obs)], dtype=np.int64), None


__all__ = ["INITIAL_PMFS", "SUCCESS_PROBS", "DelayedImpactLendingEnv", "EqualOpportunityPolicy"]
