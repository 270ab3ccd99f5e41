"""``sb3-fair compare``'s tasks are data: the shipped file, a user's own task without code, and bad task files."""

from __future__ import annotations

import pytest

from sb3_fair.cli import main
from sb3_fair.experiment.compare import load_tasks, parse_task, task_configs

USER_TASKS = """
disparity:
  description: PPO against FairPPO's DP penalty on a small DisparityGame
  algo: fair_ppo
  env: sb3_fair/DisparityGame-v0
  hyperparams: {env_kwargs: {n_agents: 4, max_steps: 8}, n_steps: 8, batch_size: 32, n_epochs: 1}
  figures: [episode_return, dp_norm, pof_group_0, pof_group_1]
  plot: {x: episode_return, y: [dp_norm]}
  absolute: [dp_norm]
  price_of_fairness: true
  runs:
    PPO: {baseline: true}
    FairPPO (dp): {hyperparams: {fairness: dp, alpha: 1.0}}
"""


def test_the_shipped_tasks_pair_each_fair_entry_with_its_parent() -> None:
    tasks = load_tasks()
    assert set(tasks) == {"donut", "loan_applicants", "harvest"}
    for task in tasks.values():
        configs = task_configs(task, seed=1, eval_episodes=1)
        runs = task.runs_for(task.option_values({}))
        parent = {"fair_dqn": "dqn", "fair_ppo": "ppo"}[task.algo]
        assert [c.algo for c in configs.values()] == [parent if r.baseline else task.algo for r in runs.values()]
        assert len({c.n_timesteps for c in configs.values()}) == 1 and {c.seed for c in configs.values()} == {1}
    harvest = task_configs(tasks["harvest"], seed=0, options={"fairness": "csp", "alpha": 1.0, "preset": "tiny"}, episodes=2)
    assert list(harvest) == ["PPO", "FairPPO (csp, alpha=1, beta=0.5)"]
    fair = harvest["FairPPO (csp, alpha=1, beta=0.5)"]
    assert (fair.hyperparams["fairness"], fair.hyperparams["alpha"], fair.hyperparams["beta"]) == ("csp", 1.0, 0.5)
    assert fair.n_timesteps == 2 * 60 * 4  # two tiny games: 60 steps x 4 agents
    donut = task_configs(tasks["donut"], seed=3)  # each run its own W&B name, though two share algorithm and env
    assert [c.run_name for c in donut.values()] == [f"{name}, seed 3" for name in donut]


def test_a_user_adds_a_comparison_with_a_tasks_file_and_no_code(tmp_path, capsys) -> None:
    (tmp_path / "tasks.yml").write_text(USER_TASKS)
    plot = tmp_path / "disparity.png"
    main(["compare", "--tasks-file", str(tmp_path / "tasks.yml"), "--task", "disparity", "--seeds", "1", "--episodes", "3",
          "--eval-episodes", "2", "--jobs", "1", "--plot", str(plot), "--quiet"])
    out = capsys.readouterr().out
    # 3 episodes of the task's game: 8 steps x 4 agents each
    assert "training FairPPO (dp), seed 0: 96 agent-steps of sb3_fair/DisparityGame-v0" in out
    assert "sb3_fair/DisparityGame-v0: 1 seed(s) x 96 training agent-steps" in out and "pof_group_1" in out
    assert plot.stat().st_size > 1000
    configs = task_configs(load_tasks(tmp_path / "tasks.yml")["disparity"], seed=0)
    assert configs["PPO"].algo == "ppo" and "fairness" not in configs["PPO"].hyperparams
    assert configs["FairPPO (dp)"].hyperparams["alpha"] == 1.0
    assert configs["PPO"].hyperparams["env_kwargs"] == configs["FairPPO (dp)"].hyperparams["env_kwargs"] == {
        "n_agents": 4, "max_steps": 8}


@pytest.mark.parametrize("entry, message", [
    ({"algo": "fair_dqn", "env": "x", "figures": ["gini"], "runs": {"a": {}}, "colour": 1}, r"unknown key\(s\) \['colour'\]"),
    ({"env": "x", "figures": ["gini"], "runs": {"a": {}}}, "needs 'algo'"),
    ({"algo": "fair_dqn", "env": "x", "figures": [], "runs": {"a": {}}}, "figures must be a non-empty list"),
    ({"algo": "fair_dqn", "env": "x", "figures": ["gini"], "runs": {"a": {"baseline": True}}}, "has no fair run"),
    ({"algo": "fair_dqn", "env": "x", "figures": ["gini"], "runs": {"a": {"baseline": "yes"}}}, "baseline must be true or false"),
    ({"algo": "fair_dqn", "env": "x", "figures": ["gini"], "runs": {"a": {"seed": 3}}}, r"unknown key\(s\) \['seed'\]"),
    ({"algo": "fair_dqn", "env": "x", "figures": ["gini"], "runs": {"a": {}}, "options": {"gamma": {"key": "gamma"}}},
     r"options: unknown key\(s\) \['gamma'\]"),
])
def test_a_bad_task_is_refused_naming_the_file_task_and_key(entry, message) -> None:
    with pytest.raises(ValueError, match=message) as info:
        parse_task("mine", entry, "tasks.yml")
    assert "tasks.yml: task 'mine'" in str(info.value)


def test_an_option_the_task_does_not_take_is_refused_and_so_is_an_unknown_task(tmp_path, capsys) -> None:
    for argv, message in [(["--task", "donut", "--preset", "tiny"], "task 'donut' takes no --preset (its options: none)"),
                          (["--task", "donut", "--fairness", "cf"], "task 'donut' takes no --fairness"),
                          (["--task", "nope"], "--task must be one of ['donut', 'harvest', 'loan_applicants'], got 'nope'")]:
        with pytest.raises(SystemExit) as info:
            main(["compare", *argv, "--seeds", "1", "--plot", ""])
        assert info.value.code == 2 and message in capsys.readouterr().err
    (tmp_path / "bad.yml").write_text("- just a list\n")
    with pytest.raises(SystemExit):
        main(["compare", "--tasks-file", str(tmp_path / "bad.yml"), "--plot", ""])
    assert "bad.yml must map task names to tasks" in capsys.readouterr().err
