"""FairQCM (Alamdari et al. 2024, arXiv:2312.04772, §5.2, Eq. 2, Alg. 1) as a mixin for an off-policy Q-learning parent:
counterfactual memory replay, and sb3-fair's potential-based shaping of the fairness reward.

``class FairDQN(FairQCMMixin, FairAlgorithmMixin, TDLossHook, DQN)``: the mixin owns ``counterfactual``,
``counterfactual_offsets``, ``max_counterfactuals`` and ``potential_shaping``, and enters SB3 at its seams: the
replay buffer class (``_setup_model``), the choice of the counterfactual set before the step (``_sample_action``)
and the stored transitions (``_store_transition``). The memory update and the reward of a counterfactual
transition are :func:`~sb3_fair.common.fairqcm.memory.update_memory` and
:func:`~sb3_fair.common.fairqcm.reward.fairness_reward`, the functions the wrappers apply to real ones.
"""

from __future__ import annotations

import inspect
import warnings
from dataclasses import fields
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.buffers import ReplayBuffer
from stable_baselines3.common.vec_env import VecEnv

from sb3_fair.common.fairqcm.buffers import (
    CounterfactualDictReplayBuffer,
    CounterfactualReplayBuffer,
    CounterfactualRows,
    ObsBatch,
)
from sb3_fair.common.fairqcm.memory import (
    MemorySpec,
    counterfactual_memories,
    decode_memory,
    encode_memory,
    observed_memory,
    update_memory,
)
from sb3_fair.common.fairqcm.reward import RewardSpec, fairness_reward, potential_shaping, shaping_from_welfare
from sb3_fair.common.protocol import BENEFITS, get_fairness_terms, get_fairqcm_spec, get_memory_key
from sb3_fair.common.validation import check_bool, check_int, is_default

if TYPE_CHECKING:
    from stable_baselines3.common.off_policy_algorithm import OffPolicyAlgorithm

    from sb3_fair.common.fair_algorithm import FairAlgorithmMixin

    class _FairOffPolicyBase(FairAlgorithmMixin, OffPolicyAlgorithm):
        """What :class:`FairQCMMixin` is mixed into, as the type checker sees it; at run time the mixin is a plain class."""

else:
    _FairOffPolicyBase = object


def _row(obs: ObsBatch, i: int) -> ObsBatch:
    """Sub-env ``i``'s observation of a VecEnv batch (a dict of them for a Dict space)."""
    return {key: value[i] for key, value in obs.items()} if isinstance(obs, dict) else obs[i]


def _repeat(obs: ObsBatch, k: int) -> ObsBatch:
    """``k`` copies of one observation as a batch: float32 for a flat one, each entry's own dtype in a dict (images stay uint8)."""
    if isinstance(obs, dict):
        return {key: np.repeat(np.asarray(value)[None], k, axis=0) for key, value in obs.items()}
    return np.repeat(np.asarray(obs, dtype=np.float32)[None], k, axis=0)


def _encode_both(spec: MemorySpec, memories: np.ndarray, next_memories: np.ndarray) -> np.ndarray:
    """``encode_memory`` of the rows of ``memories`` then those of ``next_memories``, in one call (the encoding is
    elementwise); where one cannot be encoded, the error is the one its own call gives."""
    try:
        return encode_memory(spec, np.concatenate([memories, next_memories]))
    except ValueError:
        encode_memory(spec, memories)
        encode_memory(spec, next_memories)
        raise


def check_offsets(offsets: Any) -> tuple[float, ...]:
    """``counterfactual_offsets`` as a tuple of floats, checked to be finite numbers (not strings or bools)."""
    if isinstance(offsets, (str, bytes)) or not np.iterable(offsets):
        raise ValueError(f"counterfactual_offsets must be a tuple of numbers, got {offsets!r}")
    out = []
    for o in offsets:
        if (
            isinstance(o, (str, bytes, bool, np.bool_))
            or not isinstance(o, (int, float, np.integer, np.floating))
            or not np.isfinite(o)
        ):
            raise ValueError(f"counterfactual_offsets must be a tuple of finite numbers, got {offsets!r}")
        out.append(float(o))
    return tuple(out)


