"""The fairness-term seam of the on-policy Fair classes (:mod:`sb3_fair.common.fairness_terms`).

* A user's own term (an object, or a class registered under a name) trains on PPO, MaskablePPO and RecurrentPPO: its
  signals are stored in the rollout buffer as the env reported them, its change of the advantages reaches the update,
  it is saved and loaded with the model.
* An inactive term leaves the parent exactly as it is (same parameters after training).
* An extra loss is added to the parent's loss of every minibatch: with plain SGD, one minibatch and no clipping, the
  parameters after the update differ from the parent's by exactly ``-lr * grad(extra)`` at the starting parameters,
  on each parent (the seam rests on the parents' ``zero_grad(); loss.backward()`` order, which this pins).
* Extra modules (value heads) join the policy, its optimizer, its saved parameters.
* Registered arguments are the Fair classes' own: in the signature, refused by another method unless at default.
"""

from __future__ import annotations

import inspect
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
import pytest
import torch as th
from sb3_contrib import MaskablePPO, RecurrentPPO
from sb3_contrib.common.wrappers import ActionMasker
from stable_baselines3 import PPO

from sb3_fair import FairMaskablePPO, FairPPO, FairRecurrentPPO
from sb3_fair.common.fairness_terms import FairnessBufferMixin, FairnessTerm, register_term
from sb3_fair.common.fairness_terms import base as term_base
from sb3_fair.common.fairness_terms.mixin import OnPolicyFairnessMixin, _refresh_signature

PARENTS = [(FairPPO, PPO, "MlpPolicy"), (FairMaskablePPO, MaskablePPO, "MlpPolicy"),
           (FairRecurrentPPO, RecurrentPPO, "MlpLstmPolicy")]
IDS = ["PPO", "MaskablePPO", "RecurrentPPO"]
KW = dict(n_steps=32, batch_size=16, n_epochs=2, seed=0)


class CostEnv(gym.Wrapper):
    """CartPole reporting ``info["cost"]`` (the pole's angle, squared) and every action valid."""

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        return obs, reward, terminated, truncated, {**info, "cost": float(obs[2] ** 2)}

    def action_masks(self) -> np.ndarray:
        return np.ones(2, dtype=bool)


def cost_env() -> gym.Env:
    return ActionMasker(CostEnv(gym.make("CartPole-v1")), lambda env: np.ones(2, dtype=bool))


class CostTerm(FairnessTerm):
    """Subtracts ``coef * cost`` from every step's advantage; records what it saw."""

    signals = ("cost",)

    def __init__(self, coef: float = 0.5) -> None:
        self.coef = coef
        self.seen: list[tuple[np.ndarray, np.ndarray]] = []

    @property
    def active(self) -> bool:
        return self.coef > 0

    def before_update(self, model, buffer) -> None:
        before = buffer.advantages.copy()
        buffer.advantages -= self.coef * buffer.cost.astype(buffer.advantages.dtype)
        self.seen.append((before, buffer.cost.copy()))
        model.logger.record("fairness/cost", float(buffer.cost.mean()))


def params(model) -> dict[str, np.ndarray]:
    return {k: v.detach().cpu().numpy().copy() for k, v in model.policy.state_dict().items()}


@pytest.mark.parametrize("fair, parent, policy", PARENTS, ids=IDS)
def test_a_users_term_stores_its_signals_and_changes_the_advantages(fair, parent, policy):
    costs: list[float] = []

    class Record(CostEnv):
        def step(self, action):
            out = super().step(action)
            costs.append(out[4]["cost"])
            return out

    env = ActionMasker(Record(gym.make("CartPole-v1")), lambda env: np.ones(2, dtype=bool))
    term = CostTerm(coef=0.5)
    model = fair(policy, env, fairness=term, **KW).learn(32)
    assert isinstance(model.rollout_buffer, FairnessBufferMixin)
    (_before, cost), = term.seen
    np.testing.assert_array_equal(cost.reshape(-1), costs[:32])  # as the env reported them, row by row
    assert model.fairness_term is term and model.fairness_config()["fairness"] == "CostTerm"
    assert model.fairness_active()
    # the update trained on the changed advantages: it differs from the parent's
    plain = parent(policy, env, **KW).learn(32)
    assert any(not np.array_equal(a, b) for a, b in zip(params(model).values(), params(plain).values()))


