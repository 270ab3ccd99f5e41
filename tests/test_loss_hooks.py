"""The one seam where sb3-fair restates an SB3 ``train()`` (sb3_fair.common.loss_hooks): pinned to the SB3 source it
follows, faithful to it, and wrapped by the fairness mixins like SB3's own update."""

from __future__ import annotations

import numpy as np
import pytest
import torch as th
from stable_baselines3 import DQN, TD3

from sb3_fair import FairDQN, FairTD3
from sb3_fair.common import loss_hooks
from sb3_fair.common.loss_hooks import RESTATED, ActorLossHook, TDLossHook, changed_parents, source_hash
from sb3_fair.envs import make_donut_allocation


def test_the_installed_sb3_methods_are_the_ones_restated() -> None:
    """Fails when stable-baselines3's DQN.train or TD3.train changes: re-read sb3_fair/common/loss_hooks.py against the
    new source, carry its changes over, and update RESTATED."""
    assert changed_parents() == [], {path: source_hash(path) for path in changed_parents()}


def test_a_changed_parent_is_warned_about_at_the_first_restated_update(monkeypatch) -> None:
    monkeypatch.setitem(RESTATED, "stable_baselines3.dqn.dqn:DQN.train", "0" * 64)
    monkeypatch.setattr(loss_hooks, "_checked", set())
    model = FairDQN("MlpPolicy", make_donut_allocation(), loss="mse", learning_starts=10, buffer_size=200, seed=0)
    with pytest.warns(UserWarning, match=r"restates stable_baselines3.dqn.dqn:DQN.train .* the installed stable-baselines3"):
        model.learn(40)


class HookedDQN(TDLossHook, DQN):
    """The restated update with SB3's own loss."""

    def uses_td_loss_hook(self) -> bool:
        return True


class HookedTD3(ActorLossHook, TD3):
    """The restated update with SB3's own actor loss and backward pass."""

    def uses_actor_loss_hook(self) -> bool:
        return True


def _params(model) -> list[np.ndarray]:
    return [p.detach().numpy().copy() for p in model.policy.parameters()]


def test_the_restated_dqn_update_with_the_huber_loss_is_sb3s_bit_for_bit() -> None:
    kwargs = dict(learning_starts=20, buffer_size=500, batch_size=16, target_update_interval=30, seed=3)
    ours, theirs = HookedDQN("MlpPolicy", "CartPole-v1", **kwargs).learn(200), DQN("MlpPolicy", "CartPole-v1", **kwargs).learn(200)
    for a, b in zip(_params(ours), _params(theirs)):
        np.testing.assert_array_equal(a, b)
    assert ours._n_updates == theirs._n_updates > 0


def test_the_restated_td3_update_with_sb3s_actor_loss_is_sb3s_bit_for_bit() -> None:
    kwargs = dict(learning_starts=20, buffer_size=500, batch_size=16, policy_kwargs={"net_arch": [16]}, seed=3)
    ours, theirs = HookedTD3("MlpPolicy", "Pendulum-v1", **kwargs).learn(120), TD3("MlpPolicy", "Pendulum-v1", **kwargs).learn(120)
    for a, b in zip(_params(ours), _params(theirs)):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("make", [
    lambda: FairDQN("MlpPolicy", make_donut_allocation(), loss="mse", learning_starts=10, buffer_size=200, seed=0),
    lambda: FairTD3("MlpPolicy", "sb3_fair/PursuitEvasion-v0", equivariance_coef=0.5, learning_starts=10, buffer_size=200,
                    policy_kwargs={"net_arch": [16]}, seed=0),
], ids=["FairDQN mse", "FairTD3 Fair-ER"])
def test_the_restated_updates_are_checked_for_non_finite_parameters(make) -> None:
    """Both restated updates sit below FairAlgorithmMixin, so its check of the parameters runs after them (it did not
    when the restatements were the Fair classes' own train methods)."""
    model = make()
    assert model.uses_td_loss_hook() if isinstance(model, FairDQN) else model.uses_actor_loss_hook()
    model.FINITE_CHECK_EVERY = 1
    model.learn(20)
    with th.no_grad():
        next(model.policy.parameters()).fill_(float("nan"))
    with pytest.raises(FloatingPointError, match="the policy.s parameters became NaN or inf during training"):
        model.train(gradient_steps=1, batch_size=4)
