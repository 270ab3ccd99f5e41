"""A user's own env on the command line (issue 46): ``--gym-packages``, ``MODULE:ID``, ``MODULE:FACTORY`` and
``--trust-config`` on every command that makes an env, in this process and in fresh ones (compare's and sweep's
workers), and one clear line for every way of getting it wrong."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sb3_fair.cli import main
from sb3_fair.experiment import ExperimentConfig
from sb3_fair.experiment.registry import check_env_id, import_gym_packages

MODULE = "user_env_cli_envs"
#: a user's module: a Gymnasium env registered as my_cli/Corridor-v0, and a PettingZoo game made by make_game() that
#: honours the stakeholder contract (its own code: nothing of it is registered with sb3-fair)
SOURCE = '''
import gymnasium as gym
import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

from sb3_fair import Stakeholders


class Corridor(gym.Env):
    """Walk right to the end of a corridor of 3 cells (reward 1 there)."""

    def __init__(self, length=3):
        self.length = length
        self.observation_space = spaces.Box(0.0, 1.0, (1,), np.float32)
        self.action_space = spaces.Discrete(2)

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.pos, self.t = 0, 0
        return np.array([0.0], np.float32), {}

    def step(self, action):
        self.pos = max(0, self.pos + (1 if action == 1 else -1))
        self.t += 1
        done = self.pos >= self.length
        return np.array([self.pos / self.length], np.float32), float(done), done, self.t >= 10, {}


gym.register(id="my_cli/Corridor-v0", entry_point="user_env_cli_envs:Corridor")


class Share(ParallelEnv):
    """Each agent takes 1 (action 1) or 0 each step; agents alternate groups 0, 1."""

    metadata = {"name": "share_v0"}
    render_mode = None

    def __init__(self, n_agents=2, max_steps=4):
        self.possible_agents = [f"a{i}" for i in range(n_agents)]
        self.max_steps = max_steps

    @property
    def stakeholders(self):
        return Stakeholders(names=tuple(self.possible_agents), groups=np.arange(len(self.possible_agents)) % 2)

    def observation_space(self, agent):
        return spaces.Box(0.0, 1.0, (1,), np.float32)

    def action_space(self, agent):
        return spaces.Discrete(2)

    def reset(self, seed=None, options=None):
        self.agents, self.t = list(self.possible_agents), 0
        return {a: np.zeros(1, np.float32) for a in self.agents}, {a: {"group": i % 2} for i, a in enumerate(self.agents)}

    def step(self, actions):
        self.t += 1
        obs = {a: np.full(1, self.t / self.max_steps, np.float32) for a in self.agents}
        rewards = {a: float(actions[a]) for a in self.agents}
        benefits = np.array([rewards[a] for a in self.possible_agents])
        infos = {a: {"group": i % 2, "benefits": benefits} for i, a in enumerate(self.agents)}
        done = self.t >= self.max_steps
        out = obs, rewards, dict.fromkeys(self.agents, False), dict.fromkeys(self.agents, done), infos
        if done:
            self.agents = []
        return out


def make_game(n_agents=2, max_steps=4):
    return Share(n_agents=n_agents, max_steps=max_steps)


def make_gym_env():
    return Corridor()
'''

TASKS = f"""
corridor:
  algo: fair_ppo
  env: my_cli/Corridor-v0
  hyperparams: {{n_timesteps: 64, n_steps: 32, batch_size: 32, n_epochs: 1}}
  figures: [episode_reward]
  runs:
    PPO: {{baseline: true}}
    FairPPO (no penalty): {{hyperparams: {{fairness_coef: 0}}}}
share:
  algo: fair_ppo
  env: {MODULE}:make_game
  hyperparams: {{n_timesteps: 64, n_steps: 16, batch_size: 32, n_epochs: 1, env_kwargs: {{max_steps: 4}}}}
  figures: [episode_return, group_0_mean, group_1_mean]
  runs:
    PPO: {{baseline: true}}
    FairPPO (dp): {{hyperparams: {{fairness: dp, alpha: 1.0}}}}
