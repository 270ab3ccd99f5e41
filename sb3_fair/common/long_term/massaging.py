"""F-PPO's action massaging (Hu, Lear, Zhang 2024, arXiv:2401.06318, Eq. 6) for any on-policy parent.

During training rollouts, after the policy has sampled ``a_t`` and before the env executes it, the
env's what-if query (:func:`~sb3_fair.common.protocol.get_what_if`) lists candidate replacements
and the short-term gap Δs each would leave; among the candidates whose probability under the
policy is within τ of ``a_t``'s, the fairest is executed (:func:`~sb3_fair.common.long_term.massaging_choice`).
The rollout buffer stores the executed action and its log-probability under the same policy
(Eq. 5: the gradient uses ``a'``; the PPO ratio of that sample starts at 1). The value estimate is
unchanged: it does not depend on the action.

Three parts:

* :func:`massage_actions`, the one decision used in training and at evaluation: given the proposed
  actions of a batch of sub-envs and the policy's distribution for them, which candidate each
  sub-env executes, and its log-probability.
* :class:`ActionMassagingMixin`, which owns ``massaging`` / ``massaging_tau`` and applies
  :func:`massage_actions` inside the parent's own ``collect_rollouts``: a forward hook on the policy
  (installed for the rollout only) rewrites the actions and log-probabilities that the policy's
  ``forward`` returns on the rollout's current observation (``_last_obs``, which those loops pass
  first; any other forward call is left alone), so SB3's, MaskablePPO's and RecurrentPPO's rollout
  loops stay theirs.
* :class:`MassagedPredictor`, a ``predict`` that massages (for ``evaluate_policy`` and the like): the
  algorithms' own ``predict`` never massages, as the authors evaluate.

The probabilities compared are the policy's probabilities of the candidates (a Discrete or
MultiDiscrete action) or its densities (a Box action, as the authors' attention code compares
Gaussian densities). A candidate of probability 0 (a masked action) is never executed.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np
import torch as th
from gymnasium import spaces
from sb3_contrib.common.maskable.distributions import MaskableCategoricalDistribution
from stable_baselines3.common.distributions import CategoricalDistribution, DiagGaussianDistribution, Distribution
from stable_baselines3.common.vec_env import VecEnv

from sb3_fair._exact import SHORT
from sb3_fair.common.long_term.advantages import _choice_lists, _choices, check_massaging_ties
from sb3_fair.common.protocol import WHAT_IF, env_name, get_what_if, is_what_if_supported
from sb3_fair.common.validation import check_bool, check_weights

if TYPE_CHECKING:
    from sb3_fair.common.fair_algorithm import OnPolicyFairAlgorithm as _OnPolicyBase
else:
    _OnPolicyBase = object

#: τ: a number >= 0, or a schedule ``tau(iteration) -> float`` of the 0-based PPO iteration
Tau = float | Callable[[int], float]


def check_tau(tau: Any, name: str = "massaging_tau") -> Tau:
    """``tau`` as a finite number >= 0, or a callable schedule (checked on iteration 0)."""
    if callable(tau):
        check_weights(tau(0), f"{name}(0)")
        return tau
    if isinstance(tau, (bool, str, bytes)):
        raise ValueError(f"{name} must be a number >= 0 or a callable iteration -> number, got {tau!r}")
    return check_weights(tau, name)


def tau_at(tau: Tau, iteration: int, name: str = "massaging_tau") -> float:
    """τ of the 0-based PPO iteration ``iteration`` (a schedule's value checked to be finite and >= 0)."""
    if callable(tau):
        return check_weights(tau(int(iteration)), f"{name}({int(iteration)})")
    return float(tau)


def candidate_log_probs(
    distribution: Distribution, candidates: np.ndarray, device: th.device | str = "cpu"
) -> np.ndarray:
    """Log-probabilities of ``candidates`` (shape ``(K, n, *action shape)``) under a batch-of-``n`` distribution,
    as a ``(K, n)`` float64 array.

    SB3's categorical distribution (also sb3-contrib's masked one) is read in NumPy: its logits are
    normalised log-probabilities, so a candidate's log-probability is its entry (torch's
    ``Categorical.log_prob`` computes the same, with a per-call argument check, and this runs at
    every rollout step). One broadcast call for a diagonal Gaussian; one call per candidate row for
    the others.

    :raises ValueError: when a categorical candidate is not one of the actions.
    """
    inner = getattr(distribution, "distribution", None)
    if (
        isinstance(distribution, (CategoricalDistribution, MaskableCategoricalDistribution))
        and isinstance(inner, th.distributions.Categorical)
        and candidates.ndim == 2
    ):
        logits = inner.logits.detach().cpu().numpy()
        n_actions = logits.shape[-1]
        index = candidates.astype(np.int64)
        if index.size and (index.min() < 0 or index.max() >= n_actions):
            raise ValueError(
                f"the what-if query (fairness_what_if) returned a candidate outside the {n_actions} actions: "
                f"{candidates.tolist()}"
            )
        return logits[np.arange(index.shape[1]), index].astype(np.float64)
    with th.no_grad():
        rows = th.as_tensor(candidates, device=device)
        if type(distribution) is DiagGaussianDistribution and isinstance(inner, th.distributions.Normal):
            log_probs = inner.log_prob(rows).sum(dim=-1)
        else:
            log_probs = th.stack([distribution.log_prob(row).reshape(-1) for row in rows])
    return log_probs.cpu().numpy().astype(np.float64)


def check_what_if_answer(candidates: np.ndarray, short_term: np.ndarray, sub_env: int = 0) -> None:
    """Refuse a what-if answer that Eq. 6 cannot rank: a NaN or infinite Δs, or a non-finite candidate action.

    A NaN Δs has no order (the fairest candidate would be undefined; NumPy would end in "argmax of an
    empty sequence"), and an infinite one is no fairness gap.

    :param candidates: the env's candidate actions (the proposed one first).
    :param short_term: the Δs the env answered for each candidate.
    :param sub_env: the sub-env that answered (named in the message).
    :raises ValueError: naming the env method, the sub-env, the candidate and its value.
    """
    ds = np.asarray(short_term, dtype=np.float64).reshape(-1)
    bad = np.flatnonzero(~np.isfinite(ds))
    if bad.size:
        k = int(bad[0])
        raise ValueError(
            f"{WHAT_IF} answered a non-finite Δs (short-term fairness gap) for candidate {k} of sub-env {sub_env}: "
            f"{ds[k]}; the env's what-if query must return a finite Δs for every candidate"
        )
    c = np.asarray(candidates)
    if c.dtype.kind == "f" and not np.all(np.isfinite(c)):
        k = int(np.flatnonzero(~np.isfinite(c.reshape(len(c), -1)).all(axis=1))[0])
        raise ValueError(
            f"{WHAT_IF} answered a non-finite candidate action {k} for sub-env {sub_env}: {c[k].tolist()}; "
            "the env's what-if query must return finite candidate actions"
        )


def _check_answers(answers: list[tuple[np.ndarray, np.ndarray]]) -> None:
    """The checks of each sub-env's what-if answer, in sub-env order: as many candidates as Δs values (at least
    one), then :func:`check_what_if_answer`. Raises for the first that fails."""
    for i, (c, ds) in enumerate(answers):
        if len(c) == 0 or len(c) != len(ds):
            raise ValueError(
                f"{WHAT_IF} must return as many candidates as Δs values, at least one (sub-env {i}): "
                f"got {len(c)} and {len(ds)}"
            )
        check_what_if_answer(c, ds, i)


def massage_actions(
    env: VecEnv | Any,
    env_actions: np.ndarray,
    distribution: Distribution,
    tau: float,
    to_policy: Callable[[np.ndarray], np.ndarray] | None = None,
    device: th.device | str = "cpu",
    ties: str = "keep",
) -> tuple[np.ndarray, list[np.ndarray], np.ndarray]:
    """Eq. 6 of Hu et al. (2024) for one batch of proposed actions.

    :param env: the VecEnv (one row of ``env_actions`` per sub-env) or a single env (one row) that
        answers what-if queries.
    :param env_actions: the proposed actions as the env would execute them, one row per sub-env.
    :param distribution: the policy's SB3 distribution for this batch (its ``log_prob`` takes one
        action per row).
    :param tau: the closeness threshold τ (``<= 0``: nothing is massaged).
    :param to_policy: maps the env's candidate actions to the policy's action space (e.g.
        ``policy.scale_action`` for a squashed Box policy); identity when ``None``.
    :param device: the torch device of ``distribution``.
    :param ties: ``"keep"`` or ``"flip"``: what an alternative as fair as the proposed action does
        (:func:`~sb3_fair.common.long_term.massaging_choice`).
    :return: ``(chosen, candidates, log_probs)``: the index of the executed candidate per row (0:
        the proposed action), each row's candidates in the policy's action space, and the
        log-probability of each row's executed candidate.
    """
    n = len(env_actions)
    answers = get_what_if(env, env_actions if isinstance(env, VecEnv) else env_actions[0])
    if len(answers) != n:
        raise ValueError(f"the what-if query answered for {len(answers)} sub-envs, expected {n}")
    if to_policy is None:
        small = _massage_small(answers, np.asarray(env_actions).dtype, distribution, tau, ties)
        if small is not None:
            return small
    # one test for the whole batch; if it fails, the per-answer checks run in sub-env order and name the first culprit
    if not all(len(c) and len(c) == len(ds) and (c.dtype.kind != "f" or np.isfinite(c).all()) for c, ds in answers):
        _check_answers(answers)
    short_term = np.zeros((max(len(c) for c, _ in answers), n))  # 0 for a padding row until the check below, then +inf
    for i, (_, ds) in enumerate(answers):
        short_term[: len(ds), i] = ds
    if not np.isfinite(short_term).all():
        _check_answers(answers)
    for i, (c, _) in enumerate(answers):
        short_term[len(c) :, i] = np.inf  # a padding row is never the fairest
    dtype = np.asarray(env_actions).dtype
    if to_policy is None:
        candidates = [np.asarray(c, dtype=dtype) for c, _ in answers]
    else:
        candidates = [np.asarray(to_policy(np.asarray(c)), dtype=dtype) for c, _ in answers]
    # the k-th candidate of every row (a row with fewer repeats its proposal), shape (width, n, *action shape)
    stacked = np.empty((len(short_term), n, *candidates[0].shape[1:]), dtype=candidates[0].dtype)
    for i, c in enumerate(candidates):
        stacked[: len(c), i] = c
        stacked[len(c) :, i] = c[0]
    log_probs = candidate_log_probs(distribution, stacked, device)
    if not tau > 0:  # also for a NaN τ: nothing is massaged
        return np.zeros(n, dtype=np.int64), candidates, log_probs[0]
    p = np.exp(log_probs)
    if np.isnan(p).any():  # named as massaging_choice names it, for the first sub-env that has one
        i = int(np.flatnonzero(np.isnan(p).any(axis=0))[0])
        k = int(np.flatnonzero(np.isnan(p[:, i]))[0])
        raise ValueError(
            f"probabilities must be numbers (+inf only for a candidate that cannot be executed): candidate {k} "
            f"has {p[k, i]} (sub-env {i})"
        )
    proposal = short_term[0].copy()
    short_term = np.where(p > 0, short_term, np.inf)  # a candidate the policy cannot take (masked) is never executed
    short_term[0] = proposal  # the proposal stays the reference even where its density underflows
    chosen = _choices(p, short_term, tau, ties)
    return chosen, candidates, log_probs[chosen, np.arange(n)]


def _massage_small(
    answers: list[tuple[np.ndarray, np.ndarray]],
    dtype: np.dtype,
    distribution: Distribution,
    tau: float,
    ties: str = "keep",
) -> tuple[np.ndarray, list[np.ndarray], np.ndarray] | None:
    """:func:`massage_actions` for a few sub-envs of a categorical policy (a rollout step), on Python floats.

    The same choice and log-probabilities as the array path, bit for bit: the log-probabilities are the logits' float32
    entries, the probabilities one ``np.exp`` of them, and the choice :func:`~sb3_fair.common.long_term._choices`'s own
    Python-float code. ``None`` where the array path is needed: another distribution, candidates that are not
    integer actions of the policy in the dtype of the proposed actions, too many of them (more than
    :data:`~sb3_fair._exact.SHORT` with the sub-envs), or anything the array path refuses (it then raises its own
    error).
    """
    inner = getattr(distribution, "distribution", None)
    if not (
        isinstance(distribution, (CategoricalDistribution, MaskableCategoricalDistribution))
        and isinstance(inner, th.distributions.Categorical)
        and dtype.kind in "iu"
    ):
        return None
    cands, gaps_by_env, width = [], [], 0
    for c, ds in answers:
        if c.ndim != 1 or ds.ndim != 1 or c.dtype != dtype:
            return None
        actions, env_gaps = c.tolist(), ds.tolist()
        if not actions or len(actions) != len(env_gaps):
            return None
        for d in env_gaps:
            if not math.isfinite(d):
                return None
        cands.append(actions)
        gaps_by_env.append(env_gaps)
        width = max(width, len(actions))
    n = len(answers)
    if width * n > SHORT:
        return None
    rows = inner.logits.tolist()  # float32 entries as Python floats (exact), as the array path reads them
    if len(rows) < n:  # a distribution for fewer sub-envs: the array path says what that gives
        return None
    for i, actions in enumerate(cands):
        for a in actions:
            if not 0 <= a < len(rows[i]):
                return None
    # log-probability of the k-th candidate of each sub-env (a sub-env with fewer repeats its proposal)
    lp: list[list[float]] = [[] for _ in range(width)]
    for i, c in enumerate(cands):
        row = rows[i]
        for k in range(width):
            lp[k].append(row[c[k] if k < len(c) else c[0]])
    candidates = [c for c, _ in answers]  # already in the proposed actions' dtype
    if not tau > 0:
        return np.zeros(n, dtype=np.int64), candidates, np.array(lp[0], dtype=np.float64)
    probs = np.exp(np.array(lp, dtype=np.float64)).tolist()
    # Δs of each candidate; +inf for a padding row and for a candidate the policy cannot take (masked), not the proposal
    gaps: list[list[float]] = [[] for _ in range(width)]
    for k, p_k in enumerate(probs):
        for i, p in enumerate(p_k):
            if math.isnan(p):  # the array path names it
                return None
            ds = gaps_by_env[i]
            gaps[k].append(ds[k] if k < len(ds) and (k == 0 or p > 0) else math.inf)
    chosen = _choice_lists(probs, gaps, tau, ties)
    return (
        np.array(chosen, dtype=np.int64),
        candidates,
        np.array([lp[k][i] for i, k in enumerate(chosen)], dtype=np.float64),
    )


#: tensor dtypes that NumPy holds and casts into exactly as torch does (round to nearest for floats); float16 and
#: bfloat16 log-probabilities are written in torch
_NUMPY_CASTS = frozenset({th.float32, th.float64, th.int64, th.int32})


class ActionMassagingMixin(_OnPolicyBase):
    """F-PPO's action massaging (Eq. 6) during training rollouts, for an on-policy parent.

    ``class FairX(ActionMassagingMixin, OnPolicyFairnessMixin, ..., X)``: a seam of its own, beside the fairness
    terms' (:mod:`sb3_fair.common.fairness_terms`), since it changes the actions a rollout executes, not the
    advantages. Independent of the advantage regularisation: ``fairness="long_term", massaging=False`` is the
    paper's F-PPO-L ablation.
    The env answers the what-if protocol (:data:`~sb3_fair.common.protocol.WHAT_IF`), checked when
    the env is set. ``predict`` never massages; evaluate with massaging through
    :class:`MassagedPredictor`.

    Logged under ``fairness/``: ``massaged_fraction`` (the rollout's share of executed actions that
    were replaced) and ``massaging_tau`` (τ of the rollout).

    :param massaging: massage the actions of training rollouts.
    :param massaging_tau: τ, a number >= 0 or a schedule ``tau(iteration)`` of the 0-based PPO
        iteration (``num_timesteps // (n_steps * n_envs)`` when the rollout starts), such as
        :func:`~sb3_fair.common.long_term.lending_massaging_threshold`. A module-level function (or a
        :func:`functools.partial` of one) keeps the model picklable.
    :param massaging_ties: what an alternative exactly as fair as the sampled action does: ``"keep"`` the sampled
        action (the paper's text, "if the alternative action is fairer"; the default) or ``"flip"`` to the
        alternative (the authors' lending code compares with ``>=``)
        (:func:`~sb3_fair.common.long_term.massaging_choice`). Kept with ``massaging=False``, as ``massaging_tau`` is,
        for :class:`MassagedPredictor`.
    """

    def __init__(
        self,
        *args: Any,
        massaging: bool = False,
        massaging_tau: Tau = 0.1,
        massaging_ties: str = "keep",
        **kwargs: Any,
    ) -> None:
        self.massaging = check_bool(massaging, "massaging")
        self.massaging_tau = check_tau(massaging_tau)
        self.massaging_ties = check_massaging_ties(massaging_ties, "massaging_ties")
        self._massaged = [0, 0]  # (replaced, proposed) in the last rollout
        #: the sub-envs whose sampled action the current rollout step replaced (a callback's ``on_step`` reads them
        #: beside the step's infos); empty outside massaged rollouts
        self.massaged_rows: list[int] = []
        super().__init__(*args, **kwargs)

    def _setup_fairness(self, env: VecEnv) -> None:
        super()._setup_fairness(env)
        if self.massaging and not is_what_if_supported(env):
            raise ValueError(
                f"massaging=True needs an env with a {WHAT_IF}(action) method (the what-if protocol of "
                f"sb3_fair.common.protocol), which {env_name(env)} does not have: use massaging=False or such an env"
            )

    def massaging_iteration(self) -> int:
        """The 0-based PPO iteration the next rollout belongs to."""
        per_rollout = int(self.n_steps) * int(self.n_envs)
        return int(self.num_timesteps) // per_rollout

    def current_massaging_tau(self) -> float:
        """τ for the next rollout."""
        return tau_at(self.massaging_tau, self.massaging_iteration())

    #: whether the parent's ``collect_rollouts`` unscales a squashed Box action to the bounds (SB3's
    #: on-policy rollout does; RecurrentPPO's only clips)
    _rollout_unscales_squashed_actions = True

    def _unscales(self) -> bool:
        return bool(self._rollout_unscales_squashed_actions and self.policy.squash_output)

    def _policy_to_env(self, actions: np.ndarray) -> np.ndarray:
        """The policy's raw actions as the parent's rollout executes them (its clipping / unscaling of a Box)."""
        if not isinstance(self.action_space, spaces.Box):
            return actions
        if self._unscales():
            return self.policy.unscale_action(actions)
        return np.clip(actions, self.action_space.low, self.action_space.high)

    def _env_to_policy(self) -> Callable[[np.ndarray], np.ndarray] | None:
        if isinstance(self.action_space, spaces.Box) and self._unscales():
            return self.policy.scale_action
        return None

    def _is_rollout_call(self, args: tuple[Any, ...]) -> bool:
        """Whether a forward call of the policy is the rollout's own: the one on the observation the rollout is at.

        SB3's, MaskablePPO's and RecurrentPPO's ``collect_rollouts`` all call the policy with
        ``obs_as_tensor(self._last_obs)`` as the first argument; any other forward call while the hook is
        installed (a callback's, on other observations) is left alone.
        """
        last = self._last_obs
        if not args or last is None:
            return False
        if isinstance(last, dict):
            obs = args[0]
            return isinstance(obs, dict) and obs.keys() == last.keys() and all(_holds(obs[k], last[k]) for k in last)
        return _holds(args[0], last)

    def _massaging_hook(self, env: VecEnv, tau: float, module: Any, args: Any, kwargs: Any, output: Any) -> Any:
        """Forward hook of the policy during a rollout: massage the sampled actions and their log-probabilities."""
        if not self._is_rollout_call(args):
            return None
        actions, log_probs = output[0], output[2]
        raw = actions.cpu().numpy()
        chosen, candidates, new_log_probs = massage_actions(
            env,
            self._policy_to_env(raw),
            module.action_dist,
            tau,
            to_policy=self._env_to_policy(),
            device=actions.device,
            ties=getattr(self, "massaging_ties", "keep"),  # a model saved before the option keeps its rule
        )
        rows = [i for i, k in enumerate(chosen.tolist()) if k]
        self.massaged_rows = rows
        self._massaged[0] += len(rows)
        self._massaged[1] += len(chosen)
        if not rows:
            return None
        # new tensors (the policy's own stay as they were), with the executed candidates and their log-probabilities
        # written in, cast to the tensors' dtypes: in NumPy where it casts as torch does, else in torch
        if actions.dtype in _NUMPY_CASTS and log_probs.dtype in _NUMPY_CASTS:
            new_actions, new_lps = raw.copy(), log_probs.detach().cpu().numpy().copy()
            for i in rows:
                new_actions[i] = np.asarray(candidates[i][chosen[i]]).reshape(new_actions.shape[1:])
                new_lps[i] = new_log_probs[i]
            actions = th.as_tensor(new_actions, device=actions.device)
            log_probs = th.as_tensor(new_lps, device=log_probs.device)
        else:
            executed = np.stack([candidates[i][chosen[i]] for i in rows])
            index = th.as_tensor(rows, device=actions.device)
            actions, log_probs = actions.clone(), log_probs.clone()
            actions[index] = th.as_tensor(executed, dtype=actions.dtype, device=actions.device).reshape(
                len(rows), *actions.shape[1:]
            )
            log_probs[index] = th.as_tensor(new_log_probs[rows], dtype=log_probs.dtype, device=log_probs.device)
        return (actions, output[1], log_probs, *output[3:])

    def collect_rollouts(self, env: VecEnv, *args: Any, **kwargs: Any) -> bool:
        """The parent's rollout, with the policy's sampled actions massaged when ``massaging`` is on."""
        self._massaged, self.massaged_rows = [0, 0], []
        tau = self.current_massaging_tau() if self.massaging else 0.0
        if tau <= 0:
            collected = super().collect_rollouts(env, *args, **kwargs)
        else:
            hook = self.policy.register_forward_hook(partial(self._massaging_hook, env, tau), with_kwargs=True)
            try:
                collected = super().collect_rollouts(env, *args, **kwargs)
            finally:
                hook.remove()
        if self.massaging:  # dumped with the rollout's own Δs and Δl
            replaced, proposed = self._massaged
            logger = self.logger
            logger.record("fairness/massaged_fraction", float(replaced / proposed) if proposed else 0.0)
            logger.record("fairness/massaging_tau", float(tau))
        return collected

    def fairness_config(self) -> dict[str, Any]:
        config = super().fairness_config()
        tau = self.massaging_tau
        return {
            **config,
            "massaging": self.massaging,
            "massaging_tau": tau if not callable(tau) else repr(tau),
            "massaging_ties": getattr(self, "massaging_ties", "keep"),
        }


def _holds(tensor: Any, array: Any) -> bool:
    """Whether ``tensor`` is a torch tensor holding ``array`` (same shape, same values)."""
    return (
        isinstance(tensor, th.Tensor)
        and tuple(tensor.shape) == np.shape(array)
        and bool(np.array_equal(tensor.detach().cpu().numpy(), array))
    )


class MassagedPredictor:
    """A model's ``predict`` with action massaging, for evaluating with it on (``evaluate_policy`` and the like).

    Hu et al. (2024) claim short-term fairness at deployment through massaging, but their code
    evaluates without it; the algorithms' ``predict`` follows the code. Wrap a trained model to
    evaluate the other way::

        from stable_baselines3.common.evaluation import evaluate_policy
        from sb3_fair.common.long_term.massaging import MassagedPredictor

        env = model.get_env()
        evaluate_policy(MassagedPredictor(model, env, tau=0.1), env, n_eval_episodes=10)

    :param model: a trained on-policy model (PPO, MaskablePPO, RecurrentPPO or their Fair classes).
    :param env: the env the actions are for (a VecEnv, or a single env for single observations),
        answering the what-if protocol. It must be the env that ``predict``'s observations come from.
    :param tau: τ; ``None`` takes the model's ``massaging_tau`` of the iteration after its training
        (:meth:`ActionMassagingMixin.current_massaging_tau`; give it for a model that did not train
        with ``massaging=True``, such as a plain PPO).
    :param ties: ``"keep"`` or ``"flip"`` (:func:`~sb3_fair.common.long_term.massaging_choice`); ``None`` takes the
        model's ``massaging_ties`` (``"keep"`` for a model without one).
    """

    def __init__(self, model: Any, env: VecEnv | Any, tau: float | None = None, ties: str | None = None) -> None:
        if not is_what_if_supported(env):
            raise ValueError(f"env must answer what-if queries ({WHAT_IF}); {type(env).__name__} does not")
        if tau is None:
            if not isinstance(model, ActionMassagingMixin) or not model.massaging:
                raise ValueError(f"tau is needed for a {type(model).__name__} that did not train with massaging=True")
            tau = model.current_massaging_tau()
        self.model, self.env, self.tau = model, env, check_weights(tau, "tau")
        self.ties = check_massaging_ties(getattr(model, "massaging_ties", "keep") if ties is None else ties)

    def predict(
        self, observation: Any, state: Any = None, episode_start: Any = None, deterministic: bool = False, **kwargs: Any
    ) -> tuple[np.ndarray, Any]:
        """The model's action for ``observation``, replaced by Eq. 6 where a fairer candidate is close enough.

        Extra keyword arguments (``action_masks``) go to the model's ``predict``.
        """
        model = self.model
        actions, state = model.predict(
            observation, state=state, episode_start=episode_start, deterministic=deterministic, **kwargs
        )
        policy = model.policy
        vectorized = policy.obs_to_tensor(observation)[1]
        batch = np.asarray(actions) if vectorized else np.asarray(actions)[None]
        if not isinstance(self.env, VecEnv) and len(batch) != 1:
            raise ValueError(f"a single env answers for one observation, got a batch of {len(batch)}: pass the VecEnv")
        # the predict call above left its distribution in the policy's action distribution
        squash = isinstance(model.action_space, spaces.Box) and policy.squash_output
        chosen, candidates, _ = massage_actions(
            self.env,
            batch,
            policy.action_dist,
            self.tau,
            to_policy=policy.scale_action if squash else None,
            device=model.device,
            ties=self.ties,
        )
        out = batch.copy()
        for i in np.flatnonzero(chosen):
            c = candidates[i][chosen[i]]
            out[i] = policy.unscale_action(c) if squash else c
        return (out if vectorized else out[0]), state


__all__ = [
    "ActionMassagingMixin",
    "MassagedPredictor",
    "Tau",
    "check_tau",
    "check_what_if_answer",
    "massage_actions",
    "tau_at",
]
