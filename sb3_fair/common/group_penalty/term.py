"""fair-PPO's group penalty as a reweighting of each agent's advantage, for any on-policy parent.

:class:`GroupPenaltyTerm` is the penalty as a :class:`~sb3_fair.common.fairness_terms.FairnessTerm`, which
:class:`~sb3_fair.common.fairness_terms.mixin.OnPolicyFairnessMixin` puts on PPO (:class:`~sb3_fair.FairPPO`),
sb3-contrib's MaskablePPO (:class:`~sb3_fair.FairMaskablePPO`) and RecurrentPPO
(:class:`~sb3_fair.FairRecurrentPPO`): a :class:`GroupTracker` callback records each slot's group
(factor, twin) and realised return at every rollout step, from the infos only; before the parent's
``train`` the rollout's advantages are multiplied by :func:`advantage_weights`.

Derivation. Per game instance with n agents, FairPPO maximises

    J = (1/n) sum_x J_x - lambda * (alpha * D_retro + beta * D_pro),

La Malfa et al.'s (2025) fair-PPO objective (the PPO loss plus ``lambda * L^fair``, Eqs. 5-7) with the penalty
``D = sum_k |C_k . v|`` written through the contrast matrix ``C`` of
:func:`sb3_fair.metrics.group_contrasts` (DP: one row, group means; CSP: one row per stratum of the
legitimate factor; CF: one row per agent and its counterfactual twin), where ``v`` is the vector of
the agents' returns realised so far in the episode (retrospective part) or of the critic's values
``V(o_x)`` (prospective part). Each entry of ``v`` estimates agent x's return, whose policy gradient
is ``grad J_x = E[A_x grad log pi(a_x | o_x)]``. Hence::

    grad |C_k . v| = sign(C_k . v) sum_x C_kx grad J_x,

and the whole gradient is ``(1/n) sum_x w_x grad J_x`` with the per-agent weight

    w_x = 1 - lambda * n * sum_k C_kx * (alpha * sign(C_k . R) + beta * sign(C_k . V)),

i.e. PPO's clipped surrogate with ``A'_x = w_x * A_x``. For DP with groups G1 and G0 this is
``1 - lambda * n * c_x * (alpha * sign(D_retro) + beta * sign(D_pro))`` with
``c_x = +1/|G1|`` or ``-1/|G0|``. The signs are taken per instance and timestep (the realised part
from the rewards up to that step), so the agents of the group ahead get a smaller (possibly
negative) weight and those behind a larger one: the penalty moves the actor. The critic's
regression target is left alone.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import VecEnv

from sb3_fair.common.fairness_terms.base import FairnessTerm, register_term
from sb3_fair.common.protocol import (
    ACTIVE,
    BENEFITS,
    FACTOR,
    STAKEHOLDERS,
    TWIN,
    get_benefits,
    get_group_info,
    get_stakeholders,
    is_group_info_supported,
    is_stakeholders_supported,
)
from sb3_fair.common.stakeholders import Stakeholders
from sb3_fair.common.validation import check_choice, check_coef, check_int
from sb3_fair.metrics import group_contrasts

#: the group penalty's metrics (``fairness=``): demographic parity, conditional statistical parity, counterfactual fairness
METRICS = ("dp", "csp", "cf")


def advantage_weights(
    realised: np.ndarray,
    values: np.ndarray,
    groups: np.ndarray,
    agents_per_instance: int,
    metric: str = "dp",
    alpha: float = 0.5,
    beta: float = 0.5,
    coef: float = 1.0,
    factors: np.ndarray | None = None,
    twins: np.ndarray | None = None,
    protected: int = 1,
) -> tuple[np.ndarray, dict[str, float]]:
    """Per-sample advantage weights ``w`` of fair-PPO's penalty (module docstring) for a rollout.

    All arrays are ``(T, n_slots)`` with slots instance-major (``agents_per_instance`` agents per
    game instance). ``twins`` holds each slot's twin as an index *within its instance*.

    :return: ``(weights, stats)``; ``stats`` holds ``penalty_retro`` and ``penalty_pro``, the means
        of ``sum_k |C_k . R|`` and ``sum_k |C_k . V|`` over instances and steps.
    """
    T, N = realised.shape
    n = int(agents_per_instance)
    if N % n:
        raise ValueError(f"agents_per_instance ({n}) must divide the number of slots ({N})")
    shape = (T * (N // n), n)
    R = np.asarray(realised, dtype=np.float64).reshape(shape)
    V = np.asarray(values, dtype=np.float64).reshape(shape)
    G = np.asarray(groups).reshape(shape)
    F = None if factors is None else np.asarray(factors).reshape(shape)
    W = None if twins is None else np.asarray(twins).reshape(shape)
    weights = np.ones(shape)
    retro = np.zeros(shape[0])
    pro = np.zeros(shape[0])
    keys: dict[bytes, list[int]] = {}
    for row in range(shape[0]):
        key = G[row].tobytes() + (b"" if F is None else F[row].tobytes()) + (b"" if W is None else W[row].tobytes())
        keys.setdefault(key, []).append(row)
    for rows_list in keys.values():
        rows = np.asarray(rows_list)
        r0 = rows[0]
        C = group_contrasts(
            G[r0], metric, factors=None if F is None else F[r0], twins=None if W is None else W[r0], protected=protected
        )
        if C.shape[0] == 0:
            continue
        d_retro = R[rows] @ C.T
        d_pro = V[rows] @ C.T
        retro[rows] = np.abs(d_retro).sum(axis=1)
        pro[rows] = np.abs(d_pro).sum(axis=1)
        grad = (alpha * np.sign(d_retro) + beta * np.sign(d_pro)) @ C
        weights[rows] = 1.0 - coef * n * grad
    stats = {"penalty_retro": float(retro.mean()), "penalty_pro": float(pro.mean())}
    return weights.reshape(T, N), stats


def check_metric(metric: Any) -> str:
    """``metric`` if it is one of :data:`METRICS`; a clear error naming the argument otherwise."""
    return check_choice(metric, "fairness", METRICS)


def _active(infos: list[dict[str, Any]], n: int) -> np.ndarray:
    """Whether each slot's agent is in its game, from the infos (:data:`~sb3_fair.common.protocol.ACTIVE`; an info
    without it: in the game)."""
    return np.array([(infos[i] if i < len(infos) else {}).get(ACTIVE, True) is not False for i in range(n)])


class GroupTracker(BaseCallback):
    """For every rollout step, each slot's group (factor, twin) and its return realised so far in the episode.

    Reads only the callback locals that every SB3 / sb3-contrib on-policy algorithm exposes
    (``dones``, ``infos``) and the VecEnv's reset infos; the realised return accumulates each
    slot's own entry of ``info["benefits"]``. Steps are counted from the rollout's start (SB3
    calls ``on_step`` before adding the step to the rollout buffer), and :attr:`filled` says that
    a whole rollout of ``n_steps`` was recorded.

    :param n_steps: steps per rollout (the algorithm's ``n_steps``).
    :param agents_per_instance: slots per game instance.
    :param metric: ``"dp"``, ``"csp"`` or ``"cf"``; says which infos must be present.
    :param protected: the group value of the protected agents.
    """

    def __init__(self, n_steps: int, agents_per_instance: int, metric: str = "dp", protected: int = 1) -> None:
        super().__init__()
        self.n_steps = int(n_steps)
        self.n_agents = int(agents_per_instance)
        self.metric = check_metric(metric)
        self.protected = int(protected)
        self.filled = False
        self._t = 0
        self._running: np.ndarray | None = None

    def restart(self) -> None:
        """Forget the running episodes (the env was reset): the next training start reads the reset infos."""
        self._running = None

    _STATE = (
        "n_steps",
        "n_agents",
        "metric",
        "protected",
        "filled",
        "_t",
        "_running",
        "_cur",
        "_by_stakeholders",
        "_active",
    )

    def __getstate__(self) -> dict[str, Any]:
        """The running episodes (saved with the model, so a loaded model continues them), not the model or env."""
        return {key: self.__dict__[key] for key in self._STATE if key in self.__dict__}

    def __setstate__(self, state: dict[str, Any]) -> None:
        BaseCallback.__init__(self)
        self.__dict__.update(state)

    def fits(self, n_envs: int, agents_per_instance: int, metric: str, protected: int) -> bool:
        """Whether this tracker's running episodes belong to an env of ``n_envs`` slots in games of
        ``agents_per_instance``, and it tracks ``metric`` for the ``protected`` group."""
        return (
            self.n_agents == agents_per_instance
            and self.metric == metric
            and self.protected == protected
            and (self._running is None or len(self._running) == n_envs)
        )

    def _on_training_start(self) -> None:
        env = self.training_env
        n_envs = env.num_envs
        self.groups = np.zeros((self.n_steps, n_envs), dtype=np.int64)
        self.factors = np.zeros((self.n_steps, n_envs), dtype=np.int64)
        self.twins = np.zeros((self.n_steps, n_envs), dtype=np.int64)
        self.realised = np.zeros((self.n_steps, n_envs), dtype=np.float64)
        #: whether each slot's agent is in its game at the row's observation (BlackDeath marks the absent ones)
        self.active = np.ones((self.n_steps, n_envs), dtype=bool)
        if self._running is None:
            self._running = np.zeros(n_envs)
            self._active = _active(list(env.unwrapped.reset_infos), n_envs)
            self._cur = np.zeros((3, n_envs), dtype=np.int64)
            self._by_stakeholders = self._declared(env, n_envs)
            self._read(list(env.unwrapped.reset_infos), check=not self._by_stakeholders)
            if self._by_stakeholders:
                self._check_groups()

    def _declared(self, env: VecEnv, n_envs: int) -> bool:
        """Whether the games' ``stakeholders`` declare each slot's group and factor (the values of a slot whose info
        reports none); if so they are read into the current values. The twins (CF) come from the infos only."""
        sh = get_stakeholders(env) if is_stakeholders_supported(env) else None
        if sh is None or sh.n != self.n_agents or self.metric == "cf":
            return False
        self._redeclare(np.ones(n_envs, dtype=bool))
        return True

    def _redeclare(self, dones: np.ndarray) -> None:
        """The groups and factors of the games that have just started a new episode (their slots ``dones``), from
        their ``stakeholders`` (a game may redraw them between episodes; its infos, where they report a group, still
        win)."""
        env, n = self.training_env, self.n_agents
        for inst in np.unique(np.flatnonzero(dones) // n).tolist():
            sh = env.get_attr(STAKEHOLDERS, indices=[inst * n])[0]
            if not isinstance(sh, Stakeholders) or sh.n != n:
                continue
            self._cur[0, inst * n : (inst + 1) * n] = sh.groups
            if sh.factors is not None:
                self._cur[1, inst * n : (inst + 1) * n] = sh.factors

    def _read(self, infos: list[dict[str, Any]], check: bool = False) -> None:
        """Each slot's group (factor, twin) from its info; ``check``: every slot must have one (the reset infos of
        games whose ``stakeholders`` do not give the groups, or of CF, whose twins only the infos give).

        An info without ``"group"`` (a step that reports none, or a game whose groups are its stakeholders')
        leaves the slot's previous values; one with a group but without the factor (CSP) or the twin (CF) is an
        error, at reset and at every step: read as 0, it would put every agent in one stratum (CSP would silently
        become DP) or pair it with agent 0.
        """
        cur = self._cur.tolist()  # the groups, factors and twins as lists: written back once (this runs at every step)
        for i in range(len(cur[0])):
            info = infos[i] if i < len(infos) else {}
            if not (check or is_group_info_supported(info)):
                continue
            group, factor, twin = get_group_info(info)
            if self.metric == "csp" and factor is None:
                raise ValueError(
                    f"fairness='csp' needs every agent's legitimate factor in its info (info[{FACTOR!r}]), at reset and at "
                    f"every step; slot {i}'s info has {sorted(info)}. Without it every agent would fall into one stratum and "
                    "CSP would silently become DP: have the game report the factor next to the group "
                    "(sb3_fair.common.protocol.group_info(group, factor)), or use fairness='dp'"
                )
            if self.metric == "cf" and twin is None:
                raise ValueError(
                    f"fairness='cf' needs a counterfactual twin for every agent (info[{TWIN!r}], at reset and at every step; "
                    f"slot {i}'s info has {sorted(info)}): wrap the game in sb3_fair.wrappers.CounterfactualPair before "
                    "make_multiagent_vec_env"
                )
            # the factor and twin are read only by the metric that needs them (DP ignores them)
            cur[0][i], cur[1][i], cur[2][i] = (
                group,
                factor if factor is not None else 0,
                twin if twin is not None else 0,
            )
        self._cur[...] = cur
        if check:
            self._check_groups()

    def _check_groups(self) -> None:
        """Refuse a game instance whose agents are all in one group (at the start of training)."""
        for inst, g in enumerate(self._cur[0].reshape(-1, self.n_agents)):
            if not (np.any(g == self.protected) and np.any(g != self.protected)):
                raise ValueError(
                    f"env: game instance {inst} has a single group {np.unique(g).tolist()}; the group penalty needs "
                    f"agents in the protected group ({self.protected}) and outside it"
                )

    def _on_rollout_start(self) -> None:
        self._t = 0
        self.filled = False

    def _on_step(self) -> bool:
        t, running = self._t, self._running
        assert running is not None
        if t >= self.n_steps:
            return True
        self.groups[t], self.factors[t], self.twins[t] = self._cur
        self.realised[t] = running
        self.active[t] = getattr(self, "_active", True)
        dones = np.asarray(self.locals["dones"], dtype=bool)
        infos = self.locals["infos"]
        # benefits: the list of this slot's game, read at the first slot (last is None then) and whenever it changes
        benefits: Any
        gains, last, benefits = [], None, None
        for i, info in enumerate(infos):
            # the slots of one game usually share one benefits object in their infos: it is checked once (it stays
            # alive, and so keeps its identity, for the whole loop)
            shared = info.get(BENEFITS)
            if shared is None or shared is not last:
                benefits, last = get_benefits(info, self.n_agents).tolist(), shared
            gains.append(benefits[i % self.n_agents])
        running += gains
        running[dones] = 0.0
        self._active = _active(infos, len(infos))
        if dones.any() and getattr(self, "_by_stakeholders", False):
            self._redeclare(dones)
        # infos of a finished game already describe the next episode (SuperSuit merges the reset info)
        self._read(infos)
        self._t = t + 1
        self.filled = self._t == self.n_steps
        return True


class GroupPenaltyTerm(FairnessTerm):
    """The retrospective and prospective group penalties of fair-PPO (La Malfa et al. 2025, arXiv:2502.03953, Eqs. 5-7),
    as a :class:`~sb3_fair.common.fairness_terms.FairnessTerm` of an on-policy parent (``fairness="dp"``, ``"csp"`` or
    ``"cf"`` of :class:`~sb3_fair.FairPPO`, :class:`~sb3_fair.FairMaskablePPO`, :class:`~sb3_fair.FairRecurrentPPO`).

    The parent maximises ``(1/n) sum_x J_x - fairness_coef * (alpha * D_retro + beta * D_pro)`` per game instance (the
    derivation is this module's docstring): before each update the rollout's advantages are multiplied by
    :func:`advantage_weights`, from the groups and realised returns that a :class:`GroupTracker` recorded at every
    step. The env is a multi-agent VecEnv with one slot per agent and parameter sharing
    (:func:`sb3_fair.wrappers.make_multiagent_vec_env`) whose games honour the stakeholder contract and report each
    agent's ``"group"`` (``"factor"`` for CSP, ``"twin"`` for CF) in its info. With ``fairness_coef=0`` or
    ``alpha = beta = 0`` the term is inactive and the class is its parent: it accepts every env the parent accepts and
    trains exactly like it.

    :param method: ``"dp"`` (demographic parity), ``"csp"`` (conditional statistical parity, within each stratum of
        the legitimate factor) or ``"cf"`` (counterfactual fairness, each agent against its twin).
    :param fairness_coef: lambda, the weight of the whole penalty, >= 0.
    :param alpha: weight of the retrospective part (returns realised so far), >= 0.
    :param beta: weight of the prospective part (the critic's values), >= 0.
    :param protected_group: the group value of the protected agents.
    :param agents_per_instance: slots per game instance; default: the env's ``agents_per_instance`` attribute (set
        by :func:`~sb3_fair.wrappers.make_multiagent_vec_env`), else all slots form one game.

    ``alpha``, ``beta``, ``protected_group`` and ``agents_per_instance`` belong to these three metrics: with another
    ``fairness`` each is refused unless left at its default. The infos are checked when training starts (from the
    algorithm's own reset) and at every step: CSP needs every agent's ``"factor"``, CF its ``"twin"``.

    Logged under ``fairness/``: ``penalty_retro`` and ``penalty_pro`` of the last rollout and the spread of the
    advantage weights (``adv_weight_std``, ``adv_weight_min``, ``adv_weight_max``).
    """

    methods: ClassVar[tuple[str, ...]] = METRICS

    def __init__(
        self,
        method: str = "dp",
        fairness_coef: float = 1.0,
        alpha: float = 0.5,
        beta: float = 0.5,
        protected_group: int = 1,
        agents_per_instance: int | None = None,
    ) -> None:
        self.method = check_metric(method)
        self.fairness_coef = check_coef(fairness_coef, "fairness_coef")
        checked = self.check_arguments(
            {
                "alpha": alpha,
                "beta": beta,
                "protected_group": protected_group,
                "agents_per_instance": agents_per_instance,
            }
        )
        self.alpha: float = checked["alpha"]
        self.beta: float = checked["beta"]
        self.protected_group: int = checked["protected_group"]
        self.agents_per_instance: int | None = checked["agents_per_instance"]
        #: slots per game instance of the env (read by :meth:`setup`)
        self.n_agents: int | None = None
        #: the running episodes' groups and realised returns (saved with the model, so a loaded model continues them)
        self.tracker: GroupTracker | None = None
        self._saved_tracker: GroupTracker | None = None

    @classmethod
    def check_arguments(cls, values: dict[str, Any]) -> dict[str, Any]:
        """``alpha``, ``beta`` (weights >= 0), ``protected_group`` (an int) and ``agents_per_instance`` (an int >= 2
        or None), those given."""
        out = dict(values)
        for name in ("alpha", "beta"):
            if name in out:
                out[name] = check_coef(out[name], name)
        if "protected_group" in out:
            group = out["protected_group"]
            if isinstance(group, bool) or not isinstance(group, (int, np.integer)):
                raise ValueError(f"protected_group must be an int, got {group!r}")
            out["protected_group"] = int(group)
        if "agents_per_instance" in out:
            out["agents_per_instance"] = check_int(
                out["agents_per_instance"], "agents_per_instance", 2, allow_none=True
            )
        return out

    @property
    def active(self) -> bool:
        """Whether the penalty is on (``fairness_coef > 0`` and ``alpha + beta > 0``)."""
        return self.fairness_coef > 0 and (self.alpha > 0 or self.beta > 0)

    @property
    def needs_buffer(self) -> bool:
        return False  # the tracker keeps the rollout's groups and returns itself

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_saved_tracker"] = None
        return state

    def resume_from(self, saved: FairnessTerm) -> None:
        """Keep the loaded model's running episodes (its tracker), for :meth:`setup` to continue where they fit, and
        its games' size (until an env says otherwise: a model loaded without an env reports it in its config)."""
        tracker = getattr(saved, "tracker", None) or getattr(saved, "_saved_tracker", None)
        if isinstance(tracker, GroupTracker):
            self._saved_tracker = tracker
        if isinstance(saved, GroupPenaltyTerm) and self.n_agents is None:
            self.n_agents = saved.n_agents

    def setup(self, model: Any, env: VecEnv) -> None:
        """With the penalty on, check what can be checked without touching the env; the infos are checked from the
        algorithm's own first reset, when training starts."""
        tracker = self.tracker or self._saved_tracker
        self.tracker, self._saved_tracker = None, None
        if not self.active:
            return
        algo = type(model).__name__
        if env.num_envs < 2:
            raise ValueError(
                f"env: {algo}'s group penalties need a multi-agent VecEnv with one slot per agent, e.g. "
                f"sb3_fair.wrappers.make_multiagent_vec_env(parallel_env); got {type(env.unwrapped).__name__} with "
                f"{env.num_envs} slot(s) (or set fairness_coef=0 for the plain parent algorithm)"
            )
        declared = getattr(env.unwrapped, "agents_per_instance", None)
        if self.agents_per_instance is not None and declared is not None and self.agents_per_instance != declared:
            raise ValueError(
                f"agents_per_instance={self.agents_per_instance} does not match the env, whose games have {declared} agents "
                f"each ({type(env.unwrapped).__name__}.agents_per_instance): it would pool agents of different games into "
                "one penalty; leave it None to take the env's"
            )
        n = self.agents_per_instance or declared or env.num_envs
        if env.num_envs % n:
            raise ValueError(f"agents_per_instance ({n}) must divide the env's number of slots ({env.num_envs})")
        if not is_stakeholders_supported(env):
            raise ValueError(
                f"env: {algo}'s group penalties need games honouring the stakeholder contract "
                "(`stakeholders` and info['benefits'] for every agent)"
            )
        if get_stakeholders(env).n != n:
            raise ValueError(
                f"agents_per_instance ({n}) must equal the number of stakeholders of each game "
                f"({get_stakeholders(env).n}, from env.stakeholders): each slot's info['benefits'] lists one game's agents"
            )
        if self.method == "csp" and get_stakeholders(env).factors is None:
            raise ValueError(
                "fairness='csp' needs games whose stakeholders have legitimate factors (Stakeholders.factors)"
            )
        self.n_agents = int(n)
        if tracker is not None and tracker.fits(env.num_envs, self.n_agents, self.method, self.protected_group):
            self.tracker = tracker  # a loaded model continues its running episodes (exact resume)

    def callbacks(self, model: Any, env_was_reset: bool) -> list[BaseCallback]:
        if self.n_agents is None:
            return []
        if self.tracker is None:
            self.tracker = GroupTracker(model.n_steps, self.n_agents, self.method, self.protected_group)
        if env_was_reset:
            self.tracker.restart()
        return [self.tracker]

    def config(self) -> dict[str, Any]:
        return {
            "fairness": self.method,
            "alpha": self.alpha,
            "beta": self.beta,
            "fairness_coef": self.fairness_coef,
            "protected_group": self.protected_group,
            "agents_per_instance": self.n_agents,
        }

    def before_update(self, model: Any, buffer: Any) -> None:
        """Reweight the rollout's advantages by the group penalty (once the tracker has a whole rollout)."""
        tracker = self.tracker
        if tracker is None or not tracker.filled:
            return
        weights, stats = advantage_weights(
            tracker.realised,
            # an agent that is not in the game will receive nothing more: its prospective return is 0, not the
            # critic's guess at a zero observation
            np.where(tracker.active, buffer.values, 0.0),
            tracker.groups,
            tracker.n_agents,
            self.method,
            self.alpha,
            self.beta,
            self.fairness_coef,
            factors=tracker.factors if self.method == "csp" else None,
            twins=tracker.twins if self.method == "cf" else None,
            protected=self.protected_group,
        )
        buffer.advantages *= weights.astype(buffer.advantages.dtype)
        logger = model.logger
        for key, value in stats.items():
            logger.record(f"fairness/{key}", value)
        logger.record("fairness/adv_weight_std", float(weights.std()))
        logger.record("fairness/adv_weight_min", float(weights.min()))
        logger.record("fairness/adv_weight_max", float(weights.max()))
        tracker.filled = False


register_term(GroupPenaltyTerm)

#: the group penalty's own keyword arguments and their defaults: with another ``fairness`` each is refused unless
#: left at its default
GROUP_PENALTY_DEFAULTS: dict[str, Any] = {k: v for k, v in GroupPenaltyTerm.arguments.items() if k != "fairness_coef"}

__all__ = [
    "GROUP_PENALTY_DEFAULTS",
    "METRICS",
    "GroupPenaltyTerm",
    "GroupTracker",
    "advantage_weights",
    "check_metric",
]
