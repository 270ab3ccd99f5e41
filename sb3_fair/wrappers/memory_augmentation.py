"""Memory augmentation wrapper (Alamdari et al. 2024, Def. 5.2)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, SupportsFloat, cast

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from sb3_fair.common.fairqcm.memory import (
    MemorySpec,
    decode_memory,
    encode_counter,
    encode_memory,
    initial_memory,
    update_memory,
)
from sb3_fair.common.protocol import get_benefits, get_stakeholders
from sb3_fair.common.validation import check_bool
from sb3_fair.wrappers._stacking import refuse_second


def default_max_value(env: gym.Env) -> float | None:
    """The horizon of ``env`` if it declares one (``env.unwrapped.horizon`` or the TimeLimit)."""
    horizon = getattr(env.unwrapped, "horizon", None)
    if horizon is None and env.spec is not None:
        horizon = env.spec.max_episode_steps
    if horizon is None:  # a TimeLimit of an env that was not made from a registered id (no spec)
        try:
            horizon = env.get_wrapper_attr("_max_episode_steps")
        except AttributeError:
            horizon = None
    return None if horizon is None else float(horizon)


class MemoryAugmentation(gym.ObservationWrapper, gym.utils.RecordConstructorArgs):
    """Append a memory of the stakeholders' status to the observation (Alamdari et al. 2024, Def. 5.2).

    The memory starts at zero and is updated after every step from ``info["benefits"]`` with
    :func:`sb3_fair.common.fairqcm.memory.update_memory`, the same function FairDQN uses for counterfactual
    memories. The observation becomes a flat ``Box``: the flattened original observation, then the
    encoded memory, then (with ``period``) a one-hot ``t mod period`` counter, so ``MlpPolicy``
    works unchanged. With ``dict_observation=True`` it becomes a ``Dict`` instead, the env's own
    observation unchanged under ``"observation"`` (an image stays an image) and the encoded memory
    and counter under ``"memory"``, for SB3's ``MultiInputPolicy`` (a CNN on the image, an MLP on
    the memory); FairDQN's counterfactual replay works on both. ``info["memory"]`` holds the raw
    memory after the step.

    Example::

        import gymnasium as gym
        import sb3_fair  # registers the envs
        from sb3_fair.envs import DonutAllocationEnv
        from sb3_fair.wrappers import MemoryAugmentation

        env = MemoryAugmentation(DonutAllocationEnv(), kind="min", encoding="binary")
        obs, info = env.reset(seed=0)   # obs = 5 presence bits + 5 x 7 memory bits

    :param env: an env honouring the stakeholder contract.
    :param kind: ``"full"``, ``"min"`` or ``"reset"`` (see :class:`~sb3_fair.common.fairqcm.memory.MemorySpec`).
    :param per_group: remember per-group totals instead of one entry per stakeholder.
    :param encoding: ``"raw"``, ``"scaled"`` or ``"binary"``.
    :param max_value: bound of an entry for ``"scaled"``/``"binary"``; default: the env's horizon.
    :param period: append a ``t mod period`` counter (Alamdari et al. 2024, Def. 5.8).
    :param dict_observation: a ``Dict`` observation (``"observation"``, ``"memory"``) instead of a flat ``Box``.

    Its arguments are recorded in ``env.spec`` (``gymnasium.utils.RecordConstructorArgs``), so
    ``gym.make(env.spec)`` rebuilds the wrapped env.

    An env takes one memory: an env that already has a ``MemoryAugmentation`` (anywhere in its wrapper chain,
    e.g. ``gym.make("sb3_fair/DonutAllocation-v0")``, which includes one) is refused with a ``ValueError``.
    """

    #: the Dict keys of ``dict_observation=True``
    OBSERVATION_KEY, MEMORY_KEY = "observation", "memory"

    def __init__(
        self,
        env: gym.Env,
        kind: str = "full",
        per_group: bool = False,
        encoding: str = "raw",
        max_value: float | None = None,
        period: int | None = None,
        dict_observation: bool = False,
    ) -> None:
        gym.utils.RecordConstructorArgs.__init__(
            self,
            kind=kind,
            per_group=per_group,
            encoding=encoding,
            max_value=max_value,
            period=period,
            dict_observation=dict_observation,
        )
        refuse_second(
            env,
            MemoryAugmentation,
            "wrap the bare env once (for a registered sb3_fair id choose the memory with gym.make(id, memory=..., "
            "encoding=...), or memory=None for none)",
        )
        gym.ObservationWrapper.__init__(self, env)
        self.dict_observation = check_bool(dict_observation, "dict_observation")
        stakeholders = self._stakeholders = get_stakeholders(env)
        if max_value is None:
            max_value = default_max_value(env)
            if max_value is None and encoding != "raw":
                raise ValueError(
                    f"encoding={encoding!r} needs a bound on a memory entry (max_value), and the env declares none to "
                    "default to: give max_value=..., or an env with a horizon (env.unwrapped.horizon) or a TimeLimit "
                    "(gym.make(id, max_episode_steps=N)), whose length bounds what one stakeholder can receive"
                )
        self.memory_spec = MemorySpec(
            n_stakeholders=stakeholders.n,
            kind=kind,
            encoding=encoding,
            max_value=max_value,
            groups=tuple(int(g) for g in stakeholders.groups) if check_bool(per_group, "per_group") else None,
            period=period,
        )
        self._base_space = env.observation_space
        spec = self.memory_spec
        if spec.encoding == "raw":
            m_low, m_high = np.full(spec.size, -np.inf), np.full(spec.size, np.inf)
        else:
            m_low, m_high = np.zeros(spec.encoded_size), np.ones(spec.encoded_size)
        m_low, m_high = (
            np.concatenate([m_low, np.zeros(spec.counter_size)]),
            np.concatenate([m_high, np.ones(spec.counter_size)]),
        )
        #: the memory's key in a Dict observation (None: flat); read by FairDQN through the stakeholder protocol
        self.memory_key = self.MEMORY_KEY if self.dict_observation else None
        if self.dict_observation:
            self.base_obs_size = 0  # the memory opens the "memory" entry
            memory_box = spaces.Box(low=m_low.astype(np.float32), high=m_high.astype(np.float32), dtype=np.float32)
            self.observation_space = spaces.Dict(
                {self.OBSERVATION_KEY: env.observation_space, self.MEMORY_KEY: memory_box}
            )
        else:
            self.base_obs_size = int(spaces.flatdim(env.observation_space))
            base = cast(spaces.Box, spaces.flatten_space(env.observation_space))  # a Box for every space flatdim takes
            low = np.concatenate([base.low, m_low]).astype(np.float32)
            high = np.concatenate([base.high, m_high]).astype(np.float32)
            self.observation_space = spaces.Box(low=low, high=high, dtype=np.float32)
        #: the length of the flat observation (base, memory, counter)
        self._flat_size = self.base_obs_size + spec.encoded_size + spec.counter_size
        #: ``spaces.flatten`` for the env's space, looked up once (it is a single-dispatch function on the space's type)
        # (the flat path only: a space flatdim takes flattens to an array)
        self._flatten = cast(
            Callable[[spaces.Space, Any], np.ndarray], spaces.flatten.dispatch(type(env.observation_space))
        )
        self._memory = initial_memory(spec)
        self._t = 0

    @property
    def memory_slice(self) -> slice:
        """Where the encoded memory sits in the observation."""
        return slice(self.base_obs_size, self.base_obs_size + self.memory_spec.encoded_size)

    @property
    def memory(self) -> np.ndarray:
        """The current raw memory."""
        return self._memory.copy()

    def observation(self, observation: Any) -> np.ndarray | dict[str, Any]:
        spec = self.memory_spec
        if self.dict_observation:
            memory = np.concatenate([encode_memory(spec, self._memory), encode_counter(spec, self._t)])
            return {self.OBSERVATION_KEY: observation, self.MEMORY_KEY: memory.astype(np.float32)}
        flat = self._flatten(self._base_space, observation)
        if flat.size != self.base_obs_size:  # an observation outside its space: joined as it comes
            memory = np.concatenate([encode_memory(spec, self._memory), encode_counter(spec, self._t)])
            return np.concatenate([flat.astype(np.float32), memory]).astype(np.float32)
        # the parts are written into one new float32 array (casting each as astype(np.float32) does), rather than
        # joined by two concatenations and three casts: this runs at every step
        out = np.empty(self._flat_size, dtype=np.float32)
        end = self.base_obs_size + spec.encoded_size
        out[: self.base_obs_size] = flat
        out[self.base_obs_size : end] = encode_memory(spec, self._memory)
        if spec.counter_size:
            out[end:] = encode_counter(spec, self._t)
        return out

    def decode(self, obs: np.ndarray | dict[str, Any]) -> np.ndarray:
        """The raw memory stored in an observation of this wrapper."""
        part = obs[self.MEMORY_KEY] if isinstance(obs, dict) else obs
        return decode_memory(self.memory_spec, np.asarray(part)[..., self.memory_slice])

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        obs, info = self.env.reset(seed=seed, options=options)
        self._memory = initial_memory(self.memory_spec)
        self._t = 0
        info["memory"] = self.memory
        return self.observation(obs), info

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        benefits = get_benefits(info, self._stakeholders, self.env)
        self._memory = update_memory(self.memory_spec, self._memory, benefits)
        self._t += 1
        info["memory"] = self.memory
        return self.observation(obs), reward, terminated, truncated, info
