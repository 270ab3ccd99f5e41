"""FairPPO: PPO with fair-PPO's group penalties for parameter-shared multi-agent training (paper 001)."""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar

import numpy as np
from stable_baselines3 import PPO
from stable_baselines3.common.callbacks import BaseCallback, CallbackList
from stable_baselines3.common.policies import ActorCriticPolicy
from stable_baselines3.common.type_aliases import GymEnv, MaybeCallback
from stable_baselines3.common.vec_env import VecEnv

from sb3_fair.common.callbacks import FairnessCallback
from sb3_fair.common.evaluation import group_fairness_figures
from sb3_fair.common.fair_algorithm import FairAlgorithmMixin, check_fairness_window
from sb3_fair.ppo.penalty import advantage_weights, check_metric
from sb3_fair.ppo.policies import CnnPolicy, MlpPolicy, MultiInputPolicy
from sb3_fair.wrappers.multiagent import unwrap_vec_env

SelfFairPPO = TypeVar("SelfFairPPO", bound="FairPPO")


def _check_weight(value: Any, name: str) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        v = float("nan")
    if not np.isfinite(v) or v < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return v


class FairPPO(FairAlgorithmMixin, PPO):
    """PPO with fair-PPO's retrospective and prospective group penalties (paper 001, §4.2, Eqs. 5-7).

    Constructed exactly like SB3's :class:`~stable_baselines3.PPO`, plus fairness keyword
    arguments. The env is a multi-agent VecEnv with one slot per agent and parameter sharing, e.g.
    :func:`sb3_fair.wrappers.make_multiagent_vec_env` of a PettingZoo parallel game whose infos
    carry each agent's ``"group"`` (the protected attribute; also ``"factor"`` for CSP and
    ``"twin"`` for CF, as :class:`~sb3_fair.wrappers.CounterfactualPair` provides). Groups are read
    from the infos at every step, because games redraw them between episodes.

    FairPPO maximises ``(1/n) sum_x J_x - fairness_coef * (alpha * D_retro + beta * D_pro)`` per game
    instance, with ``D`` the DP, CSP or CF gap of the returns realised so far in the episode
    (retrospective) or of the critic's values (prospective). The penalty changes the actor's
    gradient by reweighting each agent's advantage, ``A'_x = w_x A_x`` (derivation and formula:
    :mod:`sb3_fair.ppo.penalty`); the critic's target is left unbiased. (The authors' code detaches
    the penalty from the graph, so there it never reaches a gradient.)

    With ``fairness_coef=0`` or ``alpha = beta = 0`` FairPPO behaves exactly like PPO (same seed,
    same actions and losses).

    Logged under ``fairness/``: per-episode group figures averaged over recent episodes
    (``group_<g>_mean``, ``dp``, ``dp_abs``, ``dp_normalized``, ``csp_<k>``, ``csp_mean_abs``, ``cf``,
    ``cf_normalized``, as :func:`~sb3_fair.common.evaluation.group_fairness_figures` computes them),
    the two penalty parts ``penalty_retro`` and ``penalty_pro`` of the last rollout, and the spread
    of the advantage weights (``adv_weight_std``, ``adv_weight_min``, ``adv_weight_max``).

    Example::

        from sb3_fair import FairPPO
        from sb3_fair.envs import AllelopathicHarvestEnv
        from sb3_fair.wrappers import make_multiagent_vec_env

        vec_env = make_multiagent_vec_env(AllelopathicHarvestEnv.from_preset("small"), n_instances=4)
        model = FairPPO("MlpPolicy", vec_env, fairness="dp", alpha=0.5, beta=0.5, verbose=1)
        model.learn(1_000_000)

    :param policy: as in PPO (``"MlpPolicy"``, ...).
    :param env: a multi-agent VecEnv (one slot per agent).
    :param fairness: ``"dp"`` (demographic parity, Eq. 5), ``"csp"`` (conditional statistical
        parity, Eq. 7: within each stratum of the legitimate factor) or ``"cf"`` (counterfactual
        fairness, Eq. 6: each agent against its twin).
    :param alpha: weight of the retrospective part (returns realised so far), >= 0.
    :param beta: weight of the prospective part (the critic's values), >= 0.
    :param fairness_coef: lambda, the weight of the whole penalty, >= 0.
    :param protected_group: the group value of the protected (sensitive) agents.
    :param agents_per_instance: slots per game instance; default: the env's ``agents_per_instance``
        attribute (set by :func:`~sb3_fair.wrappers.make_multiagent_vec_env`), else all slots form
        one game.
    :param fairness_window: episodes averaged in ``fairness/*`` (default: ``stats_window_size``).
    :param wandb: stream the logs to Weights & Biases: ``True`` or a dict of :func:`wandb.init`
        arguments (offline without credentials; a W&B failure never stops training).
    :param kwargs: every other PPO argument.
    """

    policy_aliases: ClassVar[dict[str, type[ActorCriticPolicy]]] = {
        "MlpPolicy": MlpPolicy,
        "CnnPolicy": CnnPolicy,
        "MultiInputPolicy": MultiInputPolicy,
    }

    def __init__(
        self,
        policy: str | type[ActorCriticPolicy],
        env: GymEnv | str,
        *args: Any,
        fairness: str = "dp",
        alpha: float = 0.5,
        beta: float = 0.5,
        fairness_coef: float = 1.0,
        protected_group: int = 1,
        agents_per_instance: int | None = None,
        fairness_window: int | None = None,
        wandb: bool | dict[str, Any] = False,
        **kwargs: Any,
    ) -> None:
        self.fairness = check_metric(fairness)
        self.alpha = _check_weight(alpha, "alpha")
        self.beta = _check_weight(beta, "beta")
        self.fairness_coef = _check_weight(fairness_coef, "fairness_coef")
        if not isinstance(protected_group, (int, np.integer)):
            raise ValueError(f"protected_group must be an int, got {protected_group!r}")
        self.protected_group = int(protected_group)
        if agents_per_instance is not None and (not isinstance(agents_per_instance, (int, np.integer)) or agents_per_instance < 2):
            raise ValueError(f"agents_per_instance must be an int >= 2 or None, got {agents_per_instance!r}")
        self.agents_per_instance = agents_per_instance
        check_fairness_window(fairness_window)
        self.fairness_window = fairness_window
        self.wandb = wandb
        self.fairness_callback: FairnessCallback | None = None
        self._tracker: _GroupTracker | None = None
        if env is not None:
            self._check_multiagent(env)
        super().__init__(policy, env, *args, **kwargs)

    @property
    def penalized(self) -> bool:
        """Whether the penalty is on (``fairness_coef > 0`` and ``alpha + beta > 0``)."""
        return self.fairness_coef > 0 and (self.alpha > 0 or self.beta > 0)

    # ------------------------------------------------------------------ set-up and checks
    @staticmethod
    def _check_multiagent(env: Any) -> None:
        if not isinstance(env, VecEnv) or env.num_envs < 2:
            raise ValueError(
                "env: FairPPO's group penalties need a multi-agent VecEnv with one slot per agent, e.g. "
                f"sb3_fair.wrappers.make_multiagent_vec_env(parallel_env); got {type(env).__name__}"
            )

    def _check_stakeholders(self, env: VecEnv, algo: str) -> None:  # type: ignore[override]
        """Fail at construction unless ``env`` is a multi-agent VecEnv whose infos carry the groups."""
        self._check_multiagent(env)
        n = self.agents_per_instance or getattr(env, "agents_per_instance", None) or env.num_envs
        if env.num_envs % n:
            raise ValueError(f"agents_per_instance ({n}) must divide the env's number of slots ({env.num_envs})")
        self._n_agents = int(n)
        # read the groups from the reset infos, then hand the seed back so that learn() starts alike
        env.reset()
        infos = list(getattr(unwrap_vec_env(env), "reset_infos", None) or [])
        if self.seed is not None:
            env.seed(self.seed)
        if len(infos) != env.num_envs or any("group" not in (i or {}) for i in infos):
            raise ValueError(
                "env: FairPPO needs every agent's info to carry 'group' (its protected attribute), from reset on; "
                "this env's reset infos do not"
            )
        groups = np.array([i["group"] for i in infos]).reshape(-1, n)
        for inst, g in enumerate(groups):
            if not (np.any(g == self.protected_group) and np.any(g != self.protected_group)):
                raise ValueError(
                    f"env: game instance {inst} has a single group {np.unique(g).tolist()}; FairPPO needs agents in the "
                    f"protected group ({self.protected_group}) and outside it"
                )
        if self.fairness == "csp" and any("factor" not in i for i in infos):
            raise ValueError("fairness='csp' needs every agent's info to carry 'factor' (its legitimate factor)")
        if self.fairness == "cf" and any("twin" not in i for i in infos):
            raise ValueError(
                "fairness='cf' needs a counterfactual twin for every agent: wrap the game in "
                "sb3_fair.wrappers.CounterfactualPair before make_multiagent_vec_env"
            )

    def _excluded_save_params(self) -> list[str]:
        return [*super()._excluded_save_params(), "fairness_callback", "_tracker"]

    def fairness_config(self) -> dict[str, Any]:
        """The fairness hyperparameters (stored in the W&B run config)."""
        return {"fairness": self.fairness, "alpha": self.alpha, "beta": self.beta, "fairness_coef": self.fairness_coef,
                "protected_group": self.protected_group, "agents_per_instance": getattr(self, "_n_agents", None)}

    # ------------------------------------------------------------------ the penalty
    def train(self) -> None:
        """Reweight the rollout's advantages by the group penalty (if on), then PPO's update."""
        tracker = self._tracker
        if tracker is not None and tracker.filled:
            if self.penalized:
                buf = self.rollout_buffer
                weights, stats = advantage_weights(
                    tracker.realised, buf.values, tracker.groups, self._n_agents, self.fairness, self.alpha, self.beta,
                    self.fairness_coef, factors=tracker.factors if self.fairness == "csp" else None,
                    twins=tracker.twins if self.fairness == "cf" else None, protected=self.protected_group)
                buf.advantages *= weights.astype(buf.advantages.dtype)
                for key, value in stats.items():
                    self.logger.record(f"fairness/{key}", value)
                self.logger.record("fairness/adv_weight_std", float(weights.std()))
                self.logger.record("fairness/adv_weight_min", float(weights.min()))
                self.logger.record("fairness/adv_weight_max", float(weights.max()))
            tracker.filled = False
        super().train()

    def learn(
        self: SelfFairPPO,
        total_timesteps: int,
        callback: MaybeCallback = None,
        log_interval: int = 1,
        tb_log_name: str = "FairPPO",
        reset_num_timesteps: bool = True,
        progress_bar: bool = False,
    ) -> SelfFairPPO:
        callbacks = self._with_fairness_callback(callback)
        if self._tracker is None or reset_num_timesteps:
            self._tracker = _GroupTracker(self)
        self._tracker.fairness_callback = self.fairness_callback
        return super().learn(total_timesteps, CallbackList([self._tracker, *callbacks.callbacks]), log_interval, tb_log_name,
                             reset_num_timesteps, progress_bar)


