"""The one seam where sb3-fair changes a loss inside an SB3 ``train()``: SB3 has no loss hook, so the two
methods that need one are restated here, once, with the loss as a method to override.

* :class:`TDLossHook` (for ``DQN``): :meth:`~TDLossHook.td_loss` in place of the Huber loss. FairDQN's
  ``loss="mse"`` (Alamdari et al.'s 2024 choice) overrides it.
* :class:`ActorLossHook` (for ``TD3`` and ``DDPG``): :meth:`~ActorLossHook.actor_loss` and
  :meth:`~ActorLossHook.actor_backward` in place of ``-Q1(s, mu(s))`` and ``backward()``. Fair-ER's
  regulariser (Grupen et al. 2022, Eqs. 9-11) overrides them.

Each sits in the class just above its SB3 parent (``class FairDQN(..., FairAlgorithmMixin, TDLossHook, DQN)``),
so everything above it, the non-finite parameter check of
:class:`~sb3_fair.common.fair_algorithm.FairAlgorithmMixin` included, wraps the restated update as it wraps
SB3's own. While a hook is not overridden (``uses_..._hook()`` is false), ``train`` is SB3's method itself.

:data:`RESTATED` pins the SB3 source each restatement follows (stable-baselines3 2.9.2):
``tests/test_loss_hooks.py`` fails, and the first restated update warns, when the installed SB3's method
differs from it, so a change in SB3 is noticed instead of silently diverging.
"""

from __future__ import annotations

import hashlib
import inspect
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np
import torch as th
from stable_baselines3.common.utils import polyak_update
from torch.nn import functional as F

if TYPE_CHECKING:
    from stable_baselines3 import DQN, TD3

    _DQNBase = DQN
    _TD3Base = TD3
else:
    _DQNBase = object
    _TD3Base = object

#: SB3 method -> sha256 of its source (``inspect.getsource``), as restated here (stable-baselines3 2.9.2)
RESTATED: dict[str, str] = {
    "stable_baselines3.dqn.dqn:DQN.train": "696507cb4053336a892a34781e07fc6884c8d43673ea5cc7cb463f64e086c17e",
    "stable_baselines3.td3.td3:TD3.train": "4f3638f813b0efba78224a5bf37c407f045c868efa60fcbefc717c02b5ddbc78",
}
_checked: set[str] = set()


def source_hash(path: str) -> str | None:
    """sha256 of the installed source of ``"module:Class.method"`` (None when the source cannot be read)."""
    import importlib

    module_name, _, qualname = path.partition(":")
    obj: Any = importlib.import_module(module_name)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    try:
        return hashlib.sha256(inspect.getsource(obj).encode()).hexdigest()
    except (OSError, TypeError):
        return None


def changed_parents() -> list[str]:
    """The SB3 methods of :data:`RESTATED` whose installed source differs from the one restated here."""
    return [path for path, digest in RESTATED.items() if source_hash(path) not in (digest, None)]


def _warn_if_changed(path: str) -> None:
    if path in _checked:
        return
    _checked.add(path)
    if source_hash(path) not in (RESTATED[path], None):
        warnings.warn(
            f"sb3-fair restates {path} of stable-baselines3 2.9.2 to change a loss (sb3_fair.common.loss_hooks), and "
            "the installed stable-baselines3's method differs: its other changes are not in this update",
            UserWarning,
            stacklevel=3,
        )


