"""The documentation: the Sphinx site builds without a warning, and every Python example of the docs and the README
runs (each ``learn`` capped at 256 steps: the examples' own budgets are for real runs)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.off_policy_algorithm import OffPolicyAlgorithm

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
EXAMPLES = [(page, i, code) for page in PAGES
            for i, code in enumerate(re.findall(r"```python\n(.*?)```", page.read_text(), flags=re.S))]
STEPS = 256


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The docs built once (warnings are errors): the HTML folder."""
    pytest.importorskip("sphinx", reason='the docs extra: pip install -e ".[docs]"')
    from sphinx.cmd.build import build_main

    out = tmp_path_factory.mktemp("docs") / "html"
    assert build_main(["-W", "-E", "-q", "-b", "html", str(DOCS), str(out)]) == 0, "the docs build warned (see above)"
    return out


def test_the_docs_build_without_a_warning(site) -> None:
    assert (site / "index.html").is_file() and (site / "reference.html").is_file()


def _public_names() -> list[tuple[str, str]]:
    """``(module, name)`` for every name in the ``__all__`` of ``sb3_fair`` and of its subpackages."""
    import importlib
    import pkgutil

    import sb3_fair

    modules = [sb3_fair] + [importlib.import_module(info.name)
                            for info in pkgutil.walk_packages(sb3_fair.__path__, "sb3_fair.") if info.ispkg]
    return [(m.__name__, n) for m in modules for n in getattr(m, "__all__", ()) if n != "__version__"]


def _resolve(dotted: str) -> object | None:
    """The object a dotted name of the inventory names (None if it names nothing importable)."""
    import importlib

    parts = dotted.split(".")
    for k in range(len(parts) - 1, 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:k]))
        except ImportError:
            continue
        for part in parts[k:]:
            if not hasattr(obj, part):
                return None
            obj = getattr(obj, part)
        return obj
    return None


def test_every_public_name_has_its_entry_in_the_api_reference(site) -> None:
    """A coverage check: each public name ``module.name`` is an object of the API reference, under that name or where
    it is defined (the inventory entry is the same object)."""
    import importlib

    from sphinx.util.inventory import InventoryFile

    with open(site / "objects.inv", "rb") as fh:
        inventory = InventoryFile.load(fh, "", lambda base, uri: uri)
    entries = {name for kind, objects in inventory.items() if kind != "py:module" for name in objects}
    documented = {id(obj) for obj in map(_resolve, entries) if obj is not None}
    missing = sorted(f"{module}.{name}" for module, name in _public_names() if f"{module}.{name}" not in entries
                     and id(getattr(importlib.import_module(module), name)) not in documented)
    assert not missing, f"public names without an entry in the API reference (docs/reference.md): {missing}"


def test_every_env_has_its_page_and_every_command_its_section() -> None:
    """Each registered env id (and each multi-agent game id) is named on its page in docs/envs/; each command of the
    CLI is named in the command-line guide; each Fair class has its page in docs/algorithms/."""
    import gymnasium as gym

    import sb3_fair
    from sb3_fair.cli import build_parser
    from sb3_fair.experiment.registry import MULTIAGENT_ENVS

    pages = {page.name: page.read_text() for page in (DOCS / "envs").glob("*.md") if page.name != "index.md"}
    ids = [env_id for env_id in gym.registry if env_id.startswith("sb3_fair/")] + list(MULTIAGENT_ENVS)
    homeless = sorted(env_id for env_id in ids if not any(f"`{env_id}`" in text for text in pages.values()))
    assert not homeless, f"env ids without a page in docs/envs/: {homeless}"
    guide = (DOCS / "guides" / "cli-and-configs.md").read_text()
    commands = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    absent = sorted(c for c in commands if f"sb3-fair {c}" not in guide)
    assert not absent, f"commands not in docs/guides/cli-and-configs.md: {absent}"
    algorithms = "\n".join(page.read_text() for page in (DOCS / "algorithms").glob("*.md"))
    fair = sorted(n for n in sb3_fair.__all__ if n.startswith("Fair") and f"autoclass:: sb3_fair.{n}" not in algorithms)
    assert not fair, f"Fair classes without their page in docs/algorithms/: {fair}"


@pytest.mark.parametrize("page, i, code", EXAMPLES, ids=[f"{p.name}-{i}" for p, i, _ in EXAMPLES])
def test_an_example_runs(page, i, code, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # what an example writes stays in the test's folder
    monkeypatch.setenv("WANDB_MODE", "offline")
    # every learn() loop (SB3's, MaskablePPO's, RecurrentPPO's) runs to the total its _setup_learn returns
    for cls in (BaseAlgorithm, OffPolicyAlgorithm):
        setup = cls.__dict__["_setup_learn"]
        monkeypatch.setattr(cls, "_setup_learn", lambda self, total_timesteps, *a, _setup=setup, **k: _setup(
            self, min(int(total_timesteps), STEPS), *a, **k))
    # an example that registers a fairness term (docs/guides/fairness-terms.md) leaves the registry as it was
    from sb3_fair.common.fairness_terms import base as term_base
    from sb3_fair.common.fairness_terms.mixin import _refresh_signature

    registry = dict(term_base._REGISTRY)
    try:
        exec(compile(code, f"{page.name} example {i}", "exec"), {"__name__": "__main__"})
    finally:
        term_base._REGISTRY.clear()
        term_base._REGISTRY.update(registry)
        _refresh_signature()


def test_the_examples_are_found() -> None:
    assert len(EXAMPLES) >= 4, [(p.name, i) for p, i, _ in EXAMPLES]
