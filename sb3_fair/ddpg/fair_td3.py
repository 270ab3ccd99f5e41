"""FairTD3: TD3 with paper 002's Fair-ER equivariance regulariser (Eqs. 9-11, App. B.1)."""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar

import numpy as np
import torch as th
from stable_baselines3 import TD3
from stable_baselines3.common.type_aliases import GymEnv, MaybeCallback
from stable_baselines3.common.utils import polyak_update
from stable_baselines3.common.vec_env import VecEnv
from stable_baselines3.td3.policies import TD3Policy
from torch.nn import functional as F

from sb3_fair.common.callbacks import FairnessCallback
from sb3_fair.common.fair_algorithm import FairAlgorithmMixin, check_fairness_window, env_attr
from sb3_fair.common.stakeholders import check_choice, check_weights
from sb3_fair.common.symmetry import AgentSymmetry
from sb3_fair.ddpg.policies import CnnPolicy, FairEPolicy, MlpPolicy, MultiInputPolicy

SelfFairTD3 = TypeVar("SelfFairTD3", bound="FairTD3")

DISTANCES = ("cosine", "mse")


def equivariance_distance(pred: th.Tensor, target: th.Tensor, n_agents: int, kind: str = "cosine") -> th.Tensor:
    """Per-sample distance between two joint actions, averaged over agents (paper 002, Eq. 9, App. B.2).

    ``"cosine"``: ``1 - cos`` between each agent's action vectors (for heading vectors this is the
    paper's ``1 - cos(theta_i - theta_j)``); ``"mse"``: mean squared difference per agent.
    """
    p = pred.reshape(pred.shape[0], n_agents, -1)
    t = target.reshape(target.shape[0], n_agents, -1)
    if kind == "cosine":
        d = 1.0 - F.cosine_similarity(p, t, dim=-1, eps=1e-8)
    else:
        d = ((p - t) ** 2).mean(dim=-1)
    return d.mean(dim=-1)


