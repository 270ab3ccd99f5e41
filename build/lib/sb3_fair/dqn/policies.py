"""FairDQN's policies: SB3's DQN policies plus an optional orthogonal initialisation.

Fairness enters FairDQN through the replay buffer, not the network, so these are SB3's
:class:`~stable_baselines3.dqn.policies.DQNPolicy` classes with one extra keyword argument,
``ortho_init`` (default ``False``: SB3's PyTorch-default initialisation, bit for bit). With
``ortho_init=True`` every linear and convolutional layer of the Q-network (features extractor
included) gets orthogonal weights with gain 1 and zero biases, as in the code released with
Alamdari, Klassen, Creager, McIlraith, *Remembering to Be Fair: Non-Markovian Fairness in
Sequential Decision Making* (ICML 2024, arXiv:2312.04772); the target network starts as a copy.
On that paper's small 32-16-8 ReLU network, PyTorch's default initialisation leaves several of
the last hidden units dead on the states the doughnut task visits, and DQN then learns far more
slowly at the paper's learning rate; :func:`sb3_fair.dqn.presets.preset_kwargs` turns the option
on. The initialisation runs on the policy's device, so a seeded run on a GPU starts from other
weights than the same seed on a CPU. The classes also work with SB3's own ``DQN``:
``DQN(sb3_fair.dqn.MlpPolicy, env, policy_kwargs={"ortho_init": True})``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from stable_baselines3.dqn import policies as sb3_policies
from stable_baselines3.dqn.policies import DQNPolicy, QNetwork
from torch import nn

if TYPE_CHECKING:
    # the type checker sees the mixin as the DQN policy it is mixed into; at run time it is a plain class
    _PolicyBase = DQNPolicy
else:
    _PolicyBase = object


def orthogonal_init_(module: nn.Module, gain: float = 1.0) -> None:
    """Orthogonal weights (``gain``) and zero biases for every ``nn.Linear`` / ``nn.Conv*`` in ``module``, in place.

    Like SB3's :meth:`~stable_baselines3.common.policies.BasePolicy.init_weights` (which PPO and A2C
    use), but also for ``Conv1d`` / ``Conv3d`` layers of a custom features extractor.
    """
    for layer in module.modules():
        if isinstance(layer, (nn.Linear, nn.Conv1d, nn.Conv2d, nn.Conv3d)):
            nn.init.orthogonal_(layer.weight, gain=gain)
            if layer.bias is not None:
                nn.init.zeros_(layer.bias)


class _OrthoInitMixin(_PolicyBase):
    """Adds ``ortho_init`` to a DQN policy: applied in :meth:`make_q_net`, kept when saved and loaded."""

    def __init__(self, *args: Any, ortho_init: bool = False, **kwargs: Any) -> None:
        if not isinstance(ortho_init, (bool, np.bool_)):
            raise ValueError(f"ortho_init must be True or False, got {ortho_init!r}")
        self.ortho_init = bool(ortho_init)
        super().__init__(*args, **kwargs)

    def make_q_net(self) -> QNetwork:
        q_net = super().make_q_net()
        if self.ortho_init:
            orthogonal_init_(q_net)
        return q_net

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        data["ortho_init"] = self.ortho_init
        return data


class MlpPolicy(_OrthoInitMixin, sb3_policies.DQNPolicy):
    """SB3's DQN ``MlpPolicy`` with ``ortho_init`` (see the module docstring).

    :param ortho_init: orthogonal weights (gain 1) and zero biases instead of PyTorch's defaults.
    :param kwargs: every argument of :class:`stable_baselines3.dqn.policies.DQNPolicy`.
    """


class CnnPolicy(_OrthoInitMixin, sb3_policies.CnnPolicy):
    """SB3's DQN ``CnnPolicy`` with ``ortho_init`` (see the module docstring)."""


class MultiInputPolicy(_OrthoInitMixin, sb3_policies.MultiInputPolicy):
    """SB3's DQN ``MultiInputPolicy`` with ``ortho_init`` (see the module docstring)."""


__all__ = ["CnnPolicy", "DQNPolicy", "MlpPolicy", "MultiInputPolicy", "QNetwork", "orthogonal_init_"]