@pytest.mark.parametrize("fair, parent, policy", PARENTS, ids=IDS)
def test_an_inactive_term_trains_exactly_like_the_parent(fair, parent, policy):
    a = fair(policy, cost_env(), fairness=CostTerm(coef=0.0), **KW).learn(64)
    b = parent(policy, cost_env(), **KW).learn(64)
    assert not a.fairness_active()
    pa, pb = params(a), params(b)
    assert pa.keys() == pb.keys() and all(np.array_equal(pa[k], pb[k]) for k in pa)


class L2Term(FairnessTerm):
    """An extra loss: ``k * (mean value² over the minibatch)`` for PPO and MaskablePPO, ``k * sum θ²`` of the first
    layer for RecurrentPPO (whose forward pass needs its LSTM states)."""

    def __init__(self, k: float) -> None:
        self.k = k
        self.batches: list[Any] = []

    def extra_loss(self, model, rollout_data) -> th.Tensor:
        self.batches.append(rollout_data)
        return self.k * self.loss_of(model.policy, rollout_data)

    @staticmethod
    def loss_of(policy, rollout_data) -> th.Tensor:
        if hasattr(rollout_data, "lstm_states"):
            return sum((p**2).sum() for p in policy.mlp_extractor.parameters())
        return (policy.predict_values(rollout_data.observations) ** 2).mean()


@pytest.mark.parametrize("fair, parent, policy", PARENTS, ids=IDS)
def test_an_extra_loss_adds_its_gradient_to_the_parents_step(fair, parent, policy):
    lr = 0.05
    kw = dict(n_steps=32, batch_size=32, n_epochs=1, seed=0, learning_rate=lr, max_grad_norm=1e9,
              policy_kwargs=dict(optimizer_class=th.optim.SGD, optimizer_kwargs={}))
    plain = fair(policy, cost_env(), fairness_coef=0.0, **kw)
    start = fair(policy, cost_env(), fairness_coef=0.0, **kw)  # the same initial parameters (same seed)
    plain.learn(32)
    term = L2Term(k=3.0)
    extra = fair(policy, cost_env(), fairness=term, **kw).learn(32)
    (batch,) = term.batches  # one minibatch: the parent's own samples
    # the gradient of the extra loss at the starting parameters, by hand
    start.policy.set_training_mode(True)
    start.policy.optimizer.zero_grad()
    (3.0 * L2Term.loss_of(start.policy, batch)).backward()
    grads = {n: (p.grad.clone() if p.grad is not None else th.zeros_like(p)) for n, p in start.policy.named_parameters()}
    for name, p in extra.policy.named_parameters():
        want = dict(plain.policy.named_parameters())[name].detach() - lr * grads[name]
        th.testing.assert_close(p.detach(), want, rtol=1e-5, atol=1e-6)
    assert any(float(g.abs().max()) > 0 for g in grads.values())


class HeadTerm(FairnessTerm):
    """A value head of its own (an extra stream), trained to predict 1.0 from the observation."""

    def __init__(self) -> None:
        self.head: th.nn.Module | None = None

    def extra_modules(self, model) -> dict[str, th.nn.Module]:
        self.head = th.nn.Linear(model.observation_space.shape[0], 1)
        return {"head": self.head}

    def extra_loss(self, model, rollout_data) -> th.Tensor:
        return ((model.policy.fairness_head(rollout_data.observations) - 1.0) ** 2).mean()

    def __getstate__(self) -> dict[str, Any]:
        return {"head": None}  # the head's weights are the policy's (saved with it)