"""


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    """The folder of the user's module, on this process's path (and on PYTHONPATH of the subprocesses)."""
    path = tmp_path_factory.mktemp("user_env")
    (path / f"{MODULE}.py").write_text(SOURCE)
    sys.path.insert(0, str(path))
    yield path
    sys.path.remove(str(path))


def _cli(folder: Path, cwd: Path, *argv: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """``sb3-fair ARGV`` in a fresh process that finds the user's module through PYTHONPATH only."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(folder), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
           "OMP_NUM_THREADS": "1", "WANDB_MODE": "offline", "MPLBACKEND": "Agg"}
    return subprocess.run([sys.executable, "-m", "sb3_fair.cli", *argv], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)


def _error(capsys, argv: list[str]) -> str:
    """The one line ``sb3-fair`` exits 2 with."""
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    return err


def test_the_bare_id_of_an_unimported_module_says_how_to_name_it(capsys) -> None:
    err = _error(capsys, ["train", "--algo", "ppo", "--env", "my_cli/Nowhere-v0", "--timesteps", "8"])
    assert "'my_cli/Nowhere-v0' is neither a registered Gymnasium id nor a multi-agent game" in err
    assert "--gym-packages MODULE" in err and "MODULE:ID" in err and "--trust-config" in err


def test_a_module_id_whose_id_the_module_does_not_register_is_one_line(folder, capsys) -> None:
    err = _error(capsys, ["train", "--algo", "ppo", "--env", f"{MODULE}:my_cli/Nope-v0", "--trust-config",
                          "--timesteps", "8"])
    assert f"env '{MODULE}:my_cli/Nope-v0': the module '{MODULE}' was imported, but 'my_cli/Nope-v0' is neither" in err
    assert "it registers ['my_cli/Corridor-v0']" in err


@pytest.mark.parametrize("argv, where", [
    (["--env", "no_such_user_module:my/Env-v0"], "env 'no_such_user_module:my/Env-v0'"),
    (["--env", "CartPole-v1", "--gym-packages", "no_such_user_module"], "gym_packages"),
])
def test_a_module_that_is_not_on_the_path_is_named_with_what_to_do(argv, where, capsys) -> None:
    err = _error(capsys, ["train", "--algo", "ppo", *argv, "--trust-config", "--timesteps", "8"])
    assert f"{where}: no module named 'no_such_user_module' on this Python's path" in err
    assert "PYTHONPATH" in err and "pip install" in err


def test_a_module_that_fails_to_import_is_named_with_its_error(tmp_path, monkeypatch, capsys) -> None:
    (tmp_path / "user_env_cli_broken.py").write_text("import no_such_dependency_xyz\n")
    (tmp_path / "user_env_cli_raises.py").write_text("raise RuntimeError('bad module')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    err = _error(capsys, ["train", "--algo", "ppo", "--env", "CartPole-v1", "--gym-packages", "user_env_cli_broken",
                          "--trust-config", "--timesteps", "8"])
    assert "importing 'user_env_cli_broken' failed: it imports 'no_such_dependency_xyz'" in err
    assert "pip install no_such_dependency_xyz" in err
    err = _error(capsys, ["train", "--algo", "ppo", "--env", "user_env_cli_raises:x/Y-v0", "--trust-config",
                          "--timesteps", "8"])
    assert "importing 'user_env_cli_raises' failed: RuntimeError: bad module" in err
    with pytest.raises(ValueError, match=r"gym_packages: 'not a module' is not a module name"):
        import_gym_packages(["not a module"], trusted=True)
    with pytest.raises(ValueError, match=r"gym_packages must be a list of module names"):
        import_gym_packages("user_env_cli_broken", trusted=True)


