"""The examples and the README's quickstarts spell out the tuned hyper-parameters; they must be the shipped entries'.

The snippets are read, not run (running them is minutes of training): the settings they pass are compared with
``sb3_fair/hyperparams/<algo>.yml``, so that retuning an entry without updating its examples fails here.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import pytest

from sb3_fair.common.hyperparams import hyperparams_file, load_hyperparams

ROOT = Path(__file__).resolve().parent.parent


def _literal(node: ast.AST) -> Any:
    """A literal, or ``dict(key=literal, ...)``."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict" and not node.args:
        return {kw.arg: _literal(kw.value) for kw in node.keywords}
    return ast.literal_eval(node)


def _assignments(path: Path) -> dict[str, Any]:
    """The module-level ``NAME = <literal>`` of a script."""
    out = {}
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                out[node.targets[0].id] = _literal(node.value)
            except ValueError:
                pass
    return out


def _calls(source: str, name: str) -> list[tuple[dict[str, Any], Any]]:
    """Every ``name(...)`` call in ``source``: its literal keyword arguments and, when ``.learn(N)`` follows it, N."""
    found = []
    for node in ast.walk(ast.parse(source)):
        call = node
        steps = None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "learn" and node.args:
            call, steps = node.func.value, node.args[0]
            if not isinstance(call, ast.Call):
                continue
            steps = _literal(steps)
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == name:
            kwargs = {}
            for kw in call.keywords:
                if kw.arg is not None:
                    try:
                        kwargs[kw.arg] = _literal(kw.value)
                    except ValueError:
                        pass
            found.append((kwargs, steps))
    return [f for f in found if f[1] is not None] or found


def _entry(algo: str, env: str) -> dict[str, Any]:
    return load_hyperparams(hyperparams_file(algo), env, default=False)


def _without(d: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in d.items() if k not in keys}


def test_fair_dqn_example_uses_the_tuned_doughnut_entry() -> None:
    entry = _entry("fair_dqn", "sb3_fair/DonutAllocation-v0")
    script = _assignments(ROOT / "examples" / "fair_dqn.py")
    assert script["ENV"] == "sb3_fair/DonutAllocation-v0" and script["STEPS"] == entry["n_timesteps"]
    assert _without(script["TUNED"], "seed") == _without(entry, "policy", "n_timesteps", "counterfactual", "potential_shaping")
    assert entry["counterfactual"] and entry["potential_shaping"]
    assert '"counterfactual": True, "potential_shaping": True' in (ROOT / "examples" / "fair_dqn.py").read_text()


def test_fair_ppo_harvest_example_uses_the_tuned_entry() -> None:
    entry = _entry("fair_ppo", "sb3_fair/AllelopathicHarvest-v0")
    path = ROOT / "examples" / "fair_ppo_harvest.py"
    script = _assignments(path)
    assert script["STEPS"] == entry["n_timesteps"]
    assert _without(script["KW"], "seed") == _without(entry, "policy", "n_timesteps", "n_envs", "env_kwargs", "fairness", "alpha", "beta")
    ((fair, _),) = _calls(path.read_text(), "FairPPO")
    assert {k: fair[k] for k in ("fairness", "alpha", "beta")} == {k: entry[k] for k in ("fairness", "alpha", "beta")}
    assert f'from_preset("{entry["env_kwargs"]["preset"]}"), n_instances={entry["n_envs"]}' in path.read_text()


def test_fair_td3_pursuit_example_uses_the_tuned_entry() -> None:
    entry = _entry("fair_td3", "sb3_fair/PursuitEvasion-v0")
    path = ROOT / "examples" / "fair_td3_pursuit.py"
    script, text = _assignments(path), path.read_text()
    assert script["STEPS"] == entry["n_timesteps"] and script["ARENA"] == entry["env_kwargs"]
    assert _without(script["TUNED"], "seed") == _without(entry, "policy", "n_timesteps", "equivariance_coef", "env_kwargs", "callback",
                                                          "noise_type", "noise_std")
    assert f'"equivariance_coef": {entry["equivariance_coef"]}' in text and entry["noise_type"] == "normal"
    assert f"{entry['noise_std']} * np.ones" in text
    curriculum = entry["callback"]["sb3_fair.envs.pursuit:SpeedCurriculum"]
    assert f"SpeedCurriculum(start={curriculum['start']}, end={curriculum['end']})" in text


def _readme_blocks() -> str:
    """The Python examples of the README and of the algorithm pages of the docs."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs" / "algorithms").glob("*.md"))]
    return "\n".join(code for page in pages for code in re.findall(r"```python\n(.*?)```", page.read_text(), flags=re.S))


@pytest.mark.parametrize("cls, algo, env, skip", [
    ("FairDQN", "fair_dqn", "sb3_fair/DonutAllocation-v0", ("policy", "n_timesteps")),
    ("FairPPO", "fair_ppo", "sb3_fair/AllelopathicHarvest-v0", ("policy", "n_timesteps", "n_envs", "env_kwargs")),
])
def test_readme_quickstarts_use_the_tuned_entries(cls, algo, env, skip) -> None:
    """The first call of the README and the algorithm pages that trains a class (``Cls(...).learn(N)``) passes exactly
    the tuned entry's settings."""
    entry = _entry(algo, env)
    calls = _calls(_readme_blocks(), cls)
    assert calls, f"no {cls}(...).learn(N) in the README or docs/algorithms/"
    kwargs, steps = calls[0]
    assert steps == entry["n_timesteps"]
    assert _without(kwargs, "verbose", "seed") == _without(entry, *skip)
