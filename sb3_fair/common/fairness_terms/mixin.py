""":class:`OnPolicyFairnessMixin`: a :class:`~sb3_fair.common.fairness_terms.FairnessTerm` on PPO, MaskablePPO or
RecurrentPPO, at SB3's seams.

``class FairX(ActionMassagingMixin, OnPolicyFairnessMixin, FairAlgorithmMixin, X)``. The mixin owns ``fairness=``
and the arguments of every registered term, and calls the chosen term's parts:

* ``__init__``: every registered term's arguments checked (:meth:`~FairnessTerm.check_arguments`), those the chosen
  method does not use refused unless left at their defaults, all kept as the model's attributes (so SB3 saves them);
* ``_setup_model``: the term built from those attributes (again after ``load``, which may change them), the loaded
  term's state handed over (:meth:`~FairnessTerm.resume_from`), its :meth:`~FairnessTerm.extra_modules` added to
  the policy and its optimizer;
* ``_setup_fairness`` (an env is set): :meth:`~FairnessTerm.setup`; the parent's rollout buffer becomes its
  fairness subclass (:func:`~sb3_fair.common.fairness_terms.fairness_buffer_class`) when the term needs it;
* ``_fairness_callbacks``: the term's :meth:`~FairnessTerm.callbacks`;
* ``train``: :meth:`~FairnessTerm.before_update`, the parent's update with the term's
  :meth:`~FairnessTerm.extra_loss` added to each minibatch's loss, then :meth:`~FairnessTerm.after_update`.

The extra loss enters without restating the parent's ``train``: PPO, MaskablePPO and RecurrentPPO each compute a
minibatch's loss, call ``policy.optimizer.zero_grad()``, then ``loss.backward()``, clip the gradient and step. While
a term with an extra loss trains, the optimizer's ``zero_grad`` is followed by the extra loss's backward pass on the
minibatch just sampled (the buffer's :attr:`~sb3_fair.common.fairness_terms.FairnessBufferMixin.last_minibatch`), so
the parent's backward adds to it and the clipped step is that of ``loss + extra`` (``tests/test_fairness_terms.py``
checks the step against one computed by hand on each parent).

With an inactive term (its weights at zero) nothing of this runs and the class trains exactly like its parent.
"""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import VecEnv

from sb3_fair.common.fairness_terms.base import (
    _ON_REGISTER,
    FairnessTerm,
    argument_defaults,
    fairness_methods,
    registered_terms,
    term_class,
    users_of,
)
from sb3_fair.common.fairness_terms.buffers import FairnessBufferMixin, fairness_buffer_class
from sb3_fair.common.validation import check_unused

if TYPE_CHECKING:
    from sb3_fair.common.fair_algorithm import OnPolicyFairAlgorithm as _OnPolicyBase
else:
    _OnPolicyBase = object


def import_shipped_terms() -> list[str]:
    """Import every shipped term module, ``sb3_fair/common/<method family>/term.py`` (each registers its term at its
    end), in the order of the families' names; the module paths imported.

    A method added to sb3-fair is found by this convention: its folder's ``term.py`` is all it takes, with no edit to
    this module or to the Fair classes.
    """
    common = Path(__file__).resolve().parent.parent
    names = sorted(p.parent.name for p in common.glob("*/term.py"))
    modules = [f"sb3_fair.common.{name}.term" for name in names]
    for module in modules:
        importlib.import_module(module)
    return modules


import_shipped_terms()


