"""FairDDPG: DDPG with paper 002's Fair-ER equivariance regulariser (the algorithm of the paper)."""

from __future__ import annotations

from typing import Any

from stable_baselines3.common.type_aliases import GymEnv
from stable_baselines3.td3.policies import TD3Policy

from sb3_fair.ddpg.fair_td3 import FairTD3


class FairDDPG(FairTD3):
    """DDPG with the Fair-ER equivariance regulariser (paper 002, Eqs. 9-11), as SB3 builds DDPG from TD3.

    Constructed exactly like SB3's :class:`~stable_baselines3.DDPG` (``policy_delay=1``, no target
    policy smoothing) plus ``equivariance_coef``, ``equivariance_distance``, ``fairness_window`` and
    ``wandb`` (see :class:`~sb3_fair.FairTD3`). ``equivariance_coef=0`` behaves exactly like DDPG;
    ``policy="FairEPolicy"`` gives Fair-E.
    """

    def __init__(self, policy: str | type[TD3Policy], env: GymEnv | str, learning_rate: Any = 1e-3, buffer_size: int = 1_000_000,
                 learning_starts: int = 100, batch_size: int = 256, tau: float = 0.005, gamma: float = 0.99, train_freq: Any = 1,
                 gradient_steps: int = 1, action_noise: Any = None, replay_buffer_class: Any = None, replay_buffer_kwargs: Any = None,
                 optimize_memory_usage: bool = False, n_steps: int = 1, tensorboard_log: str | None = None, policy_kwargs: Any = None,
                 verbose: int = 0, seed: int | None = None, device: Any = "auto", _init_setup_model: bool = True, **fair_kwargs: Any) -> None:
        super().__init__(
            policy=policy, env=env, learning_rate=learning_rate, buffer_size=buffer_size, learning_starts=learning_starts,
            batch_size=batch_size, tau=tau, gamma=gamma, train_freq=train_freq, gradient_steps=gradient_steps,
            action_noise=action_noise, replay_buffer_class=replay_buffer_class, replay_buffer_kwargs=replay_buffer_kwargs,
            optimize_memory_usage=optimize_memory_usage, n_steps=n_steps, policy_kwargs=policy_kwargs,
            tensorboard_log=tensorboard_log, verbose=verbose, device=device, seed=seed,
            # as SB3's DDPG: remove TD3's tricks (target_policy_noise > 0 avoids errors)
            policy_delay=1, target_noise_clip=0.0, target_policy_noise=0.1,
            _init_setup_model=False, **fair_kwargs,
        )
        # SB3's DDPG uses a single critic
        if "n_critics" not in self.policy_kwargs:
            self.policy_kwargs["n_critics"] = 1
        if _init_setup_model:
            self._setup_model()

    def learn(self, total_timesteps: int, callback: Any = None, log_interval: int = 4, tb_log_name: str = "FairDDPG",
              reset_num_timesteps: bool = True, progress_bar: bool = False) -> FairDDPG:
        return super().learn(total_timesteps, callback, log_interval, tb_log_name, reset_num_timesteps, progress_bar)
