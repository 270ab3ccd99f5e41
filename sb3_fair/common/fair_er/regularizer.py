"""Fair-ER: the equivariance regulariser of Grupen, Selman and Lee, "Cooperative Multi-Agent Fairness and
Equivariant Policies" (AAAI 2022, arXiv:2106.05727), Eqs. 9-11 and App. B.1, as a mixin for SB3's TD3 and DDPG."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import torch as th
from gymnasium import spaces
from stable_baselines3.common.vec_env import VecEnv
from torch.nn import functional as F

from sb3_fair.common.fair_er.equivariant_actor import FairEPolicy
from sb3_fair.common.protocol import get_symmetry
from sb3_fair.common.symmetry import AgentSymmetry
from sb3_fair.common.validation import check_choice, check_coef

if TYPE_CHECKING:
    from stable_baselines3 import TD3

    from sb3_fair.common.fair_algorithm import FairAlgorithmMixin

    class _FairTD3Base(FairAlgorithmMixin, TD3):
        """What :class:`FairERMixin` is mixed into, as the type checker sees it (TD3, or DDPG, its subclass); at run
        time the mixin is a plain class."""

else:
    _FairTD3Base = object

#: the distances ``d`` of the equivariance term (``equivariance_distance=``)
DISTANCES = ("cosine", "mse")


def equivariance_distance(pred: th.Tensor, target: th.Tensor, n_agents: int, kind: str = "cosine") -> th.Tensor:
    """Per-sample distance between two joint actions, averaged over agents (Grupen et al. 2022, Eq. 9, App. B.2).

    ``"cosine"``: ``1 - cos`` between each agent's action vectors (for heading vectors this is the
    paper's ``1 - cos(theta_i - theta_j)``); ``"mse"``: mean squared difference per agent.
    """
    p = pred.reshape(pred.shape[0], n_agents, -1)
    t = target.reshape(target.shape[0], n_agents, -1)
    d = 1.0 - F.cosine_similarity(p, t, dim=-1, eps=1e-08) if kind == "cosine" else ((p - t) ** 2).mean(dim=-1)
    return d.mean(dim=-1)


def _is_fair_e(policy: Any) -> bool:
    return policy == "FairEPolicy" or (isinstance(policy, type) and issubclass(policy, FairEPolicy))


class FairERMixin(_FairTD3Base):
    """The Fair-ER regulariser for SB3's TD3 or DDPG: ``class FairX(FairERMixin, FairAlgorithmMixin, ActorLossHook, X)``
    (:class:`~sb3_fair.common.loss_hooks.ActorLossHook`: the seam where the actor loss enters TD3's update).

    The actor loss becomes ``-Q(s, mu(s)) + lambda * E_{s, sigma}[ d(mu(sigma . s), sigma . mu(s)) ]``
    with ``sigma`` a random permutation of the agents drawn per sample from the env's symmetry
    (``env.unwrapped.symmetry``, an :class:`~sb3_fair.common.symmetry.AgentSymmetry`), ``d`` = 1 - cos
    between each agent's action vectors (the paper's choice for headings; MSE as an option), and a
    stop-gradient on the ``sigma . mu(s)`` side (App. B.1 drops the term through the other agents'
    parameters). With egocentric per-agent observations ``mu(sigma . s)_i`` is what agent i does
    in agent ``sigma(i)``'s situation, so this is the paper's penalty on ``pi_i(o)`` versus
    ``pi_j(o)`` for the same observation: an agent's action should not depend on who it is.

    ``equivariance_coef = 0`` behaves exactly like the parent (same seed, same actions and weights);
    on an env with a symmetry the equivariance error is still measured (on every 10th update, with
    a separate random generator). Logged under ``fairness/``: ``equivariance_error`` (mean ``d`` on
    the training batch) and ``equivariance_reg`` (``lambda`` times it). ``policy="FairEPolicy"``
    uses the Fair-E actor (Eq. 8), equivariant by construction; its ``agent_obs`` is read from the
    env's symmetry.

    :param equivariance_coef: lambda >= 0 (the paper: 0.1, 0.5, 0.9).
    :param equivariance_distance: ``"cosine"`` or ``"mse"``.
    """

    def __init__(
        self,
        policy: Any,
        env: Any,
        *args: Any,
        equivariance_coef: float = 0.0,
        equivariance_distance: str = "cosine",
        **kwargs: Any,
    ) -> None:
        self.equivariance_coef = check_coef(equivariance_coef, "equivariance_coef")
        self.equivariance_distance = check_choice(equivariance_distance, "equivariance_distance", DISTANCES)
        self.symmetry: AgentSymmetry | None = None
        if env is not None and _is_fair_e(policy) and not isinstance(env, str):
            kwargs["policy_kwargs"] = self._fair_e_kwargs(env, kwargs.get("policy_kwargs"))
        super().__init__(policy, env, *args, **kwargs)

    @staticmethod
    def _fair_e_kwargs(env: Any, policy_kwargs: dict[str, Any] | None) -> dict[str, Any]:
        """Fill ``agent_obs`` for the Fair-E policy from the env's symmetry."""
        if (policy_kwargs or {}).get("agent_obs") is not None:
            return dict(policy_kwargs or {})
        sym = get_symmetry(env)
        agent_obs = None if sym is None else sym.agent_obs
        if agent_obs is None:
            raise ValueError(
                "policy='FairEPolicy' needs an env whose symmetry gives per-agent views (symmetry.agent_obs)"
            )
        return {**(policy_kwargs or {}), "agent_obs": np.asarray(agent_obs).tolist()}

    def _setup_fairness(self, env: VecEnv) -> None:
        super()._setup_fairness(env)
        sym = get_symmetry(env)
        if sym is None:
            if self.equivariance_coef > 0:
                raise ValueError(
                    "equivariance_coef > 0 needs an env that describes its agent symmetry "
                    "(`env.unwrapped.symmetry`, an sb3_fair.common.symmetry.AgentSymmetry)"
                )
            self.symmetry = None
            return
        space = type(self.observation_space).__name__
        actor_views = getattr(getattr(self, "actor", None), "agent_obs", None)  # the Fair-E actor's, else None
        if actor_views is not None and not isinstance(self.observation_space, (spaces.Box, spaces.MultiBinary)):
            # the views pick entries of the network's input, which SB3 one-hot encodes for a (Multi)Discrete space
            raise ValueError(
                f"policy='FairEPolicy' needs a Box or MultiBinary observation (each agent's view picks entries of it "
                f"as the network sees it), got {space}"
            )
        if not isinstance(self.observation_space, (spaces.Box, spaces.MultiBinary, spaces.MultiDiscrete)):
            if self.equivariance_coef > 0:  # a permutation of entries needs an array of them
                raise ValueError(
                    f"equivariance_coef > 0 needs an array observation (Box, MultiBinary, MultiDiscrete: Fair-ER permutes "
                    f"its entries among the agents), got {space}: use equivariance_coef=0 (the parent) or such an env"
                )
            self.symmetry = None  # at zero weight the parent, on any observation it takes
            return
        sym.check_action_space(int(np.prod(self.action_space.shape)))  # type: ignore[arg-type]  # gymnasium's Space.shape is Optional; TD3's action space is a Box
        obs_shape = self.observation_space.shape
        if sym.obs_dim != int(np.prod(obs_shape)):
            raise ValueError(
                f"symmetry: the permutation acts on observations of size {sym.obs_dim}, the env's have size {obs_shape}"
            )
        if actor_views is not None and np.asarray(actor_views).shape[0] != sym.n_agents:
            raise ValueError(
                f"policy_kwargs['agent_obs'] gives {np.asarray(actor_views).shape[0]} agents' views, but the env's symmetry has "
                f"{sym.n_agents} agents: the Fair-E actor would act for the wrong number of agents; leave agent_obs out "
                "to take the env's (symmetry.agent_obs)"
            )
        self.symmetry = sym
        perms = sym.permutations()
        device = self.device
        # the index maps of every permutation, made once on the device: drawing sigma per sample is then one
        # NumPy draw and two row look-ups (no per-update conversion of index arrays)
        self._obs_perm = th.as_tensor(np.stack([np.asarray(sym.obs_index(p)) for p in perms]), device=device)
        self._act_perm = th.as_tensor(np.stack([sym.action_index(p) for p in perms]), device=device)
        if getattr(self, "_perm_rng", None) is None:  # a loaded model keeps its saved generator: resume is exact
            self._perm_rng = np.random.default_rng(self.seed)

    def _excluded_save_params(self) -> list[str]:
        return [*super()._excluded_save_params(), "symmetry", "_obs_perm", "_act_perm", "_eqv_errors"]

    def fairness_config(self) -> dict[str, Any]:
        """The fairness hyperparameters (stored in the W&B run config)."""
        return {
            **super().fairness_config(),
            "equivariance_coef": self.equivariance_coef,
            "equivariance_distance": self.equivariance_distance,
            "fair_e": isinstance(self.policy, FairEPolicy),
            "n_agents": None if self.symmetry is None else self.symmetry.n_agents,
        }

    def _draw_permutations(self, batch_size: int) -> tuple[th.Tensor, th.Tensor]:
        """One random sigma per sample: its observation and action index maps, ``(batch_size, obs_dim)`` and
        ``(batch_size, action_dim)``, drawn from ``_perm_rng`` (saved with the model, so a resumed run draws on).

        :param batch_size: number of samples.
        """
        k = th.from_numpy(self._perm_rng.integers(0, self._obs_perm.shape[0], size=batch_size))
        k = k.to(self._obs_perm.device)
        # index_select: a few microseconds cheaper than advanced indexing (table[k])
        return self._obs_perm.index_select(0, k), self._act_perm.index_select(0, k)

    def equivariance_term(self, obs: th.Tensor, actions: th.Tensor) -> th.Tensor:
        """Per-sample ``d(mu(sigma . s), stop_grad(sigma . mu(s)))`` for one random sigma per sample.

        :param obs: the batch of observations ``s``.
        :param actions: ``mu(s)`` (detached here).
        """
        assert self.symmetry is not None
        obs_index, act_index = self._draw_permutations(obs.shape[0])
        target = th.gather(actions.detach(), 1, act_index)
        return equivariance_distance(
            self.actor(th.gather(obs, 1, obs_index)),
            target,
            self.symmetry.n_agents,
            self.equivariance_distance,
        )

    def _actor_loss(self, obs: th.Tensor, eqv_errors: list[th.Tensor]) -> th.Tensor:
        """TD3's actor loss ``-Q1(s, mu(s))`` plus the Fair-ER term; the measured error (a detached scalar
        tensor) goes to ``eqv_errors``.

        :param obs: the batch of observations.
        :param eqv_errors: collects the mean equivariance error of each update (averaged once in :meth:`train`).
        """
        actions = self.actor(obs)
        actor_loss = -self.critic.q1_forward(obs, actions).mean()
        if self.equivariance_coef > 0:
            eqv = self.equivariance_term(obs, actions).mean()
            eqv_errors.append(eqv.detach())  # no .item() (a sync and a Python float) per update: averaged once in train
            return actor_loss + self.equivariance_coef * eqv
        if self._n_updates % 10 == 0:
            # lambda = 0: measured on every 10th update only, without gradient or torch randomness
            with th.no_grad():
                eqv_errors.append(self.equivariance_term(obs, actions).mean())
        return actor_loss

    def _actor_backward(self, actor_loss: th.Tensor) -> None:
        """Fill the ``.grad`` of the actor's optimised parameters with the gradient of ``actor_loss``.

        ``actor_loss.backward()`` (SB3's) also computes the gradient with respect to the critic's Q1 weights,
        which nothing reads: ``critic.optimizer.zero_grad()`` drops it before the next critic update. Asking
        autograd for the actor's parameters only skips those matrix products (about 100 us of an actor update
        with [128, 128] nets, 4% of a DDPG gradient step on PursuitEvasion);
        the actor's gradients are the same numbers (bit for bit: tests/test_parent_equivalence.py checks that
        lambda = 0 gives the parent's weights). As ``backward()`` does, it adds to a gradient already there.

        :param actor_loss: the scalar actor loss.
        """
        params = [p for group in self.actor.optimizer.param_groups for p in group["params"] if p.requires_grad]
        if not params:  # a frozen actor: autograd.grad needs inputs, backward() does not
            actor_loss.backward()
            return
        grads = th.autograd.grad(actor_loss, params, allow_unused=True)
        for param, grad in zip(params, grads):
            if grad is not None:
                param.grad = grad if param.grad is None else param.grad + grad

    # ------------------------------------------------------------------ the actor-loss hook (sb3_fair.common.loss_hooks)
    def uses_actor_loss_hook(self) -> bool:
        """Fair-ER changes the actor's update on an env with an agent symmetry (without one, TD3's is SB3's own)."""
        return self.symmetry is not None

    def actor_loss(self, obs: th.Tensor) -> th.Tensor:
        """:meth:`_actor_loss`, its measured equivariance error kept for :meth:`train`'s records."""
        return self._actor_loss(obs, self._eqv_errors)

    def actor_backward(self, actor_loss: th.Tensor) -> None:
        """:meth:`_actor_backward`: the actor's gradients only."""
        self._actor_backward(actor_loss)

    def train(self, gradient_steps: int, batch_size: int = 100) -> None:
        """The parent's update (through :class:`~sb3_fair.common.loss_hooks.ActorLossHook`, with :meth:`actor_loss`
        as the actor loss when the env has a symmetry), then the two ``fairness/`` records.

        :param gradient_steps: number of gradient steps.
        :param batch_size: minibatch size.
        """
        self._eqv_errors: list[th.Tensor] = []
        super().train(gradient_steps, batch_size)
        if self._eqv_errors:
            eqv_error = float(np.mean(th.stack(self._eqv_errors).tolist()))  # one sync; NumPy's mean of the floats
            self.logger.record("fairness/equivariance_error", eqv_error)
            self.logger.record("fairness/equivariance_reg", self.equivariance_coef * eqv_error)
        self._eqv_errors = []


__all__ = ["DISTANCES", "FairERMixin", "equivariance_distance"]