def usable_offsets(spec: MemorySpec, offsets: tuple[float, ...]) -> tuple[tuple[float, ...], str]:
    """The offsets that can shift some memory of ``spec`` to a counterfactual one, and the range that says so.

    Mirrors the filters of :func:`~sb3_fair.common.fairqcm.memory.counterfactual_memories`: with ``max_value`` M, a
    candidate keeps every entry below M (and, for the scaled and binary encodings, at or above 0); the
    memory's entries lie in ``[0, M]``. So an offset ``o`` can only ever be used where ``o < M`` (and
    ``o > -M`` for those encodings); without ``max_value`` (a raw memory) every offset can.

    :return: ``(usable offsets, a sentence giving the range)``.
    """
    if spec.max_value is None:
        return tuple(offsets), "the memory has no max_value, so every offset can be used"
    top = float(spec.max_value)
    if spec.encoding == "raw":
        usable = tuple(o for o in offsets if o < top)
        return usable, (
            f"its memory entries lie in [0, {top:g}] (max_value) and a counterfactual memory keeps each entry below "
            f"{top:g}, so only offsets below {top:g} can be used"
        )
    usable = tuple(o for o in offsets if -top < o < top)
    return usable, (
        f"its memory entries lie in [0, {top:g}] (max_value) and a counterfactual memory keeps each entry in "
        f"[0, {top:g}), so only offsets strictly between {-top:g} and {top:g} can be used"
    )


