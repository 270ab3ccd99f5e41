"""Logging fairness figures to SB3's logger (stdout, CSV, TensorBoard, W&B) for any SB3 algorithm."""

from __future__ import annotations

import warnings
from collections import deque
from collections.abc import Iterable
from typing import Any, SupportsIndex, overload

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.on_policy_algorithm import OnPolicyAlgorithm

from sb3_fair._exact import pairwise_sum
from sb3_fair.common.figure_table import scalar_figures
from sb3_fair.common.protocol import FAIRNESS, get_fairness_signal_lists, is_fairness_signals_supported
from sb3_fair.common.validation import check_int, check_wandb
from sb3_fair.common.wandb_logging import WandbOutputFormat, active_wandb_run, finish_wandb_run, start_wandb_run


class EpisodeFigures(deque[dict[str, float]]):
    """The recent episodes' figures (one dict each, newest last): a bounded :class:`collections.deque`, as SB3's
    ``ep_info_buffer``, that also takes a slice, ``episodes[-20:]``, and gives a list for it (a deque alone raises
    ``TypeError``)::

        callback = FairnessCallback()
        model.learn(10_000, callback=callback)
        last = callback.episodes[-20:]  # the 20 newest episodes' figures
    """

    @overload
    def __getitem__(self, index: SupportsIndex) -> dict[str, float]: ...

    @overload
    def __getitem__(self, index: slice) -> list[dict[str, float]]: ...

    def __getitem__(self, index: SupportsIndex | slice) -> dict[str, float] | list[dict[str, float]]:
        if isinstance(index, slice):
            return list(self)[index]
        return super().__getitem__(index)


class FairnessCallback(BaseCallback):
    """Record ``fairness/<figure>``: the mean of the monitors' episode figures over the last ``window``
    episodes, next to SB3's ``rollout/ep_rew_mean``; and, for an env that reports Hu et al.'s (2024)
    short- and long-term gaps in every step's info (:func:`~sb3_fair.common.protocol.is_fairness_signals_supported`),
    ``fairness/short_term`` and ``fairness/long_term``: their mean over the last rollout (on-policy
    algorithms), or over the steps since the last log dump (off-policy algorithms).

    Works with any SB3 algorithm whose env reports ``info["fairness"]``
    (:class:`~sb3_fair.wrappers.FairnessMonitor`, or :class:`~sb3_fair.wrappers.ParallelFairnessMonitor`
    on the games of :func:`~sb3_fair.wrappers.make_multiagent_vec_env`); Fair* algorithms add it themselves. With ``wandb`` set, it also starts a W&B run whose config holds the model's
    hyperparameters and fairness configuration, and streams every logger dump to it; the run is
    finished when training ends. If a run is already active (you called ``wandb.init``), it is joined
    (its config updated) and left open for you to finish.

    Example::

        from stable_baselines3 import DQN
        from sb3_fair.common.callbacks import FairnessCallback
        from sb3_fair.envs import make_donut_allocation
        from sb3_fair.wrappers import FairnessMonitor

        model = DQN("MlpPolicy", FairnessMonitor(make_donut_allocation()))
        model.learn(10_000, callback=FairnessCallback())

    :param window: number of recent episodes averaged (SB3's ``stats_window_size`` by default).
    :param wandb: ``False``, ``True`` or a dict of :func:`wandb.init` arguments.
    :param config: extra entries for the W&B run config.
    :param episodes: figures of earlier episodes to go on from (a resumed run's).
    """

    def __init__(
        self,
        window: int | None = None,
        wandb: bool | dict[str, Any] = False,
        config: dict[str, Any] | None = None,
        verbose: int = 0,
        episodes: Iterable[dict[str, float]] | None = None,
    ) -> None:
        super().__init__(verbose)
        self.window = check_int(window, "window", 1, allow_none=True)
        if config is not None and not isinstance(config, dict):
            raise ValueError(f"config must be a dict or None, got {config!r}")
        self.wandb = check_wandb(wandb)
        self.config = dict(config or {})
        self.episodes: EpisodeFigures = EpisodeFigures(episodes or (), maxlen=self.window or 100)
        self.wandb_run: Any = None
        self._owns_run = False
        self._output: WandbOutputFormat | None = None
        self.wandb_report: str | None = None  # W&B failures of the last training, if any
        self._signals = [0.0, 0.0, 0]  # sums of the per-step mean Δs and Δl, and the step count
        self._per_rollout = False  # on-policy: Δs and Δl are the rollout's mean (set when training starts)

    def _init_callback(self) -> None:
        self._per_rollout = isinstance(self.model, OnPolicyAlgorithm)
        if self.window is None:
            self.episodes = EpisodeFigures(self.episodes, maxlen=getattr(self.model, "_stats_window_size", 100))
        if hasattr(self.model, "fairness_episodes"):  # a Fair model saves them, so a resumed run goes on from them
            self.model.fairness_episodes = self.episodes
        if self.wandb:
            init_kwargs = dict(self.wandb) if isinstance(self.wandb, dict) else {}
            self._owns_run = active_wandb_run() is None
            self.wandb_run = start_wandb_run(run_config(self.model, self.config), **init_kwargs)
            if self.wandb_run is not None:
                self._output = WandbOutputFormat(self.wandb_run, start=self.model.num_timesteps)
                self.logger.output_formats.append(self._output)

    def _on_training_end(self) -> None:
        if self._output is not None:
            self.logger.dump(self.num_timesteps)  # the last records reach W&B before it closes
            self._output.drain()
            self.logger.output_formats.remove(self._output)
            self.wandb_report = self._output.report()
            if self.wandb_report:
                warnings.warn(self.wandb_report, stacklevel=2)
            self._output = None
        if self._owns_run and self.wandb_run is not None:
            finish_wandb_run(self.wandb_run)

    def _on_step(self) -> bool:
        infos = self.locals.get("infos") or []
        if infos and all(is_fairness_signals_supported(info) for info in infos):
            short_term, long_term = get_fairness_signal_lists(infos)
            n = len(infos)  # the means over the sub-envs, as ndarray.mean computes them (NumPy's sum, then divide)
            ds_mean, dl_mean = pairwise_sum(short_term) / n, pairwise_sum(long_term) / n
            if self._per_rollout:  # recorded when the rollout ends
                sums = self._signals
                sums[0] += ds_mean
                sums[1] += dl_mean
                sums[2] += 1
            else:
                self.logger.record_mean("fairness/short_term", ds_mean)
                self.logger.record_mean("fairness/long_term", dl_mean)
        new = False
        for info in infos:
            fairness = info.get(FAIRNESS)
            if fairness is not None:
                self.episodes.append(scalar_figures(fairness))
                new = True
        if new:
            self.record_means()
        return True

    def _on_rollout_start(self) -> None:
        self._signals = [0.0, 0.0, 0]

    def _on_rollout_end(self) -> None:
        short_term, long_term, steps = self._signals
        if steps:
            self.logger.record("fairness/short_term", short_term / steps)
            self.logger.record("fairness/long_term", long_term / steps)

    def record_means(self) -> None:
        """Record the mean of each figure over the recent episodes under ``fairness/``."""
        keys = sorted({k for ep in self.episodes for k in ep})
        for key in keys:
            values = [ep[key] for ep in self.episodes if key in ep and np.isfinite(ep[key])]
            if values:
                self.logger.record(f"fairness/{key}", float(np.mean(values)))


