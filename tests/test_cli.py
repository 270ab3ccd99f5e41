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
