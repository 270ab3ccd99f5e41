"""The experiment layer: configs in RL Zoo's format, a registry of algorithms and envs, one ``train(config)``.

The ``sb3-fair`` command, the benchmarks and sweeps all go through :func:`train`::

    from sb3_fair.experiment import ExperimentConfig, train

    cfg = ExperimentConfig.from_hyperparams("fair_dqn", "sb3_fair/DonutAllocation-v0", n_timesteps=20_000, seed=1)
    result = train(cfg)
    print(result.evaluation["egalitarian"], result.evaluation["episode_reward"])

* :mod:`~sb3_fair.experiment.config`: :class:`ExperimentConfig` (plain data) from a hyper-parameter
  file entry (``sb3_fair/hyperparams/<algo>.yml``, keyed by env id, variants as ``<env id>@<variant>``)
  plus ``key=value`` overrides;
* :mod:`~sb3_fair.experiment.registry`: algorithm names (RL Zoo's, plus ``fair_*``), the
  multi-agent games' ids, :func:`make_env`;
* :mod:`~sb3_fair.experiment.build`: :func:`build_model` (the model of a config on its training env);
* :mod:`~sb3_fair.experiment.training`: :func:`train` and :class:`ExperimentResult`, ``train_all`` (many configs
  side by side in worker processes);
* :mod:`~sb3_fair.experiment.evaluation`: :func:`evaluate` (the evaluator that fits the env);
* :mod:`~sb3_fair.experiment.persistence`: a run's files, :func:`load_model`, ``save`` and resuming (beside
  :mod:`~sb3_fair.experiment.files`, the tools that write each file whole and lock a run, and
  :mod:`~sb3_fair.experiment.checkpoints`, the compact checkpoints);
* :mod:`~sb3_fair.experiment.compare`: ``sb3-fair compare``'s tasks, statistics and plot;
* :mod:`~sb3_fair.experiment.sweep`: grids and Optuna searches of :func:`train` on Ray Tune (the
  ``sweep`` extra; imported on its own: ``from sb3_fair.experiment.sweep import sweep``).
"""

# the module of sb3-fair 0.4.0 that held the runner's names: an attribute of the package, as it was
from sb3_fair.experiment import run as run
from sb3_fair.experiment.build import build_model
from sb3_fair.experiment.config import ExperimentConfig, apply_overrides
from sb3_fair.experiment.evaluation import evaluate
from sb3_fair.experiment.persistence import load_model
from sb3_fair.experiment.registry import (
    ALGOS,
    MULTIAGENT_ENVS,
    algo_names,
    canonical_algo,
    get_algo_class,
    make_env,
    register_multiagent_env,
)
from sb3_fair.experiment.training import ExperimentResult, train

__all__ = [
    "ALGOS",
    "MULTIAGENT_ENVS",
    "ExperimentConfig",
    "ExperimentResult",
    "algo_names",
    "apply_overrides",
    "build_model",
    "canonical_algo",
    "evaluate",
    "get_algo_class",
    "load_model",
    "make_env",
    "register_multiagent_env",
    "train",
]
