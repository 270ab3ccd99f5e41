"""``python benchmarks/pursuit_low_skill.py``: the scripted encircling team's known answer, and the smoke run's section
under ``--out`` only."""

from __future__ import annotations

import numpy as np
import pursuit_low_skill as benchmark
import pytest

from sb3_fair.envs import PursuitEvasionEnv


def test_encircling_pursuers_close_in_along_their_slots() -> None:
    """Pursuers already at equal bearings and equal distance 1 head straight in by ``shrink``; the evader's potential
    field cancels and it stands still."""
    env = PursuitEvasionEnv(size=6.0)
    env.reset(seed=0)
    angles = np.array([0.0, 2 * np.pi / 3, 4 * np.pi / 3])
    out = np.stack([np.cos(angles), np.sin(angles)], axis=1)  # evader -> pursuer, unit length
    env.evader = np.array([3.0, 3.0])
    env.pursuers = env.evader + out
    action, _ = benchmark.EncirclingPursuers(env, shrink=0.3).predict(env._obs())
    np.testing.assert_allclose(action.reshape(3, 2), -0.3 * out, atol=1e-5)
    before = env.evader.copy()
    env.step(action)
    np.testing.assert_allclose(env.evader, before, atol=1e-9)


def test_encircling_pursuers_refuse_absolute_observations() -> None:
    with pytest.raises(ValueError, match="relative observation"):
        benchmark.EncirclingPursuers(PursuitEvasionEnv(observation="absolute"))


def test_quick_run_writes_its_section_under_out(tmp_path, monkeypatch) -> None:
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    benchmark.main(["--quick", "--out", str(tmp_path / "out")])
    assert not any(cwd.iterdir())
    text = (tmp_path / "out" / "RESULTS.md").read_text()
    assert "## Pursuit at low skill, scripted teams, smoke run: `python benchmarks/pursuit_low_skill.py --quick`" in text
    # every pursuer faster than the evader catches it, the straight chase included
    assert "| greedy (App. C) | 2 | 1.00 (" in text and "| encircle (scripted) | 4 | 1.00 (" in text