class _GroupTracker(BaseCallback):
    """Records, for every rollout step, each slot's group (factor, twin) and its return realised so
    far in the episode; at every finished game it hands the group figures to the fairness callback."""

    def __init__(self, model: FairPPO) -> None:
        super().__init__()
        self.fair_model = model
        self.fairness_callback: FairnessCallback | None = None
        self.filled = False
        self._started = False

    def _on_training_start(self) -> None:
        env = self.fair_model.env
        n_envs, n_steps = env.num_envs, self.fair_model.n_steps
        self.groups = np.zeros((n_steps, n_envs), dtype=np.int64)
        self.factors = np.zeros((n_steps, n_envs), dtype=np.int64)
        self.twins = np.zeros((n_steps, n_envs), dtype=np.int64)
        self.realised = np.zeros((n_steps, n_envs), dtype=np.float64)
        if not self._started:
            self._running = np.zeros(n_envs)
            self._cur_groups = np.zeros(n_envs, dtype=np.int64)
            self._cur_factors = np.zeros(n_envs, dtype=np.int64)
            self._cur_twins = np.zeros(n_envs, dtype=np.int64)
            self._read(list(getattr(unwrap_vec_env(env), "reset_infos", None) or []), np.ones(n_envs, dtype=bool))
            self._started = True

    def _read(self, infos: list[dict], which: np.ndarray) -> None:
        for i in np.flatnonzero(which):
            info = infos[i] if i < len(infos) else {}
            if "group" in info:
                self._cur_groups[i] = info["group"]
                self._cur_factors[i] = info.get("factor", 0)
                self._cur_twins[i] = info.get("twin", 0)

    def _on_rollout_start(self) -> None:
        self.filled = False

    def _on_step(self) -> bool:
        pos = self.fair_model.rollout_buffer.pos
        self.groups[pos] = self._cur_groups
        self.factors[pos] = self._cur_factors
        self.twins[pos] = self._cur_twins
        self.realised[pos] = self._running
        rewards = np.asarray(self.locals["rewards"], dtype=np.float64)
        dones = np.asarray(self.locals["dones"], dtype=bool)
        infos = self.locals["infos"]
        self._running += rewards
        if dones.any():
            n = self.fair_model._n_agents
            for inst in np.unique(np.flatnonzero(dones) // n):
                sl = slice(inst * n, (inst + 1) * n)
                ret = np.array([infos[i]["episode"]["r"] if "episode" in infos[i] else self._running[i] for i in range(sl.start, sl.stop)])
                figures = group_fairness_figures(
                    ret, self._cur_groups[sl], self._cur_factors[sl] if all("factor" in infos[i] for i in range(sl.start, sl.stop)) else None,
                    self._cur_twins[sl] if self.fair_model.fairness == "cf" else None, self.fair_model.protected_group)
                if self.fairness_callback is not None:
                    self.fairness_callback.episodes.append(figures)
                    self.fairness_callback.record_means()
            self._running[dones] = 0.0
        # infos of a finished game already describe the next episode (SuperSuit merges the reset info)
        self._read(infos, np.ones(dones.size, dtype=bool))
        if pos == self.fair_model.n_steps - 1:
            self.filled = True
        return True


__all__ = ["FairPPO"]