def test_extra_modules_join_the_policy_its_optimizer_and_its_saved_parameters(tmp_path):
    model = FairPPO("MlpPolicy", cost_env(), fairness=HeadTerm(), **KW)
    head = model.policy.fairness_head
    assert any(p is next(head.parameters()) for g in model.policy.optimizer.param_groups for p in g["params"])
    obs = th.as_tensor(np.zeros((1, 4), dtype=np.float32))
    before = float(((head(obs) - 1.0) ** 2).item())
    model.learn(96)
    after = float(((head(obs) - 1.0) ** 2).item())
    assert after < before  # trained by its loss
    model.save(tmp_path / "m")
    loaded = FairPPO.load(tmp_path / "m", env=cost_env())
    th.testing.assert_close(loaded.policy.fairness_head.weight, head.weight)
    assert isinstance(loaded.fairness_term, HeadTerm) and loaded.fairness_term is loaded.fairness


def test_a_users_term_object_is_saved_and_loaded_with_its_settings(tmp_path):
    model = FairPPO("MlpPolicy", cost_env(), fairness=CostTerm(coef=0.25), **KW).learn(32)
    model.save(tmp_path / "m")
    loaded = FairPPO.load(tmp_path / "m", env=cost_env())
    assert isinstance(loaded.fairness_term, CostTerm) and loaded.fairness_term.coef == 0.25
    loaded.learn(32, reset_num_timesteps=False)


@pytest.fixture
def registry():
    """The registry as it was, after the test."""
    saved = dict(term_base._REGISTRY)
    yield term_base._REGISTRY
    term_base._REGISTRY.clear()
    term_base._REGISTRY.update(saved)
    _refresh_signature()


def test_a_registered_term_is_built_from_its_name_and_its_arguments_are_the_classes(registry):
    class ShiftTerm(FairnessTerm):
        methods: ClassVar[tuple[str, ...]] = ("shift",)
        arguments: ClassVar[dict[str, Any]] = {"shift": 0.0}

        def __init__(self, method: str, shift: float = 0.0) -> None:
            self.method, self.shift = method, shift

        @classmethod
        def check_arguments(cls, values):
            if "shift" in values and not np.isfinite(values["shift"]):
                raise ValueError(f"shift must be finite, got {values['shift']!r}")
            return dict(values)

        def before_update(self, model, buffer):
            buffer.advantages += self.shift

        def config(self):
            return {"fairness": self.method, "shift": self.shift}

    register_term(ShiftTerm)
    assert "shift" in inspect.signature(OnPolicyFairnessMixin.__init__).parameters
    model = FairPPO("MlpPolicy", cost_env(), fairness="shift", shift=0.5, **KW)
    assert isinstance(model.fairness_term, ShiftTerm) and model.shift == 0.5
    assert model.fairness_config()["shift"] == 0.5
    model.learn(32)
    with pytest.raises(ValueError, match=r"^shift=0.5 is not used with fairness='dp': only fairness='shift' uses it"):
        FairPPO("MlpPolicy", cost_env(), fairness="dp", shift=0.5)
    with pytest.raises(ValueError, match="shift must be finite"):
        FairPPO("MlpPolicy", cost_env(), fairness="dp", shift=float("nan"))
    with pytest.raises(ValueError, match=r"alpha=0\.9 is not used with fairness='shift'"):
        FairPPO("MlpPolicy", cost_env(), fairness="shift", alpha=0.9)
    with pytest.raises(ValueError, match=r"fairness='dp' is already GroupPenaltyTerm's"):
        register_term(type("Other", (FairnessTerm,), {"methods": ("dp",)}))
    with pytest.raises(ValueError, match="register_term takes a FairnessTerm subclass"):
        register_term(object)  # type: ignore[arg-type]


