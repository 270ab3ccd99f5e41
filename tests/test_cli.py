"""The sb3-fair command: compare, train, evaluate (tiny budgets)."""

from __future__ import annotations

from sb3_fair.cli import main


def test_compare_prints_table_and_plot(tmp_path, capsys):
    plot = tmp_path / "tradeoff.png"
    main(["compare", "--task", "lending", "--seeds", "1", "--episodes", "3", "--eval-episodes", "2", "--plot", str(plot)])
    out = capsys.readouterr().out
    assert "FairDQN (FairQCM)" in out and "DQN (full memory)" in out and "dp_abs" in out
    assert plot.exists() and plot.stat().st_size > 1000


def test_train_then_evaluate(tmp_path, capsys):
    path = tmp_path / "model.zip"
    main(["train", "sb3_fair/DonutAllocationTabular-v0", "--preset", "donut", "--counterfactual",
          "--timesteps", "300", "--save", str(path), "--eval-episodes", "2"])
    assert path.exists()
    main(["evaluate", str(path), "sb3_fair/DonutAllocationTabular-v0", "--episodes", "2"])
    out = capsys.readouterr().out
    assert "log_nash" in out and "gini" in out


def test_compare_harvest(tmp_path, capsys):
    plot = tmp_path / "harvest.png"
    main(["compare", "--task", "harvest", "--preset", "tiny", "--seeds", "1", "--episodes", "4", "--eval-episodes", "1", "--plot", str(plot)])
    out = capsys.readouterr().out
    assert "FairPPO (dp" in out and "dp_normalized" in out and "pof_group_1" in out
    assert plot.exists()


def test_train_then_evaluate_f_ppo(tmp_path, capsys):
    path = tmp_path / "fppo.zip"
    main(["train", "sb3_fair/EpidemicControl-v0", "--algo", "fairppo", "--preset", "epidemic", "--variant", "f_ppo",
          "--timesteps", "64", "--save", str(path), "--eval-episodes", "2", "--env-kwargs", "horizon=8"])
    main(["evaluate", str(path), "sb3_fair/EpidemicControl-v0", "--algo", "fairppo", "--episodes", "2"])
    out = capsys.readouterr().out
    assert out.count("short_term_mean") == 2 and "long_term_final" in out


def test_fairppo_needs_a_paper_004_preset():
    import pytest

    with pytest.raises(SystemExit, match="lending', 'attention', 'epidemic"):
        main(["train", "sb3_fair/EpidemicControl-v0", "--algo", "fairppo", "--timesteps", "8"])
    with pytest.raises(SystemExit, match="donut"):
        main(["train", "sb3_fair/EpidemicControl-v0", "--preset", "epidemic", "--timesteps", "8"])
