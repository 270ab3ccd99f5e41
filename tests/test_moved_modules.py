"""The module paths of 0.3.0 that moved in the regrouping of ``sb3_fair.common`` still import, as the new modules."""

from __future__ import annotations

import importlib
import pickle
import sys
import warnings

import pytest

from sb3_fair._moved import MOVED


@pytest.mark.parametrize("old, new", sorted(MOVED.items()))
def test_an_old_path_imports_its_new_module_with_a_deprecation_warning(old, new) -> None:
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=f"{old} moved to {new}"):
        module = importlib.import_module(old)
    assert module is importlib.import_module(new)


def test_a_model_pickled_by_0_3_0_finds_its_classes_and_functions() -> None:
    """cloudpickle stores a class or function by module path: 0.3.0's paths resolve to today's objects."""
    from sb3_fair.common.fair_er.equivariant_actor import FairEPolicy
    from sb3_fair.common.fairqcm.buffers import CounterfactualReplayBuffer
    from sb3_fair.common.long_term.advantages import lending_massaging_threshold

    for module, name, expected in [("sb3_fair.common.buffers", "CounterfactualReplayBuffer", CounterfactualReplayBuffer),
                                   ("sb3_fair.common.fair_e", "FairEPolicy", FairEPolicy),
                                   ("sb3_fair.common.long_term", "lending_massaging_threshold", lending_massaging_threshold)]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            assert pickle.loads(f"c{module}\n{name}\n.".encode()) is expected


def test_each_method_family_has_its_folder() -> None:
    import sb3_fair.common.fair_er as fair_er
    import sb3_fair.common.fairqcm as fairqcm
    import sb3_fair.common.group_penalty as group_penalty
    import sb3_fair.common.long_term as long_term

    assert fairqcm.CounterfactualReplayBuffer.__module__ == "sb3_fair.common.fairqcm.buffers"
    assert fair_er.FairERMixin.__module__ == "sb3_fair.common.fair_er.regularizer"
    assert group_penalty.GroupPenaltyTerm.__module__ == "sb3_fair.common.group_penalty.term"
    assert long_term.lending_massaging_threshold.__module__ == "sb3_fair.common.long_term.advantages"


def test_agent_symmetry_is_part_of_the_protocol_and_its_0_4_path_still_imports() -> None:
    """0.5 moved ``AgentSymmetry`` from ``common/fair_er/`` to ``common/`` (an env describes its symmetry with it): 0.3.0's
    path is its module again, 0.4's imports as it with a warning, and a pickle naming either finds the class."""
    from sb3_fair.common.fair_er import AgentSymmetry as reexported
    from sb3_fair.common.symmetry import AgentSymmetry

    assert AgentSymmetry.__module__ == "sb3_fair.common.symmetry" and reexported is AgentSymmetry
    assert "sb3_fair.common.symmetry" not in MOVED
    sys.modules.pop("sb3_fair.common.fair_er.symmetry", None)
    with pytest.warns(DeprecationWarning, match="in sb3-fair 0.5"):
        assert importlib.import_module("sb3_fair.common.fair_er.symmetry").AgentSymmetry is AgentSymmetry
    for module in ("sb3_fair.common.symmetry", "sb3_fair.common.fair_er.symmetry"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            assert pickle.loads(f"c{module}\nAgentSymmetry\n.".encode()) is AgentSymmetry
