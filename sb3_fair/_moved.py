"""Module paths of sb3-fair 0.3.0 that moved in 0.4 (and of 0.4 that moved in 0.5), still importable (with a
``DeprecationWarning``).

A saved model refers to the classes and functions it pickled by their module path (SB3 stores
``replay_buffer_class``, ``policy_class`` and callables such as ``massaging_tau`` with cloudpickle),
so a model saved by 0.3.0 names e.g. ``sb3_fair.common.buffers``. The finder below answers such an
import with the module's new home, so those models load; new code imports the new paths.

Its place in the package's layers (``docs/development.md``): just below ``sb3_fair/__init__.py``, which alone imports
it. It imports nothing of sb3-fair itself; the modules :data:`MOVED` names are imported only when someone imports an
old path.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings
from collections.abc import Sequence
from types import ModuleType
from typing import Any

#: old module path -> its module now
MOVED: dict[str, str] = {
    "sb3_fair.common.buffers": "sb3_fair.common.fairqcm.buffers",
    "sb3_fair.common.memory": "sb3_fair.common.fairqcm.memory",
    "sb3_fair.common.fairness_reward": "sb3_fair.common.fairqcm.reward",
    "sb3_fair.common.fair_e": "sb3_fair.common.fair_er.equivariant_actor",
    "sb3_fair.common.long_term_penalty": "sb3_fair.common.long_term.term",
    # 0.5: the on-policy mixins became fairness terms (sb3_fair.common.fairness_terms)
    "sb3_fair.common.group_penalty.mixin": "sb3_fair.common.group_penalty.term",
    "sb3_fair.common.long_term.mixin": "sb3_fair.common.long_term.term",
    "sb3_fair.common.massaging": "sb3_fair.common.long_term.massaging",
    "sb3_fair.common.figures": "sb3_fair.common.figure_table",
    "sb3_fair.common.logging": "sb3_fair.common.wandb_logging",
    "sb3_fair.wrappers.memory": "sb3_fair.wrappers.memory_augmentation",
    "sb3_fair.wrappers.reward": "sb3_fair.wrappers.fairness_reward",
    # moved in 0.5 (MOVED_IN); 0.3.0's sb3_fair.common.symmetry is its home again
    "sb3_fair.common.fair_er.symmetry": "sb3_fair.common.symmetry",
}
#: the release an old path of :data:`MOVED` moved in, where it is not 0.4
MOVED_IN: dict[str, str] = {
    "sb3_fair.common.fair_er.symmetry": "0.5",
    "sb3_fair.common.group_penalty.mixin": "0.5",
    "sb3_fair.common.long_term.mixin": "0.5",
}


class MovedModuleFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Import an old path of :data:`MOVED` as its new module (the same module object, so ``is`` holds)."""

    def find_spec(self, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None) -> Any:
        if fullname not in MOVED:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: Any) -> ModuleType:
        new = MOVED[spec.name]
        warnings.warn(
            f"{spec.name} moved to {new} in sb3-fair {MOVED_IN.get(spec.name, '0.4')}; import it from there",
            DeprecationWarning,
            stacklevel=2,
        )
        return importlib.import_module(new)

    def exec_module(self, module: ModuleType) -> None:
        """The module is the new one, already executed."""


def install() -> None:
    """Add the finder to ``sys.meta_path`` once."""
    if not any(isinstance(f, MovedModuleFinder) for f in sys.meta_path):
        sys.meta_path.append(MovedModuleFinder())
