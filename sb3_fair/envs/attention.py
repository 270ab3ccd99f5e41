"""Attention allocation (Hu, Lear, Zhang 2024, arXiv:2401.06318, §VI-B and Eq. 9).

The task is D'Amour, Srinivasan, Atwood, Baljekar, Sculley, Halpern (2020), "Fairness is not static",
FAT* 2020 (ml-fairness-gym's attention allocation), with Hu et al.'s per-site rate increases.

Five sites, six units of attention (e.g. patrols, inspectors) to spread over them at every step.
Incidents occur at each site at a Poisson rate that falls where attention is paid and rises where
none is. The short-term gap Δs is the demographic-parity gap of the allocation shares (Eq. 9); the
long-term gap Δl is the spread of the incident rates across sites.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env import VecEnv

from sb3_fair._exact import pairwise_sum
from sb3_fair.common.protocol import BENEFITS, LONG_TERM_FAIRNESS, SHORT_TERM_FAIRNESS
from sb3_fair.common.stakeholders import Stakeholders
from sb3_fair.common.validation import check_bool, check_choice, check_coef, check_int, check_weights
from sb3_fair.envs.horizon import check_horizon, horizon_end
from sb3_fair.envs.rendering import RENDER_MODES, bars_rgb, check_render_mode
from sb3_fair.metrics import allocation_share_gap

#: the action space's bound: every logit lies in ``[-LOGIT_BOUND, LOGIT_BOUND]``
LOGIT_BOUND = 10.0
#: the largest ``n_units`` for which :func:`allocation_to_logits` round-trips through float32 logits
MAX_UNITS = 1000
#: the largest incident rate a site may reach within an episode (``initial_rates[k] + horizon * increase_rates[k]``,
#: and ``decrease_rate``). NumPy's Poisson sampler refuses a rate above about 9.2e18 ("lam value too large": a draw
#: must fit an int64), and the occurrences summed over the window are int64: 1e12 per step over at most
#: MAX_WINDOW = 1e6 steps stays below 1e18. The paper's rates start at 8 and rise by at most 0.6 a step.
MAX_RATE = 1e12
#: the longest window (steps): its ring buffer of 3 x window x K int64 is allocated at construction and zeroed at
#: every reset (1e6 steps: 120 MB for the paper's 5 sites; the authors' window is 300)
MAX_WINDOW = 10**6
#: the longest observed history (steps): the observation holds 4 K floats per step (1e4 steps: 200,000 floats for
#: the paper's 5 sites; the paper's history is 8)
MAX_HISTORY = 10**4
#: the most sites (``initial_rates``' length): the observation holds 4 K floats per step of the history
MAX_SITES = 1000
#: the longest observation (``history_len * 4 K`` floats): it is allocated, with the space's bounds, at construction
MAX_OBSERVATION = 10**7
#: the accepted ``long_term`` values: which long-term gap Δl the env reports
LONG_TERM_MEASURES = ("rates", "counts")
#: ε of the what-if's one-unit moves: the probability a site keeps when mass moves away from it (the authors' 0.005)
MOVE_EPSILON = 0.005
#: weights λ of the what-if's fallback candidates, tried in this order (see ``fairness_what_if``)
FALLBACK_MIXTURES = (0.125, 0.25, 0.5)


def _check_rates(value: Any, name: str, size: int | None = None) -> np.ndarray:
    """``value`` as a float64 vector of finite numbers >= 0, one per site: ``size`` of them, or >= 2 if None."""
    count = f"{size}" if size is not None else "a sequence of >= 2"
    accepted = f"{name} must be {count} finite numbers >= 0 (one per site)"
    if isinstance(value, (str, bytes)) or (isinstance(value, np.ndarray) and value.ndim != 1):
        raise ValueError(f"{accepted}, got {value!r}")
    try:
        entries = list(value)
    except TypeError:
        raise ValueError(f"{accepted}, got {value!r}") from None
    if (size is not None and len(entries) != size) or len(entries) < 2:
        raise ValueError(f"{accepted}, got {value!r}")
    if len(entries) > MAX_SITES:
        raise ValueError(
            f"{name} must be at most {MAX_SITES} numbers (MAX_SITES: the env allocates arrays of this size per step of "
            f"its history), got {len(entries)}"
        )
    rates = np.array([check_weights(v, f"{name}[{k}]") for k, v in enumerate(entries)], dtype=np.float64)
    if np.any(rates > MAX_RATE):
        k = int(np.argmax(rates > MAX_RATE))
        raise ValueError(
            f"{name}[{k}] must be a number in [0, {MAX_RATE:.0e}] (MAX_RATE: NumPy's Poisson sampler and the "
            f"int64 incident counts overflow beyond), got {entries[k]!r}"
        )
    return rates


def _softmax(logits: np.ndarray) -> np.ndarray:
    z = logits - logits.max()
    e = np.exp(z)
    return e / e.sum()


def _softmax_list(z: list[float]) -> list[float]:
    """:func:`_softmax` of the finite floats ``z``, bit for bit, as Python floats (one NumPy call: the exp)."""
    top = max(z)
    e = np.exp([v - top for v in z]).tolist()
    total = pairwise_sum(e)
    return [v / total for v in e]


def _greedy_allocation(p: list[float], n: int) -> list[int]:
    """The paper's greedy procedure on the probabilities ``p`` (changed in place): n times, one unit to the
    first largest entry, which loses 1/n."""
    alloc = [0] * len(p)
    unit = 1.0 / n
    for _ in range(n):
        k = p.index(max(p))  # first maximum: lowest index wins a tie (max keeps the first of equal values)
        alloc[k] += 1
        p[k] -= unit
    return alloc


def _bounded(logits: np.ndarray) -> np.ndarray:
    """``logits`` lowered by their excess over ``LOGIT_BOUND`` (if any), clipped at ``-LOGIT_BOUND``, as float32."""
    z = logits - max(0.0, float(logits.max()) - LOGIT_BOUND)
    return np.clip(z, -LOGIT_BOUND, LOGIT_BOUND).astype(np.float32)


def logits_to_allocation(logits: Any, n_units: int) -> np.ndarray:
    """The allocation of ``n_units`` integer units that the logits ask for (Hu et al. 2024, §VI-B).

    The logits are turned into probabilities P(k) by a softmax; then, ``n_units`` times, one unit
    goes to the site with the largest entry and 1/``n_units`` is subtracted from that entry. Ties
    go to the lowest site index (so equal logits fill the sites from index 0 on).

    :param logits: one finite float per site.
    :param n_units: number of units N to allocate (>= 1).
    :return: an int64 array, one count per site, summing to ``n_units``.
    """
    z = np.asarray(logits, dtype=np.float64)
    if z.ndim != 1 or z.size < 1 or not np.all(np.isfinite(z)):
        raise ValueError(f"logits must be a 1-D array of finite floats, got {logits!r}")
    n = int(n_units)
    if n < 1:
        raise ValueError(f"n_units must be an int >= 1, got {n_units!r}")
    return np.array(_greedy_allocation(_softmax_list(z.tolist()), n), dtype=np.int64)


def allocation_to_logits(allocation: Any) -> np.ndarray:
    """Logits that :func:`logits_to_allocation` maps back to exactly ``allocation`` (a right inverse).

    With N = Σ a_k units over K sites, the logits are ``log(a_k + c)`` with ``c = min(0.01, 0.5 / K)``,
    shifted to be centred on 0 (the softmax ignores the shift). Then P(k) = (a_k + c) / (N + K c), and at
    every round of the greedy procedure a site still short of its a_k units leads every site that has
    them by at least 1/(2N), so the procedure hands out exactly ``a``. The logits lie in
    ``±log((N + c) / c) / 2``, within ``±LOGIT_BOUND`` for N <= :data:`MAX_UNITS`, and they survive a
    round trip through float32 for such N.

    :param allocation: one count >= 0 per site, summing to N >= 1.
    :return: a float32 array of logits, one per site.
    """
    a = np.asarray(allocation)
    if a.ndim != 1 or a.size < 1:
        raise ValueError(f"allocation must be a 1-D array of counts, got {allocation!r}")
    if not np.all(np.isfinite(a)) or np.any(a < 0) or np.any(np.mod(a, 1) != 0) or a.sum() < 1:
        raise ValueError(f"allocation must hold integer counts >= 0 summing to >= 1, got {allocation!r}")
    c = min(0.01, 0.5 / a.size)
    z = np.log(a.astype(np.float64) + c)
    return (z - 0.5 * (z.max() + z.min())).astype(np.float32)


class AttentionAllocationEnv(gym.Env):
    """Spread N units of attention over K sites where incidents occur (Hu, Lear, Zhang 2024, arXiv:2401.06318, §VI-B).

    The dynamics are those of D'Amour et al.'s (2020, FAT* 2020) attention-allocation environment with
    the per-site increase rates of Hu et al. (2024). Each step, with allocation a (Σ a_k = N):

    1. incidents y_k ~ Poisson(Λ_k) occur, drawn from the rates *before* this step's update;
    2. each unit discovers one incident: discovered ŷ_k = min(a_k, y_k), missed y_k − ŷ_k;
    3. reward = ``discovered_weight`` · Σ ŷ − ``missed_weight`` · Σ (y − ŷ) (the paper's ζ0, ζ1);
    4. rates change: Λ_k += λ^I_k if a_k = 0, else Λ_k ← max(0, Λ_k − λ^D · a_k).

    Defaults are the authors': K = 5, N = 6, Λ0 = (8, 6, 4, 3, 1.5), λ^I = (0.2, 0.26, 0.4, 0.6, 0.3),
    λ^D = 0.1, ζ = (1, 0.25), 1000-step episodes. Every site is a stakeholder (a group of its own);
    ``info["benefits"]`` is the number of units each site got.

    **Action**: K logits in ``[-10, 10]`` (float32). They become an allocation by the paper's
    procedure (:func:`logits_to_allocation`: softmax, then N times "one unit to the largest entry,
    which loses 1/N"; ties to the lowest index). The bounds are wide so that SB3's clipping of a
    Gaussian policy's samples practically never binds (the authors sent unclipped samples). Any
    finite logits are accepted, and :meth:`step` and :meth:`fairness_what_if` both clip them to
    ``[-LOGIT_BOUND, LOGIT_BOUND]`` first, as SB3 does before ``step``, so the what-if scores the
    allocation that is executed whoever calls ``step``. :func:`allocation_to_logits` gives logits for
    a chosen allocation.

    **Observation**: the last ``history_len`` (8) steps, oldest first, each as four K-vectors:
    discovered ŷ, occurred y, the executed allocation a, and the per-site discovery ratio
    Σ ŷ / (Σ y + 1) over the last ``window`` steps (the authors' code; the paper writes ŷ ⊘ y).
    160 float32 for the defaults; steps before the episode start are zeros (the reset observation
    is all zeros). Raw counts, not normalised: the space's ``high`` is N for ŷ and a, 1 for the
    ratio, and ``inf`` for y (occurrences are unbounded).

    **Fairness signals** (in every step's info, and in the reset info):

    * ``info[SHORT_TERM_FAIRNESS]``: Δs, Eq. 9, the demographic-parity gap ``max_k |share_k − 1/K|`` of
      the allocation shares over the last ``window`` steps, this one included. Eq. 9 as printed sums
      from t − w to t (w + 1 steps) while dividing by N · w; the window here holds w steps
      (t − w + 1 to t), as the authors' buffer does, so the shares sum to 1. It divides by the units
      actually allocated in the window, N · min(t, w), as the authors' code; this is Eq. 9's N · w
      once t >= w. ``window=horizon`` gives the authors' evaluation form (the whole
      episode so far). 0 at reset.
    * ``info[LONG_TERM_FAIRNESS]``: Δl after the step. ``long_term="rates"``: ``max_k |Λ_k − mean Λ|``,
      the spread of the true rates (the authors' evaluation, 3.5 at the start); ``"counts"``:
      ``max_k |h_k − mean h| / max h`` with h the incidents that occurred per site over the last
      ``window`` steps (the authors' training signal; 0 while no incident occurred).

    **What-if** (action massaging, :meth:`fairness_what_if`): the proposed action and, for every
    allocation one unit away from it, logits near the proposed ones that execute as it (the authors'
    probability-mass move), with the Δs each would leave. Eq. 9 depends on the allocations only, so
    these answers are exact.

    The episode ends after ``horizon`` steps with ``truncated=True``: the observation holds
    no clock, so the horizon is a time limit. ``horizon_terminates=True`` reports it as
    ``terminated=True`` instead, as the authors' code did (no value bootstrap at the horizon;
    :func:`~sb3_fair.envs.horizon.horizon_end`).

    Other info keys: ``"allocation"`` (int, the executed allocation), ``"occurred"``, ``"discovered"``
    (int) and ``"rates"`` (Λ after the update).

    Example::

        from sb3_fair.envs.attention import AttentionAllocationEnv, ProportionalAllocationPolicy

        env = AttentionAllocationEnv()
        policy = ProportionalAllocationPolicy(env)
        obs, info = env.reset(seed=0)
        for _ in range(1000):
            action, _ = policy.predict(obs)
            obs, reward, terminated, truncated, info = env.step(action)
        print(info["allocation"], info["rates"], info["long_term_fairness"])

    :param n_units: number of attention units N (paper: 6), at most 1000.
    :param initial_rates: initial incident rates Λ0, one per site (paper: 8, 6, 4, 3, 1.5); their
        number is K (>= 2). Each with ``horizon * increase_rates`` added is at most :data:`MAX_RATE` (1e12).
    :param increase_rates: λ^I, the rate increase of a site left without attention, one per site
        (paper: 0.2, 0.26, 0.4, 0.6, 0.3).
    :param decrease_rate: λ^D, the rate decrease per unit of attention (paper: 0.1), at most :data:`MAX_RATE`.
    :param discovered_weight: ζ0, reward per discovered incident (paper: 1), in [0, 1e6].
    :param missed_weight: ζ1, penalty per missed incident (paper: 0.25), in [0, 1e6].
    :param history_len: number H of past steps in the observation (paper: 8), at most :data:`MAX_HISTORY`.
    :param window: sliding window w, in steps, of Δs, of the "counts" Δl and of the observed
        discovery ratio (the authors' code: 300; the paper gives none), at most :data:`MAX_WINDOW`.
    :param horizon: episode length (paper: 1000), also ``gym.make(..., horizon=n)`` (``max_episode_steps`` is
        ``gym.make``'s own ``TimeLimit``, which the env would never see).
    :param horizon_terminates: end the episode with ``terminated=True`` instead of ``truncated=True``.
    :param long_term: which Δl to report, one of :data:`LONG_TERM_MEASURES`: ``"rates"`` or ``"counts"``
        (see above).
    :param render_mode: ``"ansi"``, ``"rgb_array"`` (one bar per site: its rate) or None.
    """

    metadata = {"render_modes": RENDER_MODES, "render_fps": 4}

    def __init__(
        self,
        n_units: int = 6,
        initial_rates: Sequence[float] = (8.0, 6.0, 4.0, 3.0, 1.5),
        increase_rates: Sequence[float] = (0.2, 0.26, 0.4, 0.6, 0.3),
        decrease_rate: float = 0.1,
        discovered_weight: float = 1.0,
        missed_weight: float = 0.25,
        history_len: int = 8,
        window: int = 300,
        horizon: int = 1000,
        horizon_terminates: bool = False,
        long_term: str = "rates",
        render_mode: str | None = None,
    ) -> None:
        self.n_units = check_int(n_units, "n_units", 1)
        if self.n_units > MAX_UNITS:
            raise ValueError(f"n_units must be an int in [1, {MAX_UNITS}], got {n_units!r}")
        rates = _check_rates(initial_rates, "initial_rates")
        k = rates.size
        self.n_sites = k
        self.initial_rates = rates
        self.increase_rates = _check_rates(increase_rates, "increase_rates", size=k)
        self.decrease_rate = check_weights(decrease_rate, "decrease_rate")
        if self.decrease_rate > MAX_RATE:  # any larger decrease zeroes a rate just as MAX_RATE does
            raise ValueError(f"decrease_rate must be a number in [0, {MAX_RATE:.0e}] (MAX_RATE), got {decrease_rate!r}")
        # reward weights, as every reward weight of sb3-fair (check_coef): the reward stays finite in float32
        self.discovered_weight = check_coef(discovered_weight, "discovered_weight")
        self.missed_weight = check_coef(missed_weight, "missed_weight")
        self.history_len = check_int(history_len, "history_len", 1)
        if self.history_len > MAX_HISTORY:
            raise ValueError(
                f"history_len must be an int in [1, {MAX_HISTORY}] (MAX_HISTORY, steps), got {history_len!r}"
            )
        self.window = check_int(window, "window", 1)
        if self.window > MAX_WINDOW:
            raise ValueError(f"window must be an int in [1, {MAX_WINDOW:.0e}] (MAX_WINDOW, steps), got {window!r}")
        if self.history_len * 4 * k > MAX_OBSERVATION:
            raise ValueError(
                f"history_len * 4 * sites must be at most {MAX_OBSERVATION:.0e} (MAX_OBSERVATION: the observation's "
                f"length, allocated at construction), got history_len={history_len!r} with {k} sites"
            )
        self.horizon = check_horizon(horizon)
        # a site left without attention gains increase_rates[k] at every step: its rate must stay <= MAX_RATE all episode
        peak = rates + self.horizon * self.increase_rates
        if np.any(peak > MAX_RATE):
            k = int(np.argmax(peak > MAX_RATE))
            raise ValueError(
                f"initial_rates[{k}] + horizon * increase_rates[{k}] must be at most {MAX_RATE:.0e} (MAX_RATE: the rate a "
                f"site left without attention reaches at the end of an episode), got {rates[k]!r} + {self.horizon} * "
                f"{self.increase_rates[k]!r} = {peak[k]:.3g}"
            )
        self.horizon_terminates = check_bool(horizon_terminates, "horizon_terminates")
        self.long_term = check_choice(long_term, "long_term", LONG_TERM_MEASURES)
        self.render_mode = check_render_mode(render_mode)
        self.stakeholders = Stakeholders.individuals(k, prefix="site")

        self.action_space = spaces.Box(low=-LOGIT_BOUND, high=LOGIT_BOUND, shape=(k,), dtype=np.float32)
        step_high = np.concatenate([np.full(k, self.n_units), np.full(k, np.inf), np.full(k, self.n_units), np.ones(k)])
        high = np.tile(step_high, self.history_len).astype(np.float32)
        self.observation_space = spaces.Box(low=np.zeros_like(high), high=high, dtype=np.float32)

        self.rates = rates.copy()
        self.t = 0
        self._history = np.zeros((self.history_len, 4 * k), dtype=np.float32)
        # ring buffer over the last `window` steps: per slot (allocation, discovered, occurred) as lists of Python
        # ints, None for a slot not yet written in this episode; and their totals over the window
        self._win: list[tuple[list[int], list[int], list[int]] | None] = [None] * self.window
        self._win_sum = [[0] * k for _ in range(3)]
        self._last_allocation = np.zeros(k, dtype=np.int64)

    # ------------------------------------------------------------------ fairness signals
    def _short_term(self, alloc_sum: np.ndarray) -> float:
        return allocation_share_gap(alloc_sum)

    @staticmethod
    def _share_gap(alloc_sum: list[int]) -> float:
        """:func:`~sb3_fair.metrics.allocation_share_gap` of the window's allocation totals (ints), in its arithmetic
        (``max |t / total - 1 / K|`` in float64), without its checks. Its float64 sum of the totals is exact in any
        order (at most MAX_UNITS * MAX_WINDOW = 1e9 units, far below 2^53), so it is the int sum."""
        total = float(sum(alloc_sum))
        if total <= 0:
            return 0.0
        even = 1.0 / len(alloc_sum)
        return max([abs(v / total - even) for v in alloc_sum])

    @staticmethod
    def _max_mean_deviation(values: list[float], normalize: bool) -> float:
        """:func:`~sb3_fair.metrics.max_mean_deviation` of finite floats (>= 0 with ``normalize``), in its arithmetic
        (NumPy's mean: its sum divided by K), without its checks."""
        mean = pairwise_sum(values) / len(values)
        dev = max([abs(v - mean) for v in values])
        if not normalize:
            return dev
        top = max(values)
        return dev / top if top > 0 else 0.0

    def _long_term(self, rates: list[float] | None = None) -> float:
        """Δl now; ``rates``: the current rates as Python floats, where the caller has them."""
        if self.long_term == "rates":
            return self._max_mean_deviation(self.rates.tolist() if rates is None else rates, False)
        return self._max_mean_deviation([float(v) for v in self._win_sum[2]], True)

    def _alloc_sum_if(self, allocation: np.ndarray) -> np.ndarray:
        """The window's allocation totals if ``allocation`` were executed now (no side effect)."""
        # the slot this step would overwrite holds the oldest allocation once the window is full, zeros before
        oldest = self._win[self.t % self.window]
        totals = np.array(self._win_sum[0], dtype=np.int64)
        if oldest is not None:
            totals -= np.array(oldest[0], dtype=np.int64)
        return totals + allocation

    # ------------------------------------------------------------------ gym API
    def _obs(self) -> np.ndarray:
        return self._history.reshape(-1).copy()

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.rates = self.initial_rates.copy()
        self.t = 0
        self._history[:] = 0.0
        self._win = [None] * self.window
        self._win_sum = [[0] * self.n_sites for _ in range(3)]
        self._last_allocation = np.zeros(self.n_sites, dtype=np.int64)
        info = {"rates": self.rates.copy(), SHORT_TERM_FAIRNESS: 0.0, LONG_TERM_FAIRNESS: self._long_term()}
        return self._obs(), info

    def _clipped_logits(self, action: Any) -> np.ndarray:
        """``action`` as K float64 logits clipped to ``[-LOGIT_BOUND, LOGIT_BOUND]``, as SB3 clips a Box action."""
        try:
            logits = np.asarray(action, dtype=np.float64)
        except (TypeError, ValueError):
            logits = np.full(1, np.nan)
        if logits.shape != (self.n_sites,) or not np.all(np.isfinite(logits)):
            raise ValueError(f"action must be {self.n_sites} finite logits, got {action!r}")
        return np.clip(logits, -LOGIT_BOUND, LOGIT_BOUND)

    def _executed(self, action: Any) -> np.ndarray:
        """The allocation that :meth:`step` executes for ``action``."""
        return logits_to_allocation(self._clipped_logits(action), self.n_units)

    def _clipped_list(self, action: Any) -> list[float]:
        """:meth:`_clipped_logits` as a list of Python floats (the same values; the same error)."""
        try:
            z = np.asarray(action, dtype=np.float64).tolist()
        except (TypeError, ValueError):
            z = None
        if type(z) is not list or len(z) != self.n_sites:
            self._clipped_logits(action)  # raises
        total = 0.0
        for v in z:
            total += v
        if total - total != 0.0 and not all(-np.inf < v < np.inf for v in z):  # a NaN or an infinity (or an overflow)
            self._clipped_logits(action)  # raises
        bound = LOGIT_BOUND
        return [-bound if v < -bound else min(v, bound) for v in z]

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        # the numbers as lists of Python ints and floats: the same arithmetic as on NumPy arrays of five entries,
        # at a fraction of the cost (sums in NumPy's order, sb3_fair._exact)
        alloc = _greedy_allocation(_softmax_list(self._clipped_list(action)), self.n_units)
        # incidents from the rates before the update: one draw per site, in order, as poisson(self.rates) draws them
        # (the same numbers and generator state, without the array call's Python-level checks of the rates)
        poisson = self.np_random.poisson
        rates = self.rates.tolist()
        occurred = [int(poisson(r)) for r in rates]
        discovered = [a if a < y else y for a, y in zip(alloc, occurred)]
        n_discovered = sum(discovered)
        reward = self.discovered_weight * float(n_discovered) - self.missed_weight * float(sum(occurred) - n_discovered)
        decrease = self.decrease_rate
        rates = [
            r + up if a == 0 else max(0.0, r - decrease * a)
            for r, up, a in zip(rates, self.increase_rates.tolist(), alloc)
        ]
        self.rates = np.array(rates)

        slot = self.t % self.window
        oldest = self._win[slot]
        self._win[slot] = (alloc, discovered, occurred)
        sums = self._win_sum
        for row, new in enumerate((alloc, discovered, occurred)):
            if oldest is None:
                sums[row] = [s + v for s, v in zip(sums[row], new)]
            else:
                sums[row] = [s + v - o for s, v, o in zip(sums[row], new, oldest[row])]
        ratio = [d / (o + 1.0) for d, o in zip(sums[1], sums[2])]
        history = self._history
        history[:-1] = history[1:]
        # the counts go to float32 as the old float64 concatenation did: ints below 2^53 are exact in float64, so
        # one rounding either way (a Poisson draw stays far below 2^53: rates are at most MAX_RATE = 1e12)
        history[-1] = discovered + occurred + alloc + ratio
        allocation = np.array(alloc, dtype=np.int64)
        self._last_allocation = allocation.copy()
        self.t += 1

        info = {
            BENEFITS: allocation.astype(np.float64),
            "allocation": allocation,
            "occurred": np.array(occurred, dtype=np.int64),
            "discovered": np.array(discovered, dtype=np.int64),
            "rates": self.rates.copy(),
            SHORT_TERM_FAIRNESS: self._share_gap(sums[0]),
            LONG_TERM_FAIRNESS: self._long_term(rates),
        }
        terminated, truncated = horizon_end(self.t, self.horizon, self.horizon_terminates)
        return self._obs(), reward, terminated, truncated, info

    # ------------------------------------------------------------------ action massaging
    def fairness_what_if(self, action: Any) -> tuple[np.ndarray, np.ndarray]:
        """The proposed action and its one-unit-away alternatives, with the Δs each would leave (no side effect).

        Hu et al.'s (2024, arXiv:2401.06318, §VI-B) attention massaging moves one unit of attention from
        one site to another. Row 0 is the proposed action as given. Then, for every site i that gets a
        unit under it (ascending) and every other site j (ascending), one candidate: logits that
        :meth:`step` executes as the proposed allocation with one unit moved from i to j, as close to
        the proposed logits as found, so that a policy that sampled the proposed logits gives the
        candidate a comparable probability. Each is built as in the authors' code (brief B.2):

        1. z = the proposed logits clipped to ``[-LOGIT_BOUND, LOGIT_BOUND]`` (what SB3 executes) and
           p = softmax(z);
        2. σ = min(1/N, p_i − ε) (ε = :data:`MOVE_EPSILON`, 0.005) of probability moves from site i to
           site j, giving q;
        3. the new logits are z + log(q / p), the authors' log-sum-exp shift log Σ e^z + log q: only
           z_i and z_j change. If z_j would exceed ``LOGIT_BOUND``, every logit is lowered by the excess
           (the softmax ignores a common shift); logits below ``-LOGIT_BOUND`` are clipped to it.

        The candidate is then checked: the greedy procedure must map it (as float32) to exactly the
        target allocation. The σ move does not always do so (a tie resolved by site index, a move that
        reaches a site j far below the others, float rounding: about 5% of moves in the authors' code).
        On failure the candidate falls back to the first of these that passes the check: q mixed with
        the probabilities of :func:`allocation_to_logits` of the target, (1 − λ) q + λ P_ref for λ in
        :data:`FALLBACK_MIXTURES` (1/8, 1/4, 1/2), logits rebuilt as in step 3; then
        :func:`allocation_to_logits` of the target itself, which is exact. Mixing works because the
        probabilities that the greedy procedure maps to a given allocation form a convex set (linear
        inequalities), inside which P_ref lies with a margin of 1/(2N): a mixture keeps a share of that
        margin while staying near the proposed logits. Every candidate thus executes as the
        allocation it was scored for.

        Δs is Eq. 9 over the window as it would be after executing each candidate now; it depends on
        the allocations only, so it is exact. The state, the windows and the RNG are left untouched.

        :param action: K finite logits (the policy's sample, before any clipping); logits outside the
            action space's bounds are clipped before the allocation is computed, as in :meth:`step`.
        :return: ``(candidates, short_term)``: a float32 array of shape (1 + M, K), the proposed action
            first, with M = (K − 1) × the number of sites the proposed allocation gives a unit; and a
            float64 array of shape (1 + M,), the Δs each candidate would leave.
        """
        z = self._clipped_logits(action)
        alloc = logits_to_allocation(z, self.n_units)
        p = _softmax(z)
        candidates = [np.asarray(action, dtype=np.float32).copy()]
        short_term = [self._short_term(self._alloc_sum_if(alloc))]
        for i in np.flatnonzero(alloc > 0):
            for j in range(self.n_sites):
                if j == i:
                    continue
                target = alloc.copy()
                target[i] -= 1
                target[j] += 1
                candidates.append(self._move_logits(z, p, int(i), j, target))
                short_term.append(self._short_term(self._alloc_sum_if(target)))
        return np.stack(candidates), np.asarray(short_term, dtype=np.float64)

    def _move_logits(self, z: np.ndarray, p: np.ndarray, i: int, j: int, target: np.ndarray) -> np.ndarray:
        """Float32 logits near ``z`` that :meth:`step` executes as ``target`` (see :meth:`fairness_what_if`)."""
        q = p.copy()
        sigma = min(1.0 / self.n_units, p[i] - MOVE_EPSILON)
        tries = []
        if sigma > 0:
            q[i] -= sigma
            q[j] += sigma
            tries.append(q)
        p_ref = _softmax(allocation_to_logits(target).astype(np.float64))
        tries.extend((1.0 - lam) * q + lam * p_ref for lam in FALLBACK_MIXTURES)
        for probs in tries:
            candidate = _bounded(z + np.log(probs / p))
            if np.array_equal(self._executed(candidate), target):
                return candidate
        return allocation_to_logits(target)

    def render(self) -> str | np.ndarray | None:
        if self.render_mode == "ansi":
            return f"t={self.t} allocation={self._last_allocation.tolist()} rates={np.round(self.rates, 2).tolist()}"
        if self.render_mode == "rgb_array":
            top = max(float(self.rates.max()), 1.0)
            return bars_rgb(self.rates, top, self.stakeholders.groups, self._last_allocation > 0)
        return None


class ProportionalAllocationPolicy:
    """A fixed heuristic for :class:`AttentionAllocationEnv`: attention in proportion to the incidents seen.

    It sums the occurred incidents of each site over the steps in the observation (the last
    ``history_len``), adds 1 to each (so a site with no incident seen keeps a share, and the empty
    observation at reset gives equal shares), and allocates N units by the env's own procedure on
    these shares (:func:`logits_to_allocation` of their logs, which apportions units greedily); the
    action is :func:`allocation_to_logits` of that allocation, so the env executes exactly it.
    It chases incidents without regard to the rates' spread or to Eq. 9's parity, a
    reward-oriented reference. ``predict`` follows SB3's signature (one observation or a batch).

    It reads only observations, so it needs only the env's sizes: K, ``history_len`` and N. From an
    env (possibly wrapped) they are the :class:`AttentionAllocationEnv`'s own; from a VecEnv they are
    read from its spaces (K from the action space, ``history_len`` from the observation size
    H · 4K, N from the observation space's bound on the executed allocation), which must be an
    :class:`AttentionAllocationEnv`'s. The observations must be the env's raw ones (no
    ``VecNormalize``).

    :param env: the :class:`AttentionAllocationEnv` (possibly wrapped), or a VecEnv of them, whose
        observations are read.
    """

    def __init__(self, env: gym.Env | VecEnv) -> None:
        if isinstance(env, VecEnv):
            self.n_sites, self.history_len, self.n_units = _sizes_from_spaces(env)
            return
        base = getattr(env, "unwrapped", env)
        if not isinstance(base, AttentionAllocationEnv):
            raise ValueError(
                f"env must be an AttentionAllocationEnv (possibly wrapped) or a VecEnv of them, "
                f"got {type(base).__name__}"
            )
        self.n_sites, self.history_len, self.n_units = base.n_sites, base.history_len, base.n_units

    def allocation(self, observation: np.ndarray) -> np.ndarray:
        """The allocation this policy picks for one observation."""
        k = self.n_sites
        steps = np.asarray(observation, dtype=np.float64).reshape(self.history_len, 4 * k)
        seen = steps[:, k : 2 * k].sum(axis=0) + 1.0
        return logits_to_allocation(np.log(seen), self.n_units)

    def predict(
        self, observation: np.ndarray, state: Any = None, episode_start: Any = None, deterministic: bool = True
    ) -> tuple[np.ndarray, None]:
        """The action for an observation or a batch of them, with SB3's ``predict`` signature.

        :param observation: one observation (shape ``(H · 4K,)``) or a batch (shape ``(n, H · 4K)``).
        :param state: ignored (the policy has no recurrent state).
        :param episode_start: ignored.
        :param deterministic: ignored (the policy is deterministic).
        :return: ``(actions, None)``: float32 logits of shape ``(K,)`` or ``(n, K)``, each
            :func:`allocation_to_logits` of the chosen allocation.
        """
        obs = np.asarray(observation, dtype=np.float64)
        if obs.ndim == 1:
            return allocation_to_logits(self.allocation(obs)), None
        return np.stack([allocation_to_logits(self.allocation(o)) for o in obs]), None


def _sizes_from_spaces(venv: VecEnv) -> tuple[int, int, int]:
    """K, ``history_len`` and N of the :class:`AttentionAllocationEnv` envs in ``venv``, read from its spaces."""
    act, obs = venv.action_space, venv.observation_space
    problem = "env must be an AttentionAllocationEnv (possibly wrapped) or a VecEnv of them"
    if not (
        isinstance(act, spaces.Box) and isinstance(obs, spaces.Box) and len(act.shape) == 1 and len(obs.shape) == 1
    ):
        raise ValueError(f"{problem}: got a VecEnv with action space {act} and observation space {obs}")
    k = act.shape[0]
    if k < 2 or obs.shape[0] % (4 * k) != 0:
        raise ValueError(f"{problem}: got a VecEnv with action space {act} and observation space {obs}")
    history_len = obs.shape[0] // (4 * k)
    high = np.asarray(obs.high, dtype=np.float64).reshape(history_len, 4, k)
    n = high[0, 0, 0]
    if not (
        np.all(high[:, 0] == n)
        and np.all(np.isinf(high[:, 1]))
        and np.all(high[:, 2] == n)
        and np.all(high[:, 3] == 1)
        and np.isfinite(n)
        and n >= 1
        and float(n).is_integer()
    ):
        raise ValueError(f"{problem}: got a VecEnv whose observation space is not an attention env's: {obs}")
    return k, history_len, int(n)


__all__ = [
    "LOGIT_BOUND",
    "LONG_TERM_MEASURES",
    "MAX_HISTORY",
    "MAX_RATE",
    "MAX_WINDOW",
    "AttentionAllocationEnv",
    "ProportionalAllocationPolicy",
    "allocation_to_logits",
    "logits_to_allocation",
]
