"""The package's layers (``docs/development.md``, "The package's layers"), checked on the source with ``ast``.

Lowest first: ``_exact`` <- ``metrics`` <- ``common`` <- ``envs`` | ``wrappers`` <- ``_presets`` <- the algorithms
(``ppo``, ``ppo_mask``, ``ppo_recurrent``, ``dqn``, ``td3``, ``ddpg``, ``cpo``) <- ``experiment`` <- ``cli`` <-
``_moved`` <- ``sb3_fair/__init__.py``. A module imports from its own unit (its subpackage, or itself for a top-level
module) and from lower layers only: every ``import`` and ``from ... import`` counts, at the top of a module, inside a
function or under ``if TYPE_CHECKING:``, and so does ``importlib.import_module("sb3_fair...")`` (or ``__import__``)
of a literal name. What a lower layer needs of a higher one it gets through a registration hook
(:mod:`sb3_fair.common.registration`), not an import; the few imports allowed otherwise are :data:`ALLOWED`, each
with its reason. The check reads the files only (it imports nothing of sb3-fair) and takes a fraction of a second.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "sb3_fair"
ROOT = "sb3_fair"

#: the layers, lowest first, each with its units: a subpackage or a top-level module of sb3_fair ("" is the
#: package's own ``__init__.py``, the very top, which re-exports). Units of one layer are siblings: neither imports
#: the other.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("the exact sums (imports nothing of sb3-fair)", ("_exact",)),
    ("metrics", ("metrics",)),
    ("common", ("common",)),
    ("envs and wrappers", ("envs", "wrappers")),
    ("the algorithms' shared preset checks", ("_presets",)),
    ("algorithms", ("ppo", "ppo_mask", "ppo_recurrent", "dqn", "td3", "ddpg", "cpo")),
    ("experiment", ("experiment",)),
    ("cli", ("cli",)),
    ("the finder of moved module paths", ("_moved",)),
    ("the package root (sb3_fair/__init__.py)", ("",)),
)
RANK = {unit: rank for rank, (_, units) in enumerate(LAYERS) for unit in units}

#: the imports allowed although they point up or sideways: (importing module, imported module, reason), each a prefix
#: of dotted names. The only one: a parent relation of the algorithms, as in SB3.
ALLOWED: tuple[tuple[str, str, str], ...] = (
    (
        "sb3_fair.ddpg",
        "sb3_fair.td3",
        "parent relation, as in SB3: DDPG is TD3 without its three tricks (SB3's DDPG subclasses TD3 and "
        "stable_baselines3.ddpg.policies re-exports TD3's); FairDDPG's policies are FairTD3's",
    ),
)


@dataclass(frozen=True)
class Import:
    """One import of a module of sb3-fair by a module of sb3-fair."""

    module: str  #: the importing module
    file: str  #: its file, relative to the repository
    line: int
    target: str  #: the imported module (or the package, for ``from sb3_fair import Name``)
    where: str  #: "at the top", "in a function", "under TYPE_CHECKING" or "by import_module"


def _unit(module: str) -> str:
    """The unit of a dotted module name of sb3_fair: its subpackage or top-level module, "" for the package itself."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _in(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