class TDLossHook(_DQNBase):
    """DQN's ``train`` with its TD loss as a hook: ``class X(..., TDLossHook, DQN)``."""

    def uses_td_loss_hook(self) -> bool:
        """Whether :meth:`td_loss` replaces the Huber loss (otherwise ``train`` is SB3's)."""
        return False

    def td_loss(self, current_q_values: th.Tensor, target_q_values: th.Tensor) -> th.Tensor:
        """The TD loss of a batch (SB3's: Huber)."""
        return F.smooth_l1_loss(current_q_values, target_q_values)

    def train(self, gradient_steps: int, batch_size: int = 100) -> None:
        """SB3's ``DQN.train``; with the hook in use, the same update (``DQN.train`` of stable-baselines3 2.9.2,
        line for line) with :meth:`td_loss` as the loss."""
        if not self.uses_td_loss_hook():
            return super().train(gradient_steps, batch_size)
        _warn_if_changed("stable_baselines3.dqn.dqn:DQN.train")
        self.policy.set_training_mode(True)
        self._update_learning_rate(self.policy.optimizer)
        losses = []
        for _ in range(gradient_steps):
            replay_data = self.replay_buffer.sample(batch_size, env=self._vec_normalize_env)  # type: ignore[union-attr]  # Optional in OffPolicyAlgorithm, set by _setup_model (as in SB3's DQN.train)
            discounts = replay_data.discounts if replay_data.discounts is not None else self.gamma
            with th.no_grad():
                next_q_values, _ = self.q_net_target(replay_data.next_observations).max(dim=1)
                next_q_values = next_q_values.reshape(-1, 1)
                target_q_values = replay_data.rewards + (1 - replay_data.dones) * discounts * next_q_values
            current_q_values = th.gather(self.q_net(replay_data.observations), dim=1, index=replay_data.actions.long())
            loss = self.td_loss(current_q_values, target_q_values)
            losses.append(loss.item())
            self.policy.optimizer.zero_grad()
            loss.backward()
            th.nn.utils.clip_grad_norm_(self.policy.parameters(), self.max_grad_norm)
            self.policy.optimizer.step()
        self._n_updates += gradient_steps
        self.logger.record("train/n_updates", self._n_updates, exclude="tensorboard")
        self.logger.record("train/loss", np.mean(losses))


class ActorLossHook(_TD3Base):
    """TD3's (and DDPG's) ``train`` with the actor loss and its backward pass as hooks: ``class X(..., ActorLossHook, TD3)``."""

    def uses_actor_loss_hook(self) -> bool:
        """Whether :meth:`actor_loss` and :meth:`actor_backward` replace SB3's (otherwise ``train`` is SB3's)."""
        return False

    def actor_loss(self, obs: th.Tensor) -> th.Tensor:
        """The actor loss of a batch of observations (SB3's: ``-Q1(s, mu(s))``)."""
        return -self.critic.q1_forward(obs, self.actor(obs)).mean()

    def actor_backward(self, actor_loss: th.Tensor) -> None:
        """Fill the actor's gradients from ``actor_loss`` (SB3's: ``actor_loss.backward()``)."""
        actor_loss.backward()

    def train(self, gradient_steps: int, batch_size: int = 100) -> None:
        """SB3's ``TD3.train``; with the hooks in use, the same update (``TD3.train`` of stable-baselines3 2.9.2,
        line for line) with :meth:`actor_loss` and :meth:`actor_backward` for the actor."""
        if not self.uses_actor_loss_hook():
            return super().train(gradient_steps, batch_size)
        _warn_if_changed("stable_baselines3.td3.td3:TD3.train")
        self.policy.set_training_mode(True)
        self._update_learning_rate([self.actor.optimizer, self.critic.optimizer])
        actor_losses, critic_losses = [], []
        for _ in range(gradient_steps):
            self._n_updates += 1
            replay_data = self.replay_buffer.sample(batch_size, env=self._vec_normalize_env)  # type: ignore[union-attr]  # Optional in OffPolicyAlgorithm, set by _setup_model (as in SB3's TD3.train)
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
                actor_loss = self.actor_loss(replay_data.observations)
                actor_losses.append(actor_loss.item())
                self.actor.optimizer.zero_grad()
                self.actor_backward(actor_loss)
                self.actor.optimizer.step()
                polyak_update(self.critic.parameters(), self.critic_target.parameters(), self.tau)
                polyak_update(self.actor.parameters(), self.actor_target.parameters(), self.tau)
                polyak_update(self.critic_batch_norm_stats, self.critic_batch_norm_stats_target, 1.0)
                polyak_update(self.actor_batch_norm_stats, self.actor_batch_norm_stats_target, 1.0)
        self.logger.record("train/n_updates", self._n_updates, exclude="tensorboard")
        if actor_losses:
            self.logger.record("train/actor_loss", np.mean(actor_losses))
        self.logger.record("train/critic_loss", np.mean(critic_losses))


__all__ = ["RESTATED", "ActorLossHook", "TDLossHook", "changed_parents", "source_hash"]