def test_a_users_term_object_refuses_the_shipped_terms_arguments():
    with pytest.raises(ValueError, match=r"^alpha=0.9 is not used with fairness='CostTerm': only fairness='dp', 'csp' or 'cf'"):
        FairPPO("MlpPolicy", cost_env(), fairness=CostTerm(), alpha=0.9)
    with pytest.raises(ValueError, match=r"fairness must be one of \['dp', 'csp', 'cf', 'long_term', 'a_ppo'\] \(or a FairnessTerm"):
        FairPPO("MlpPolicy", cost_env(), fairness="eo")


def test_a_signal_the_env_does_not_report_is_named():
    with pytest.raises(ValueError, match=r"fairness='CostTerm' reads info\['cost'\] at every step"):
        FairPPO("MlpPolicy", "CartPole-v1", fairness=CostTerm(), **KW).learn(32)


def test_the_three_fair_classes_are_the_seam_and_nothing_more():
    """Each Fair class mixes the seam in once, with massaging beside it (its own seam) and no method of its own
    beyond the parent's (FairPPO's presets aside)."""
    for fair, parent, _ in PARENTS:
        bases = [c.__name__ for c in fair.__bases__]
        assert bases == ["ActionMassagingMixin", "OnPolicyFairnessMixin", "FairAlgorithmMixin", parent.__name__]
        own = {k for k, v in vars(fair).items() if callable(v) and not k.startswith("__")}
        assert own <= {"from_preset"}, own


def test_the_0_4_mixin_modules_import_as_the_term_modules():
    """0.4 pickled a model's group-penalty tracker as ``sb3_fair.common.group_penalty.mixin.GroupTracker``: that path
    is the term module now (with a DeprecationWarning), so such a pickle finds the class."""
    import importlib
    import sys

    from sb3_fair.common.group_penalty.term import GroupTracker
    from sb3_fair.common.long_term.term import LongTermTracker

    for old, name, cls in (("sb3_fair.common.group_penalty.mixin", "GroupTracker", GroupTracker),
                           ("sb3_fair.common.long_term.mixin", "LongTermTracker", LongTermTracker)):
        sys.modules.pop(old, None)
        with pytest.warns(DeprecationWarning, match="in sb3-fair 0.5"):
            assert getattr(importlib.import_module(old), name) is cls


def test_the_shipped_terms_are_found_by_their_folders_term_module():
    from sb3_fair.common.fairness_terms.base import fairness_methods
    from sb3_fair.common.fairness_terms.mixin import import_shipped_terms

    assert import_shipped_terms() == ["sb3_fair.common.group_penalty.term", "sb3_fair.common.long_term.term"]
    assert fairness_methods()[:5] == ("dp", "csp", "cf", "long_term", "a_ppo")


def test_a_term_that_declares_no_arguments_registers_those_of_its_init(registry):
    class Scaled(FairnessTerm):
        methods: ClassVar[tuple[str, ...]] = ("scaled_test",)

        def __init__(self, method: str, scale: float = 2.0, floor: int = 0) -> None:
            self.method, self.scale, self.floor = method, scale, floor

    register_term(Scaled)
    assert Scaled.arguments == {"scale": 2.0, "floor": 0}
    from sb3_fair.common.group_penalty.term import GroupPenaltyTerm
    from sb3_fair.common.long_term.term import LongTermTerm

    assert GroupPenaltyTerm.arguments == {"fairness_coef": 1.0, "alpha": 0.5, "beta": 0.5, "protected_group": 1,
                                          "agents_per_instance": None}
    assert LongTermTerm.arguments == {"fairness_coef": 1.0, "delta": 0.05, "omega": 0.05, "regularization": "scaled"}
    model = FairPPO("MlpPolicy", cost_env(), fairness="scaled_test", scale=3.0, **KW)
    assert (model.fairness_term.scale, model.fairness_term.floor) == (3.0, 0)
