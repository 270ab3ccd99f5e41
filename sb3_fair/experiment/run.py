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
Setting one of these names here (``run.save = ...``, ``monkeypatch.setattr(run, "save", ...)``) sets it in each of
those modules that holds the same object too, so that the runner calls the replacement, as when it was one module;
new code patches the module that calls the function (e.g. ``sb3_fair.experiment.training.save``).
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import Any

from sb3_fair.experiment import build, evaluation, files, persistence, training
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

#: the modules whose names this module re-exports
_HOMES = (build, evaluation, files, persistence, training)
_UNSET = object()


class _RunModule(ModuleType):
    """This module, whose names, once set, are set in the modules of :data:`_HOMES` that hold the same object."""

    def __setattr__(self, name: str, value: Any) -> None:
        previous = self.__dict__.get(name, _UNSET)
        super().__setattr__(name, value)
        if previous is _UNSET:
            return
        for module in _HOMES:
            if module.__dict__.get(name, _UNSET) is previous:
                setattr(module, name, value)


sys.modules[__name__].__class__ = _RunModule

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