class _Imports(ast.NodeVisitor):
    """Collects the imports of sb3-fair in one module, with where in the module each is."""

    def __init__(self, module: str, file: str, is_package: bool, modules: frozenset[str]) -> None:
        self.module, self.file, self.modules = module, file, modules
        self.package = module if is_package else module.rpartition(".")[0]
        self.functions = 0
        self.type_checking = 0
        self.found: list[Import] = []

    def _where(self) -> str:
        if self.type_checking:
            return "under TYPE_CHECKING"
        return "in a function" if self.functions else "at the top"

    def _add(self, node: ast.AST, target: str, where: str | None = None) -> None:
        if _in(target, ROOT):
            self.found.append(
                Import(self.module, self.file, getattr(node, "lineno", 0), target, where or self._where())
            )

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        self.functions += 1
        self.generic_visit(node)
        self.functions -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function

    def visit_If(self, node: ast.If) -> None:
        if not _is_type_checking(node.test):
            self.generic_visit(node)
            return
        self.type_checking += 1
        for child in node.body:
            self.visit(child)
        self.type_checking -= 1
        for child in node.orelse:
            self.visit(child)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._add(node, alias.name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:  # relative: from the importing module's package, one level up per dot after the first
            base = self.package.rsplit(".", node.level - 1)[0] if node.level > 1 else self.package
            base = f"{base}.{node.module}" if node.module else base
        else:
            base = node.module or ""
        for alias in node.names:
            sub = f"{base}.{alias.name}"
            self._add(node, sub if sub in self.modules else base)  # ``from pkg import submodule`` imports it

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if name in ("import_module", "__import__") and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                self._add(node, first.value, "by import_module")
        self.generic_visit(node)


def imports_of(
    module: str, source: str, modules: frozenset[str], is_package: bool = False, file: str = ""
) -> list[Import]:
    """Every import of sb3-fair in the ``source`` of ``module`` (``modules``: the dotted names that exist)."""
    visitor = _Imports(module, file or module, is_package, modules)
    visitor.visit(ast.parse(source, filename=file or module))
    return visitor.found


def violation(imp: Import) -> str | None:
    """Why ``imp`` breaks the layers (upward, sideways or out of the map), or ``None`` if it may be."""
    source, target = _unit(imp.module), _unit(imp.target)
    at = f"{imp.file}:{imp.line}: {imp.module} imports {imp.target} ({imp.where})"
    if source not in RANK:
        return f"{at}: {imp.module} is in no layer (place its unit {source!r} in LAYERS)"
    if target not in RANK:
        return f"{at}: {imp.target} is in no layer"
    if source == target or RANK[target] < RANK[source]:
        return None
    if any(_in(imp.module, a) and _in(imp.target, b) for a, b, _ in ALLOWED):
        return None
    if RANK[target] == RANK[source]:
        return f"{at}: sideways, {target!r} and {source!r} are siblings in the layer {LAYERS[RANK[source]][0]!r}"
    return f"{at}: upward, {LAYERS[RANK[target]][0]!r} is above {LAYERS[RANK[source]][0]!r}"


def package_modules(package: Path = PACKAGE) -> dict[str, tuple[Path, bool]]:
    """Every module of the package under ``package``: dotted name -> (file, whether it is a package's __init__)."""
    found: dict[str, tuple[Path, bool]] = {}
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package.parent).with_suffix("").parts
        is_package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


def package_imports(package: Path = PACKAGE) -> list[Import]:
    modules = package_modules(package)
    names = frozenset(modules)
    return [
        imp
        for module, (path, is_package) in modules.items()
        for imp in imports_of(module, path.read_text(), names, is_package, str(path.relative_to(package.parent)))
    ]


@pytest.fixture(scope="module")
def imports() -> list[Import]:
    return package_imports()


def test_every_module_is_placed_in_a_layer() -> None:
    unplaced = sorted(m for m in package_modules() if _unit(m) not in RANK)
    assert not unplaced, f"modules of no layer (add their unit to LAYERS and to docs/development.md): {unplaced}"


def test_no_module_imports_up_or_sideways(imports) -> None:
    assert len(imports) > 100  # the walk found the package's imports
    problems = [why for why in map(violation, imports) if why]
    assert not problems, "imports against the package's layers (docs/development.md):\n" + "\n".join(problems)


def test_every_allowed_exception_is_still_needed(imports) -> None:
    unused = [(a, b) for a, b, _ in ALLOWED if not any(_in(i.module, a) and _in(i.target, b) for i in imports)]
    assert not unused, f"ALLOWED entries that no import needs any more (remove them): {unused}"
    assert all(reason for _, _, reason in ALLOWED)


PLANTED = """
from __future__ import annotations
import importlib
from typing import TYPE_CHECKING
import numpy as np
from sb3_fair import metrics
from sb3_fair.common.protocol import BENEFITS
from . import protocol
from sb3_fair.envs import make_donut_allocation
if TYPE_CHECKING:
    from sb3_fair.wrappers.fairness_reward import FairnessReward
else:
    from sb3_fair.metrics import welfare


def build():
    import sb3_fair.ppo.fair_ppo
    from ..experiment import train
    return importlib.import_module("sb3_fair.cli"), __import__("sb3_fair.dqn")


class Thing:
    def method(self):
        from sb3_fair import FairPPO
        return FairPPO
"""


def test_the_checker_catches_planted_imports_up_at_every_place() -> None:
    """A module of ``common`` planted with upward imports at the top, under TYPE_CHECKING, in functions and methods,
    relative and by ``import_module``: each is caught with its line and target; its lawful imports are not."""
    modules = frozenset(package_modules()) | {"sb3_fair.common.planted"}
    found = imports_of("sb3_fair.common.planted", PLANTED, modules, file="sb3_fair/common/planted.py")
    caught = {(imp.line, imp.target, imp.where) for imp in found if violation(imp)}
    assert caught == {
        (9, "sb3_fair.envs", "at the top"),
        (11, "sb3_fair.wrappers.fairness_reward", "under TYPE_CHECKING"),
        (17, "sb3_fair.ppo.fair_ppo", "in a function"),
        (18, "sb3_fair.experiment", "in a function"),
        (19, "sb3_fair.cli", "by import_module"),
        (19, "sb3_fair.dqn", "by import_module"),
        (24, "sb3_fair", "in a function"),
    }
    lawful = {(imp.line, imp.target) for imp in found if not violation(imp)}
    assert lawful == {
        (6, "sb3_fair.metrics"),
        (7, "sb3_fair.common.protocol"),
        (8, "sb3_fair.common.protocol"),
        (13, "sb3_fair.metrics.welfare"),
    }
    message = violation(next(imp for imp in found if imp.line == 9))
    assert message == (
        "sb3_fair/common/planted.py:9: sb3_fair.common.planted imports sb3_fair.envs (at the top): "
        "upward, 'envs and wrappers' is above 'common'"
    )