def _settings(methods: tuple[str, ...]) -> str:
    """``"fairness='dp', 'csp' or 'cf'"``."""
    names = [repr(m) for m in methods]
    return "fairness=" + (", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else names[0])


class OnPolicyFairnessMixin(_OnPolicyBase):
    """A fairness term (:class:`~sb3_fair.common.fairness_terms.FairnessTerm`) on an on-policy parent (the module's
    docstring says where each part enters).

    :param fairness: a registered method's name (``"dp"``, ``"csp"``, ``"cf"``: fair-PPO's group penalty;
        ``"long_term"``, ``"a_ppo"``: F-PPO's regulariser and A-PPO) or a term object of your own.
    :param kwargs: the arguments of the registered terms (``fairness_coef``, ``alpha``, ``delta``, ...: each term's
        page lists them); one that the chosen method does not use is refused unless left at its default. The rest
        go to the parent.
    """

    #: a zip of the parent (PPO, MaskablePPO, RecurrentPPO) loads without the group penalty, which is on by default
    PARENT_ZIP_SETTINGS: ClassVar[dict[str, Any]] = {"fairness_coef": 0.0}

    def __init__(self, *args: Any, fairness: str | FairnessTerm = "dp", **kwargs: Any) -> None:
        defaults = argument_defaults()
        given = {name: kwargs.pop(name) for name in list(kwargs) if name in defaults}
        values = dict(defaults)
        for cls in registered_terms():  # a bad value is named before the method is considered
            values.update(cls.check_arguments({k: v for k, v in given.items() if k in cls.arguments}))
        if isinstance(fairness, FairnessTerm):
            method = fairness.name
        else:
            methods = fairness_methods()
            if fairness not in methods:
                raise ValueError(
                    f"fairness must be one of {list(methods)} (or a FairnessTerm of your own), got {fairness!r}"
                )
            method = fairness
        for name, value in given.items():
            users = users_of(name)
            if method not in users:
                check_unused(name, value, defaults[name], f"fairness={method!r}", _settings(users))
        for name, value in values.items():
            setattr(self, name, value)
        self.fairness: str | FairnessTerm = fairness
        #: the chosen term (rebuilt from the model's settings whenever the model is set up)
        self.fairness_term: FairnessTerm = self._build_term()
        self._env_was_reset = True
        super().__init__(*args, **kwargs)

    def _build_term(self) -> FairnessTerm:
        """The term of ``fairness=``, from the model's current settings (a user's term object: itself)."""
        if isinstance(self.fairness, FairnessTerm):
            return self.fairness
        cls = term_class(self.fairness)
        if cls is None:
            raise ValueError(f"fairness must be one of {list(fairness_methods())}, got {self.fairness!r}")
        term = cls(self.fairness, **{name: getattr(self, name) for name in cls.arguments})  # type: ignore[call-arg]  # a registered term takes its method and arguments
        if hasattr(term, "fairness_coef"):  # the checked weights (a list after loading becomes the pair again)
            self.fairness_coef = term.fairness_coef
        return term

    def _setup_model(self) -> None:
        saved = self.__dict__.get("fairness_term")
        self.fairness_term = self._build_term()
        if isinstance(saved, FairnessTerm) and saved is not self.fairness_term:
            self.fairness_term.resume_from(saved)
        super()._setup_model()
        term = self.fairness_term
        if term.active:
            for name, module in term.extra_modules(self).items():
                module = module.to(self.device)
                self.policy.add_module(f"fairness_{name}", module)
                self.policy.optimizer.add_param_group({"params": list(module.parameters())})

    def _setup_fairness(self, env: VecEnv) -> None:
        super()._setup_fairness(env)
        term = self.fairness_term
        term.setup(self, env)
        if not term.active or not term.needs_buffer:
            return
        buf = self.rollout_buffer
        cls = fairness_buffer_class(type(buf), tuple(term.signals))
        if type(buf) is not cls:
            # the same buffer (sizes, spaces, device, arrays) as an instance of its fairness subclass
            new = cls.__new__(cls)
            new.__dict__.update(buf.__dict__)
            new.reset()
            self.rollout_buffer = new

    def _fairness_callbacks(self) -> list[BaseCallback]:
        callbacks = super()._fairness_callbacks()
        term = self.fairness_term
        if not term.active:
            return callbacks
        return [*term.callbacks(self, self._env_was_reset), *callbacks]

    def _setup_learn(
        self,
        total_timesteps: int,
        callback: Any = None,
        reset_num_timesteps: bool = True,
        tb_log_name: str = "run",
        progress_bar: bool = False,
    ) -> Any:
        # SB3 resets the env in _setup_learn exactly when this holds; a term's running episodes then start afresh
        self._env_was_reset = reset_num_timesteps or self._last_obs is None
        return super()._setup_learn(total_timesteps, callback, reset_num_timesteps, tb_log_name, progress_bar)

    def _excluded_save_params(self) -> list[str]:
        excluded = super()._excluded_save_params()
        # a user's term object is saved once, as fairness=
        return [*excluded, "fairness_term"] if self.fairness_term is self.fairness else excluded

    def fairness_config(self) -> dict[str, Any]:
        """The fairness hyperparameters (stored in the W&B run config): the chosen term's."""
        return {**super().fairness_config(), **self.fairness_term.config()}

    def train(self) -> None:
        """The term's change of the advantages, the parent's update (with the term's extra loss), then its
        :meth:`~sb3_fair.common.fairness_terms.FairnessTerm.after_update`."""
        term, buf = self.fairness_term, self.rollout_buffer
        if not term.active:
            super().train()
            return
        term.before_update(self, buf)
        optimizer = self.policy.optimizer
        losses: list[float] = []
        if term.uses_extra_loss:
            zero_grad = optimizer.zero_grad

            def zero_grad_then_extra(*args: Any, **kwargs: Any) -> None:
                zero_grad(*args, **kwargs)
                extra = term.extra_loss(self, getattr(buf, "last_minibatch", None))
                if extra is not None:
                    extra.backward()
                    losses.append(float(extra.item()))

            optimizer.zero_grad = zero_grad_then_extra  # type: ignore[method-assign]  # for this update only
        try:
            super().train()
        finally:
            if term.uses_extra_loss:
                del optimizer.zero_grad  # the optimizer's own method again
            if isinstance(buf, FairnessBufferMixin):
                buf.transform_minibatches((), None)
        if losses:
            self.logger.record("fairness/extra_loss", float(np.mean(losses)))
        term.after_update(self, buf)


def _refresh_signature() -> None:
    """The mixin's ``__init__`` signature: ``fairness`` and every registered term's arguments (keyword-only), so that
    ``inspect.signature``, the docs and the config checks see them."""
    params = [
        inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD),
        inspect.Parameter("args", inspect.Parameter.VAR_POSITIONAL),
        inspect.Parameter("fairness", inspect.Parameter.KEYWORD_ONLY, default="dp"),
        *(inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=d) for n, d in argument_defaults().items()),
        inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD),
    ]
    OnPolicyFairnessMixin.__init__.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]  # read by inspect.signature


_refresh_signature()
_ON_REGISTER.append(_refresh_signature)

__all__ = ["OnPolicyFairnessMixin", "import_shipped_terms"]
