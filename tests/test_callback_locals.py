"""The Fair classes' callback list shares the rollout's locals with its children as SB3's does, without re-copying them."""

from __future__ import annotations

from typing import Any

import numpy as np
from stable_baselines3 import PPO
from stable_baselines3.common.callbacks import BaseCallback, CallbackList

from sb3_fair import FairDQN, FairPPO
from sb3_fair.common.fair_algorithm import SharedLocalsCallbackList


class Recorder(BaseCallback):
    """Records what ``self.locals`` holds at each step."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[int, Any]] = []

    def _on_step(self) -> bool:
        # the rollout's step counter and this step's rewards, read from the locals
        self.seen.append((int(self.locals.get("n_steps", -1)), np.asarray(self.locals["rewards"]).tolist()))
        return True


class CountingUpdates(Recorder):
    """Overrides ``update_locals``: SB3 calls it at every step, so must the list."""

    def __init__(self) -> None:
        super().__init__()
        self.updates = 0

    def update_locals(self, locals_: dict[str, Any]) -> None:
        self.updates += 1
        super().update_locals(locals_)


def test_children_see_each_steps_locals_as_with_sb3s_list():
    fair, counting = Recorder(), CountingUpdates()
    FairPPO("MlpPolicy", "CartPole-v1", n_steps=16, batch_size=16, n_epochs=1, seed=0, fairness_coef=0.0).learn(
        32, callback=[fair, counting])
    plain = Recorder()
    PPO("MlpPolicy", "CartPole-v1", n_steps=16, batch_size=16, n_epochs=1, seed=0).learn(32, callback=[plain])
    assert fair.seen == plain.seen == counting.seen  # the same locals at every step as under SB3's own list
    assert [n for n, _ in fair.seen] == list(range(16)) * 2
    assert counting.updates >= 32  # an overriding child is still updated at every step


def test_a_nested_list_and_the_progress_bar_still_get_the_locals():
    inner = Recorder()
    model = FairDQN("MlpPolicy", "CartPole-v1", learning_starts=8, seed=0)
    model.learn(20, callback=CallbackList([inner]))
    assert len(inner.seen) == 20


def test_a_child_with_its_own_dict_is_updated():
    child = Recorder()
    parent = SharedLocalsCallbackList([child])
    parent.locals = {"a": 1}  # before training start each holds its own dict
    parent.update_locals({"a": 2, "infos": []})
    assert child.locals == {"a": 2, "infos": []}
    shared = parent.locals
    child.locals = shared  # as at training start
    parent.update_locals({"a": 3, "infos": [{}]})
    assert child.locals is shared and child.locals == {"a": 3, "infos": [{}]}
