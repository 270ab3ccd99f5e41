"""The runner's names where sb3-fair 0.4.0 defined them all, kept so that code importing them from here still runs.

This module held the whole runner; its code now lives by idea, and this module only re-exports the public names it
defined (each the same object as in its module):

* :mod:`~sb3_fair.experiment.build`: :func:`~sb3_fair.experiment.build.build_model`, ``RESERVED_KEYS``;
* :mod:`~sb3_fair.experiment.evaluation`: :func:`~sb3_fair.experiment.evaluation.evaluate`;
* :mod:`~sb3_fair.experiment.persistence`: :func:`~sb3_fair.experiment.persistence.save`,
  :func:`~sb3_fair.experiment.persistence.load_model`, the names of a run's files (``CONFIG_SUFFIX``,
  ``VECNORMALIZE_SUFFIX``, ``saved_config_path``, ``saved_vecnormalize_path``, ``checkpoint_folder``,
  ``checkpoints_in``, ``run_lock_path``) and the checks of a run's files (``check_run_files``, ``RUN_IDENTITY``);
* :mod:`~sb3_fair.experiment.files`: ``check_output_path``, ``existing_ancestor``;
* :mod:`~sb3_fair.experiment.training`: :func:`~sb3_fair.experiment.training.train`,
  :class:`~sb3_fair.experiment.training.ExperimentResult`, ``train_all``, ``check_configs``, ``torch_threads``.

New code imports them from :mod:`sb3_fair.experiment` or from those modules. Nothing a run saves names this module
(the saved configs are YAML; the models, replay buffers and VecNormalize statistics pickle none of its objects).
Replacing a name here (``run.save = ...``) changes only this module's binding, not the function the runner calls:
patch the module that uses it (e.g. ``sb3_fair.experiment.training.save``).
"""

from __future__ import annotations

from sb3_fair.experiment.build import RESERVED_KEYS, build_model
from sb3_fair.experiment.evaluation import evaluate
from sb3_fair.experiment.files import check_output_path, existing_ancestor
from sb3_fair.experiment.persistence import (
    CONFIG_SUFFIX,
    RUN_IDENTITY,
    VECNORMALIZE_SUFFIX,
    check_run_files,
    checkpoint_folder,
    checkpoints_in,
    load_model,
    run_lock_path,
    save,
    saved_config_path,
    saved_vecnormalize_path,
)
from sb3_fair.experiment.training import ExperimentResult, check_configs, torch_threads, train, train_all

__all__ = [
    "CONFIG_SUFFIX",
    "RESERVED_KEYS",
    "RUN_IDENTITY",
    "VECNORMALIZE_SUFFIX",
    "ExperimentResult",
    "build_model",
    "check_configs",
    "check_output_path",
    "check_run_files",
    "checkpoint_folder",
    "checkpoints_in",
    "evaluate",
    "existing_ancestor",
    "load_model",
    "run_lock_path",
    "save",
    "saved_config_path",
    "saved_vecnormalize_path",
    "torch_threads",
    "train",
    "train_all",
]