def run_config(model: Any, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """A flat config of ``model``: its class, its plain hyperparameters and its fairness configuration."""
    config: dict[str, Any] = {"algo": type(model).__name__}
    for key, value in vars(model).items():
        if key.startswith("_") or key in ("env", "policy", "replay_buffer", "rollout_buffer", "q_net", "q_net_target"):
            continue
        if isinstance(value, (int, float, str, bool)) or value is None:
            config[key] = value
        elif isinstance(value, (tuple, list)) and all(isinstance(v, (int, float, str, bool)) for v in value):
            config[key] = list(value)
    config.update(getattr(model, "fairness_config", lambda: {})())
    config.update(extra or {})
    return config


class TrainingCurve(BaseCallback):
    """Keep the figures of every training episode with the step count at which it ended: the data of a learning curve
    of any figure (the episode's reward and the monitor's fairness figures), for any SB3 algorithm.

    An episode is taken from the step's ``info``: SB3's ``Monitor`` puts its reward in ``info["episode"]["r"]``
    (kept as ``episode_reward``) and :class:`~sb3_fair.wrappers.FairnessMonitor` its figures in ``info["fairness"]``
    (the scalar ones are kept under their names). Nothing is logged and nothing the algorithm does changes.

    Example::

        import gymnasium as gym
        from stable_baselines3 import DQN

        import sb3_fair
        from sb3_fair.common.callbacks import TrainingCurve
        from sb3_fair.wrappers import FairnessMonitor

        curve = TrainingCurve()
        env = FairnessMonitor(gym.make("sb3_fair/DonutAllocation-v0"))
        DQN("MlpPolicy", env).learn(1_000, callback=curve)
        steps, log_nash = curve.series("log_nash")   # one point per finished training episode

    :param verbose: SB3's verbosity (unused).
    """

    def __init__(self, verbose: int = 0) -> None:
        super().__init__(verbose)
        #: ``(step count, figures)`` of each finished training episode, in order
        self.points: list[tuple[int, dict[str, float]]] = []

    def _on_step(self) -> bool:
        for info in self.locals.get("infos") or []:
            point: dict[str, float] = {}
            if FAIRNESS in info:
                point.update(scalar_figures(info[FAIRNESS]))
            episode = info.get("episode")
            if isinstance(episode, dict) and "r" in episode:
                point["episode_reward"] = float(episode["r"])
            if point:
                self.points.append((int(self.num_timesteps), point))
        return True

    def series(self, figure: str) -> tuple[np.ndarray, np.ndarray]:
        """The step counts and values of ``figure`` over the episodes that report it."""
        rows = [(step, point[figure]) for step, point in self.points if figure in point]
        steps = np.array([s for s, _ in rows], dtype=np.int64)
        return steps, np.array([v for _, v in rows], dtype=np.float64)