class FairTD3(FairAlgorithmMixin, TD3):
    """TD3 with the Fair-ER equivariance regulariser of paper 002 (Eqs. 9-11, App. B.1).

    Constructed exactly like SB3's :class:`~stable_baselines3.TD3`, plus fairness keyword
    arguments. The actor loss becomes ``-Q(s, mu(s)) + lambda * E_{s, sigma}[ d(mu(sigma . s),
    sigma . mu(s)) ]`` with ``sigma`` a random permutation of the agents drawn per sample from the
    env's symmetry (``env.unwrapped.symmetry``, an :class:`~sb3_fair.common.symmetry.AgentSymmetry`),
    ``d`` = 1 - cos between each agent's action vectors (the paper's choice for headings; MSE as an
    option), and a stop-gradient on the ``sigma . mu(s)`` side (App. B.1 drops the term through the
    other agents' parameters). With egocentric per-agent observations ``mu(sigma . s)_i`` is what
    agent i does in agent ``sigma(i)``'s situation, so this is exactly the paper's penalty on
    ``pi_i(o)`` versus ``pi_j(o)`` for the same observation: say an agent's action should not depend
    on who it is.

    ``equivariance_coef = 0`` behaves exactly like TD3 (same seed, same actions and weights); the
    equivariance error is still measured (on every 10th update), with a separate random generator. Logged under
    ``fairness/``: ``equivariance_error`` (mean ``d`` on the training batch) and ``equivariance_reg``
    (``lambda`` times it), next to the ``FairnessMonitor`` figures. ``policy="FairEPolicy"`` uses
    the Fair-E actor, equivariant by construction.

    :param equivariance_coef: lambda >= 0 (paper: 0.1, 0.5, 0.9).
    :param equivariance_distance: ``"cosine"`` or ``"mse"``.
    :param fairness_window: episodes averaged in ``fairness/*`` (default: ``stats_window_size``).
    :param wandb: stream logs to Weights & Biases (``True`` or :func:`wandb.init` kwargs).
    :param kwargs: every other TD3 argument.
    """

    policy_aliases: ClassVar[dict[str, type[TD3Policy]]] = {
        "MlpPolicy": MlpPolicy,
        "CnnPolicy": CnnPolicy,
        "MultiInputPolicy": MultiInputPolicy,
        "FairEPolicy": FairEPolicy,
    }

    def __init__(
        self,
        policy: str | type[TD3Policy],
        env: GymEnv | str,
        *args: Any,
        equivariance_coef: float = 0.0,
        equivariance_distance: str = "cosine",
        fairness_window: int | None = None,
        wandb: bool | dict[str, Any] = False,
        **kwargs: Any,
    ) -> None:
        self.equivariance_coef = check_weights(equivariance_coef, "equivariance_coef")
        self.equivariance_distance = check_choice(equivariance_distance, "equivariance_distance", DISTANCES)
        check_fairness_window(fairness_window)
        self.fairness_window = fairness_window
        self.wandb = wandb
        self.fairness_callback: FairnessCallback | None = None
        self.symmetry: AgentSymmetry | None = None
        if env is not None:
            kwargs["policy_kwargs"] = self._fair_e_kwargs(policy, env, kwargs.get("policy_kwargs"))
        super().__init__(policy, env, *args, **kwargs)

    @staticmethod
    def _fair_e_kwargs(policy: Any, env: Any, policy_kwargs: dict[str, Any] | None) -> dict[str, Any] | None:
        """Fill ``agent_obs`` for the Fair-E policy from the env's symmetry."""
        is_fair_e = policy == "FairEPolicy" or (isinstance(policy, type) and issubclass(policy, FairEPolicy))
        if not is_fair_e or (policy_kwargs or {}).get("agent_obs") is not None or isinstance(env, str):
            return policy_kwargs
        sym = env_attr(env, "symmetry") if isinstance(env, VecEnv) else getattr(env.unwrapped, "symmetry", None)
        agent_obs = None if sym is None else sym.agent_obs
        if agent_obs is None:
            raise ValueError("policy='FairEPolicy' needs an env whose symmetry gives per-agent views (symmetry.agent_obs)")
        return {**(policy_kwargs or {}), "agent_obs": np.asarray(agent_obs).tolist()}

    def _setup_fairness(self, env: VecEnv) -> None:
        sym = env_attr(env, "symmetry")
        if sym is None:
            if self.equivariance_coef > 0:
                raise ValueError(
                    "equivariance_coef > 0 needs an env that describes its agent symmetry "
                    "(`env.unwrapped.symmetry`, an sb3_fair.common.symmetry.AgentSymmetry)"
                )
            self.symmetry = None
            return
        if not isinstance(sym, AgentSymmetry):
            raise ValueError(f"env.unwrapped.symmetry must be an AgentSymmetry, got {type(sym).__name__}")
        sym.check_action_space(int(np.prod(self.action_space.shape)))  # type: ignore[union-attr]
        if sym.obs_dim != int(np.prod(self.observation_space.shape)):  # type: ignore[union-attr]
            raise ValueError(f"symmetry: the permutation acts on observations of size {sym.obs_dim}, the env's have size {self.observation_space.shape}")
        self.symmetry = sym
        perms = sym.permutations()
        self._obs_perm = th.as_tensor(np.stack([np.asarray(sym.obs_index(p)) for p in perms]), device=self.device)
        self._act_perm = th.as_tensor(np.stack([sym.action_index(p) for p in perms]), device=self.device)
        self._perm_rng = np.random.default_rng(self.seed)

    def _excluded_save_params(self) -> list[str]:
        return [*super()._excluded_save_params(), "symmetry", "_obs_perm", "_act_perm", "_perm_rng", "fairness_callback"]

    def fairness_config(self) -> dict[str, Any]:
        """The fairness hyperparameters (stored in the W&B run config)."""
        return {
            "equivariance_coef": self.equivariance_coef,
            "equivariance_distance": self.equivariance_distance,
            "fair_e": isinstance(self.policy, FairEPolicy),
            "n_agents": None if self.symmetry is None else self.symmetry.n_agents,
        }

    # ------------------------------------------------------------------ Fair-ER
    def equivariance_term(self, obs: th.Tensor, actions: th.Tensor) -> th.Tensor:
        """Per-sample ``d(mu(sigma . s), stop_grad(sigma . mu(s)))`` for one random sigma per sample."""
        assert self.symmetry is not None
        k = self._perm_rng.integers(0, self._obs_perm.shape[0], size=obs.shape[0])
        k_t = th.as_tensor(k, device=obs.device)
        obs_sigma = th.gather(obs, 1, self._obs_perm[k_t])
        target = th.gather(actions.detach(), 1, self._act_perm[k_t])
        return equivariance_distance(self.actor(obs_sigma), target, self.symmetry.n_agents, self.equivariance_distance)

    def train(self, gradient_steps: int, batch_size: int = 100) -> None:
        """TD3's update (SB3's code path) with the Fair-ER term added to the actor loss."""
        self.policy.set_training_mode(True)
        self._update_learning_rate([self.actor.optimizer, self.critic.optimizer])
        actor_losses, critic_losses, eqv_errors = [], [], []
        for _ in range(gradient_steps):
            self._n_updates += 1
            replay_data = self.replay_buffer.sample(batch_size, env=self._vec_normalize_env)  # type: ignore[union-attr]
            discounts = replay_data.discounts if replay_data.discounts is not None else self.gamma
            with th.no_grad():
                noise = replay_data.actions.clone().data.normal_(0, self.target_policy_noise)
                noise = noise.clamp(-self.target_noise_clip, self.target_noise_clip)
                next_actions = (self.actor_target(replay_data.next_observations) + noise).clamp(-1, 1)
                next_q_values = th.cat(self.critic_target(replay_data.next_observations, next_actions), dim=1)
                next_q_values, _ = th.min(next_q_values, dim=1, keepdim=True)
                target_q_values = replay_data.rewards + (1 - replay_data.dones) * discounts * next_q_values
            current_q_values = self.critic(replay_data.observations, replay_data.actions)
            critic_loss = sum(F.mse_loss(current_q, target_q_values) for current_q in current_q_values)
            assert isinstance(critic_loss, th.Tensor)
            critic_losses.append(critic_loss.item())
            self.critic.optimizer.zero_grad()
            critic_loss.backward()
            self.critic.optimizer.step()

            if self._n_updates % self.policy_delay == 0:
                actions = self.actor(replay_data.observations)
                actor_loss = -self.critic.q1_forward(replay_data.observations, actions).mean()
                if self.symmetry is not None and self.equivariance_coef > 0:
                    eqv = self.equivariance_term(replay_data.observations, actions).mean()
                    actor_loss = actor_loss + self.equivariance_coef * eqv
                    eqv_errors.append(eqv.item())
                elif self.symmetry is not None and self._n_updates % 10 == 0:
                    # lambda = 0: measured on every 10th update only, without gradient or torch randomness
                    with th.no_grad():
                        eqv_errors.append(self.equivariance_term(replay_data.observations, actions).mean().item())
                actor_losses.append(actor_loss.item())
                self.actor.optimizer.zero_grad()
                actor_loss.backward()
                self.actor.optimizer.step()
                polyak_update(self.critic.parameters(), self.critic_target.parameters(), self.tau)
                polyak_update(self.actor.parameters(), self.actor_target.parameters(), self.tau)
                polyak_update(self.critic_batch_norm_stats, self.critic_batch_norm_stats_target, 1.0)
                polyak_update(self.actor_batch_norm_stats, self.actor_batch_norm_stats_target, 1.0)

        self.logger.record("train/n_updates", self._n_updates, exclude="tensorboard")
        if actor_losses:
            self.logger.record("train/actor_loss", np.mean(actor_losses))
        self.logger.record("train/critic_loss", np.mean(critic_losses))
        if eqv_errors:
            self.logger.record("fairness/equivariance_error", float(np.mean(eqv_errors)))
            self.logger.record("fairness/equivariance_reg", self.equivariance_coef * float(np.mean(eqv_errors)))

    def learn(
        self: SelfFairTD3,
        total_timesteps: int,
        callback: MaybeCallback = None,
        log_interval: int = 4,
        tb_log_name: str = "FairTD3",
        reset_num_timesteps: bool = True,
        progress_bar: bool = False,
    ) -> SelfFairTD3:
        return super().learn(total_timesteps, self._with_fairness_callback(callback), log_interval, tb_log_name, reset_num_timesteps, progress_bar)