def test_importing_a_users_module_needs_the_opt_in(folder, tmp_path, monkeypatch, capsys) -> None:
    """Without --trust-config nothing of the module runs: not from the command line, a config file nor a tasks file."""
    marker = tmp_path / "imported"
    (tmp_path / "user_env_cli_marked.py").write_text(f"import pathlib\npathlib.Path({str(marker)!r}).touch()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    err = _error(capsys, ["train", "--algo", "ppo", "--env", "CartPole-v1", "--gym-packages", "user_env_cli_marked",
                          "--timesteps", "8"])
    assert "gym_packages: importing the module 'user_env_cli_marked' runs its code" in err and "--trust-config" in err
    (tmp_path / "exp.yml").write_text("algo: ppo\nenv: CartPole-v1\nn_timesteps: 8\ngym_packages: [user_env_cli_marked]\n")
    with pytest.raises(ValueError, match="gym_packages: importing the module 'user_env_cli_marked' runs its code"):
        ExperimentConfig.from_file(tmp_path / "exp.yml")
    (tmp_path / "tasks.yml").write_text("t:\n  algo: fair_ppo\n  env: user_env_cli_marked:make_game\n"
                                        "  figures: [episode_return]\n  runs: {PPO: {baseline: true}, F: {}}\n")
    err = _error(capsys, ["compare", "--tasks-file", str(tmp_path / "tasks.yml"), "--task", "t", "--plot", ""])
    assert "would import the module 'user_env_cli_marked'" in err and "--trust-config" in err
    assert not marker.exists() and "user_env_cli_marked" not in sys.modules
    # and with the opt-in, the file's modules come first, then the command line's
    cfg = ExperimentConfig.from_file(tmp_path / "exp.yml", gym_packages=[MODULE], trusted=True)
    assert cfg.gym_packages == ["user_env_cli_marked", MODULE] and marker.exists()


def test_the_hyperparameter_key_of_a_module_env_is_the_id_as_given_or_alone(folder, tmp_path, capsys) -> None:
    (tmp_path / "hp.yml").write_text("my_cli/Corridor-v0:\n  n_timesteps: 16\n  n_steps: 16\n"
                                     f"{MODULE}:my_cli/Corridor-v0@long:\n  n_timesteps: 32\n")
    env = f"{MODULE}:my_cli/Corridor-v0"
    cfg = ExperimentConfig.from_hyperparams("ppo", env, file=tmp_path / "hp.yml", trusted=True)
    assert (cfg.env, cfg.n_timesteps, cfg.hyperparams["n_steps"]) == (env, 16, 16)
    assert ExperimentConfig.from_hyperparams("ppo", env, variant="long", file=tmp_path / "hp.yml",
                                             trusted=True).n_timesteps == 32
    err = _error(capsys, ["train", "--algo", "ppo", "--env", f"{MODULE}:make_game", "--config", str(tmp_path / "hp.yml"),
                          "--trust-config"])
    assert f"has no entry for '{MODULE}:make_game'; its entries: " in err, err
    assert err.endswith(f"(looked for the keys '{MODULE}:make_game', 'make_game' and 'default')"), err
    err = _error(capsys, ["train", "--algo", "ppo", "--env", env, "--config", str(tmp_path / "hp.yml"), "--variant",
                          "short", "--trust-config"])
    assert (f"has no variant 'short' of '{env}'; its variants: ['long'] (looked for the keys '{env}@short' and "
            "'my_cli/Corridor-v0@short')") in err, err
    err = _error(capsys, ["train", "--algo", "fair_dqn", "--env", "sb3_fair/DonutAllocation-v0", "--variant", "nope"])
    assert ("has no variant 'nope' of 'sb3_fair/DonutAllocation-v0'; its variants: ['paper_dqn', 'paper_fairqcm'] "
            "(looked for the key 'sb3_fair/DonutAllocation-v0@nope')") in err


def test_module_names_that_are_no_game_factory_are_refused(folder) -> None:
    with pytest.raises(ValueError, match=rf"env '{MODULE}:Corridor': Corridor is a Gymnasium env class; .*"
                                         rf"gymnasium.register\(id='my/Corridor-v0', entry_point='{MODULE}:Corridor'\)"):
        check_env_id(f"{MODULE}:Corridor", trusted=True)
    from sb3_fair.experiment import make_env

    with pytest.raises(ValueError, match=rf"make_gym_env\(\) returned a Gymnasium env, not a PettingZoo ParallelEnv"):
        make_env(f"{MODULE}:make_gym_env", trusted=True)


