"""CPO: sb3-contrib's TRPO with a constraint on one of the env's fairness gaps.

Achiam, Held, Tamar, Abbeel (2017), *Constrained Policy Optimization*, ICML 2017, arXiv:1705.10528:
each update maximises the linearised reward surrogate ``gᵀx`` subject to the linearised constraint
``c + bᵀx <= 0`` and the trust region ``½ xᵀHx <= δ`` (their Eq. 10), solved through its dual (Eqs.
12-14 and Theorem 2 of their appendix), with a recovery step ``x = -sqrt(2δ / bᵀH⁻¹b) H⁻¹b`` when no
point of the trust region satisfies the constraint (their Eq. 14 / §6.2). Hu, Lear, Zhang (2024,
*Striking a Balance in Fairness for Dynamic Systems Through Reinforcement Learning*, arXiv:2401.06318,
§VI-B) use CPO, constraining the short-term gap Δs, as the baseline of their attention-allocation case
study.

The pure solver of the step, :func:`cpo_step`, imports neither torch nor SB3; :class:`CPO` computes its
inputs (two conjugate-gradient solves with TRPO's Fisher-vector product) and runs the line search.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from functools import partial
from typing import Any, ClassVar, NamedTuple, TypeVar

import numpy as np
import torch as th
from gymnasium import spaces
from sb3_contrib import TRPO
from sb3_contrib.common.utils import conjugate_gradient_solver
from stable_baselines3.common.buffers import RolloutBuffer
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.distributions import kl_divergence
from stable_baselines3.common.preprocessing import preprocess_obs
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor, create_mlp
from stable_baselines3.common.utils import explained_variance
from torch import nn
from torch.nn import functional as F

from sb3_fair.common.fair_algorithm import FairAlgorithmMixin
from sb3_fair.common.protocol import get_costs, get_fairness_signal_lists
from sb3_fair.common.validation import check_choice, check_probability, check_weights

SelfCPO = TypeVar("SelfCPO", bound="CPO")

#: the cost a CPO constrains (``cost_signal=``): the env's fairness gap Δs (``info["short_term_fairness"]``) or Δl
#: (``info["long_term_fairness"]``), or the env's own constraint cost ``info["cost"]`` (Safety-Gymnasium's convention,
#: or the cost :class:`~sb3_fair.wrappers.FairnessSignals` writes)
COST_SIGNALS = ("short_term", "long_term", "cost")
#: what :func:`cpo_step` decided: the constraint plays no part (TRPO's step), it binds, no point of the trust
#: region satisfies it (the recovery step), or the cost surrogate has no gradient (TRPO's step)
CASES = ("unconstrained", "constrained", "recovery", "no_cost_gradient")
#: below this, ``bᵀH⁻¹b`` (or ``gᵀH⁻¹g``) counts as zero: the surrogate has no gradient to follow
TINY = 1e-12
#: ``g`` and ``b`` count as parallel (in H⁻¹'s inner product) when ``gᵀH⁻¹g - (gᵀH⁻¹b)² / bᵀH⁻¹b`` is below this
#: share of ``gᵀH⁻¹g``: below the accuracy of the conjugate-gradient solutions
PARALLEL = 1e-6


class CPOStep(NamedTuple):
    """The step of one CPO update, ``x = g_coef · H⁻¹g + b_coef · H⁻¹b``, and the dual solution behind it."""

    g_coef: float
    b_coef: float
    #: one of :data:`CASES`
    case: str
    #: λ, the trust region's multiplier (NaN for the recovery step)
    lam: float
    #: ν, the constraint's multiplier (0 when it does not bind; NaN for the recovery step)
    nu: float


def cpo_step(q: float, r: float, s: float, c: float, max_kl: float) -> CPOStep:
    """The solution of CPO's approximate problem (Achiam et al. 2017, arXiv:1705.10528, Eq. 10)::

        max_x  gᵀx   subject to   c + bᵀx <= 0,   ½ xᵀHx <= δ

    from ``q = gᵀH⁻¹g``, ``r = gᵀH⁻¹b``, ``s = bᵀH⁻¹b``, ``c`` (the constraint's value minus its limit:
    > 0 when the current policy violates it) and ``δ = max_kl``.

    * No point of the trust region satisfies the constraint (``c > 0`` and ``c² / s >= 2δ``): the recovery
      step ``-sqrt(2δ / s) H⁻¹b``, which lowers the cost surrogate most within the trust region (their §6.2).
    * The constraint cannot bind inside the trust region (``c < 0`` and ``c² / s >= 2δ``), or ``s`` is 0 (the
      cost has no gradient): TRPO's step ``sqrt(2δ / q) H⁻¹g``.
    * Otherwise the dual (their Eq. 13, Theorem 2): minimise over ``λ > 0``, ``ν >= 0``
      ``D(λ, ν) = (q - 2νr + ν²s) / (2λ) - νc + λδ``. For a given λ the best ν is ``max(0, (λc + r) / s)``,
      which leaves ``D_a(λ) = ½ (A/λ + Bλ) - rc/s`` (``A = q - r²/s``, ``B = 2δ - c²/s``) where
      ``λc + r > 0`` and ``D_b(λ) = ½ (q/λ + 2δλ)`` elsewhere; each is minimised over its interval (at
      ``sqrt(A/B)`` and ``sqrt(q / 2δ)``, clipped) and the smaller wins. The step is
      ``(H⁻¹g - ν H⁻¹b) / λ``.

    The paper writes ``ν* = (λ*c - r)₊ / s``: its ``g`` is the gradient of the loss (the authors' and
    the reference implementations minimise ``-gᵀx``), which flips the sign of ``r``; here ``g`` is the
    gradient of the objective to maximise and ``b`` that of the cost.

    :param q: ``gᵀH⁻¹g`` (>= 0).
    :param r: ``gᵀH⁻¹b``.
    :param s: ``bᵀH⁻¹b`` (>= 0).
    :param c: the constraint's value minus its limit.
    :param max_kl: δ, the trust region's size (> 0).
    :return: the step's coefficients on ``H⁻¹g`` and ``H⁻¹b``, the case, λ and ν.
    """
    for name, value in (("q", q), ("r", r), ("s", s), ("c", c)):
        if not math.isfinite(value):
            raise ValueError(f"cpo_step: {name} must be a finite number, got {value!r}")
    delta = check_weights(max_kl, "max_kl", allow_zero=False)
    q, s = max(float(q), 0.0), max(float(s), 0.0)  # quadratic forms of a positive definite matrix
    r, c = float(r), float(c)

    def trpo(case: str) -> CPOStep:
        lam = math.sqrt(q / (2 * delta))
        return CPOStep(1.0 / lam if q > TINY else 0.0, 0.0, case, lam, 0.0)

    if s <= TINY:
        return trpo("no_cost_gradient")
    b_term = 2 * delta - c * c / s
    if b_term <= 0:  # the plane c + bᵀx = 0 does not cut the trust region
        if c > 0:
            return CPOStep(0.0, -math.sqrt(2 * delta / s), "recovery", math.nan, math.nan)
        return trpo("unconstrained")
    if q <= TINY:  # no reward gradient: the least step onto the plane if the constraint is violated, else none
        return CPOStep(0.0, -c / s, "constrained", 0.0, 0.0) if c > 0 else CPOStep(0.0, 0.0, "unconstrained", 0.0, 0.0)
    a_term = max(q - r * r / s, 0.0)  # >= 0 by Cauchy-Schwarz in H⁻¹'s inner product
    # g parallel to b (in H⁻¹'s inner product, up to rounding): piece a's infimum is at λ -> 0, where the step tends to
    # -(c / s) H⁻¹b, the least step onto the plane c + bᵀx = 0 (its 1/λ terms cancel)
    parallel = a_term <= PARALLEL * q
    # the intervals of λ >= 0 where λc + r > 0 (ν > 0: piece a) and where λc + r <= 0 (ν = 0: piece b)
    inf = math.inf
    piece_a: tuple[float, float] | None
    piece_b: tuple[float, float] | None
    if c > 0:
        piece_a = (max(0.0, -r / c), inf)
        piece_b = (0.0, -r / c) if r < 0 else None
    elif c < 0:
        piece_a = (0.0, r / -c) if r > 0 else None
        piece_b = (max(0.0, r / -c), inf)
    else:
        piece_a, piece_b = ((0.0, inf), None) if r > 0 else (None, (0.0, inf))
    smallest = 1e-12  # λ > 0: the step divides by it

    def clip(x: float, interval: tuple[float, float]) -> float:
        return min(max(x, interval[0], smallest), max(interval[1], smallest))

    candidates = []
    if piece_a is not None and parallel and piece_a[0] <= 0:
        candidates.append((-r * c / s, 0.0))  # D_a's infimum, as λ -> 0
    elif piece_a is not None:
        lam = clip(math.sqrt(a_term / b_term), piece_a)
        candidates.append((0.5 * (a_term / lam + b_term * lam) - r * c / s, lam))
    if piece_b is not None:
        lam = clip(math.sqrt(q / (2 * delta)), piece_b)
        candidates.append((0.5 * (q / lam + 2 * delta * lam), lam))
    _, lam = min(candidates)
    if lam == 0.0:
        return CPOStep(0.0, -c / s, "constrained", 0.0, max(0.0, r / s))
    nu = max(0.0, (lam * c + r) / s)
    # TRPO's step when ν = 0 and λ is its own unconstrained optimum; the constraint binds otherwise
    binding = nu > 0 or not math.isclose(lam, math.sqrt(q / (2 * delta)), rel_tol=1e-9)
    return CPOStep(1.0 / lam, -nu / lam, "constrained" if binding else "unconstrained", lam, nu)


class CostTracker(BaseCallback):
    """Collects every rollout step's cost, one of the env's fairness gaps after the step
    (:func:`~sb3_fair.common.protocol.get_fairness_signal_lists`) or the env's own ``info["cost"]``
    (:func:`~sb3_fair.common.protocol.get_costs`, ``signal="cost"``), and the terminal observations of episodes
    that a time limit cut (their cost value is bootstrapped, as SB3 bootstraps the reward's)."""

    def __init__(self, signal: str) -> None:
        super().__init__()
        self.signal = signal
        #: each step's costs, one per sub-env
        self.rows: list[list[float]] = []
        #: ``(row, sub-env, terminal observation)`` of each episode a time limit cut
        self.truncated: list[tuple[int, int, Any]] = []

    def _on_rollout_start(self) -> None:
        self.rows, self.truncated = [], []

    def _on_step(self) -> bool:
        infos = self.locals["infos"]
        if self.signal == "cost":
            try:
                self.rows.append(get_costs(infos))
            except ValueError as err:
                raise ValueError(f"CPO(cost_signal='cost') constrains the cost the env reports: {err}") from None
        else:
            try:
                short_term, long_term = get_fairness_signal_lists(infos)
            except ValueError as err:
                raise ValueError(
                    f"CPO(cost_signal={self.signal!r}) constrains a fairness gap the env reports: {err}"
                ) from None
            self.rows.append(short_term if self.signal == "short_term" else long_term)
        for i in np.flatnonzero(np.asarray(self.locals["dones"], dtype=bool)).tolist():
            info = infos[i]
            if info.get("terminal_observation") is not None and info.get("TimeLimit.truncated", False):
                self.truncated.append((len(self.rows) - 1, i, info["terminal_observation"]))
        return True


class CostCritic(nn.Module):
    """The cost's value function: a features extractor of its own, then an MLP (the policy's value-net sizes)."""

    def __init__(
        self, features_extractor: BaseFeaturesExtractor, net_arch: Sequence[int], activation_fn: type[nn.Module]
    ) -> None:
        super().__init__()
        self.features_extractor = features_extractor
        self.head = nn.Sequential(*create_mlp(features_extractor.features_dim, 1, list(net_arch), activation_fn))

    def forward(self, observations: th.Tensor) -> th.Tensor:
        return self.head(self.features_extractor(observations))


def gae(
    buffer: RolloutBuffer,
    rewards: np.ndarray,
    values: np.ndarray,
    last_values: np.ndarray,
    dones: np.ndarray,
    gae_lambda: float,
) -> tuple[np.ndarray, np.ndarray]:
    """GAE advantages and returns of another signal (``rewards``, ``values``: ``(n_steps, n_envs)``) over ``buffer``'s
    rollout, by SB3's own :meth:`~stable_baselines3.common.buffers.RolloutBuffer.compute_returns_and_advantage`
    (its episode starts, γ), run on those arrays; the buffer's own arrays are put back."""
    names = ("rewards", "values", "advantages", "returns", "gae_lambda")
    saved = {name: getattr(buffer, name) for name in names}
    try:
        buffer.rewards = rewards.astype(np.float32)
        buffer.values = values.astype(np.float32)
        buffer.advantages = np.zeros_like(buffer.rewards)
        buffer.gae_lambda = gae_lambda
        buffer.compute_returns_and_advantage(last_values=th.as_tensor(last_values), dones=dones)
        return buffer.advantages, buffer.returns
    finally:
        for name, value in saved.items():
            setattr(buffer, name, value)


class ConstrainedTRPO(TRPO):
    """TRPO whose ``train`` is CPO's update once a ``cost_limit`` is set (:meth:`CPO._cpo_update`).

    It sits just above TRPO in :class:`CPO`'s bases, below :class:`~sb3_fair.common.fair_algorithm.FairAlgorithmMixin`,
    so the mixin's ``train`` (the update, then the check that the parameters are finite) wraps either update, as it
    wraps a Fair class's parent update.
    """

    cost_limit: float | None

    def _cpo_update(self) -> None:
        raise NotImplementedError  # CPO's

    def train(self) -> None:
        """TRPO's update, or with ``cost_limit`` set CPO's."""
        if self.cost_limit is None:
            super().train()
        else:
            self._cpo_update()


class CPO(FairAlgorithmMixin, ConstrainedTRPO):
    """sb3-contrib's :class:`~sb3_contrib.TRPO` with Constrained Policy Optimization's update (Achiam, Held, Tamar,
    Abbeel 2017, arXiv:1705.10528) on one of the env's fairness gaps, or on its own cost: the mean cost per step is
    kept at or below ``cost_limit``.

    Constructed like TRPO, plus ``cost_limit``, ``cost_signal`` and ``cost_gae_lambda`` (and
    ``fairness_window`` and ``wandb``, as every sb3-fair class). The env reports its fairness gaps in every
    step's info (:mod:`sb3_fair.common.protocol`: ``info["short_term_fairness"]`` Δs and
    ``info["long_term_fairness"]`` Δl, as sb3-fair's lending, attention and epidemic envs do, and as
    :class:`~sb3_fair.wrappers.FairnessSignals` writes them for any env honouring the stakeholder contract), or a
    cost of its own (``info["cost"]``, Safety-Gymnasium's convention; ``cost_signal="cost"``); the cost of a
    step is the chosen signal after it. With ``cost_limit=None`` (the default) CPO is TRPO: it accepts every env
    TRPO accepts and trains exactly like it.

    Each update, with ``cost_limit`` set:

    1. the cost critic (a network of its own, the size of the policy's value net) gives the rollout's cost
       advantages by GAE (γ, ``cost_gae_lambda``), computed by SB3's own GAE code; the constraint's value is
       the rollout's mean cost per step, so ``c = mean cost - cost_limit``;
    2. ``g`` and ``b`` are the gradients of the reward and cost surrogates (TRPO's, the reward advantages
       standardised as TRPO does when ``normalize_advantage``; the cost advantages centred, not scaled, since
       their scale is the constraint's), and ``H⁻¹g``, ``H⁻¹b`` come from TRPO's conjugate gradient with its
       Fisher-vector product;
    3. :func:`cpo_step` gives the step, and a backtracking line search (TRPO's ``line_search_max_iter`` and
       ``line_search_shrinking_factor``) accepts the first fraction of it whose KL is at most ``target_kl``
       (δ), whose cost surrogate rises by at most ``max(-c, 0)`` (the constraint as linearised), and whose reward
       surrogate improves while the current policy keeps the constraint (``c < 0``: their Algorithm 1 asks only for
       the constraints; OpenAI's safety-starter-agents CPO also asks for this gain while the constraint holds);
    4. the value and cost critics fit their returns (TRPO's ``n_critic_updates`` epochs of ``batch_size``).

    The constraint's unit. Achiam et al. bound the expected discounted sum of costs; a mean per step is the
    same constraint divided by ``1 / (1 - γ)`` (up to the weighting of the steps), and it needs no episode
    boundaries in the rollout (SB3's rollouts cut episodes anywhere). The paper's linearisation is then
    ``J_C(π') ≈ J_C(π) + E[A_C]`` with the GAE cost advantages of this normalised scale. Hu et al.'s authors
    (attention case study) bound the undiscounted sum over a 1000-step episode by 0.5, 0.0005 per step: far
    below the Δs of any policy trained here (about 0.04), so the constraint is violated at every update. Whether
    an update is then a recovery step depends on whether the trust region reaches the linearised constraint
    (``c² / bᵀH⁻¹b`` against ``2δ``); :attr:`last_step` says which it was.

    Logged under ``cpo/``: ``cost`` (the rollout's mean cost), ``cost_limit``, ``nu``, ``lambda``, ``recovery``
    (1 for a recovery step), ``constrained`` (1 where the constraint bound), ``cost_surrogate`` (of the accepted
    step), ``cost_value_loss``; TRPO's ``train/*`` keys as TRPO logs them.

    Example::

        from sb3_fair import CPO
        from sb3_fair.envs import AttentionAllocationEnv

        model = CPO("MlpPolicy", AttentionAllocationEnv(), cost_limit=0.05, cost_signal="short_term", seed=0)
        model.learn(10_000)

    :param cost_limit: the largest mean cost per step allowed (a number >= 0), or ``None`` for TRPO's update.
    :param cost_signal: the cost, one of :data:`COST_SIGNALS`: ``"short_term"`` (Δs, as Hu et al.'s attention
        baseline) or ``"long_term"`` (Δl), the fairness gaps of an env that reports them (the case studies of
        :mod:`sb3_fair.envs`, or any env honouring the stakeholder contract in
        :class:`~sb3_fair.wrappers.FairnessSignals`), or ``"cost"``, the env's own ``info["cost"]`` at every step
        (Safety-Gymnasium's convention, through its ``SafetyGymnasium2Gymnasium`` wrapper, or the cost
        ``FairnessSignals(cost=...)`` writes).
    :param cost_gae_lambda: GAE's λ for the cost advantages, in [0, 1] (default: ``gae_lambda``; Hu et al.'s
        authors used 1.0).
    """

    #: what a cost-free TRPO zip loads with: the constraint off (cost_limit's default already)
    PARENT_ZIP_SETTINGS: ClassVar[dict[str, Any]] = {}

    def __init__(
        self,
        policy: Any,
        env: Any,
        *args: Any,
        cost_limit: float | None = None,
        cost_signal: str = "short_term",
        cost_gae_lambda: float | None = None,
        **kwargs: Any,
    ) -> None:
        self.cost_limit = None if cost_limit is None else check_weights(cost_limit, "cost_limit")
        self.cost_signal = check_choice(cost_signal, "cost_signal", COST_SIGNALS)
        self.cost_gae_lambda = (
            None if cost_gae_lambda is None else check_probability(cost_gae_lambda, "cost_gae_lambda")
        )
        if self.cost_limit is None:
            for name, value, default in (
                ("cost_signal", cost_signal, "short_term"),
                ("cost_gae_lambda", cost_gae_lambda, None),
            ):
                if value != default:
                    raise ValueError(
                        f"{name}={value!r} is used only with a constraint: give cost_limit (a number >= 0), or leave "
                        f"{name} at its default ({default!r}) for TRPO's update"
                    )
        self.cost_critic: CostCritic | None = None
        self.cost_critic_optimizer: th.optim.Optimizer | None = None
        self._cost_tracker: CostTracker | None = None
        #: the step of the last CPO update (its case, λ and ν), ``None`` before the first
        self.last_step: CPOStep | None = None
        #: whether the line search of the last CPO update kept a fraction of its step
        self.last_step_accepted = False
        super().__init__(policy, env, *args, **kwargs)

    @property
    def constrained(self) -> bool:
        """Whether the update is CPO's (a ``cost_limit`` is set) rather than TRPO's."""
        return self.cost_limit is not None

    @classmethod
    def _check_load_change(cls, data: dict[str, Any], overrides: dict[str, Any]) -> None:
        """A ``cost_limit`` given to ``load`` may change the limit but not whether there is one (the cost critic
        belongs to the constrained model).

        :raises ValueError: naming both settings, for ``cost_limit=None`` beside a constrained model or a number beside
            an unconstrained one (or a TRPO zip).
        """
        super()._check_load_change(data, overrides)
        if "cost_limit" in overrides and (overrides["cost_limit"] is None) != (data.get("cost_limit") is None):
            given, saved = overrides["cost_limit"], data.get("cost_limit")
            raise ValueError(
                f"{cls.__name__}.load: cost_limit={given!r}, but the model was saved with cost_limit={saved!r}; a loaded "
                f"model keeps whether it has a constraint (its cost critic belongs to it): build a new "
                f"{cls.__name__}(..., cost_limit={given!r}) to train otherwise"
            )

    def _setup_model(self) -> None:
        super()._setup_model()
        if self.constrained:
            policy = self.policy
            net_arch = policy.net_arch["vf"] if isinstance(policy.net_arch, dict) else policy.net_arch
            extractor = policy.features_extractor_class(policy.observation_space, **policy.features_extractor_kwargs)
            self.cost_critic = CostCritic(extractor, net_arch, policy.activation_fn).to(self.device)
            self.cost_critic_optimizer = policy.optimizer_class(  # type: ignore[call-arg]  # as SB3 builds its policies'
                self.cost_critic.parameters(), lr=self.lr_schedule(1), **policy.optimizer_kwargs
            )

    def _fairness_callbacks(self) -> list[BaseCallback]:
        callbacks = super()._fairness_callbacks()
        if not self.constrained:
            return callbacks
        if self._cost_tracker is None:
            self._cost_tracker = CostTracker(self.cost_signal)
        return [self._cost_tracker, *callbacks]

    def _get_torch_save_params(self) -> tuple[list[str], list[str]]:
        state_dicts, tensors = super()._get_torch_save_params()
        if self.constrained:
            state_dicts = [*state_dicts, "cost_critic", "cost_critic_optimizer"]
        return state_dicts, tensors

    def _excluded_save_params(self) -> list[str]:
        return [*super()._excluded_save_params(), "_cost_tracker", "last_step", "last_step_accepted"]

    def fairness_config(self) -> dict[str, Any]:
        """The constraint's settings (stored in the W&B run config)."""
        if not self.constrained:
            return super().fairness_config()
        return {
            **super().fairness_config(),
            "cost_limit": self.cost_limit,
            "cost_signal": self.cost_signal,
            "cost_gae_lambda": self.gae_lambda if self.cost_gae_lambda is None else self.cost_gae_lambda,
        }

    def _cost_values(self, observations: Any) -> th.Tensor:
        """The cost critic's values of a batch of observations (arrays or tensors, or a dict of them, as stored)."""
        assert self.cost_critic is not None
        if isinstance(observations, dict):
            obs: Any = {k: th.as_tensor(v, device=self.device) for k, v in observations.items()}
        else:
            obs = th.as_tensor(observations, device=self.device)
        obs = preprocess_obs(obs, self.observation_space, normalize_images=self.policy.normalize_images)
        return self.cost_critic(obs).flatten()

    def _cost_targets(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The rollout's costs, cost advantages and cost returns, each ``(n_steps, n_envs)``."""
        buf, tracker = self.rollout_buffer, self._cost_tracker
        if tracker is None or len(tracker.rows) != buf.buffer_size:
            raise RuntimeError(
                "CPO: the rollout's costs were not collected (train() runs after a full rollout of learn())"
            )
        costs = np.asarray(tracker.rows, dtype=np.float64)
        shape = (buf.buffer_size, buf.n_envs)

        def flat(x: np.ndarray) -> np.ndarray:  # (n_steps, n_envs, ...) -> (n_steps * n_envs, ...)
            return x.reshape(buf.buffer_size * buf.n_envs, *x.shape[2:])

        stored = buf.observations
        with th.no_grad():
            obs = {k: flat(v) for k, v in stored.items()} if isinstance(stored, dict) else flat(stored)
            values = self._cost_values(obs).cpu().numpy().reshape(shape)
            last = self._cost_values(self._last_obs).cpu().numpy()
            bootstrapped = costs.copy()
            # a time limit cut these episodes: their cost goes on, as SB3 bootstraps the reward
            for row, i, terminal in tracker.truncated:
                one = (
                    {k: np.asarray(v)[None] for k, v in terminal.items()}
                    if isinstance(terminal, dict)
                    else np.asarray(terminal)[None]
                )
                bootstrapped[row, i] += self.gamma * float(self._cost_values(one)[0])
        lam = self.gae_lambda if self.cost_gae_lambda is None else self.cost_gae_lambda
        advantages, returns = gae(buf, bootstrapped, values, last, np.asarray(self._last_episode_starts), lam)
        return costs, advantages, returns

    def _cpo_update(self) -> None:
        """One CPO update from the rollout buffer (the class docstring's steps 1-4)."""
        assert self.cost_critic is not None and self.cost_critic_optimizer is not None and self.cost_limit is not None
        self.policy.set_training_mode(True)
        self._update_learning_rate([self.policy.optimizer, self.cost_critic_optimizer])
        buf = self.rollout_buffer
        costs, cost_advantages, cost_returns = self._cost_targets()
        c = float(costs.mean()) - self.cost_limit
        if not buf.generator_ready:
            next(buf.get(batch_size=None))  # flattens the buffer's arrays (env by env), as TRPO's train() does
        n = buf.buffer_size * buf.n_envs
        data = buf._get_samples(np.arange(n))
        cost_adv_all = th.as_tensor(RolloutBuffer.swap_and_flatten(cost_advantages), device=self.device).flatten()
        cost_ret_all = th.as_tensor(RolloutBuffer.swap_and_flatten(cost_returns), device=self.device).flatten()

        # TRPO's optional sub-sampling of the actor's batch: every k-th row of a shuffled batch, as TRPO's get() gives it
        rows: Any = slice(None)
        if self.sub_sampling_factor > 1:
            rows = th.as_tensor(np.random.permutation(n)[:: self.sub_sampling_factor], device=self.device)
        observations = (
            data.observations[rows]
            if not isinstance(data.observations, dict)
            else {k: v[rows] for k, v in data.observations.items()}
        )
        actions = data.actions[rows]
        if isinstance(self.action_space, spaces.Discrete):
            actions = actions.long().flatten()
        old_log_prob = data.old_log_prob[rows]
        advantages = data.advantages[rows]
        if self.normalize_advantage:
            advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
        cost_adv = cost_adv_all[rows]
        cost_adv = cost_adv - cost_adv.mean()

        with th.no_grad():
            old_distribution = copy.copy(self.policy.get_distribution(observations))
        distribution = self.policy.get_distribution(observations)
        ratio = th.exp(distribution.log_prob(actions) - old_log_prob)
        objective = (advantages * ratio).mean()
        cost_surrogate = (cost_adv * ratio).mean()
        kl_div = kl_divergence(distribution, old_distribution).mean()
        self.policy.optimizer.zero_grad()
        actor_params, g, grad_kl, grad_shape = self._compute_actor_grad(kl_div, objective)
        b = th.cat(
            [
                (grad if grad is not None else th.zeros_like(p)).reshape(-1)
                for grad, p in zip(
                    th.autograd.grad(cost_surrogate, actor_params, retain_graph=True, allow_unused=True),
                    actor_params,
                    strict=True,
                )
            ]
        )
        hvp = partial(self.hessian_vector_product, actor_params, grad_kl)
        h_g = conjugate_gradient_solver(hvp, g, max_iter=self.cg_max_steps)
        h_b = conjugate_gradient_solver(hvp, b, max_iter=self.cg_max_steps)
        step = cpo_step(float(g @ h_g), float(g @ h_b), float(b @ h_b), c, self.target_kl)
        # in float64: the two terms can be large and nearly opposite when g and b are nearly parallel
        direction = (step.g_coef * h_g.double() + step.b_coef * h_b.double()).to(h_g.dtype)
        self.last_step = step

        original = [p.detach().clone() for p in actor_params]
        accepted, fraction = False, 1.0
        new_objective, new_cost, kl = objective, th.zeros(()), th.zeros(())
        with th.no_grad():
            for _ in range(self.line_search_max_iter):
                start = 0
                for param, before, shape in zip(actor_params, original, grad_shape, strict=True):
                    size = param.numel()
                    param.data = before + fraction * direction[start : start + size].view(shape)
                    start += size
                distribution = self.policy.get_distribution(observations)
                ratio = th.exp(distribution.log_prob(actions) - old_log_prob)
                new_objective = (advantages * ratio).mean()
                new_cost = (cost_adv * ratio).mean()
                kl = kl_divergence(distribution, old_distribution).mean()
                cost_ok = step.case == "no_cost_gradient" or float(new_cost) <= max(-c, 0.0)
                # a gain in the reward surrogate is asked only while the constraint holds (c < 0), as OpenAI's
                # safety-starter-agents CPO does; Achiam et al.'s Algorithm 1 asks only for the constraints
                improved = c >= 0 or step.case == "recovery" or bool(new_objective > objective)
                if float(kl) <= self.target_kl and cost_ok and improved:
                    accepted = True
                    break
                fraction *= self.line_search_shrinking_factor
            if not accepted:
                for param, before in zip(actor_params, original, strict=True):
                    param.data = before.clone()
        self.last_step_accepted = accepted

        value_losses, cost_losses = self._fit_critics(data.observations, data.returns, cost_ret_all, actor_params)
        self._n_updates += 1
        self.logger.record("train/policy_objective", float((new_objective if accepted else objective).detach()))
        self.logger.record("train/value_loss", float(np.mean(value_losses)))
        self.logger.record("train/kl_divergence_loss", float(kl) if accepted else 0.0)
        self.logger.record("train/explained_variance", explained_variance(buf.values.flatten(), buf.returns.flatten()))
        self.logger.record("train/is_line_search_success", float(accepted))
        if hasattr(self.policy, "log_std"):
            self.logger.record("train/std", th.exp(self.policy.log_std).mean().item())
        self.logger.record("train/n_updates", self._n_updates, exclude="tensorboard")
        self.logger.record("cpo/cost", float(costs.mean()))
        self.logger.record("cpo/cost_limit", self.cost_limit)
        self.logger.record("cpo/lambda", step.lam)
        self.logger.record("cpo/nu", step.nu)
        self.logger.record("cpo/recovery", float(step.case == "recovery"))
        self.logger.record("cpo/constrained", float(step.case == "constrained"))
        self.logger.record("cpo/cost_surrogate", float(new_cost) if accepted else 0.0)
        self.logger.record("cpo/cost_value_loss", float(np.mean(cost_losses)))

    def _fit_critics(
        self, observations: Any, returns: th.Tensor, cost_returns: th.Tensor, actor_params: list[nn.Parameter]
    ) -> tuple[list[float], list[float]]:
        """TRPO's critic update (``n_critic_updates`` epochs of ``batch_size``), for the value and the cost critic."""
        assert self.cost_critic is not None and self.cost_critic_optimizer is not None
        n = len(returns)
        value_losses, cost_losses = [], []
        for _ in range(self.n_critic_updates):
            order = np.random.permutation(n)
            for start in range(0, n, self.batch_size):
                idx = th.as_tensor(order[start : start + self.batch_size], device=self.device)
                obs = (
                    {k: v[idx] for k, v in observations.items()}
                    if isinstance(observations, dict)
                    else observations[idx]
                )
                value_loss = F.mse_loss(returns[idx], self.policy.predict_values(obs).flatten())
                self.policy.optimizer.zero_grad()
                value_loss.backward()
                for param in actor_params:  # the actor's own step was CPO's
                    param.grad = None
                self.policy.optimizer.step()
                value_losses.append(value_loss.item())
                cost_loss = F.mse_loss(cost_returns[idx], self._cost_values(obs))
                self.cost_critic_optimizer.zero_grad()
                cost_loss.backward()
                self.cost_critic_optimizer.step()
                cost_losses.append(cost_loss.item())
        return value_losses, cost_losses

    def learn(
        self: SelfCPO,
        total_timesteps: int,
        callback: Any = None,
        log_interval: int = 1,
        tb_log_name: str = "CPO",
        reset_num_timesteps: bool = True,
        progress_bar: bool = False,
    ) -> SelfCPO:
        return super().learn(
            total_timesteps=total_timesteps,
            callback=callback,
            log_interval=log_interval,
            tb_log_name=tb_log_name,
            reset_num_timesteps=reset_num_timesteps,
            progress_bar=progress_bar,
        )


__all__ = ["CASES", "COST_SIGNALS", "CPO", "CPOStep", "ConstrainedTRPO", "CostCritic", "CostTracker", "cpo_step", "gae"]