@pytest.mark.parametrize(
    "module, source, expected",
    [
        ("sb3_fair.envs.planted", "from sb3_fair.wrappers import FairnessReward", "sideways"),
        ("sb3_fair.wrappers.planted", "def f():\n    import sb3_fair.envs", "sideways"),
        ("sb3_fair.dqn.planted", "from sb3_fair.ppo.presets import PRESETS", "sideways"),
        ("sb3_fair.td3.planted", "from sb3_fair.ddpg import FairDDPG", "sideways"),  # the parent does not import down
        ("sb3_fair.metrics.planted", "from sb3_fair.common.validation import check_int", "upward"),
        ("sb3_fair._exact", "from sb3_fair.metrics import welfare", "upward"),
        ("sb3_fair.common.planted", "from sb3_fair._presets import check_preset_env", "upward"),
        ("sb3_fair.experiment.planted", "from sb3_fair.cli import main", "upward"),
        ("sb3_fair.cli", "from sb3_fair._moved import MOVED", "upward"),
        ("sb3_fair.common.planted", "from sb3_fair.nowhere import thing", "in no layer"),
        ("sb3_fair.newpackage.planted", "from sb3_fair.metrics import welfare", "is in no layer"),
        ("sb3_fair.ddpg.planted", "from sb3_fair.td3.policies import MlpPolicy", None),  # ALLOWED
        ("sb3_fair.ppo.planted", "from sb3_fair._presets import check_preset_env", None),
        ("sb3_fair.experiment.planted", "from sb3_fair.envs import DisparityGame\nfrom sb3_fair import wrappers", None),
        ("sb3_fair", "from sb3_fair import _moved, envs\nfrom sb3_fair.cli import main", None),
    ],
)
def test_the_checker_tells_sideways_upward_and_lawful_imports(module: str, source: str, expected: str | None) -> None:
    modules = frozenset(package_modules()) | {module}
    found = imports_of(module, source, modules, is_package=module == ROOT)
    assert found
    reasons = [violation(imp) for imp in found]
    if expected is None:
        assert reasons == [None] * len(found)
    else:
        assert len(reasons) == 1 and reasons[0] is not None and expected in reasons[0], reasons


def test_the_walk_reads_a_planted_file(tmp_path) -> None:
    """The whole path from a file on disk: a lazy upward import written into a copy of the tree is reported with
    its file, line and target."""
    package = tmp_path / ROOT
    (package / "common").mkdir(parents=True)
    (package / "envs").mkdir()
    for init in (package, package / "common", package / "envs"):
        (init / "__init__.py").write_text('"""A package."""\n')
    (package / "envs" / "donut.py").write_text("from sb3_fair.common import planted\n")
    (package / "common" / "planted.py").write_text(
        '"""Planted."""\n\n\ndef f():\n    from sb3_fair.envs import donut\n'
    )
    problems = [why for why in map(violation, package_imports(package)) if why]
    assert problems == [
        "sb3_fair/common/planted.py:5: sb3_fair.common.planted imports sb3_fair.envs.donut (in a function): "
        "upward, 'envs and wrappers' is above 'common'"
    ]


def test_the_registration_hooks_are_filled_by_importing_the_package() -> None:
    """What ``sb3_fair.common.registration`` lends the lower layers is there once sb3_fair is imported."""
    from sb3_fair.common.registration import factory_env_class, registered_wrapper
    from sb3_fair.envs import DonutAllocationEnv, LoanApplicantsEnv, make_donut_allocation, make_loan_applicants
    from sb3_fair.wrappers import FairnessReward, MemoryAugmentation

    assert registered_wrapper("MemoryAugmentation") is MemoryAugmentation
    assert registered_wrapper("FairnessReward") is FairnessReward
    assert factory_env_class(make_donut_allocation) is DonutAllocationEnv
    assert factory_env_class(make_loan_applicants) is LoanApplicantsEnv
    assert factory_env_class(print) is None and factory_env_class({}) is None  # unregistered, unhashable
    with pytest.raises(RuntimeError, match=r"sb3_fair\.wrappers registers"):
        registered_wrapper("NoSuchWrapper")
