"""What an on-policy fairness method adds to its parent, as one class: :class:`FairnessTerm`; and the registry of the
``fairness=`` values.

An on-policy fairness method of the family that sb3-fair ships (fair-PPO's group penalty, F-PPO's long-term
regulariser, A-PPO) and of the methods that follow it (ELBERT-PO, a Lagrangian constraint, SOTO's generalised-Gini
advantage) is the same shape, and :class:`FairnessTerm` names each part:

* its own arguments: :attr:`~FairnessTerm.arguments` (their defaults) and :meth:`~FairnessTerm.check_arguments`
  (at construction);
* per-step signals: :attr:`~FairnessTerm.signals`, arrays of the rollout buffer, filled from
  :meth:`~FairnessTerm.step_signals` at every step, or trackers of its own, :meth:`~FairnessTerm.callbacks`;
* the env's checks: :meth:`~FairnessTerm.setup` (when the model gets an env);
* extra value streams: :meth:`~FairnessTerm.extra_modules`, heads added to the policy and its optimizer;
* the advantages: :meth:`~FairnessTerm.before_update`, the whole rollout's in place, or each minibatch's through the
  buffer's :meth:`~sb3_fair.common.fairness_terms.FairnessBufferMixin.transform_minibatches`;
* an extra loss: :meth:`~FairnessTerm.extra_loss`, added to the parent's loss of every minibatch;
* the figures it logs: ``model.logger.record("fairness/...")``, in :meth:`~FairnessTerm.before_update` or
  :meth:`~FairnessTerm.after_update`;
* its settings: :meth:`~FairnessTerm.config` (``fairness_config()``, the W&B run config);
* saving and loading: the term is pickled with the model (its ``__getstate__``: its state, never the model), and
  :meth:`~FairnessTerm.resume_from` takes a loaded term's state into the term rebuilt from the model's settings.

:class:`~sb3_fair.common.fairness_terms.mixin.OnPolicyFairnessMixin` calls them at SB3's seams, once for PPO,
MaskablePPO and RecurrentPPO. Action massaging, which changes the actions a rollout executes rather than the
advantages, keeps its own seam (:class:`~sb3_fair.common.long_term.massaging.ActionMassagingMixin`, a forward hook on
the policy during ``collect_rollouts``).

A term is chosen by name (``fairness="dp"``: :func:`register_term` files a term class under its
:attr:`~FairnessTerm.methods`) or passed as an object (``fairness=MyTerm(coef=0.1)``), whose settings are its own.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback

if TYPE_CHECKING:
    import torch as th
    from stable_baselines3.common.on_policy_algorithm import OnPolicyAlgorithm
    from stable_baselines3.common.vec_env import VecEnv


class FairnessTerm:
    """An on-policy fairness method: what it adds to PPO, MaskablePPO or RecurrentPPO (the module's table).

    Every method has a default that adds nothing, so a term overrides only its own parts. With ``active`` false the
    model trains exactly as its parent.

    A registered term (one that sb3-fair builds from ``fairness="<method>"``) declares its keyword arguments in
    :attr:`arguments`; the Fair class takes them as its own (they are in its signature and saved with the model as
    its attributes), refuses one that the chosen method does not use, and builds the term as
    ``TermClass(method, **arguments)`` whenever the model is set up, so a setting changed by ``load(path, alpha=...)``
    takes effect. A user's term object is kept as it is.

    Example: a term that subtracts ``coef * info["cost"]`` from every step's advantage (the env reports a cost)::

        class CostTerm(FairnessTerm):
            signals = ("cost",)  # a float64 array of the rollout buffer, filled from info["cost"] at every step

            def __init__(self, coef: float = 0.1) -> None:
                self.coef = coef

            def before_update(self, model, buffer) -> None:
                buffer.advantages -= self.coef * buffer.cost.astype(buffer.advantages.dtype)
                model.logger.record("fairness/cost", float(buffer.cost.mean()))

        model = FairPPO("MlpPolicy", env, fairness=CostTerm(coef=0.5))
    """

    #: the values of ``fairness=`` this term implements (empty for a user's term passed as an object)
    methods: ClassVar[tuple[str, ...]] = ()
    #: the keyword arguments of the Fair class that this term owns, with their defaults (left undeclared,
    #: :func:`register_term` takes those of ``__init__`` after ``method``)
    arguments: ClassVar[dict[str, Any]] = {}
    #: for an argument that only some of :attr:`methods` use: those methods (default: all of them)
    used_by: ClassVar[dict[str, tuple[str, ...]]] = {}
    #: per-step float64 arrays ``(n_steps, n_envs)`` that the rollout buffer holds for the term (``buffer.<name>``),
    #: filled by :class:`SignalTracker` from :meth:`step_signals` unless :meth:`callbacks` is overridden
    signals: ClassVar[tuple[str, ...]] = ()

    #: the ``fairness=`` value this term was built for (a user's term: its class name)
    method: str = ""

    @classmethod
    def check_arguments(cls, values: dict[str, Any]) -> dict[str, Any]:
        """The given ones of :attr:`arguments`, each checked (whatever the chosen method: a bad value is named
        before the method is considered); raise a ``ValueError`` naming the argument and what it accepts."""
        return dict(values)

    @property
    def name(self) -> str:
        """The term's name in messages and configs: its method, or its class's name."""
        return self.method or type(self).__name__

    @property
    def active(self) -> bool:
        """Whether the term changes training (a weight > 0); an inactive term leaves the parent exactly as it is."""
        return True

    @property
    def needs_buffer(self) -> bool:
        """Whether the rollout buffer must be the fairness buffer (:class:`~sb3_fair.common.fairness_terms.FairnessBufferMixin`):
        the term has :attr:`signals`, an :meth:`extra_loss`, or transforms minibatches."""
        return bool(self.signals) or self.uses_extra_loss

    @property
    def uses_extra_loss(self) -> bool:
        """Whether :meth:`extra_loss` is overridden (the parent's update then adds it)."""
        return type(self).extra_loss is not FairnessTerm.extra_loss

    def setup(self, model: OnPolicyAlgorithm, env: VecEnv) -> None:
        """Read what the term needs from ``env`` and raise a clear ``ValueError`` on a misfit (when the model gets
        an env: construction, ``set_env``, ``load``)."""

    def resume_from(self, saved: FairnessTerm) -> None:
        """Take the state of ``saved``, the term loaded with the model (e.g. its running episodes), where it fits."""

    def callbacks(self, model: OnPolicyAlgorithm, env_was_reset: bool) -> list[BaseCallback]:
        """Callbacks that see every step of each ``learn`` before the logging callback (``env_was_reset``: SB3 has
        just reset the env, so running episodes are gone). Default: a :class:`SignalTracker` when the term has
        :attr:`signals`."""
        return [SignalTracker(self)] if self.signals else []

    def step_signals(self, infos: list[dict[str, Any]]) -> dict[str, list[float]]:
        """Each signal of :attr:`signals` at this step, one float per sub-env (default: ``info[<signal>]``)."""
        out: dict[str, list[float]] = {}
        for name in self.signals:
            row = []
            for i, info in enumerate(infos):
                if name not in info:
                    raise ValueError(
                        f"fairness={self.name!r} reads info[{name!r}] at every step, and sub-env {i}'s info has "
                        f"{sorted(info)}: have the env report it"
                    )
                value = float(info[name])
                if not np.isfinite(value):
                    raise ValueError(f"fairness={self.name!r}: sub-env {i}'s info[{name!r}] is {value}, not finite")
                row.append(value)
            out[name] = row
        return out

    def extra_modules(self, model: OnPolicyAlgorithm) -> dict[str, th.nn.Module]:
        """Extra networks (e.g. value heads of extra streams), added to the policy as ``fairness_<name>`` and to its
        optimizer; saved and loaded with the policy. Trained by :meth:`extra_loss`."""
        return {}

    def before_update(self, model: OnPolicyAlgorithm, buffer: Any) -> None:
        """Change the rollout's advantages before the parent's update (in place, ``buffer.advantages``), or set a
        per-minibatch transformation (``buffer.transform_minibatches(rows, fn)``), and log the term's figures."""

    def extra_loss(self, model: OnPolicyAlgorithm, rollout_data: Any) -> th.Tensor | None:
        """An extra loss for the minibatch ``rollout_data`` (the parent's own samples), added to the parent's loss
        before its backward pass (the gradient is clipped with the parent's). Not overridden: no extra loss."""
        return None

    def after_update(self, model: OnPolicyAlgorithm, buffer: Any) -> None:
        """After the parent's update (e.g. to log what the update did)."""

    def config(self) -> dict[str, Any]:
        """The term's settings (``fairness_config()``, stored in the W&B run config)."""
        return {"fairness": self.name}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class SignalTracker(BaseCallback):
    """Writes a term's :meth:`~FairnessTerm.step_signals` into the rollout buffer's arrays, row by row.

    SB3 calls ``on_step`` after ``env.step`` and before adding the step to the buffer, so the step's row is the
    number of steps since the rollout started.
    """

    def __init__(self, term: FairnessTerm) -> None:
        super().__init__()
        self.term = term
        self._t = 0

    def _on_rollout_start(self) -> None:
        self._t = 0

    def _on_step(self) -> bool:
        buf = self.model.rollout_buffer  # type: ignore[attr-defined]  # an on-policy model's
        if self._t < buf.buffer_size:
            for name, row in self.term.step_signals(self.locals["infos"]).items():
                getattr(buf, name)[self._t] = row
        self._t += 1
        return True


# ------------------------------------------------------------------------------------------------------------ registry
_REGISTRY: dict[str, type[FairnessTerm]] = {}
#: functions called after a registration (the mixin's signature follows the registered arguments)
_ON_REGISTER: list[Callable[[], None]] = []


def register_term(cls: type[FairnessTerm]) -> type[FairnessTerm]:
    """File ``cls`` under each of its :attr:`~FairnessTerm.methods` (usable as a class decorator), so that
    ``FairPPO(..., fairness="<method>", <its arguments>)`` builds it. Its arguments join the Fair classes' signature.

    :raises ValueError: a method already registered to another class, or an argument declared by another term
        with another default.
    """
    if not (isinstance(cls, type) and issubclass(cls, FairnessTerm)) or not cls.methods:
        raise ValueError(f"register_term takes a FairnessTerm subclass with methods, got {cls!r}")
    if "arguments" not in vars(cls):  # not declared: the keyword arguments of its __init__ after the method
        params = list(inspect.signature(cls.__init__).parameters.values())[2:]
        cls.arguments = {p.name: p.default for p in params if p.default is not inspect.Parameter.empty}
    for method in cls.methods:
        if _REGISTRY.get(method, cls) is not cls:
            raise ValueError(f"fairness={method!r} is already {_REGISTRY[method].__name__}'s")
    for name, default in cls.arguments.items():
        for other in set(_REGISTRY.values()) - {cls}:
            if name in other.arguments and name != "fairness_coef" and other.arguments[name] != default:
                raise ValueError(f"{cls.__name__}'s argument {name!r} is {other.__name__}'s, with another default")
    for method in cls.methods:
        _REGISTRY[method] = cls
    for hook in _ON_REGISTER:
        hook()
    return cls


def registered_terms() -> list[type[FairnessTerm]]:
    """The registered term classes, in the order they were registered."""
    return list(dict.fromkeys(_REGISTRY.values()))


def fairness_methods() -> tuple[str, ...]:
    """Every registered value of ``fairness=``."""
    return tuple(_REGISTRY)


def term_class(method: str) -> type[FairnessTerm] | None:
    """The term class registered for ``fairness=method`` (``None`` if none is)."""
    return _REGISTRY.get(method)


def argument_defaults() -> dict[str, Any]:
    """Every registered term's arguments with their defaults (``fairness_coef`` once, default 1.0)."""
    out: dict[str, Any] = {}
    for cls in registered_terms():
        for name, default in cls.arguments.items():
            out.setdefault(name, default)
    return out


def users_of(name: str) -> tuple[str, ...]:
    """The registered methods that use the argument ``name``."""
    return tuple(m for cls in registered_terms() if name in cls.arguments for m in cls.used_by.get(name, cls.methods))


__all__ = [
    "FairnessTerm",
    "SignalTracker",
    "argument_defaults",
    "fairness_methods",
    "register_term",
    "registered_terms",
    "term_class",
    "users_of",
]