class FairQCMMixin(_FairOffPolicyBase):
    """FairQCM counterfactual memory replay and potential-based shaping for an off-policy Q-learning parent.

    With ``counterfactual=True`` the env must carry a :class:`~sb3_fair.wrappers.MemoryAugmentation`
    and a :class:`~sb3_fair.wrappers.FairnessReward`. For each real transition
    ``(<s,m>, a, <s',m'>, r)`` the mixin also stores, for every memory ``m~`` in a set ``M'_t`` chosen
    before the step's outcome is seen (Thm. 5.7) and excluding ``m_t``, the counterfactual transition
    ``(<s,m~>, a, <s', mu(m~, a, s')>, R(<s', mu(m~, a, s')>))`` (Eq. 2). The default ``M'_t`` is the paper's
    ``{m_i + 1, m_i + 2}^n`` (A.4.1; 32 memories for n = 5); with more than ``max_counterfactuals`` members,
    that many are drawn at random before the step. With both ``counterfactual`` and ``potential_shaping`` off
    the parent's behaviour is unchanged. The arguments are described on :class:`~sb3_fair.FairDQN`.

    :param counterfactual: add FairQCM counterfactual transitions to the replay buffer.
    :param counterfactual_offsets: the per-entry offsets of the counterfactual set.
    :param max_counterfactuals: cap on the counterfactual memories per real step (``None``: the whole set).
    :param potential_shaping: add ``gamma * Phi(m') - Phi(m)`` to the reward of every stored transition.
    """

    def __init__(
        self,
        *args: Any,
        counterfactual: bool = False,
        counterfactual_offsets: tuple[float, ...] = (1.0, 2.0),
        max_counterfactuals: int | None = 32,
        potential_shaping: bool = False,
        **kwargs: Any,
    ) -> None:
        offsets = check_offsets(counterfactual_offsets)
        if counterfactual and len(offsets) == 0:
            raise ValueError(
                f"counterfactual_offsets must be a non-empty tuple of finite numbers, got {counterfactual_offsets!r}"
            )
        if counterfactual and not any(offsets):
            raise ValueError(
                f"counterfactual_offsets {counterfactual_offsets!r} give no counterfactual memory (every candidate m + 0 is "
                "the real memory, which is left out): give at least one non-zero offset, e.g. (1, 2)"
            )
        check_int(max_counterfactuals, "max_counterfactuals", 1, allow_none=True)
        _warn_unused(type(self).__name__, counterfactual, counterfactual_offsets, max_counterfactuals)
        self.counterfactual = check_bool(counterfactual, "counterfactual")
        self.potential_shaping = check_bool(potential_shaping, "potential_shaping")
        self.counterfactual_offsets = offsets
        self.max_counterfactuals = None if max_counterfactuals is None else int(max_counterfactuals)
        if self.counterfactual:
            if kwargs.get("replay_buffer_class") not in (
                None,
                CounterfactualReplayBuffer,
                CounterfactualDictReplayBuffer,
            ):
                raise ValueError(
                    "counterfactual=True needs replay_buffer_class=CounterfactualReplayBuffer, "
                    "CounterfactualDictReplayBuffer (a Dict observation) or None (chosen from the env)"
                )
            if kwargs.get("n_steps", 1) != 1:
                raise ValueError("counterfactual=True supports n_steps=1 only")
        self.memory_spec: MemorySpec | None = None
        self.reward_spec: RewardSpec | None = None
        self._cf_sets: list[np.ndarray] | None = None
        self._welfare_cache: dict[int, tuple[bytes, float]] = {}  # per sub-env: the last memory's bytes and its W
        self._cf_count = 0
        self._cf_steps = 0
        super().__init__(*args, **kwargs)

    # ------------------------------------------------------------------ set-up and checks
    def _setup_model(self) -> None:
        if self.counterfactual and self.replay_buffer_class is None:  # as SB3 picks a Dict buffer for a Dict space
            dict_obs = isinstance(self.observation_space, spaces.Dict)
            self.replay_buffer_class = CounterfactualDictReplayBuffer if dict_obs else CounterfactualReplayBuffer
        super()._setup_model()

    def _setup_fairness(self, env: VecEnv) -> None:
        """Check the env against the stakeholder contract and read the memory and reward specs."""
        super()._setup_fairness(env)
        if not (self.counterfactual or self.potential_shaping):
            return
        gamma = self.gamma
        if self.potential_shaping and not (
            isinstance(gamma, (int, float)) and not isinstance(gamma, bool) and 0.0 <= gamma < 1.0
        ):
            raise ValueError(
                f"potential_shaping=True needs gamma in [0, 1) (Phi = fairness_coef * W / (1 - gamma)), got gamma={gamma!r}"
            )
        # both read the memory from the observation and recompute the reward's welfare from it
        needs = "counterfactual=True" if self.counterfactual else "potential_shaping=True"
        memory_spec, reward_spec, memory_slice = get_fairqcm_spec(env)
        if memory_spec is None:
            raise ValueError(
                f"{needs} needs an env with memory: wrap it in sb3_fair.wrappers.MemoryAugmentation (or set it to False)"
            )
        if reward_spec is None:
            raise ValueError(
                f"{needs} needs the reward to be a function of the memory: wrap the env in sb3_fair.wrappers.FairnessReward"
            )
        if self._vec_normalize_env is not None or not isinstance(self.observation_space, (spaces.Box, spaces.Dict)):
            raise ValueError(
                f"{needs} needs MemoryAugmentation's observation (a flat Box, or a Dict with "
                "dict_observation=True) and no VecNormalize"
            )
        if memory_spec.kind == "reset":
            raise ValueError(
                f"{needs} cannot use memory kind 'reset': the status is not a function of that memory; use 'full' or 'min'"
            )
        if memory_spec.kind == "min" and reward_spec.welfare != "parity":
            raise ValueError(
                f"memory kind 'min' loses the level of the status, so only the shift-invariant welfare 'parity' "
                f"can be recomputed from it; got welfare={reward_spec.welfare!r}. Use memory kind 'full'"
            )
        if memory_spec.groups is not None and reward_spec.aggregate != "group":
            raise ValueError("a per-group memory needs a FairnessReward with aggregate='group'")
        if memory_spec.kind == "min" and reward_spec.aggregate == "group" and memory_spec.groups is None:
            raise ValueError(
                "memory kind 'min' with a group reward needs a per-group memory (MemoryAugmentation(per_group=True))"
            )
        if self.counterfactual:
            usable, bounds = usable_offsets(memory_spec, self.counterfactual_offsets)
            if not any(usable):
                raise ValueError(
                    f"counterfactual_offsets {self.counterfactual_offsets} give no counterfactual memory on this env: {bounds}, "
                    "so every shifted memory falls outside the memory's range (or is the real memory, for 0): give at least "
                    "one non-zero offset in that range, e.g. (1, 2)"
                )
            if memory_spec.kind == "min" and len(set(usable)) < 2:
                raise ValueError(
                    f"memory kind 'min' subtracts the minimum, so the single offset {usable} (of counterfactual_offsets "
                    f"{self.counterfactual_offsets}, {bounds}) moves every entry alike and gives back the real memory: "
                    "counterfactual_offsets needs two distinct values in that range, e.g. (1, 2)"
                )
        if (
            self.counterfactual
            and memory_spec.encoding == "binary"
            and not all(float(o).is_integer() for o in self.counterfactual_offsets)
        ):
            raise ValueError(
                f"a binary-encoded memory needs integer counterfactual_offsets, got {self.counterfactual_offsets}"
            )
        self.memory_spec = memory_spec
        self.reward_spec = reward_spec
        self._welfare_cache = {}
        self._memory_slice = memory_slice
        self._memory_key = get_memory_key(env)
        if getattr(self, "_cf_rng", None) is None:  # a loaded model keeps its saved generator: resume is exact
            self._cf_rng = np.random.default_rng(self.seed)

    def _excluded_save_params(self) -> list[str]:
        return [*super()._excluded_save_params(), "memory_spec", "reward_spec", "_cf_sets", "_welfare_cache"]

    def fairness_config(self) -> dict[str, Any]:
        """The fairness hyperparameters (stored in the W&B run config)."""
        config: dict[str, Any] = {
            **super().fairness_config(),
            "counterfactual": self.counterfactual,
            "counterfactual_offsets": list(self.counterfactual_offsets),
            "max_counterfactuals": self.max_counterfactuals,
            "potential_shaping": self.potential_shaping,
        }
        if self.memory_spec is not None:
            # the spec's fields only (its cached, derived values are not settings)
            config.update(
                {
                    f"memory_{f.name}": getattr(self.memory_spec, f.name)
                    for f in fields(self.memory_spec)
                    if f.name != "groups"
                }
            )
        if self.reward_spec is not None:
            config.update(
                {
                    f"reward_{k}": getattr(self.reward_spec, k)
                    for k in ("welfare", "aggregate", "scheme", "period", "fairness_coef", "task_coef")
                }
            )
        return config

    # ------------------------------------------------------------------ counterfactual replay
    def _sample_action(
        self, learning_starts: int, action_noise: Any = None, n_envs: int = 1
    ) -> tuple[np.ndarray, np.ndarray]:
        action, buffer_action = super()._sample_action(learning_starts, action_noise, n_envs)
        if self.counterfactual:
            # M'_t is chosen here, from m_t only, before the step's outcome is seen (Alamdari et al. 2024, Thm. 5.7).
            # set by SB3's _setup_learn / the last step, and by _setup_fairness (counterfactual=True needs the spec)
            assert self._last_obs is not None and self.memory_spec is not None
            memories = self._memories(self._last_obs)
            self._cf_sets = [
                counterfactual_memories(
                    self.memory_spec, m, self.counterfactual_offsets, self.max_counterfactuals, self._cf_rng
                )
                for m in memories
            ]
        return action, buffer_action

    def _store_transition(
        self,
        replay_buffer: ReplayBuffer,
        buffer_action: np.ndarray,
        new_obs: np.ndarray | dict[str, np.ndarray],
        reward: np.ndarray,
        dones: np.ndarray,
        infos: list[dict[str, Any]],
    ) -> None:
        last_obs = self._last_obs
        if not (self.counterfactual or self.potential_shaping):
            super()._store_transition(replay_buffer, buffer_action, new_obs, reward, dones, infos)
            return
        assert last_obs is not None  # set by SB3's _setup_learn / the last step
        # each sub-env's next observation (the terminal one at an episode's end, as DQN stores it) and whether the
        # episode truly ended (a time-limit cut bootstraps, as the buffer's handle_timeout_termination does)
        next_rows = [
            info["terminal_observation"]
            if dones[i] and info.get("terminal_observation") is not None
            else _row(new_obs, i)
            for i, info in enumerate(infos)
        ]
        terminal = [
            bool(dones[i])
            and not (bool(info.get("TimeLimit.truncated", False)) and replay_buffer.handle_timeout_termination)
            for i, info in enumerate(infos)
        ]
        if self.potential_shaping:
            assert self.reward_spec is not None
            shaping = []
            for i in range(len(infos)):
                # the step's memory is the previous step's next memory (unless an episode ended): its W is reused
                w, w_next = self._row_welfare(_row(last_obs, i), i), self._row_welfare(next_rows[i], i)
                shaping.append(shaping_from_welfare(w, w_next, self.reward_spec.fairness_coef, self.gamma, terminal[i]))
            reward = (np.asarray(reward, dtype=np.float64) + np.asarray(shaping)).astype(np.float32)
        super()._store_transition(replay_buffer, buffer_action, new_obs, reward, dones, infos)
        if not self.counterfactual or self._cf_sets is None:
            return
        assert isinstance(replay_buffer, CounterfactualRows)
        for i, info in enumerate(infos):
            obs_cf, next_cf, rew_cf, mem_cf, next_mem_cf = self._counterfactual_rows(
                _row(last_obs, i), next_rows[i], info, self._cf_sets[i]
            )
            if self.potential_shaping:
                rew_cf = (rew_cf + self._shaping(mem_cf, next_mem_cf, terminal[i])).astype(np.float32)
            k = len(rew_cf)
            done_cf = np.full(k, float(terminal[i]), dtype=np.float32)
            act_cf = np.repeat(np.asarray(buffer_action)[i : i + 1], k, axis=0)
            replay_buffer.add_batch(obs_cf, next_cf, act_cf, rew_cf, done_cf)
            self._cf_count += k
        self._cf_steps += len(infos)
        self._cf_sets = None

    def _memories(self, obs: ObsBatch) -> np.ndarray:
        """The memories decoded from a batch of observations (rows of a flat Box, or of the Dict's memory entry)."""
        assert self.memory_spec is not None  # read by _setup_fairness
        rows = obs[self._memory_key] if self._memory_key else obs
        return decode_memory(self.memory_spec, np.asarray(rows)[:, self._memory_slice])

    def _row_welfare(self, obs: ObsBatch, i: int) -> float:
        """W of the memory in one observation of sub-env ``i``, as the reward spec computes it.

        The last value of each sub-env is kept with the memory's bytes in the observation: a step's
        next memory is the next step's memory, so each real step decodes and weighs one memory, not
        two. Equal bytes give the same decoded memory, hence the same W; anything else is computed.
        """
        assert self.memory_spec is not None and self.reward_spec is not None
        # as a batch of observations holds it (_repeat): a flat one as float32, a Dict entry in its own dtype
        raw = np.asarray(obs[self._memory_key]) if self._memory_key else np.asarray(obs, dtype=np.float32)
        encoded = raw[self._memory_slice]
        key = encoded.tobytes()
        cached = self._welfare_cache.get(i)
        if cached is not None and cached[0] == key:
            return cached[1]
        w = float(
            self.reward_spec.welfare_of(decode_memory(self.memory_spec, encoded), self.memory_spec.groups is not None)
        )
        self._welfare_cache[i] = (key, w)
        return w

    def _shaping(self, memories: np.ndarray, next_memories: np.ndarray, terminal: bool) -> np.ndarray:
        """``potential_shaping``'s term for a batch of transitions between ``memories`` and ``next_memories``, as their
        observations hold them (:func:`~sb3_fair.common.fairqcm.memory.observed_memory`: the agent's view, as for a real step)."""
        spec = self.memory_spec
        assert spec is not None and self.reward_spec is not None
        shaped = potential_shaping(
            self.reward_spec,
            observed_memory(spec, memories),
            observed_memory(spec, next_memories),
            self.gamma,
            terminal,
            spec.groups is not None,
        )
        return np.asarray(shaped, dtype=np.float64)

    def counterfactual_transitions(
        self, obs: ObsBatch, next_obs: ObsBatch, info: dict[str, Any], memories: np.ndarray
    ) -> tuple[ObsBatch, ObsBatch, np.ndarray]:
        """Alamdari et al.'s (2024) Eq. 2 for one real transition and a set of counterfactual memories ``m~``.

        :param obs: the real observation (an array, or a dict for a Dict observation space).
        :return: observations ``<s, m~>``, next observations ``<s', mu(m~, a, s')>`` and rewards
            ``R(<s', mu(m~, a, s')>)``, one row per memory (dicts of such rows for a Dict space).
        """
        return self._counterfactual_rows(obs, next_obs, info, memories)[:3]

    def _counterfactual_rows(
        self, obs: ObsBatch, next_obs: ObsBatch, info: dict[str, Any], memories: np.ndarray
    ) -> tuple[ObsBatch, ObsBatch, np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`counterfactual_transitions`, and the memories ``m~`` and ``mu(m~, a, s')`` of the rows it kept."""
        spec, rspec = self.memory_spec, self.reward_spec
        assert spec is not None and rspec is not None
        benefits = np.asarray(info[BENEFITS], dtype=np.float64)
        terms = get_fairness_terms(info)
        next_mem = update_memory(spec, memories, benefits)
        # a memory beyond max_value cannot be encoded: its row is dropped (one reduction tells whether any is)
        if spec.max_value is not None and next_mem.size and not next_mem.max() <= spec.max_value:
            ok = np.all(next_mem <= spec.max_value, axis=1)
            memories, next_mem = memories[ok], next_mem[ok]
        k = len(memories)
        key = self._memory_key
        if key or isinstance(obs, dict):
            obs_cf, next_cf = _repeat(obs, k), _repeat(next_obs, k)
            # the batch that holds the memory: the Dict's memory entry (an array)
            cast(np.ndarray, obs_cf[key] if key else obs_cf)[:, self._memory_slice] = encode_memory(spec, memories)
            cast(np.ndarray, next_cf[key] if key else next_cf)[:, self._memory_slice] = encode_memory(spec, next_mem)
        else:  # a flat observation: both batches in one float32 array (as _repeat casts), both memories encoded at once
            both = np.empty((2, k, *np.shape(obs)), dtype=np.float32)
            both[0], both[1] = obs, next_obs
            if k:
                both[:, :, self._memory_slice] = _encode_both(spec, memories, next_mem).reshape(2, k, -1)
            obs_cf, next_cf = both[0], both[1]
        grouped = spec.groups is not None
        rewards = np.asarray(
            fairness_reward(rspec, next_mem, bool(terms["active"]), terms["task_reward"], grouped), dtype=np.float32
        ).reshape(k)
        return obs_cf, next_cf, rewards, memories, next_mem

    # ------------------------------------------------------------------ training
    def train(self, gradient_steps: int, batch_size: int = 100) -> None:
        """The parent's update, then ``fairness/counterfactuals_per_step``."""
        super().train(gradient_steps, batch_size)
        if self.counterfactual and self._cf_steps:
            self.logger.record("fairness/counterfactuals_per_step", self._cf_count / self._cf_steps)


def _warn_unused(algo: str, counterfactual: Any, offsets: Any, max_counterfactuals: Any) -> None:
    """Warn about counterfactual settings without ``counterfactual=True`` (warned, not refused: a sweep's grid over
    ``counterfactual=true,false`` keeps the counterfactual settings of its entry)."""
    if counterfactual:
        return
    given = {"counterfactual_offsets": offsets, "max_counterfactuals": max_counterfactuals}
    unused = [
        f"{name}={value!r} (only counterfactual=True uses it)"
        for name, value in given.items()
        if not is_default(value, COUNTERFACTUAL_DEFAULTS[name])
    ]
    if unused:
        warnings.warn(f"{algo} does not use {'; '.join(unused)}", UserWarning, stacklevel=4)


#: the defaults of the arguments that only counterfactual replay uses
COUNTERFACTUAL_DEFAULTS: dict[str, Any] = {
    name: p.default
    for name, p in inspect.signature(FairQCMMixin.__init__).parameters.items()
    if name in ("counterfactual_offsets", "max_counterfactuals")
}

__all__ = ["COUNTERFACTUAL_DEFAULTS", "FairQCMMixin", "check_offsets", "usable_offsets"]
