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


def _public_names() -> set[str]:
    """Every name in the ``__all__`` of ``sb3_fair`` and of its subpackages."""
    import importlib
    import pkgutil

    import sb3_fair

    names = set(sb3_fair.__all__) - {"__version__"}
    for info in pkgutil.walk_packages(sb3_fair.__path__, "sb3_fair."):
        if info.ispkg:
            names |= set(getattr(importlib.import_module(info.name), "__all__", ()))
    return names


def test_every_public_name_env_and_command_has_its_entry(site) -> None:
    """A coverage check: each public name is an object of the API reference or named in a page; each registered env id
    and each command of the CLI is named in a page."""
    import gymnasium as gym
    from sphinx.util.inventory import InventoryFile

    import sb3_fair  # noqa: F401  (registers the envs)
    from sb3_fair.cli import build_parser

    with open(site / "objects.inv", "rb") as fh:
        inventory = InventoryFile.load(fh, "", lambda base, uri: uri)
    documented = {name.rsplit(".", 1)[-1] for entries in inventory.values() for name in entries}
    text = "\n".join(page.read_text() for page in DOCS.rglob("*.md"))
    missing = sorted(n for n in _public_names() if n not in documented and f"`{n}" not in text)
    assert not missing, f"public names without an entry in docs/: {missing}"
    envs = sorted(env_id for env_id in gym.registry if env_id.startswith("sb3_fair/") and env_id not in text)
    assert not envs, f"env ids not named in docs/: {envs}"
    commands = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    absent = sorted(c for c in commands if f"sb3-fair {c}" not in text)
    assert not absent, f"commands not in docs/: {absent}"


@pytest.mark.parametrize("page, i, code", EXAMPLES, ids=[f"{p.name}-{i}" for p, i, _ in EXAMPLES])
def test_an_example_runs(page, i, code, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # what an example writes stays in the test's folder
    monkeypatch.setenv("WANDB_MODE", "offline")
    # every learn() loop (SB3's, MaskablePPO's, RecurrentPPO's) runs to the total its _setup_learn returns
    for cls in (BaseAlgorithm, OffPolicyAlgorithm):
        setup = cls.__dict__["_setup_learn"]
        monkeypatch.setattr(cls, "_setup_learn", lambda self, total_timesteps, *a, _setup=setup, **k: _setup(
            self, min(int(total_timesteps), STEPS), *a, **k))
    exec(compile(code, f"{page.name} example {i}", "exec"), {"__name__": "__main__"})


def test_the_examples_are_found() -> None:
    assert len(EXAMPLES) >= 4, [(p.name, i) for p, i, _ in EXAMPLES]