def test_a_game_factory_trains_saves_and_evaluates_with_its_module_saved(folder, tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    main(["train", "--algo", "fair_ppo", "--env", f"{MODULE}:make_game", "--trust-config", "--timesteps", "32",
          "-p", "n_steps=16", "batch_size=32", "n_epochs=1", "--eval-episodes", "2", "--save", "g.zip", "--json"])
    capsys.readouterr()
    main(["train", "--algo", "ppo", "--env", "my_cli/Corridor-v0", "--gym-packages", MODULE, "--trust-config",
          "--timesteps", "32", "-p", "n_steps=32", "batch_size=32", "n_epochs=1", "--eval-episodes", "1", "--save",
          "c.zip", "--json"])
    capsys.readouterr()
    assert ExperimentConfig.from_file("c.config.yml", trusted=True).gym_packages == [MODULE]
    err = _error(capsys, ["evaluate", "c.zip", "--episodes", "1"])
    assert f"gym_packages: importing the module '{MODULE}' runs its code" in err
    main(["evaluate", "c.zip", "--episodes", "1", "--trust-config", "--json"])
    assert '"episode_reward"' in capsys.readouterr().out
    main(["evaluate", "g.zip", "--episodes", "2", "--trust-config", "--json"])
    assert '"episode_return"' in capsys.readouterr().out


def test_compare_runs_a_users_gymnasium_env_and_game_in_worker_processes(folder, tmp_path) -> None:
    """Fresh processes (the CLI's and compare's spawned workers, --jobs 2) find the envs through --gym-packages and
    MODULE:FACTORY alone."""
    (tmp_path / "tasks.yml").write_text(TASKS)
    for task, extra in (("corridor", ["--gym-packages", MODULE]), ("share", [])):
        out = _cli(folder, tmp_path, "compare", "--tasks-file", "tasks.yml", "--task", task, "--seeds", "1",
                   "--eval-episodes", "2", "--jobs", "2", "--plot", f"{task}.png", "--trust-config", *extra)
        assert out.returncode == 0, out.stderr[-3000:]
        assert "FairPPO" in out.stdout and (tmp_path / f"{task}.png").is_file(), out.stdout
    assert "agent-steps of user_env_cli_envs:make_game" in out.stdout
    out = _cli(folder, tmp_path, "compare", "--tasks-file", "tasks.yml", "--task", "corridor", "--seeds", "1",
               "--plot", "", "--gym-packages", MODULE)
    assert out.returncode == 2 and f"importing the module '{MODULE}' runs its code" in out.stderr, out.stderr


@pytest.mark.parametrize("env, extra", [("my_cli/Corridor-v0", ["--gym-packages", MODULE]),
                                        (f"{MODULE}:make_game", [])])
def test_sweep_runs_a_users_env_in_its_ray_trials(env, extra, folder, tmp_path) -> None:
    pytest.importorskip("ray")
    out = _cli(folder, tmp_path, "sweep", "--algo", "ppo", "--env", env, *extra, "--trust-config", "--grid",
               "learning_rate=0.001,0.0003", "-p", "n_steps=16", "batch_size=16", "n_epochs=1", "--timesteps", "32",
               "--eval-episodes", "1", "--storage", "sweeps", "--name", "mine", "--max-concurrent", "2", "--quiet")
    assert out.returncode == 0, (out.stdout[-2000:], out.stderr[-3000:])
    assert "2 of 2 trials finished" in out.stdout, out.stdout[-2000:]


def test_a_module_factory_of_an_allowed_module_is_not_called_without_the_opt_in(tmp_path):
    """A ``module:factory`` names a callable: without --trust-config only a PettingZoo game class of the allow-list is
    built. SB3's zip loader, which an allowed module imports and which unpickles what a zip holds, is never called."""
    from sb3_fair.experiment.registry import check_env_id

    with pytest.raises(ValueError, match=r"would call stable_baselines3.common.base_class.load_from_zip_file.*trust"):
        check_env_id("stable_baselines3.common.base_class:load_from_zip_file")
    with pytest.raises(ValueError, match="not a PettingZoo game class"):
        check_env_id("sb3_fair.envs:make_donut_allocation")
    assert check_env_id("sb3_fair.envs:DisparityGame") == "sb3_fair.envs:DisparityGame"  # a game class of sb3-fair
