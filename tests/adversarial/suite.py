#!/usr/bin/env python
"""Adversarial suite for sb3-fair (issue 26 classes + the previous round's).

Every case runs in its own subprocess, in a fresh temporary folder (cwd = <root>/d1/d2/d3/work), with a
per-case timeout; afterwards the suite checks the case's marker folder (code that must not run leaves files
there: see evil/evilpkg/evil.py and the `touch` payloads) and every file that appeared under <root> outside
the work folder (a file written outside the chosen folder).

    git worktree add ../sb3-fair-base e86add2          # a checkout to compare with (here: 0.3.0 before issue 26)
    python tests/adversarial/suite.py --checkout ../sb3-fair-base --out results_base
    python tests/adversarial/suite.py --checkout . --out results_main  [--only 1.,2.] [--jobs 2]

Verdicts: GOOD (refused clearly, early; or handled correctly), LATE (clear but late / not naming the
argument / only warned), BAD (accepted silently, code ran, file outside, internal crash, hang, misleading).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
EVIL = HERE / "evil"
FIX = HERE / "fixtures"
RUNROOT = Path("/tmp/advrun")
PY = sys.executable

# ----------------------------------------------------------------------------------------------------------------
# cases


@dataclass
class Case:
    id: str
    cls: str
    what: str
    kind: str  # "py" | "cli"
    body: str = ""  # py: code; cli: argv (shell-like string, {W} {R} {M} placeholders)
    expect: str = "refuse"  # refuse | accept | custom
    names: tuple = ()  # any of them in the message = the message names the cause
    early: tuple = ("setup", "parse", "construct")
    bad_words: tuple = ()  # a message with one of these is misleading
    called: tuple = ()  # a message with one of these shows that the object was called
    check: Callable | None = None  # custom: (outcome) -> (verdict, note)
    setup: str = ""  # py code run first in the work folder (its own process)
    timeout: int = 60
    mem_gb: float | None = None
    optin: bool = False  # an opt-in variant (only run where the checkout has the opt-in)
    exclusive: bool = False  # run alone (Ray state)
    env: dict = field(default_factory=dict)


CASES: list[Case] = []


def add(*args: Any, **kw: Any) -> None:
    CASES.append(Case(*args, **kw))


# a tiny training: PPO on CartPole, DQN on CartPole
PPO_T = "train --algo ppo --env CartPole-v1 --timesteps 64 -p n_steps=32 batch_size=32 n_epochs=1 --eval-episodes 1 --quiet"
DQN_T = "train --algo dqn --env CartPole-v1 --timesteps 64 -p learning_starts=16 buffer_size=1000 --eval-episodes 1 --quiet"
FPPO_EPI = ("train --algo fair_ppo --env sb3_fair/EpidemicControl-v0 --timesteps 32 -p n_steps=16 batch_size=16 n_epochs=1 "
            "env_kwargs.horizon=4 --eval-episodes 1 --quiet")
FPPO_DISP = ("train --algo fair_ppo --env sb3_fair/DisparityGame-v0 --timesteps 64 -p n_steps=8 batch_size=32 n_epochs=1 "
             "env_kwargs.n_agents=4 env_kwargs.max_steps=4 --eval-episodes 1 --quiet")
TH = "th.os.system('touch {M}/pwned')"
CODE_NAMES = ("trust", "not allowed", "refus", "unsafe", "untrusted", "allow")

# Python helpers: tiny experiment configs
PY_CFG = """
from sb3_fair.experiment import ExperimentConfig, train, build_model
def cfg_ppo(**hp):
    base = {"n_steps": 32, "batch_size": 32, "n_epochs": 1}
    base.update(hp)
    return ExperimentConfig.from_hyperparams("ppo", "CartPole-v1", overrides=base, n_timesteps=64, eval_episodes=1)
"""

# ---------------------------------------------------------------- class 1: configs are code
C1 = "1 configs are code"
code_kw = dict(names=CODE_NAMES + ("policy_kwargs", "callback", "massaging_tau", "env_wrapper", "replay_buffer", "policy",
                                   "normalize", "evilpkg", "os:system", "os.system", "subprocess", "builtins", "activation_fn",
                                   "learning_rate", "vec_env_wrapper", "env"),
               called=("system()", "exec()", "Popen.__init__", "expected str, bytes", "missing 1 required positional argument: 'command'",
                       "argument 'command'", "missing required argument 'command'"))


def _cli_code(cid: str, what: str, argv: str, optin: bool = True, **kw: Any) -> None:
    add(cid, C1, what, "cli", argv, **{**code_kw, **kw})
    if optin:
        add(cid + "+optin", C1 + " (opt-in)", what + " WITH the opt-in flag (code may run)", "cli", argv + " {TRUST}",
            expect="custom", check=optin_check, optin=True, **kw)


def optin_check(o: dict) -> tuple[str, str]:
    if o["markers"]:
        return "GOOD", f"with opt-in the user's code ran ({', '.join(o['markers'])})"
    if o.get("crash_internal"):
        return "BAD", "with opt-in: crash inside library internals: " + o["err_line"]
    if o["err_line"]:
        return "GOOD", "with opt-in: refused/failed cleanly: " + o["err_line"][:160]
    return "GOOD", "with opt-in: accepted"


_cli_code("1.01", "-p policy_kwargs=\"dict(..., activation_fn=th.os.system('touch M'))\" (RL Zoo eval string)",
          PPO_T + f" -p \"policy_kwargs=dict(net_arch=[64], activation_fn={TH})\"")
_cli_code("1.02", "-p policy_kwargs string using torch.os.system", PPO_T + " -p \"policy_kwargs=dict(net_arch=[8], x=torch.os.system('touch {M}/pwned2'))\"",
          optin=False)
_cli_code("1.03", "-p policy_kwargs string reaching os through nn.Module.__init__.__globals__",
          PPO_T + " -p \"policy_kwargs=dict(a=nn.Module.__init__.__globals__['sys'].modules['os'].system('touch {M}/pwned3'))\"", optin=False)
_cli_code("1.04", "-p replay_buffer_kwargs eval string (dqn)", DQN_T + f" -p \"replay_buffer_kwargs=dict(x={TH})\"", optin=False)
_cli_code("1.05", "-p normalize eval string", PPO_T + f" -p \"normalize=dict(norm_obs={TH})\"", optin=False)
_cli_code("1.06", "-p callback=os.system (dotted path, imported and called)", PPO_T + " -p callback=os.system")
_cli_code("1.07", "-p callback={subprocess:run: {args: [touch, M]}}", PPO_T + " -p 'callback={\"subprocess:run\": {\"args\": [\"touch\", \"{M}/pwned\"]}}'")
_cli_code("1.08", "-p massaging_tau=evilpkg.evil:boom (fair_ppo epidemic)", FPPO_EPI + " -p massaging=true massaging_tau=evilpkg.evil:boom")
_cli_code("1.09", "-p massaging_tau=builtins:exec (called as tau(i))", FPPO_EPI + " -p massaging=true massaging_tau=builtins:exec", optin=False)
_cli_code("1.10", "-p env_wrapper=evilpkg.evil:Wrapper", PPO_T + " -p env_wrapper=evilpkg.evil:Wrapper")
_cli_code("1.11", "-p env_wrapper={os:system: {}} (called with the env)", PPO_T + " -p 'env_wrapper={\"os:system\": {}}'", optin=False)
_cli_code("1.12", "-p replay_buffer_class=evilpkg.evil.Boom (dotted)", DQN_T + " -p replay_buffer_class=evilpkg.evil.Boom")
_cli_code("1.13", "-p replay_buffer_class=subprocess.Popen", DQN_T + " -p replay_buffer_class=subprocess.Popen", optin=False)
_cli_code("1.14", "-p policy=subprocess.Popen", PPO_T + " -p policy=subprocess.Popen", optin=False)
_cli_code("1.15", "-p policy=evilpkg.evil.Boom", PPO_T + " -p policy=evilpkg.evil.Boom")
_cli_code("1.16", "--env evilpkg.evil:Evil-v0 (Gymnasium module:id form)",
          "train --algo ppo --env evilpkg.evil:Evil-v0 --timesteps 64 -p n_steps=32 batch_size=32 --eval-episodes 1 --quiet")
_cli_code("1.17", "--env os:system", "train --algo ppo --env os:system --timesteps 64 --eval-episodes 1 --quiet", optin=False)
_cli_code("1.18", "-p policy_kwargs.activation_fn=evilpkg.evil:boom (module:name anywhere)",
          PPO_T + " -p policy_kwargs.activation_fn=evilpkg.evil:boom", optin=False)
_cli_code("1.19", "-p vec_env_wrapper=evilpkg.evil:Wrapper", PPO_T + " -p vec_env_wrapper=evilpkg.evil:Wrapper", optin=False)
_cli_code("1.20", "-p learning_rate=evilpkg.evil:boom (module:name in a plain value)", PPO_T + " -p learning_rate=evilpkg.evil:boom",
          optin=False)
_cli_code("1.21", "-p gamma=evilpkg.evil:boom", PPO_T + " -p gamma=evilpkg.evil:boom", optin=False)
_cli_code("1.22", "-p callback=[evilpkg.evil:Boom] (a list)", PPO_T + " -p 'callback=[evilpkg.evil:Boom]'", optin=False)

# experiment files
EXP_EVAL = f"""algo: ppo
env: CartPole-v1
n_timesteps: 64
eval_episodes: 1
hyperparams:
  n_steps: 32
  batch_size: 32
  policy_kwargs: "dict(net_arch=[64], activation_fn={TH})"
"""
EXP_TAG = """algo: ppo
env: CartPole-v1
n_timesteps: 64
eval_episodes: 1
hyperparams:
  n_steps: 32
  batch_size: 32
  gamma: !!python/object/apply:os.system ["touch {M}/pwned"]
"""
EXP_CB = """algo: ppo
env: CartPole-v1
n_timesteps: 64
eval_episodes: 1
hyperparams:
  n_steps: 32
  batch_size: 32
  callback:
    - subprocess:run: {args: [touch, "{M}/pwned"]}
"""
ZOO_EVAL = f"""CartPole-v1:
  policy: MlpPolicy
  n_timesteps: 64
  n_steps: 32
  batch_size: 32
  policy_kwargs: "dict(net_arch=[64], activation_fn={TH})"
"""
EXP_HPFILE = """algo: ppo
env: CartPole-v1
n_timesteps: 64
eval_episodes: 1
hyperparams_file: zoo.yml
"""
EXP_ENVID = """algo: ppo
env: evilpkg.evil:Evil-v0
n_timesteps: 64
eval_episodes: 1
hyperparams: {n_steps: 32, batch_size: 32}
"""
EXP_TAU = """algo: fair_ppo
env: sb3_fair/EpidemicControl-v0
n_timesteps: 32
eval_episodes: 1
hyperparams:
  n_steps: 16
  batch_size: 16
  n_epochs: 1
  massaging: true
  massaging_tau: "builtins:exec"
  env_kwargs: {horizon: 4}
"""
EXP_NORM = f"""algo: ppo
env: CartPole-v1
n_timesteps: 64
eval_episodes: 1
hyperparams:
  n_steps: 32
  batch_size: 32
  normalize: "dict(norm_obs={TH})"
"""


def wfile(name: str, text: str) -> str:
    """setup code writing a fixture file into the work folder ({M} filled in at run time)."""
    return f"open({name!r}, 'w').write({text!r}.replace('{{M}}', MARK))\n"


_cli_code("1.30", "experiment YAML (--config) with policy_kwargs eval string", "train --config exp.yml --quiet",
          setup=wfile("exp.yml", EXP_EVAL))
_cli_code("1.31", "experiment YAML with !!python/object/apply:os.system", "train --config exp.yml --quiet", setup=wfile("exp.yml", EXP_TAG),
          optin=False)
_cli_code("1.32", "experiment YAML callback: [{subprocess:run: {args: [touch, M]}}]", "train --config exp.yml --quiet",
          setup=wfile("exp.yml", EXP_CB))
_cli_code("1.33", "RL Zoo hyper-parameter file (--config zoo.yml --algo --env) with policy_kwargs eval string",
          "train --config zoo.yml --algo ppo --env CartPole-v1 --eval-episodes 1 --quiet", setup=wfile("zoo.yml", ZOO_EVAL))
_cli_code("1.34", "experiment YAML whose hyperparams_file: has a policy_kwargs eval string", "train --config exp.yml --quiet",
          setup=wfile("exp.yml", EXP_HPFILE) + wfile("zoo.yml", ZOO_EVAL), optin=False)
_cli_code("1.35", "experiment YAML env: evilpkg.evil:Evil-v0", "train --config exp.yml --quiet", setup=wfile("exp.yml", EXP_ENVID),
          optin=False)
_cli_code("1.36", "experiment YAML massaging_tau: builtins:exec", "train --config exp.yml --quiet", setup=wfile("exp.yml", EXP_TAU),
          optin=False)
_cli_code("1.37", "experiment YAML normalize: eval string", "train --config exp.yml --quiet", setup=wfile("exp.yml", EXP_NORM), optin=False)

PY_FROM_FILE = """
from sb3_fair.experiment import ExperimentConfig, train, build_model
import inspect
OPTIN = {optin}
kw = {{}}
if OPTIN:
    for fn in (ExperimentConfig.from_file, train, build_model):
        kw.update(trust_kwargs(fn))
    if not kw:
        RESULT["na"] = "no trust/opt-in parameter in this checkout"
        raise SystemExit(0)
phase("parse")
fkw = {{k: v for k, v in kw.items() if k in inspect.signature(ExperimentConfig.from_file).parameters}}
cfg = ExperimentConfig.from_file("exp.yml", **fkw)
phase("construct")
tkw = {{k: v for k, v in kw.items() if k in inspect.signature({fn}).parameters}}
{call}
"""


def _py_code(cid: str, what: str, setup: str, fn: str = "train", call: str = "train(cfg, **tkw)", optin: bool = True) -> None:
    add(cid, C1, what + " (Python)", "py", PY_FROM_FILE.format(optin=False, fn=fn, call=call), setup=setup, **code_kw)
    if optin:
        add(cid + "+optin", C1 + " (opt-in)", what + " (Python) WITH trusted=True", "py", PY_FROM_FILE.format(optin=True, fn=fn, call=call),
            setup=setup, expect="custom", check=optin_check, optin=True)


_py_code("1.40", "ExperimentConfig.from_file + train: policy_kwargs eval string", wfile("exp.yml", EXP_EVAL))
_py_code("1.41", "ExperimentConfig.from_file + build_model: policy_kwargs eval string", wfile("exp.yml", EXP_EVAL), fn="build_model",
         call="build_model(cfg, **tkw)", optin=False)
_py_code("1.42", "from_file with !!python/object/apply tag", wfile("exp.yml", EXP_TAG), optin=False)
_py_code("1.43", "from_file + train: callback subprocess:run", wfile("exp.yml", EXP_CB))
_py_code("1.44", "from_file + build_model: env evilpkg.evil:Evil-v0", wfile("exp.yml", EXP_ENVID), fn="build_model",
         call="build_model(cfg, **tkw)", optin=False)
_py_code("1.45", "from_file + build_model: normalize eval string", wfile("exp.yml", EXP_NORM), fn="build_model",
         call="build_model(cfg, **tkw)", optin=False)
add("1.46", C1, "from_hyperparams(overrides={policy_kwargs: eval string}) + build_model (Python)", "py", PY_CFG + f"""
phase("parse")
cfg = ExperimentConfig.from_hyperparams("ppo", "CartPole-v1", overrides={{"policy_kwargs": "dict(net_arch=[8], a={TH})".replace("{{M}}", MARK)}}, n_timesteps=64)
phase("construct")
build_model(cfg)
""", **code_kw)
add("1.47", C1, "from_hyperparams(file=zoo.yml with eval string) + build_model (Python)", "py", PY_CFG + """
phase("parse")
cfg = ExperimentConfig.from_hyperparams("ppo", "CartPole-v1", file="zoo.yml", n_timesteps=64)
phase("construct")
build_model(cfg)
""", setup=wfile("zoo.yml", ZOO_EVAL), **code_kw)
add("1.48", C1, "resolve_hyperparams({'policy_kwargs': eval string}) directly (Python)", "py", f"""
from sb3_fair.common.hyperparams import resolve_hyperparams
phase("parse")
resolve_hyperparams({{"policy_kwargs": "dict(a={TH})".replace("{{M}}", MARK)}})
""", **code_kw)
add("1.49", C1, "import_object('evilpkg.evil:boom') via algo_kwargs({'massaging_tau': ...}) (Python)", "py", """
from sb3_fair.common.hyperparams import algo_kwargs
phase("parse")
algo_kwargs({"massaging_tau": "evilpkg.evil:boom"})
""", **code_kw)

# a saved model whose config was edited
SETUP_MODEL = """
import subprocess, sys
r = subprocess.run([sys.executable, "-m", "sb3_fair.cli", "train", "--algo", "ppo", "--env", "CartPole-v1", "--timesteps", "64",
                    "-p", "n_steps=32", "batch_size=32", "n_epochs=1", "--eval-episodes", "1", "--save", "m.zip", "--quiet"],
                   capture_output=True, text=True)
assert r.returncode == 0, r.stderr[-2000:]
import yaml
d = yaml.safe_load(open("m.config.yml"))
"""


def edit_cfg(py: str) -> str:
    return SETUP_MODEL + py + "\nopen('m.config.yml', 'w').write(yaml.safe_dump(d, sort_keys=False).replace('{M}', MARK))\n"


_cli_code("1.50", "evaluate m.zip whose m.config.yml has env_wrapper: evilpkg.evil:Wrapper", "evaluate m.zip --episodes 1",
          setup=edit_cfg("d['hyperparams']['env_wrapper'] = 'evilpkg.evil:Wrapper'"))
_cli_code("1.51", "evaluate m.zip whose config has env: evilpkg.evil:Evil-v0", "evaluate m.zip --episodes 1",
          setup=edit_cfg("d['env'] = 'evilpkg.evil:Evil-v0'"), optin=False)
def no_code(o: dict) -> tuple[str, str]:
    if o["crash_internal"]:
        return "BAD", "crash: " + o["err_line"][:150]
    if o["err"] and any(w.lower() in o["err_line"].lower() for w in code_kw["called"]):
        return "BAD", "the named object was called: " + o["err_line"][:150]
    if o["err"]:
        return "GOOD", "not run; refused: " + o["err_line"][:150]
    return "GOOD", "the value was not imported/evaluated (no marker); accepted"


_cli_code("1.52", "evaluate m.zip whose config has policy_kwargs eval string", "evaluate m.zip --episodes 1",
          setup=edit_cfg(f"d['hyperparams']['policy_kwargs'] = \"dict(a={TH})\""), optin=False, expect="custom", check=no_code)
_cli_code("1.53", "evaluate m.zip whose config has a !!python/object/apply tag", "evaluate m.zip --episodes 1",
          setup=SETUP_MODEL + "open('m.config.yml','a').write('extra: !!python/object/apply:os.system [\"touch {M}/pwned\"]\\n'.replace('{M}', MARK))\n",
          optin=False)
_cli_code("1.54", "evaluate m.zip whose config has env_kwargs.x: evilpkg.evil:boom", "evaluate m.zip --episodes 1",
          setup=edit_cfg("d['hyperparams']['env_kwargs'] = {'render_mode': 'evilpkg.evil:boom'}"), optin=False, expect="custom", check=no_code)
add("1.55", C1, "load_model(m.zip) whose config has env_wrapper evilpkg.evil:Wrapper + evaluate (Python)", "py", """
from sb3_fair.experiment import load_model, evaluate
phase("parse")
model, cfg = load_model("m.zip")
phase("construct")
evaluate(model, cfg.env, 1, cfg.hyperparams.get("env_kwargs"), cfg.hyperparams.get("env_wrapper"), seed=0)
""", setup=edit_cfg("d['hyperparams']['env_wrapper'] = 'evilpkg.evil:Wrapper'"), **code_kw)
SETUP_CKPT = """
import subprocess, sys, yaml
r = subprocess.run([sys.executable, "-m", "sb3_fair.cli", "train", "--algo", "ppo", "--env", "CartPole-v1", "--timesteps", "64",
                    "-p", "n_steps=32", "batch_size=32", "n_epochs=1", "--eval-episodes", "1", "--save", "m.zip", "--checkpoint-every", "32", "--quiet"],
                   capture_output=True, text=True)
assert r.returncode == 0, r.stderr[-2000:]
d = yaml.safe_load(open("m/model.config.yml"))
d["hyperparams"]["policy_kwargs"] = "dict(net_arch=[64], activation_fn=th.os.system('touch {M}/pwned'))"
open("m/model.config.yml", "w").write(yaml.safe_dump(d, sort_keys=False).replace("{M}", MARK))
"""
_cli_code("1.56", "train --resume m/model_32_steps.zip whose m/model.config.yml has a policy_kwargs eval string",
          "train --resume m/model_32_steps.zip --timesteps 96 --eval-episodes 1 --quiet", setup=SETUP_CKPT)
add("1.57", C1, "sweep -p policy_kwargs eval string (refusal expected before Ray starts)", "cli",
    "sweep --algo ppo --env CartPole-v1 --timesteps 32 -p n_steps=32 batch_size=32 \"policy_kwargs=dict(a=" + TH + ")\" "
    "--eval-episodes 1 --storage {W}/st --name s1 --max-concurrent 1 --quiet", timeout=120, exclusive=True, **code_kw)

# legitimate values: must still work
ACC = dict(expect="accept")
add("1.60", C1, "legit -p policy_kwargs=\"dict(net_arch=[64, 64], activation_fn=nn.Tanh)\"", "cli",
    PPO_T + " -p \"policy_kwargs=dict(net_arch=[64, 64], activation_fn=nn.Tanh)\"", **ACC)
add("1.61", C1, "legit -p policy_kwargs.activation_fn=torch.nn:ReLU", "cli", PPO_T + " -p policy_kwargs.activation_fn=torch.nn:ReLU", **ACC)
add("1.62", C1, "legit YAML policy_kwargs {activation_fn: torch.nn:ReLU, net_arch: [32]}: policy uses ReLU (Python)", "py", """
from sb3_fair.experiment import ExperimentConfig, build_model
import torch
phase("parse"); cfg = ExperimentConfig.from_file("exp.yml")
phase("construct"); m = build_model(cfg)
RESULT["valid"] = m.policy.activation_fn is torch.nn.ReLU
""", setup=wfile("exp.yml", "algo: ppo\nenv: CartPole-v1\nn_timesteps: 64\nhyperparams:\n  policy_kwargs: {activation_fn: torch.nn:ReLU, net_arch: [32]}\n"), **ACC)
add("1.63", C1, "legit massaging_tau: sb3_fair.common.long_term:lending_massaging_threshold (build + learn 32 steps)", "py", """
from sb3_fair.experiment import ExperimentConfig, build_model
from sb3_fair.common.long_term import lending_massaging_threshold
phase("parse")
cfg = ExperimentConfig.from_hyperparams("fair_ppo", "sb3_fair/DelayedImpactLending-v0", overrides={"massaging": True,
      "massaging_tau": "sb3_fair.common.long_term:lending_massaging_threshold", "n_steps": 16, "batch_size": 16, "n_epochs": 1,
      "env_kwargs.horizon": 8}, n_timesteps=32)
phase("construct"); m = build_model(cfg)
phase("learn"); m.learn(32)
RESULT["valid"] = m.massaging_tau is lending_massaging_threshold or getattr(m, "massaging_tau", None) == lending_massaging_threshold
""", **ACC)
add("1.64", C1, "legit -p learning_rate=lin_0.001 (a linear schedule)", "py", PY_CFG + """
phase("construct"); m = build_model(cfg_ppo(learning_rate="lin_0.001"))
RESULT["valid"] = abs(m.lr_schedule(1.0) - 0.001) < 1e-12 and abs(m.lr_schedule(0.5) - 0.0005) < 1e-12
phase("learn"); m.learn(64)
""", **ACC)
add("1.65", C1, "legit env_wrapper {gymnasium.wrappers.TimeLimit: {max_episode_steps: 5}}: episodes of 5 steps", "py", PY_CFG + """
phase("construct"); m = build_model(cfg_ppo(env_wrapper={"gymnasium.wrappers.TimeLimit": {"max_episode_steps": 5}}))
env = m.get_env(); env.reset(); n = 0
while True:
    n += 1
    _, _, d, _ = env.step([0])
    if d[0]: break
RESULT["valid"] = n <= 5
""", **ACC)
add("1.66", C1, "legit policy: MlpPolicy via CLI", "cli", PPO_T + " -p policy=MlpPolicy", **ACC)
add("1.67", C1, "legit shipped variant fair_dqn Donut @paper_fairqcm (100 steps)", "cli",
    "train --algo fair_dqn --env sb3_fair/DonutAllocation-v0 --variant paper_fairqcm --timesteps 100 -p learning_starts=10 buffer_size=1000 "
    "--eval-episodes 1 --quiet", **ACC)
add("1.68", C1, "legit shipped fair_ppo Epidemic @f_ppo (massaging_tau schedule string) 32 steps", "cli",
    "train --algo fair_ppo --env sb3_fair/EpidemicControl-v0 --variant f_ppo --timesteps 32 -p n_steps=16 batch_size=16 n_epochs=1 "
    "env_kwargs.horizon=4 --eval-episodes 1 --quiet", **ACC)
add("1.69", C1, "legit evaluate of an unedited saved model", "cli", "evaluate m.zip --episodes 1", setup=SETUP_MODEL, **ACC)
add("1.70", C1, "legit -p replay_buffer_class=stable_baselines3.common.buffers.ReplayBuffer", "cli",
    DQN_T + " -p replay_buffer_class=stable_baselines3.common.buffers.ReplayBuffer", **ACC)
add("1.71", C1, "legit -p callback=stable_baselines3.common.callbacks.StopTrainingOnMaxEpisodes with kwargs", "cli",
    PPO_T + " -p 'callback={\"stable_baselines3.common.callbacks.StopTrainingOnMaxEpisodes\": {\"max_episodes\": 100}}'", **ACC)
add("1.72", C1, "legit --resume from the newest checkpoint with its saved config (an earlier one is refused since round 3)", "cli",
    "train --resume m/model_64_steps.zip --timesteps 96 --eval-episodes 1 --quiet",
    setup=SETUP_CKPT.split("d = yaml.safe_load")[0], **ACC)
add("1.73", C1, "legit YAML policy_kwargs: \"dict(net_arch=[64, 64], activation_fn=nn.Tanh)\" through from_file + build_model (Python)", "py", """
from sb3_fair.experiment import ExperimentConfig, build_model
import torch
phase("parse"); cfg = ExperimentConfig.from_file("exp.yml")
phase("construct"); m = build_model(cfg)
RESULT["valid"] = m.policy.activation_fn is torch.nn.Tanh
""", setup=wfile("exp.yml", "algo: ppo\nenv: CartPole-v1\nn_timesteps: 64\nhyperparams:\n  policy_kwargs: \"dict(net_arch=[64, 64], activation_fn=nn.Tanh)\"\n"),
    **ACC)

# ---------------------------------------------------------------- class 2: files outside the output folder
C2 = "2 files outside folder"
esc_names = ("name", "--name", "path", "outside", "..", "escape", "absolute", "'/'", "folder")
add("2.01", C2, "train --name ../../esc --checkpoint-every 32 (no --save)", "cli", PPO_T + " --name ../../esc --checkpoint-every 32",
    names=esc_names)
add("2.02", C2, "train --name ../../../../../esc --checkpoint-every 32", "cli", PPO_T + " --name ../../../../../esc --checkpoint-every 32",
    names=esc_names)
add("2.03", C2, "train --name <absolute path outside cwd> --checkpoint-every 32", "cli", PPO_T + " --name {R}/abs_esc --checkpoint-every 32",
    names=esc_names)
add("2.04", C2, "train --name .. --checkpoint-every 32", "cli", PPO_T + " --name .. --checkpoint-every 32", names=esc_names)
add("2.05", C2, "train --name a/../../x --checkpoint-every 32", "cli", PPO_T + " --name a/../../x --checkpoint-every 32", names=esc_names)


def contained_ok(o: dict) -> tuple[str, str]:
    if o["rc"] == 0:
        return "GOOD", "accepted; every file stayed inside the work folder"
    if o["crash_internal"]:
        return "BAD", "crash: " + o["err_line"]
    return "GOOD", "refused: " + o["err_line"][:150]


add("2.06", C2, "train --name a/b --checkpoint-every 32 (slash, stays inside checkpoints/)", "cli",
    PPO_T + " --name a/b --checkpoint-every 32", expect="custom", check=contained_ok)
add("2.07", C2, "ExperimentConfig(name='../../esc', checkpoint_every=32) + train (Python)", "py", PY_CFG + """
phase("parse"); cfg = cfg_ppo().replace(name="../../esc", checkpoint_every=32)
phase("construct"); train(cfg)
""", names=esc_names)
add("2.08", C2, "ExperimentConfig(name=<abs path>, checkpoint_every=32) + train (Python)", "py", PY_CFG + """
import os
phase("parse"); cfg = cfg_ppo().replace(name=os.path.abspath("../../../abs_esc2"), checkpoint_every=32)
phase("construct"); train(cfg)
""", names=esc_names)


def saved_at(rel: str) -> Callable:
    def check(o: dict) -> tuple[str, str]:
        if o["rc"] != 0:
            return "BAD", "explicit user path refused/failed: " + o["err_line"][:150]
        return "GOOD", f"wrote where the user asked ({rel}); nothing else outside"
    return check


add("2.10", C2, "train --save <abs>/out/m.zip --checkpoint-every 32 (the user's folder)", "cli",
    PPO_T + " --save {R}/out/m.zip --checkpoint-every 32", expect="custom", check=saved_at("{R}/out/"), env={"ALLOW_ESCAPE": "out"})
add("2.11", C2, "train --save ../../m2.zip explicit relative (user's choice)", "cli", PPO_T + " --save ../../m2.zip",
    expect="custom", check=saved_at("../../m2.zip"), env={"ALLOW_ESCAPE": "d1/d2/m2"})
add("2.12", C2, "train --name ../../esc --save m.zip --checkpoint-every 32 (folder from --save)", "cli",
    PPO_T + " --name ../../esc --save m.zip --checkpoint-every 32", expect="custom", check=contained_ok)
SW = ("sweep --algo ppo --env CartPole-v1 --timesteps 32 -p n_steps=32 batch_size=32 n_epochs=1 --eval-episodes 1 "
      "--storage {W}/st --max-concurrent 1 --quiet")
add("2.13", C2, "sweep --name ../escape --storage <tmp>/st", "cli", SW + " --name ../escape", names=esc_names, timeout=150, exclusive=True,
    env={"ALLOW_INSIDE_ONLY": "st"})
add("2.14", C2, "sweep --name <abs path> --storage <tmp>/st", "cli", SW + " --name {R}/abs_sweep", names=esc_names, timeout=150, exclusive=True,
    env={"ALLOW_INSIDE_ONLY": "st"})
add("2.15", C2, "sweep --name a/../../b --storage <tmp>/st", "cli", SW + " --name a/../../b", names=esc_names, timeout=150, exclusive=True,
    env={"ALLOW_INSIDE_ONLY": "st"})
add("2.16", C2, "benchmarks/fairqcm.py --seeds 1 --episodes 1 --out o: nothing outside o (checks only; tiny)", "cli",
    "benchmarks/fairqcm.py --seeds 1 --episodes 1 --eval-every 1 --eval-episodes 1 --tasks donut --methods DQN --throughput-steps 10 --workers 1 --out o",
    expect="custom", check=contained_ok, env={"ALLOW_INSIDE_ONLY": "o"}, timeout=90)
add("2.17", C2, "compare --plot ../../p.png (user-chosen plot path; tiny)", "cli",
    "compare --task donut --seeds 1 --episodes 1 --eval-episodes 1 --plot ../../p.png --quiet", expect="custom", check=saved_at("../../p.png"),
    env={"ALLOW_ESCAPE": "d1/d2/p.png"}, timeout=90)
add("2.18", C2, "compare --plot <a directory>", "cli", "compare --task donut --seeds 1 --episodes 1 --plot .", names=("--plot", "directory"))
add("2.19", C2, "benchmarks/fairqcm.py --out <a file>", "cli", "benchmarks/fairqcm.py --seeds 1 --episodes 1 --tasks donut --out f",
    setup="open('f','w').write('x')", names=("--out", "f'", "file", "directory", "folder"))
add("2.20", C2, "train --tensorboard-log <a file>", "cli", PPO_T + " --tensorboard-log f", setup="open('f','w').write('x')",
    names=("--tensorboard-log",))

# ---------------------------------------------------------------- class 3: checkpoint disk use


def disk(limit_mb: float) -> Callable:
    def check(o: dict) -> tuple[str, str]:
        mb = o["bytes"] / 1e6
        if o["timeout"]:
            return "BAD", f"did not finish in time ({mb:.0f} MB written so far)"
        if o["rc"] != 0:
            return "BAD", f"failed ({o['err_line'][:120]}); {mb:.1f} MB written"
        if mb > limit_mb:
            return "BAD", f"{mb:.1f} MB written for a few hundred steps (the preallocated replay buffer pickled whole?)"
        return "GOOD", f"{mb:.2f} MB written in all"
    return check


C3 = "3 checkpoint disk"
add("3.01", C3, "dqn CartPole 600 steps --checkpoint-every 200 --save m.zip: bytes written", "cli",
    "train --algo dqn --env CartPole-v1 --timesteps 600 --checkpoint-every 200 --save m.zip --eval-episodes 1 --quiet",
    expect="custom", check=disk(20), timeout=120)
add("3.02", C3, "fair_dqn Donut 600 steps --checkpoint-every 200: bytes written", "cli",
    "train --algo fair_dqn --env sb3_fair/DonutAllocation-v0 --timesteps 600 --checkpoint-every 200 --save m.zip --eval-episodes 1 --quiet",
    expect="custom", check=disk(20), timeout=150)
add("3.03", C3, "fair_dqn LoanApplicants 400 steps --checkpoint-every 200: bytes written", "cli",
    "train --algo fair_dqn --env sb3_fair/LoanApplicants-v0 --timesteps 400 --checkpoint-every 200 --save m.zip --eval-episodes 1 --quiet",
    expect="custom", check=disk(20), timeout=150)
add("3.04", C3, "sac Pendulum 300 steps --checkpoint-every 150: bytes written", "cli",
    "train --algo sac --env Pendulum-v1 --timesteps 300 --checkpoint-every 150 -p learning_starts=100 --save m.zip --eval-episodes 1 --quiet",
    expect="custom", check=disk(20), timeout=150)
add("3.05", C3, "dqn CartPole 400 steps, checkpoints without --save (checkpoints/<run>)", "cli",
    "train --algo dqn --env CartPole-v1 --timesteps 400 --checkpoint-every 200 --eval-episodes 1 --quiet", expect="custom", check=disk(20),
    timeout=120)

# ---------------------------------------------------------------- class 4: schedules
C4 = "4 schedules"
for fname in ("epidemic_massaging_threshold", "lending_massaging_threshold", "attention_massaging_threshold"):
    for i in (0, 50, 3940, 10**6, 10**9):
        add(f"4.{fname[:3]}.{i}", C4, f"{fname}({i})", "py", f"""
import math
from sb3_fair.common import long_term
phase("construct")
v = long_term.{fname}({i})
RESULT["value"] = repr(v)
RESULT["valid"] = isinstance(v, float) and math.isfinite(v) and 0 <= v <= 1
""", expect="accept")

# ---------------------------------------------------------------- class 5: CSP without factors, CF without twins
C5 = "5 csp/cf info"
DISP = """
import numpy as np
from pettingzoo.utils.env import ParallelEnv
from sb3_fair.envs.disparity import DisparityGame
from sb3_fair.common.stakeholders import Stakeholders
from sb3_fair.wrappers import make_multiagent_vec_env

def strip_game(game_fn, strip_info=True, strip_stake=True, key="factor", nan_obs=False, nan_rew=False, bad_benefit=None):
    class Strip(ParallelEnv):
        def __init__(s):
            s.g = game_fn(); s.possible_agents = list(s.g.possible_agents); s.agents = []; s.metadata = s.g.metadata
            s.render_mode = None
        def observation_space(s, a): return s.g.observation_space(a)
        def action_space(s, a): return s.g.action_space(a)
        @property
        def stakeholders(s):
            st = s.g.stakeholders
            if strip_stake and key == "factor":
                return Stakeholders(names=st.names, groups=st.groups)
            return st
        def _fix(s, infos):
            if strip_info:
                for i in infos.values(): i.pop(key, None)
            if bad_benefit is not None:
                for i in infos.values():
                    if "benefits" in i:
                        b = np.array(i["benefits"], dtype=float); b[0] = bad_benefit; i["benefits"] = b
            return infos
        def reset(s, seed=None, options=None):
            o, i = s.g.reset(seed=seed, options=options); s.agents = list(s.g.agents)
            if nan_obs: o = {a: np.full_like(v, np.nan) for a, v in o.items()}
            return o, s._fix(i)
        def step(s, actions):
            o, r, te, tr, i = s.g.step(actions); s.agents = list(s.g.agents)
            if nan_obs: o = {a: np.full_like(v, np.nan) for a, v in o.items()}
            if nan_rew: r = {a: float("nan") for a in r}
            return o, r, te, tr, s._fix(i)
        def render(s): return None
        def close(s): pass
        def action_masks(s): return s.g.action_masks()
    return Strip

def disp(**kw): return DisparityGame(n_agents=4, max_steps=4, **kw)
def harvest():
    from sb3_fair.envs import AllelopathicHarvestEnv
    return AllelopathicHarvestEnv.from_preset("tiny", max_steps=8)
from sb3_fair import FairPPO
"""
PPO_SMALL = "n_steps=8, batch_size=16, n_epochs=1, seed=0"
add("5.01", C5, "FairPPO(fairness='csp') on DisparityGame with 'factor' stripped from infos and stakeholders", "py", DISP + f"""
venv = make_multiagent_vec_env(strip_game(disp), n_instances=1)
phase("construct"); m = FairPPO("MlpPolicy", venv, fairness="csp", {PPO_SMALL})
phase("learn"); m.learn(64)
""", names=("factor",), early=("setup", "construct", "learn"))
add("5.02", C5, "FairPPO csp: 'factor' stripped from infos only (stakeholders keep factors)", "py", DISP + f"""
venv = make_multiagent_vec_env(strip_game(disp, strip_stake=False), n_instances=1)
phase("construct"); m = FairPPO("MlpPolicy", venv, fairness="csp", {PPO_SMALL})
phase("learn"); m.learn(64)
""", names=("factor",), early=("setup", "construct", "learn"))
add("5.03", C5, "FairPPO csp on AllelopathicHarvest tiny with 'factor' stripped", "py", DISP + f"""
venv = make_multiagent_vec_env(strip_game(harvest), n_instances=1)
phase("construct"); m = FairPPO("MlpPolicy", venv, fairness="csp", {PPO_SMALL})
phase("learn"); m.learn(64)
""", names=("factor",), early=("setup", "construct", "learn"))
add("5.04", C5, "FairPPO(fairness='cf') on DisparityGame without twins", "py", DISP + f"""
venv = make_multiagent_vec_env(disp, n_instances=1)
phase("construct"); m = FairPPO("MlpPolicy", venv, fairness="cf", {PPO_SMALL})
phase("learn"); m.learn(64)
""", names=("twin", "CounterfactualPair", "counterfactual"), early=("setup", "construct", "learn"))
add("5.05", C5, "FairPPO cf on Harvest tiny without twins", "py", DISP + f"""
venv = make_multiagent_vec_env(harvest, n_instances=1)
phase("construct"); m = FairPPO("MlpPolicy", venv, fairness="cf", {PPO_SMALL})
phase("learn"); m.learn(64)
""", names=("twin", "CounterfactualPair", "counterfactual"), early=("setup", "construct", "learn"))
add("5.06", C5, "FairPPO cf on a CounterfactualPair whose 'twin' infos are stripped", "py", DISP + f"""
from sb3_fair.wrappers import CounterfactualPair
venv = make_multiagent_vec_env(strip_game(lambda: CounterfactualPair(disp), key="twin"), n_instances=1)
phase("construct"); m = FairPPO("MlpPolicy", venv, fairness="cf", {PPO_SMALL})
phase("learn"); m.learn(64)
""", names=("twin",), early=("setup", "construct", "learn"))
add("5.07", C5, "CLI fair_ppo DisparityGame -p fairness=csp (factors present): legit", "cli", FPPO_DISP + " -p fairness=csp", expect="accept")
add("5.08", C5, "CLI fair_ppo DisparityGame -p fairness=cf without counterfactual_pair", "cli", FPPO_DISP + " -p fairness=cf",
    names=("twin", "counterfactual"), )
add("5.09", C5, "CLI fair_ppo DisparityGame -p fairness=cf env_kwargs.counterfactual_pair=flip: legit", "cli",
    FPPO_DISP + " -p fairness=cf env_kwargs.counterfactual_pair=flip", expect="accept")
add("5.10", C5, "FairPPO csp with 'group' stripped from infos", "py", DISP + f"""
venv = make_multiagent_vec_env(strip_game(disp, key="group"), n_instances=1)
phase("construct"); m = FairPPO("MlpPolicy", venv, fairness="csp", {PPO_SMALL})
phase("learn"); m.learn(64)
""", names=("group",), early=("setup", "construct", "learn"))

# ---------------------------------------------------------------- class 6: silently ignored settings
C6 = "6 ignored settings"
EPI = """
import gymnasium as gym, numpy as np
import sb3_fair.envs
from stable_baselines3.common.env_util import make_vec_env
from sb3_fair import FairPPO, FairDQN
def epi(): return make_vec_env(lambda: gym.make("sb3_fair/EpidemicControl-v0", horizon=4), n_envs=1)
"""
IGN = dict(early=("setup", "parse", "construct"))


def ign(cid: str, what: str, body: str, names: tuple) -> None:
    add(cid, C6, what, "py", body, names=names, **IGN)


ign("6.01", "FairPPO(fairness='long_term', alpha=0.7, beta=0.2) (alpha/beta are DP/CSP/CF weights)", EPI + """
phase("construct"); m = FairPPO("MlpPolicy", epi(), fairness="long_term", alpha=0.7, beta=0.2, n_steps=16, batch_size=16, n_epochs=1)
phase("learn"); m.learn(16)
""", ("alpha", "beta"))
ign("6.02", "FairPPO(fairness='dp', delta=0.3) on DisparityGame", DISP + f"""
phase("construct"); m = FairPPO("MlpPolicy", make_multiagent_vec_env(disp), fairness="dp", delta=0.3, {PPO_SMALL})
phase("learn"); m.learn(32)
""", ("delta",))
ign("6.03", "FairPPO(fairness='dp', omega=0.3)", DISP + f"""
phase("construct"); m = FairPPO("MlpPolicy", make_multiagent_vec_env(disp), fairness="dp", omega=0.3, {PPO_SMALL})
""", ("omega",))
ign("6.04", "FairPPO(fairness='dp', regularization='literal')", DISP + f"""
phase("construct"); m = FairPPO("MlpPolicy", make_multiagent_vec_env(disp), fairness="dp", regularization="literal", {PPO_SMALL})
""", ("regularization",))
ign("6.05", "FairPPO(massaging=False, massaging_tau=0.5) on Epidemic", EPI + """
phase("construct"); m = FairPPO("MlpPolicy", epi(), fairness="long_term", massaging=False, massaging_tau=0.5, n_steps=16, batch_size=16)
""", ("massaging",))
ign("6.06", "FairPPO(fairness='a_ppo', delta=0.3) (A-PPO uses omega)", EPI + """
phase("construct"); m = FairPPO("MlpPolicy", epi(), fairness="a_ppo", delta=0.3, n_steps=16, batch_size=16)
""", ("delta",))
ign("6.07", "FairPPO(fairness='long_term', omega=0.3) (F-PPO uses delta)", EPI + """
phase("construct"); m = FairPPO("MlpPolicy", epi(), fairness="long_term", omega=0.3, n_steps=16, batch_size=16)
""", ("omega",))
DONUT = """
import gymnasium as gym, numpy as np
import sb3_fair.envs
from sb3_fair import FairDQN, FairPPO
def donut(): return gym.make("sb3_fair/DonutAllocation-v0")
"""
ign("6.08", "FairDQN(counterfactual=False, counterfactual_offsets=(3,))", DONUT + """
phase("construct"); m = FairDQN("MlpPolicy", donut(), counterfactual=False, counterfactual_offsets=(3,), buffer_size=1000)
""", ("counterfactual_offsets", "counterfactual"))
ign("6.09", "FairDQN(counterfactual=False, max_counterfactuals=5)", DONUT + """
phase("construct"); m = FairDQN("MlpPolicy", donut(), counterfactual=False, max_counterfactuals=5, buffer_size=1000)
""", ("max_counterfactuals", "counterfactual"))
add("6.10", C6, "FairDQN(counterfactual=True, counterfactual_offsets=(1e9,))", "py", DONUT + """
phase("construct"); m = FairDQN("MlpPolicy", donut(), counterfactual=True, counterfactual_offsets=(1e9,), buffer_size=1000, learning_starts=10)
phase("learn"); m.learn(50)
""", names=("counterfactual_offsets",))
add("6.11", C6, "FairDQN(counterfactual=True, counterfactual_offsets=(10**9,))", "py", DONUT + """
phase("construct"); m = FairDQN("MlpPolicy", donut(), counterfactual=True, counterfactual_offsets=(10**9,), buffer_size=1000, learning_starts=10)
phase("learn"); m.learn(50)
""", names=("counterfactual_offsets",))
add("6.12", C6, "FairDQN(counterfactual=True, counterfactual_offsets=(-1,))", "py", DONUT + """
phase("construct"); m = FairDQN("MlpPolicy", donut(), counterfactual=True, counterfactual_offsets=(-1,), buffer_size=1000, learning_starts=10)
phase("learn"); m.learn(50)
""", names=("counterfactual_offsets",))
for cid, preset, envid, cls in (("6.13", "delayed_impact_lending", "sb3_fair/EpidemicControl-v0", "FairPPO"),
                                 ("6.14", "attention", "sb3_fair/DelayedImpactLending-v0", "FairPPO"),
                                 ("6.15", "epidemic", "sb3_fair/AttentionAllocation-v0", "FairPPO"),
                                 ("6.16", "epidemic", "CartPole-v1", "FairPPO"),
                                 ("6.17", "donut", "sb3_fair/LoanApplicants-v0", "FairDQN"),
                                 ("6.18", "loan_applicants", "sb3_fair/DonutAllocation-v0", "FairDQN"),
                                 ("6.19", "donut", "sb3_fair/DonutAllocationTabular-v0", "FairDQN")):
    add(cid, C6, f"{cls}.from_preset({preset!r}, {envid!r}) (mismatched pair)", "py", DONUT + f"""
phase("construct"); m = {cls}.from_preset({preset!r}, {envid!r})
""", names=(preset, envid, "preset"))
add("6.20", C6, "FairTD3(equivariance_coef=0.5) on Pendulum (no agent symmetry)", "py", """
import gymnasium as gym
from sb3_fair import FairTD3
phase("construct"); m = FairTD3("MlpPolicy", gym.make("Pendulum-v1"), equivariance_coef=0.5, learning_starts=10, buffer_size=1000)
phase("learn"); m.learn(30)
""", names=("symmetry", "equivariance"))
ign("6.21", "FairTD3(equivariance_coef=0, equivariance_distance='mse') on Pendulum (distance unused)", """
import gymnasium as gym
from sb3_fair import FairTD3
phase("construct"); m = FairTD3("MlpPolicy", gym.make("Pendulum-v1"), equivariance_coef=0.0, equivariance_distance="mse", buffer_size=1000)
""", ("equivariance_distance",))
add("6.22", C6, "FairDDPG(equivariance_coef=0.5) on Pendulum", "py", """
import gymnasium as gym
from sb3_fair import FairDDPG
phase("construct"); m = FairDDPG("MlpPolicy", gym.make("Pendulum-v1"), equivariance_coef=0.5, learning_starts=10, buffer_size=1000)
phase("learn"); m.learn(30)
""", names=("symmetry", "equivariance"))
add("6.23", C6, "CLI -p foo_bar=1 (unknown key)", "cli", PPO_T + " -p foo_bar=1 --save m.zip", names=("foo_bar",))
add("6.24", C6, "experiment YAML hyperparams: {foo_bar: 1}", "cli", "train --config exp.yml --save m.zip --quiet",
    setup=wfile("exp.yml", "algo: ppo\nenv: CartPole-v1\nn_timesteps: 64\neval_episodes: 1\nhyperparams: {foo_bar: 1, n_steps: 32, batch_size: 32}\n"),
    names=("foo_bar",))
add("6.25", C6, "CLI --algo ppo -p alpha=0.5 (FairPPO's key on PPO)", "cli", PPO_T + " -p alpha=0.5 --save m.zip", names=("alpha",))
add("6.26", C6, "CLI --algo dqn -p n_steps=5 (PPO's key on DQN)", "cli", DQN_T + " -p n_steps=5 --save m.zip", names=("n_steps",))
add("6.27", C6, "CLI -p env_kwargs.bogus=1 on EpidemicControl", "cli", FPPO_EPI + " -p env_kwargs.bogus=1 --save m.zip", names=("bogus",))
add("6.28", C6, "CLI --eval-env-kwargs bogus=1", "cli", PPO_T + " --eval-env-kwargs bogus=1 --save m.zip", names=("bogus",))
add("6.29", C6, "experiment YAML unknown top-level key", "cli", "train --config exp.yml --quiet",
    setup=wfile("exp.yml", "algo: ppo\nenv: CartPole-v1\nn_timesteps: 64\nlearning_rat: 0.1\n"), names=("learning_rat",))
add("6.30", C6, "CLI fair_ppo EpidemicControl -p alpha=0.7 (entry is long_term: alpha unused)", "cli", FPPO_EPI + " -p alpha=0.7 --save m.zip",
    names=("alpha",))
add("6.31", C6, "FairDQN(potential_shaping=True) on CartPole (no reward spec)", "py", DONUT + """
phase("construct"); m = FairDQN("MlpPolicy", gym.make("CartPole-v1"), potential_shaping=True, buffer_size=1000, learning_starts=10)
phase("learn"); m.learn(30)
""", names=("potential_shaping",))
add("6.32", C6, "FairPPO(fairness='dp', protected_group=5) on DisparityGame (groups 0/1)", "py", DISP + f"""
phase("construct"); m = FairPPO("MlpPolicy", make_multiagent_vec_env(disp), fairness="dp", protected_group=5, {PPO_SMALL})
phase("learn"); m.learn(32)
""", names=("protected_group",), early=("setup", "construct", "learn"))
ign("6.33", "FairDQN(exploration_decay=0.999, exploration_fraction=0.5) (linear schedule replaced)", DONUT + """
phase("construct"); m = FairDQN("MlpPolicy", donut(), exploration_decay=0.999, exploration_fraction=0.5, buffer_size=1000)
""", ("exploration_fraction", "exploration_decay"))
add("6.34", C6, "CLI sweep --grid bogus_key=1,2 (refused before Ray)", "cli",
    "sweep --algo ppo --env CartPole-v1 --timesteps 32 --grid bogus_key=1,2 --storage {W}/st --quiet", names=("bogus_key",), timeout=90)

# ---------------------------------------------------------------- class 7: diagnostics
C7 = "7 diagnostics"
NAN = """
import gymnasium as gym, numpy as np
from gymnasium import spaces
from stable_baselines3.common.env_util import make_vec_env
from sb3_fair import FairPPO, FairDQN
from sb3_fair.common.stakeholders import Stakeholders

class NanEnv(gym.Env):
    def __init__(s, nan_obs=False, nan_rew=False, at=0, benefits=None, rew=1.0):
        s.observation_space = spaces.Box(-1, 1, (3,), np.float32); s.action_space = spaces.Discrete(2)
        s.nan_obs, s.nan_rew, s.at, s.benefits, s.rew, s.t = nan_obs, nan_rew, at, benefits, rew, 0
        if benefits is not None:
            s.stakeholders = Stakeholders(names=("a", "b"), groups=np.array([0, 1]))
    def _o(s):
        o = np.zeros(3, np.float32) + 0.1 * s.t
        if s.nan_obs and s.t >= s.at: o[0] = np.nan
        return o
    def reset(s, seed=None, options=None):
        super().reset(seed=seed); s.t = 0; return s._o(), {}
    def step(s, a):
        s.t += 1
        r = float("nan") if (s.nan_rew and s.t > s.at) else s.rew
        info = {}
        if s.benefits is not None: info["benefits"] = np.array(s.benefits, dtype=float)
        return s._o(), r, False, s.t >= 8, info
"""
DIAG = dict(early=("setup", "construct", "learn"), bad_words=("fairness weight", "fairness_coef", "too large"))
OBS_NAMES = ("observation", "obs", "nan", "non-finite")
add("7.01", C7, "NaN observations, FairPPO fairness off (fairness_coef=0)", "py", NAN + """
phase("construct"); m = FairPPO("MlpPolicy", make_vec_env(lambda: NanEnv(nan_obs=True)), fairness_coef=0.0, n_steps=32, batch_size=32, n_epochs=1)
phase("learn"); m.learn(64)
""", names=("observation",), **DIAG)
add("7.02", C7, "NaN observations from step 3, FairPPO fairness off", "py", NAN + """
phase("construct"); m = FairPPO("MlpPolicy", make_vec_env(lambda: NanEnv(nan_obs=True, at=3)), fairness_coef=0.0, n_steps=32, batch_size=32, n_epochs=1)
phase("learn"); m.learn(64)
""", names=("observation",), **DIAG)
add("7.03", C7, "NaN observations, FairDQN (counterfactual off)", "py", NAN + """
phase("construct"); m = FairDQN("MlpPolicy", NanEnv(nan_obs=True), learning_starts=8, buffer_size=1000, train_freq=1)
phase("learn"); m.learn(64)
""", names=("observation",), **DIAG)
add("7.04", C7, "NaN observations, FairPPO dp on DisparityGame (fairness on)", "py", DISP + f"""
venv = make_multiagent_vec_env(strip_game(disp, strip_info=False, strip_stake=False, nan_obs=True))
phase("construct"); m = FairPPO("MlpPolicy", venv, fairness="dp", {PPO_SMALL})
phase("learn"); m.learn(64)
""", names=("observation",), **DIAG)
add("7.05", C7, "NaN rewards, FairPPO fairness off", "py", NAN + """
phase("construct"); m = FairPPO("MlpPolicy", make_vec_env(lambda: NanEnv(nan_rew=True)), fairness_coef=0.0, n_steps=32, batch_size=32, n_epochs=1)
phase("learn"); m.learn(96)
""", names=("reward",), **DIAG)
add("7.06", C7, "NaN rewards, FairDQN", "py", NAN + """
phase("construct"); m = FairDQN("MlpPolicy", NanEnv(nan_rew=True), learning_starts=8, buffer_size=1000, train_freq=1)
phase("learn"); m.learn(64)
""", names=("reward",), **DIAG)
add("7.07", C7, "NaN rewards, FairPPO dp on DisparityGame", "py", DISP + f"""
venv = make_multiagent_vec_env(strip_game(disp, strip_info=False, strip_stake=False, nan_rew=True))
phase("construct"); m = FairPPO("MlpPolicy", venv, fairness="dp", {PPO_SMALL})
phase("learn"); m.learn(64)
""", names=("reward", "benefit"), **{**DIAG, "bad_words": ()})
add("7.08", C7, "inf rewards, FairDQN", "py", NAN + """
phase("construct"); m = FairDQN("MlpPolicy", NanEnv(rew=float("inf")), learning_starts=8, buffer_size=1000, train_freq=1)
phase("learn"); m.learn(64)
""", names=("reward",), **DIAG)
SIG = EPI + """
class Sig(gym.Wrapper):
    def __init__(s, env, key, value, what_if=None):
        super().__init__(env); s.key, s.value = key, value
        if what_if is not None:
            orig = env.unwrapped.fairness_what_if
            env.unwrapped.fairness_what_if = lambda a: what_if(*orig(a))
    def reset(s, **kw):
        o, i = s.env.reset(**kw)
        if s.key: i[s.key] = s.value
        return o, i
    def step(s, a):
        o, r, te, tr, i = s.env.step(a)
        if s.key: i[s.key] = s.value
        return o, r, te, tr, i
def sig(key, value, what_if=None):
    return make_vec_env(lambda: Sig(gym.make("sb3_fair/EpidemicControl-v0", horizon=4), key, value, what_if), n_envs=1)
"""
add("7.09", C7, "NaN info['short_term_fairness'], FairPPO(fairness='long_term')", "py", SIG + """
phase("construct"); m = FairPPO("MlpPolicy", sig("short_term_fairness", float("nan")), fairness="long_term", n_steps=16, batch_size=16, n_epochs=1)
phase("learn"); m.learn(32)
""", names=("short_term_fairness",), **DIAG)
add("7.10", C7, "NaN info['long_term_fairness'], FairPPO(fairness='long_term')", "py", SIG + """
phase("construct"); m = FairPPO("MlpPolicy", sig("long_term_fairness", float("nan")), fairness="long_term", n_steps=16, batch_size=16, n_epochs=1)
phase("learn"); m.learn(32)
""", names=("long_term_fairness",), **DIAG)
add("7.11", C7, "inf info['short_term_fairness'], FairPPO(fairness='a_ppo')", "py", SIG + """
phase("construct"); m = FairPPO("MlpPolicy", sig("short_term_fairness", float("inf")), fairness="a_ppo", n_steps=16, batch_size=16, n_epochs=1)
phase("learn"); m.learn(32)
""", names=("short_term_fairness",), **DIAG)
add("7.12", C7, "string info['short_term_fairness'] ('abc'), FairPPO long_term", "py", SIG + """
phase("construct"); m = FairPPO("MlpPolicy", sig("short_term_fairness", "abc"), fairness="long_term", n_steps=16, batch_size=16, n_epochs=1)
phase("learn"); m.learn(32)
""", names=("short_term_fairness",), **DIAG)
WI = dict(names=("what_if", "what-if", "fairness_what_if", "candidate", "short_term"), **{**DIAG, "bad_words": ("argmax of an empty",)})
add("7.13", C7, "massaging what-if answers NaN Δs (FairPPO massaging=True, tau=0.5)", "py", SIG + """
wi = lambda c, d: (c, np.full(np.shape(d), np.nan))
phase("construct"); m = FairPPO("MlpPolicy", sig(None, None, wi), fairness="long_term", massaging=True, massaging_tau=0.5, n_steps=16, batch_size=16, n_epochs=1)
phase("learn"); m.learn(32)
""", **WI)
add("7.14", C7, "massaging what-if answers no candidates (empty arrays)", "py", SIG + """
wi = lambda c, d: (np.asarray(c)[:0], np.asarray(d)[:0])
phase("construct"); m = FairPPO("MlpPolicy", sig(None, None, wi), fairness="long_term", massaging=True, massaging_tau=0.5, n_steps=16, batch_size=16, n_epochs=1)
phase("learn"); m.learn(32)
""", **WI)
add("7.15", C7, "massaging what-if answers mismatched lengths (Δs one shorter)", "py", SIG + """
wi = lambda c, d: (c, np.asarray(d)[:-1])
phase("construct"); m = FairPPO("MlpPolicy", sig(None, None, wi), fairness="long_term", massaging=True, massaging_tau=0.5, n_steps=16, batch_size=16, n_epochs=1)
phase("learn"); m.learn(32)
""", **WI)
add("7.16", C7, "massaging what-if candidate actions out of range (999)", "py", SIG + """
wi = lambda c, d: (np.full(np.shape(c), 999), d)
phase("construct"); m = FairPPO("MlpPolicy", sig(None, None, wi), fairness="long_term", massaging=True, massaging_tau=0.5, n_steps=16, batch_size=16, n_epochs=1)
phase("learn"); m.learn(32)
""", **WI)
add("7.17", C7, "massaging what-if answers -inf Δs", "py", SIG + """
wi = lambda c, d: (c, np.full(np.shape(d), -np.inf))
phase("construct"); m = FairPPO("MlpPolicy", sig(None, None, wi), fairness="long_term", massaging=True, massaging_tau=0.5, n_steps=16, batch_size=16, n_epochs=1)
phase("learn"); m.learn(32)
""", **WI)
add("7.18", C7, "NaN benefits (FairnessMonitor / FairDQN logging)", "py", NAN + """
from sb3_fair.wrappers import FairnessMonitor
phase("construct"); m = FairDQN("MlpPolicy", FairnessMonitor(NanEnv(benefits=[float("nan"), 1.0])), learning_starts=8, buffer_size=1000)
phase("learn"); m.learn(40)
""", names=("benefit",), **DIAG)
add("7.19", C7, "inf benefits (FairnessMonitor)", "py", NAN + """
from sb3_fair.wrappers import FairnessMonitor
env = FairnessMonitor(NanEnv(benefits=[float("inf"), 1.0]))
phase("learn"); env.reset(seed=0)
for _ in range(10): env.step(0)
""", names=("benefit",), **DIAG)
add("7.20", C7, "NaN benefits in a game, FairPPO dp", "py", DISP + f"""
venv = make_multiagent_vec_env(strip_game(disp, strip_info=False, strip_stake=False, bad_benefit=float("nan")))
phase("construct"); m = FairPPO("MlpPolicy", venv, fairness="dp", {PPO_SMALL})
phase("learn"); m.learn(32)
""", names=("benefit",), **DIAG)
add("7.21", C7, "NaN observations, FairPPO long_term on Epidemic (fairness on)", "py", SIG + """
class NanObs(gym.ObservationWrapper):
    def observation(s, o): return np.full_like(o, np.nan, dtype=np.float32)
phase("construct"); m = FairPPO("MlpPolicy", make_vec_env(lambda: NanObs(gym.make("sb3_fair/EpidemicControl-v0", horizon=4))), fairness="long_term", n_steps=16, batch_size=16, n_epochs=1)
phase("learn"); m.learn(32)
""", names=("observation",), **DIAG)

# ---------------------------------------------------------------- class 8: resource exhaustion
C8 = "8 resources"
BOMB = "\n".join(['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'] +
                 [f'{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)}]'
                  for i in range(8)])


def quick(limit_s: float) -> Callable:
    def check(o: dict) -> tuple[str, str]:
        if o["timeout"]:
            return "BAD", "hang / exhaustion: killed at the timeout"
        if o["killed_mem"]:
            return "BAD", "ran out of its memory limit: " + o["err_line"][:120]
        if o["elapsed"] > limit_s:
            return "BAD", f"took {o['elapsed']:.1f} s (> {limit_s} s): " + (o["err_line"][:100] or "accepted")
        if o["rc"] == 0:
            return "GOOD", f"handled in {o['elapsed']:.1f} s (accepted)"
        if o["crash_internal"]:
            return "BAD", f"crash inside library internals in {o['elapsed']:.1f} s: " + o["err_line"][:140]
        return "GOOD", f"refused in {o['elapsed']:.1f} s: " + o["err_line"][:140]
    return check


def bomb_exp(where: str) -> str:
    return BOMB.replace("\n", "\n") + "\n" + where + "\n"


Q = dict(expect="custom", check=quick(10), mem_gb=3, timeout=60)
def nested_bomb(indent: str) -> str:
    return "\n".join(indent + ln for ln in BOMB.splitlines())


add("8.01", C8, "billion-laughs experiment file, bomb under hyperparams.env_kwargs", "cli", "train --config exp.yml --quiet",
    setup=wfile("exp.yml", "algo: ppo\nenv: CartPole-v1\nn_timesteps: 64\nhyperparams:\n  env_kwargs:\n" + nested_bomb("    ") + "\n"), **Q)
add("8.02", C8, "billion-laughs experiment file, bomb as an unknown hyper-parameter", "cli", "train --config exp.yml --quiet",
    setup=wfile("exp.yml", "algo: ppo\nenv: CartPole-v1\nn_timesteps: 64\nhyperparams:\n  lol:\n" + nested_bomb("    ") + "\n"), **Q)
add("8.03", C8, "billion-laughs experiment file, bomb in eval_env_kwargs + --save", "cli", "train --config exp.yml --save m.zip --quiet",
    setup=wfile("exp.yml", "algo: ppo\nenv: CartPole-v1\nn_timesteps: 64\neval_episodes: 1\neval_env_kwargs:\n" + nested_bomb("  ") + "\n"), **Q)
add("8.04", C8, "billion-laughs RL Zoo hyper-parameter file (--config zoo.yml --algo --env), bomb in policy_kwargs.net_arch", "cli",
    "train --config zoo.yml --algo ppo --env CartPole-v1 --quiet",
    setup=wfile("zoo.yml", BOMB + "\nCartPole-v1: {n_timesteps: 64, policy_kwargs: {net_arch: *i}}\n"), **Q)
add("8.05", C8, "billion-laughs experiment file via ExperimentConfig.from_file + to_plain_dict (Python)", "py", """
from sb3_fair.experiment import ExperimentConfig
phase("parse"); c = ExperimentConfig.from_file("exp.yml")
phase("construct"); c.to_plain_dict()
""", setup=wfile("exp.yml", "algo: ppo\nenv: CartPole-v1\nn_timesteps: 64\nhyperparams:\n  env_kwargs:\n" + nested_bomb("    ") + "\n"), **Q)
add("8.06", C8, "billion-laughs saved config beside a model (evaluate m.zip)", "cli", "evaluate m.zip --episodes 1",
    setup=SETUP_MODEL + "_txt = open('m.config.yml').read().replace('eval_env_kwargs: {}', 'eval_env_kwargs:\\n' + " + repr(nested_bomb("  ")) + ")\n"
    + "open('m.config.yml','w').write(_txt)\n", **Q)
DEEP = "algo: ppo\nenv: CartPole-v1\nn_timesteps: 64\nhyperparams: {env_kwargs: {x: " + "[" * 20000 + "]" * 20000 + "}}\n"
add("8.07", C8, "deeply nested YAML (20000 levels) as an experiment file", "cli", "train --config exp.yml --quiet",
    setup=wfile("exp.yml", DEEP), **Q)
DEEPM = "algo: ppo\nenv: CartPole-v1\nn_timesteps: 64\nhyperparams: " + "{a: " * 5000 + "1" + "}" * 5000 + "\n"
add("8.08", C8, "deeply nested YAML mapping (5000 levels) via from_file (Python)", "py", """
from sb3_fair.experiment import ExperimentConfig
phase("parse"); ExperimentConfig.from_file("exp.yml")
""", setup=wfile("exp.yml", DEEPM), **Q)
add("8.09", C8, "-p with a 20000-deep flow list override", "cli", PPO_T + " -p 'policy_kwargs.net_arch=" + "[" * 20000 + "]" * 20000 + "'", **Q)


def ckpt_flood(o: dict) -> tuple[str, str]:
    if o["rc"] != 0 and not o["timeout"]:
        if o["crash_internal"]:
            return "BAD", "crash: " + o["err_line"][:140]
        return "GOOD", "refused: " + o["err_line"][:140]
    n = o.get("n_files", 0)
    return "BAD", (f"accepted: a checkpoint every step of 10**12, {n} files / {o['bytes'] / 1e6:.1f} MB in {o['elapsed']:.0f} s "
                   "(killed at the timeout; no refusal or warning) [unsure: user's explicit choice]")


add("8.10", C8, "--timesteps 10**12 --checkpoint-every 1 (ppo; killed after 20 s)", "cli",
    "train --algo ppo --env CartPole-v1 --timesteps 1000000000000 --checkpoint-every 1 --save m.zip --quiet",
    expect="custom", check=ckpt_flood, timeout=20)
add("8.11", C8, "--timesteps 10**30 (int overflow?)", "cli", PPO_T.replace("--timesteps 64", "--timesteps 1000000000000000000000000000000"),
    expect="custom", check=quick(10), timeout=30, mem_gb=3)
add("8.12", C8, "-p buffer_size=10**9 (dqn; 3 GB memory limit)", "cli", DQN_T + " -p buffer_size=1000000000", expect="custom",
    check=quick(15), timeout=40, mem_gb=3)
add("8.13", C8, "-p n_steps=10**9 (ppo rollout buffer; 3 GB memory limit)", "cli", PPO_T + " -p n_steps=1000000000 batch_size=64",
    expect="custom", check=quick(15), timeout=40, mem_gb=3)
add("8.14", C8, "-p n_envs=100000 (3 GB memory limit)", "cli", PPO_T + " -p n_envs=100000", expect="custom", check=quick(15), timeout=40, mem_gb=3)

# ---------------------------------------------------------------- class 9: values that pass the checks and fail later
C9 = "9 late failures"
L = dict(early=("parse",))
for cid, ov, nm in (("9.01", "batch_size=64.5", "batch_size"), ("9.02", "n_steps=0", "n_steps"), ("9.03", "learning_rate=-1", "learning_rate"),
                    ("9.04", "gamma=2", "gamma"), ("9.05", "gamma=-0.5", "gamma"), ("9.06", "gae_lambda=5", "gae_lambda"),
                    ("9.07", "clip_range=-1", "clip_range"), ("9.08", "ent_coef=nan", "ent_coef"), ("9.09", "learning_rate=nan", "learning_rate"),
                    ("9.10", "n_epochs=0", "n_epochs"), ("9.11", "batch_size=0", "batch_size"), ("9.12", "max_grad_norm=-1", "max_grad_norm"),
                    ("9.13", "policy_kwargs.net_arch=[-1]", "net_arch"), ("9.14", "learning_rate=lin_-1", "learning_rate"),
                    ("9.15", "n_envs=0", "n_envs"), ("9.16", "n_envs=2.5", "n_envs"), ("9.17", "vf_coef=inf", "vf_coef"),
                    ("9.18", "learning_rate=abc", "learning_rate")):
    add(cid, C9, f"-p {ov} (ppo, --save m.zip)", "cli", PPO_T + f" -p {ov} --save m.zip", names=(nm,), **L)
for cid, ov, nm in (("9.20", "buffer_size=0", "buffer_size"), ("9.21", "train_freq=0", "train_freq"), ("9.22", "exploration_fraction=2", "exploration_fraction"),
                    ("9.23", "target_update_interval=0", "target_update_interval"), ("9.24", "learning_starts=-5", "learning_starts"),
                    ("9.25", "tau=5", "tau"), ("9.26", "gradient_steps=0.5", "gradient_steps"), ("9.27", "exploration_final_eps=-1", "exploration_final_eps")):
    add(cid, C9, f"-p {ov} (dqn, --save m.zip)", "cli", DQN_T + f" -p {ov} --save m.zip", names=(nm,), **L)
add("9.30", C9, "--save f/m.zip where f is a file", "cli", PPO_T + " --save f/m.zip", setup="open('f','w').write('x')", names=("--save",))
add("9.31", C9, "--save /proc/adv/m.zip (not creatable; suite runs as root, so os.access says writable)", "cli", PPO_T + " --save /proc/adv/m.zip",
    names=("--save", "/proc"))
add("9.32", C9, "--save ro/m.zip in a chmod 555 folder (root: writable anyway)", "cli", PPO_T + " --save ro/m.zip",
    setup="import os; os.mkdir('ro'); os.chmod('ro', 0o555)", expect="custom",
    check=lambda o: ("GOOD", "root can write a 555 folder; saved") if o["rc"] == 0 else (
        ("GOOD" if not o["crash_internal"] else "BAD"), o["err_line"][:150]))
add("9.33", C9, "Python train(save_path='f/m.zip', f a file): model trained then lost?", "py", PY_CFG + """
open("f", "w").write("x")
phase("construct"); cfg = cfg_ppo().replace(save_path="f/m.zip")
phase("construct"); train(cfg)
""", names=("save_path", "f/m.zip"), early=("setup", "parse", "construct"))
add("9.34", C9, "Python train(save_path='/proc/adv/m.zip')", "py", PY_CFG + """
phase("construct"); train(cfg_ppo().replace(save_path="/proc/adv/m.zip"))
""", names=("save_path", "/proc"), early=("setup", "parse", "construct"))
ATT = "train --algo fair_ppo --env sb3_fair/AttentionAllocation-v0 --timesteps 16 -p n_steps=8 batch_size=8 n_epochs=1 env_kwargs.horizon=4 --eval-episodes 1 --quiet --save m.zip"
add("9.40", C9, "AttentionAllocation env_kwargs.initial_rates=[1e20]*5", "cli", ATT + " -p env_kwargs.initial_rates=[1e20,1e20,1e20,1e20,1e20]",
    names=("initial_rates",), **L)
add("9.41", C9, "AttentionAllocation initial_rates=[nan]*5", "cli", ATT + " -p env_kwargs.initial_rates=[nan,nan,nan,nan,nan]",
    names=("initial_rates",), **L)
add("9.42", C9, "AttentionAllocation initial_rates=[-1]*5", "cli", ATT + " -p env_kwargs.initial_rates=[-1,-1,-1,-1,-1]",
    names=("initial_rates",), **L)
add("9.43", C9, "AttentionAllocation increase_rates=[1e300]*5 (overflow after a few steps)", "cli",
    ATT + " -p env_kwargs.increase_rates=[1e300,1e300,1e300,1e300,1e300]", names=("increase_rates",), **L)
add("9.44", C9, "DelayedImpactLending success_probs with NaN", "cli",
    "train --algo fair_ppo --env sb3_fair/DelayedImpactLending-v0 --timesteps 16 -p n_steps=8 batch_size=8 n_epochs=1 env_kwargs.horizon=4 "
    "env_kwargs.success_probs=[nan,0.2,0.45,0.6,0.65,0.7,0.7] --eval-episodes 1 --quiet --save m.zip", names=("success_probs",), **L)
add("9.45", C9, "EpidemicControl horizon=10**20 (Python, eval_episodes=0)", "py", """
from sb3_fair.experiment import ExperimentConfig, train
phase("parse"); cfg = ExperimentConfig.from_hyperparams("fair_ppo", "sb3_fair/EpidemicControl-v0",
      overrides={"n_steps": 8, "batch_size": 8, "n_epochs": 1, "env_kwargs.horizon": 10**20}, n_timesteps=16, eval_episodes=0)
phase("construct"); train(cfg)
""", expect="custom", check=lambda o: ("GOOD", "accepted and trained 16 steps") if o["rc"] == 0 and not o["err"] else (
    ("GOOD", "refused: " + o["err_line"][:140]) if "horizon" in o["err_line"] else ("BAD", "failed with a message not naming horizon: " + o["err_line"][:140])))
add("9.46", C9, "DelayedImpactLending horizon=1e30 (float) via -p", "cli",
    "train --algo fair_ppo --env sb3_fair/DelayedImpactLending-v0 --timesteps 16 -p n_steps=8 batch_size=8 env_kwargs.horizon=1e30 --eval-episodes 1 --quiet",
    names=("horizon",), **L)
add("9.47", C9, "EpidemicControl infection_probability=nan via -p", "cli", FPPO_EPI + " -p env_kwargs.infection_probability=nan",
    names=("infection_probability",), **L)


def ran_nothing(o: dict) -> tuple[str, str]:
    if o["timeout"]:
        return "BAD", f"--seeds 0 accepted: still running at the {o['elapsed']:.0f} s timeout (no refusal)"
    if o["rc"] == 0:
        return "BAD", "exit 0 having run nothing (--seeds 0 accepted)"
    if o["crash_internal"]:
        return "BAD", "crash: " + o["err_line"][:140]
    return ("GOOD" if "seeds" in o["err_line"] else "LATE"), "refused: " + o["err_line"][:140]


for i, p in enumerate(("fair_ppo", "fair_er", "fairqcm", "fppo"), start=1):
    part = " --part epidemic" if p == "fppo" else ""
    add(f"9.5{i}", C9, f"benchmarks/{p}.py --seeds 0 --out o{part}", "cli", f"benchmarks/{p}.py --seeds 0 --out o{part}", expect="custom",
        check=ran_nothing, timeout=60)
add("9.55", C9, "benchmarks/fairqcm.py --seeds -1 --out o", "cli", "benchmarks/fairqcm.py --seeds -1 --out o", expect="custom", check=ran_nothing)
add("9.56", C9, "benchmarks/fairqcm.py --episodes 0 --out o", "cli", "benchmarks/fairqcm.py --episodes 0 --seeds 1 --out o", names=("--episodes",), early=("parse",),
    timeout=60)
add("9.57", C9, "benchmarks/fairqcm.py --workers 0 --out o", "cli", "benchmarks/fairqcm.py --workers 0 --seeds 1 --episodes 1 --out o",
    names=("--workers",), early=("parse",), timeout=60)

# ---------------------------------------------------------------- class 10: a dead Ray cluster
C10 = "10 dead ray"


def ray_check(o: dict) -> tuple[str, str]:
    txt = o["stdout"] + o["stderr"]
    if "num_cpus and num_gpus must not be provided" in txt:
        return "BAD", "Ray's 'When connecting to an existing cluster, num_cpus and num_gpus must not be provided'"
    if o["timeout"]:
        return "BAD", "hang (no answer before the timeout)"
    if o["rc"] == 0:
        return "GOOD", "ran its own local Ray despite the stale cluster file"
    if o["crash_internal"]:
        return "BAD", "crash inside Ray: " + o["err_line"][:160]
    return "GOOD" if re.search(r"address|cluster|ray", o["err_line"], re.I) else "LATE", "refused: " + o["err_line"][:160]


RAYSW = ("sweep --algo ppo --env CartPole-v1 --timesteps 32 -p n_steps=32 batch_size=32 n_epochs=1 --eval-episodes 1 "
         "--storage {W}/st --name s --max-concurrent 1 --quiet")
add("10.01", C10, "stale /tmp/ray/ray_current_cluster (dead address), sweep without --address", "cli", RAYSW, expect="custom", check=ray_check,
    timeout=150, exclusive=True, env={"STALE_RAY": "1"})
add("10.02", C10, "RAY_ADDRESS=127.0.0.1:1 (dead) in the environment, sweep without --address", "cli", RAYSW, expect="custom", check=ray_check,
    timeout=150, exclusive=True, env={"RAY_ADDRESS": "127.0.0.1:1"})
add("10.03", C10, "sweep --address 127.0.0.1:1 (explicit dead cluster)", "cli", RAYSW + " --address 127.0.0.1:1", expect="custom", check=ray_check,
    timeout=150, exclusive=True)

# ---------------------------------------------------------------- class 11: old items
C11 = "11 old items"
SAVE2 = """
import gymnasium as gym
from sb3_fair import FairPPO, FairDQN, FairTD3
FairPPO("MlpPolicy", "CartPole-v1", fairness_coef=0.0, n_steps=32, batch_size=32).save("ppo.zip")
FairDQN("MlpPolicy", "CartPole-v1", buffer_size=100).save("dqn.zip")
"""
def both(a: str, b: str) -> Callable:
    def check(o: dict) -> tuple[str, str]:
        if o["timeout"]:
            return "BAD", "hang"
        if not o["err"]:
            return "BAD", f"accepted silently (loaded as {o['result'].get('loaded')})"
        if a in o["err_line"] and b in o["err_line"]:
            return "GOOD", "refused naming both classes: " + o["err_line"][:160]
        if o["crash_internal"]:
            return "BAD", f"crash inside {o.get('where')} (does not say the zip holds a {b}): " + o["err_line"][:160]
        return "LATE", "refused, without naming the saved class: " + o["err_line"][:160]
    return check


add("11.01", C11, "FairDQN.load on a saved FairPPO model", "py", SAVE2 + """
phase("construct"); m = FairDQN.load("ppo.zip"); RESULT["loaded"] = type(m).__name__
m.predict(m.observation_space.sample())
""", expect="custom", check=both("FairDQN", "FairPPO"))
add("11.02", C11, "FairPPO.load on a saved FairDQN model", "py", SAVE2 + """
phase("construct"); m = FairPPO.load("dqn.zip"); RESULT["loaded"] = type(m).__name__
m.predict(m.observation_space.sample())
""", expect="custom", check=both("FairPPO", "FairDQN"))
add("11.03", C11, "FairTD3.load on a saved FairPPO model", "py", SAVE2 + """
phase("construct"); m = FairTD3.load("ppo.zip")
""", expect="custom", check=both("FairTD3", "FairPPO"))
add("11.04", C11, "sb3-fair evaluate ppo.zip --algo fair_dqn (wrong class)", "cli", "evaluate ppo.zip --algo fair_dqn --env CartPole-v1 --episodes 1",
    setup=SAVE2, expect="custom", check=both("DQN", "PPO"))
for cid, call, nm in (("11.05", "Stakeholders(names='ab', groups=np.array([0, 1]))", ("names",)),
                      ("11.06", "Stakeholders(names='abc', groups=np.array([0, 1, 0]))", ("names",)),
                      ("11.07", "Stakeholders(names=['a', 'b'], groups=np.array([0.5, 1.0]))", ("groups",)),
                      ("11.08", "Stakeholders(names=['a', 'b'], groups=np.array([0, 1, 1]))", ("groups",)),
                      ("11.09", "Stakeholders(names=['a', 'a'], groups=np.array([0, 1]))", ("names", "duplicate", "unique")),
                      ("11.10", "Stakeholders(names=['a', 'b'], groups=np.array([0, -3]))", ("groups",)),
                      ("11.11", "Stakeholders(names=['a', 'b'], groups=np.array([0, 1]), factors=np.array([0.5, 1]))", ("factors",))):
    add(cid, C11, call, "py", f"""
import numpy as np
from sb3_fair.common.stakeholders import Stakeholders
phase("construct"); s = {call}
RESULT["names"] = list(s.names)
""", names=nm)
for cid, call, nm in (("11.20", "group_contrasts([0, 1, 0, 1], 'cf', twins=[5, 6, 7, 8])", ("twins",)),
                      ("11.21", "group_contrasts([0, 1, 0, 1], 'cf', twins=[-1, 0, 3, 2])", ("twins",)),
                      ("11.22", "group_contrasts([0, 1, 0, 1], 'cf', twins=[1, 1, 3, 3])", ("twins",)),
                      ("11.23", "group_contrasts([0, 1, 0, 1], 'cf', twins=[0, 1, 2, 3])", ("twins",)),
                      ("11.24", "group_contrasts([0, 1, 0, 1], 'cf', twins=[1.5, 0, 3, 2])", ("twins",)),
                      ("11.25", "group_contrasts([0, 1, 0, 1], 'csp', factors=[0, 1])", ("factors",)),
                      ("11.26", "group_contrasts([0, 1, 0, 1], 'bogus')", ("metric",))):
    add(cid, C11, call, "py", f"""
from sb3_fair.metrics import group_contrasts
phase("construct"); c = group_contrasts{call[len('group_contrasts'):]}
RESULT["C"] = c.tolist()
""", names=nm)
add("11.27", C11, "group_contrasts cf with valid twins [1,0,3,2] (legit)", "py", """
from sb3_fair.metrics import group_contrasts
import numpy as np
c = group_contrasts([0, 1, 0, 1], 'cf', twins=[1, 0, 3, 2])
RESULT["valid"] = np.allclose(c @ np.array([1., 0., 3., 1.]), [0.5, 1.0]) or c.shape[0] == 2
""", expect="accept")


def monitor_check(o: dict) -> tuple[str, str]:
    if o["err"]:
        if o["crash_internal"]:
            return "BAD", "crash: " + o["err_line"][:140]
        return ("GOOD" if "benefit" in o["err_line"].lower() else "LATE"), "refused: " + o["err_line"][:140]
    fig = o["result"].get("fig", {})
    bad = [k for k, v in fig.items() if isinstance(v, float) and v != v]
    if bad:
        return "BAD", f"info['fairness'] holds NaN for {bad} on negative benefits, silently"
    return "GOOD", f"figures defined/omitted: {sorted(fig)[:8]}"


add("11.30", C11, "FairnessMonitor on an env with negative benefits (-5, 1) (log_nash/gini NaN?)", "py", NAN + """
from sb3_fair.wrappers import FairnessMonitor
env = FairnessMonitor(NanEnv(benefits=[-5.0, 1.0]))
env.reset(seed=0)
phase("learn")
for _ in range(8):
    _, _, te, tr, info = env.step(0)
fig = info.get("fairness", {})
RESULT["fig"] = {k: float(v) for k, v in fig.items() if isinstance(v, (int, float))}
""", expect="custom", check=monitor_check)
add("11.31", C11, "FairnessMonitor negative benefits (-0.5, 1) (log_nash defined, gini not)", "py", NAN + """
from sb3_fair.wrappers import FairnessMonitor
env = FairnessMonitor(NanEnv(benefits=[-0.05, 0.1]))
env.reset(seed=0)
phase("learn")
for _ in range(8):
    _, _, te, tr, info = env.step(0)
fig = info.get("fairness", {})
RESULT["fig"] = {k: float(v) for k, v in fig.items() if isinstance(v, (int, float))}
""", expect="custom", check=monitor_check)


def wandb_check(o: dict) -> tuple[str, str]:
    if o["result"].get("na"):
        return "N/A", o["result"]["na"]
    if o["err"]:
        return ("BAD" if o["crash_internal"] else "LATE"), "error: " + o["err_line"][:160]
    r = o["result"]
    if r.get("same_run"):
        return "BAD", f"the second FairPPO(wandb=True) joined the stale run {r.get('id1')}"
    return "GOOD", f"second learn got a fresh run ({r.get('id1')} -> {r.get('id2')}); warned: {r.get('warned')}"


add("11.40", C11, "W&B finish raises: the next FairPPO(wandb=True) must not join the stale run", "py", """
import os
os.environ["WANDB_MODE"] = "offline"
import wandb
from stable_baselines3.common.callbacks import BaseCallback
from sb3_fair import FairPPO
class Rec(BaseCallback):
    def __init__(s, key): super().__init__(); s.key = key
    def _on_step(s):
        RESULT[s.key] = getattr(wandb.run, "id", None)
        return True
orig = wandb.sdk.wandb_run.Run.finish
def bad_finish(self, *a, **k):
    raise RuntimeError("injected finish failure")
wandb.sdk.wandb_run.Run.finish = bad_finish
phase("learn")
m = FairPPO("MlpPolicy", "CartPole-v1", fairness_coef=0.0, n_steps=32, batch_size=32, n_epochs=1, wandb=True)
m.learn(32, callback=Rec("id1"))
RESULT["after_first"] = getattr(wandb.run, "id", None)
wandb.sdk.wandb_run.Run.finish = orig
m2 = FairPPO("MlpPolicy", "CartPole-v1", fairness_coef=0.0, n_steps=32, batch_size=32, n_epochs=1, wandb=True)
m2.learn(32, callback=Rec("id2"))
RESULT["same_run"] = RESULT.get("id1") is not None and RESULT.get("id1") == RESULT.get("id2")
RESULT["warned"] = any("finish" in w for w in _w)
""", expect="custom", check=wandb_check, timeout=120)


# ---------------------------------------------------------------- class 12: round 3 (issue 47)
C12 = "12 round 3"
TRAIN_CKPT = ("import subprocess, sys\n"
              "subprocess.run([sys.executable, '-m', 'sb3_fair.cli', 'train', '--algo', 'dqn', '--env', 'CartPole-v1', '--timesteps', "
              "'1000', '--checkpoint-every', '250', '--save', 'runs/m.zip', '-p', 'learning_starts=100', '--eval-episodes', '1', '--quiet'], "
              "check=True)\n")
add("12.01", C12, "--resume an earlier checkpoint of a finished run (it wrote over the later checkpoints and the final model)", "cli",
    "train --resume runs/m/model_250_steps.zip --timesteps 1000 --eval-episodes 1 --quiet", setup=TRAIN_CKPT,
    names=("later checkpoints", "model_1000_steps"), timeout=120)
add("12.02", C12, "two train processes into one --save at once", "py", """
import subprocess, sys, time, pathlib
other = subprocess.Popen([sys.executable, "-m", "sb3_fair.cli", "train", "--algo", "dqn", "--env", "CartPole-v1", "--timesteps", "200000",
                          "--save", "m.zip", "--eval-episodes", "1", "--quiet"])
try:
    for _ in range(600):
        if pathlib.Path(".m.lock").exists():
            break
        time.sleep(0.1)
    phase("construct")
    from sb3_fair.experiment import ExperimentConfig, train
    train(ExperimentConfig(algo="dqn", env="CartPole-v1", n_timesteps=1000, eval_episodes=1, save_path="m.zip"))
finally:
    other.kill()
""", names=("being written by process",), timeout=120)
add("12.03", C12, "Ctrl+C while a checkpoint's replay buffer is written: no partial file under a final name", "py", """
import pathlib
from sb3_fair.experiment import ExperimentConfig, train
from sb3_fair.experiment import checkpoints
class Interrupted:
    def __init__(self, f, buffer): self.f = f
    def dump(self, obj):
        self.f.write(b"partial"); raise KeyboardInterrupt
checkpoints._CompactPickler = Interrupted
cfg = ExperimentConfig(algo="dqn", env="CartPole-v1", hyperparams={"learning_starts": 0, "buffer_size": 500}, n_timesteps=100,
                       eval_episodes=0, checkpoint_every=50, save_path="m.zip")
try:
    train(cfg)
except KeyboardInterrupt:
    pass
bad = [str(p) for p in pathlib.Path(".").rglob("*") if p.is_file() and p.suffix in (".pkl", ".zip")
       and (p.stat().st_size == 0 or (p.suffix == ".pkl" and not p.read_bytes().endswith(b".")))]
RESULT["value"] = bad
RESULT["valid"] = not bad
""", expect="accept")
add("12.04", C12, "--resume a checkpoint whose replay buffer is 0 bytes (what an interrupted write left)", "cli",
    "train --resume runs/m/model_1000_steps.zip --timesteps 1500 --eval-episodes 1 --quiet",
    setup=TRAIN_CKPT + "open('runs/m/model_replay_buffer_1000_steps.pkl', 'wb').close()\n",
    names=("incomplete", "newest complete checkpoint"), timeout=120)
add("12.05", C12, "a disk with 100 kB free: the run is refused before training, not lost after", "py", """
import shutil
from sb3_fair.experiment import files
real = shutil.disk_usage
files.shutil.disk_usage = lambda p: real(p)._replace(free=100_000)
from sb3_fair.experiment import ExperimentConfig, train
phase("construct")
train(ExperimentConfig(algo="dqn", env="CartPole-v1", n_timesteps=100, eval_episodes=0, save_path="m.zip"))
""", names=("free",))
add("12.06", C12, "the final save fails with ENOSPC: the trained model is kept (on the error, and by the CLI in the temp folder)", "py", """
import errno, glob, os, tempfile
os.makedirs("tmp", exist_ok=True); tempfile.tempdir = os.path.abspath("tmp")
from sb3_fair.experiment import run
def full(*a, **k): raise OSError(errno.ENOSPC, "No space left on device")
run.save = full
from sb3_fair.cli import main
try:
    main(["train", "--algo", "dqn", "--env", "CartPole-v1", "--timesteps", "100", "--save", "m.zip", "--eval-episodes", "1", "--quiet"])
except SystemExit as e:
    RESULT["exit"] = e.code
RESULT["value"] = glob.glob("tmp/sb3-fair-unsaved-*.zip") + glob.glob("m.zip")
RESULT["valid"] = RESULT.get("exit") == 1 and len(glob.glob("tmp/sb3-fair-unsaved-*.zip")) == 1 and not os.path.exists("m.zip")
""", expect="accept", timeout=120)
TASK_TYPO = ("open('t.yml', 'w').write('mine:\\n  algo: fair_dqn\\n  env: sb3_fair/DonutAllocation-v0\\n  figures: [episode_reward]\\n"
             "  runs:\\n    DQN: {baseline: true}\\n    FairDQN: {hyperparams: {counterfactual: true, max_counterfactuals: 0}}\\n')\n")
add("12.07", C12, "compare: a bad value in the fair run's hyper-parameters (it was reported after the baseline trained)", "cli",
    "compare --tasks-file t.yml --task mine --seeds 1 --episodes 2 --eval-episodes 1 --jobs 1", setup=TASK_TYPO,
    expect="custom", timeout=120,
    check=lambda o: ("BAD", "accepted") if o["rc"] == 0 else (
        ("LATE", "refused after the baseline trained: " + o["err_line"][:150]) if "training DQN" in o["stdout"] else
        ("GOOD", "refused before any run trained: " + o["err_line"][:150]) if "max_counterfactuals" in o["err_line"] else
        ("BAD", o["err_line"][:150])))
add("12.08", C12, "compare: a misspelled figure in a tasks file (it trained every run, then printed nan)", "cli",
    "compare --tasks-file t.yml --task mine --seeds 1 --episodes 2 --eval-episodes 1",
    setup=TASK_TYPO.replace("episode_reward]", "episode_rewrad]").replace("max_counterfactuals: 0", "max_counterfactuals: 2"),
    names=("episode_rewrad",), timeout=120)
for cid, what, setup in (("12.09", "missing", ""), ("12.10", "binary", "open('t.yml', 'wb').write(bytes(range(256)))\n"),
                         ("12.11", "a directory", "import os; os.mkdir('t.yml')\n")):
    add(cid, C12, f"compare --tasks-file naming {what} file", "cli", "compare --tasks-file t.yml --task mine --seeds 1", setup=setup,
        names=("t.yml",))
add("12.12", C12, "compare --episodes on a task whose env has no horizon", "cli", "compare --tasks-file t.yml --task cp --seeds 1 --episodes 3",
    setup="open('t.yml', 'w').write('cp:\\n  algo: fair_ppo\\n  env: CartPole-v1\\n  figures: [episode_reward]\\n  hyperparams: {fairness_coef: 0.0}\\n"
          "  runs:\\n    PPO: {baseline: true}\\n    FairPPO: {}\\n')\n", names=("--episodes", "horizon"))
add("12.13", C12, "--name of 150 'é' (150 characters, 300 bytes: too long for the file system)", "cli", DQN_T + " --name " + "é" * 150,
    names=("name", "bytes"))
add("12.14", C12, "--resume a checkpoint swapped for the parent's zip (it resumed as the parent)", "py", """
import json, zipfile
from sb3_fair.experiment import ExperimentConfig, train
cfg = ExperimentConfig(algo="fair_dqn", env="sb3_fair/DonutAllocation-v0", hyperparams={"learning_starts": 0, "buffer_size": 500},
                       n_timesteps=100, eval_episodes=0, checkpoint_every=100, save_path="m.zip")
train(cfg)
path = "m/model_100_steps.zip"
with zipfile.ZipFile(path) as z:
    members = {n: z.read(n) for n in z.namelist()}
data = json.loads(members["data"]); data.pop("_saved_by"); data.pop("fairness_window"); members["data"] = json.dumps(data).encode()
with zipfile.ZipFile(path, "w") as z:
    for n, b in members.items(): z.writestr(n, b)
phase("construct")
train(cfg.replace(n_timesteps=200), resume=path)
""", names=("saved by an SB3",), timeout=120)
add("12.15", C12, "sweep --grid n_steps=8,0 (it failed inside every trial that had 0)", "cli",
    "sweep --algo ppo --env CartPole-v1 --timesteps 64 --grid n_steps=8,0 --name s --storage sw --quiet",
    names=("n_steps",), exclusive=True, timeout=180)
add("12.16", C12, "-p learning_rate=stable_baselines3.common.utils:set_random_seed (an allow-listed function SB3 would call)", "cli",
    PPO_T + " -p learning_rate=stable_baselines3.common.utils:set_random_seed", names=("learning_rate", "schedule"),
    called=("NoneType",))

# class 12, continued: containment by destination
CKPT_CB = "stable_baselines3.common.callbacks.CheckpointCallback"
for cid, what, spec, setup in (
    ("12.20", "a path nested two mappings deep in a callback's arguments",
     "[{%s: {save_freq: 32, save_path: ckpt, verbose: {extra: {log_path: ../../../../escape}}}}]" % CKPT_CB, ""),
    ("12.21", "name_prefix ../../../escape (a prefix joined to save_path)",
     "[{%s: {save_freq: 32, save_path: ckpt, name_prefix: ../../../../escape}}]" % CKPT_CB, ""),
    ("12.22", "save_path through a symlink inside the working folder", "[{%s: {save_freq: 32, save_path: link/ckpt}}]" % CKPT_CB,
     "import os; os.symlink(os.path.abspath('../..'), 'link')\n"),
    ("12.23", "save_path as YAML !!binary of an absolute path", "[{%s: {save_freq: 32, save_path: !!binary L3RtcC9hZHZydW4vZXNjYXBlZA==}}]"
     % CKPT_CB, ""),
):
    add(cid, C12, f"config file: callback {what}", "cli", "train --config exp.yml --quiet",
        setup=setup + "open('exp.yml', 'w').write('algo: ppo\\nenv: CartPole-v1\\nn_timesteps: 64\\neval_episodes: 1\\nhyperparams:\\n"
        "  n_steps: 32\\n  batch_size: 32\\n  n_epochs: 1\\n  callback: " + spec.replace("'", "\\'") + "\\n')\n",
        names=("working folder", "callback"))
add("12.24", C12, "config file: wandb: {dir: ../../..} (W&B's folder outside)", "cli", "train --config exp.yml --quiet",
    setup="open('exp.yml', 'w').write('algo: ppo\\nenv: CartPole-v1\\nn_timesteps: 64\\nwandb: {mode: offline, dir: ../../..}\\n')\n",
    names=("wandb", "working folder"))
add("12.25", C12, "config file: save_path: ../../../m.zip (the file's own save path)", "cli", "train --config exp.yml --quiet",
    setup="open('exp.yml', 'w').write('algo: ppo\\nenv: CartPole-v1\\nn_timesteps: 64\\nsave_path: ../../../m.zip\\n')\n",
    names=("save_path", "working folder"))
# class 12, continued: silent wrong results and raw tracebacks
add("12.30", C12, "MemoryAugmentation over gym.make('sb3_fair/DonutAllocation-v0') (which has one): two memories", "py", """
import gymnasium as gym, sb3_fair
from sb3_fair.wrappers import MemoryAugmentation
phase("construct"); MemoryAugmentation(gym.make("sb3_fair/DonutAllocation-v0"))
""", names=("already has a MemoryAugmentation",))
add("12.31", C12, "FairnessReward stacked twice, a TimeLimit between (the fairness term counted twice)", "py", """
from gymnasium.wrappers import TimeLimit
from sb3_fair.envs import DonutAllocationEnv
from sb3_fair.wrappers import FairnessReward, MemoryAugmentation
env = FairnessReward(MemoryAugmentation(DonutAllocationEnv()))
phase("construct"); FairnessReward(TimeLimit(env, 50))
""", names=("already has a FairnessReward",))
add("12.32", C12, "a FairPPO zip whose data says alpha -1 (edited), loaded", "py", """
import json, zipfile
from sb3_fair import FairPPO
from sb3_fair.envs import DisparityGame
from sb3_fair.wrappers import make_multiagent_vec_env
FairPPO("MlpPolicy", make_multiagent_vec_env(DisparityGame(n_agents=4, max_steps=8), n_instances=2), n_steps=16, batch_size=32).save("m.zip")
with zipfile.ZipFile("m.zip") as z:
    members = {n: z.read(n) for n in z.namelist()}
data = json.loads(members["data"]); data["alpha"] = -1.0; members["data"] = json.dumps(data).encode()
with zipfile.ZipFile("m.zip", "w") as z:
    for n, b in members.items(): z.writestr(n, b)
phase("construct"); FairPPO.load("m.zip")
""", names=("alpha", "saved in the zip"))
add("12.33", C12, "FairPPO.load(path, fairnes_coef=0.5): a misspelled keyword (SB3 sets it as an attribute)", "py", """
from sb3_fair import FairPPO
from sb3_fair.envs import DisparityGame
from sb3_fair.wrappers import make_multiagent_vec_env
FairPPO("MlpPolicy", make_multiagent_vec_env(DisparityGame(n_agents=4, max_steps=8), n_instances=2), n_steps=16, batch_size=32).save("m.zip")
phase("construct"); FairPPO.load("m.zip", fairnes_coef=0.5)
""", names=("fairnes_coef",))
add("12.34", C12, "metrics with string group labels", "py", """
from sb3_fair import metrics
phase("construct"); metrics.demographic_parity([1.0, 2.0, 3.0, 4.0], ["a", "a", "b", "b"], 0)
""", names=("groups", "integer"))
add("12.35", C12, "normalized DP of returns near float64's limit (NaN before)", "py", """
import math
from sb3_fair import metrics
v = metrics.demographic_parity_norm([1e308, 1e308, -1e308, 1e308], [0, 0, 1, 1], 1)
RESULT["value"] = v
RESULT["valid"] = math.isfinite(v)
""", expect="accept")
add("12.36", C12, "DonutAllocationEnv(n_customers=10**9) (MemoryError before)", "py", """
from sb3_fair.envs import DonutAllocationEnv
phase("construct"); DonutAllocationEnv(n_customers=10**9)
""", names=("n_customers",), mem_gb=3)
add("12.37", C12, "PursuitEvasionEnv(n_pursuers=1000) (every permutation enumerated)", "py", """
from sb3_fair.envs import PursuitEvasionEnv
phase("construct"); PursuitEvasionEnv(n_pursuers=1000)
""", names=("n_pursuers",), mem_gb=3)

# ---------------------------------------------------------------- previous round (sampled)
CP = "P previous round"
for cid, kw, nm in (("P.01", "fairness_coef=-1.0", "fairness_coef"), ("P.02", "fairness_coef=float('nan')", "fairness_coef"),
                    ("P.03", "fairness_coef=float('inf')", "fairness_coef"), ("P.04", "fairness_coef=1e7", "fairness_coef"),
                    ("P.05", "alpha=-0.1", "alpha"), ("P.06", "beta=float('nan')", "beta"), ("P.07", "fairness='bogus'", "fairness"),
                    ("P.08", "agents_per_instance=3", "agents_per_instance"), ("P.09", "massaging_tau=-1.0, massaging=True", "massaging_tau")):
    add(cid, CP, f"FairPPO({kw}) on DisparityGame", "py", DISP + f"""
phase("construct"); m = FairPPO("MlpPolicy", make_multiagent_vec_env(disp), {kw}, {PPO_SMALL})
""", names=(nm,))
add("P.10", CP, "FairPPO(fairness='dp') on CartPole (no stakeholders/benefits)", "py", """
from sb3_fair import FairPPO
phase("construct"); FairPPO("MlpPolicy", "CartPole-v1", fairness="dp", fairness_coef=1.0)
""", names=("stakeholder", "benefit", "group"))
add("P.11", CP, "FairDQN(counterfactual=True) on CartPole (no memory)", "py", """
from sb3_fair import FairDQN
phase("construct"); FairDQN("MlpPolicy", "CartPole-v1", counterfactual=True, buffer_size=100)
""", names=("memory", "counterfactual"))
for cid, call, nm in (("P.20", "FairnessReward(MemoryAugmentation(base()), fairness_coef=float('nan'))", "fairness_coef"),
                      ("P.21", "FairnessReward(MemoryAugmentation(base()), welfare='bogus')", "welfare"),
                      ("P.22", "FairnessReward(MemoryAugmentation(base()), scheme='bogus')", "scheme"),
                      ("P.23", "FairnessReward(MemoryAugmentation(base()), scheme='periodic', period=0)", "period"),
                      ("P.24", "FairnessReward(MemoryAugmentation(base()), scheme='periodic', period=1.5)", "period"),
                      ("P.25", "MemoryAugmentation(base(), kind='bogus')", "kind"),
                      ("P.26", "MemoryAugmentation(base(), encoding='bogus')", "encoding"),
                      ("P.27", "MemoryAugmentation(base(), max_value=-1)", "max_value"),
                      ("P.28", "MemoryAugmentation(base(), kind='reset', period=0)", "period"),
                      ("P.29", "FairnessMonitor(donut(), metrics=['bogus'])", "bogus"),
                      ("P.30", "FairnessMonitor(gym.make('CartPole-v1'))", "stakeholder"),
                      ("P.31", "MemoryAugmentation(gym.make('CartPole-v1'))", "stakeholder"),
                      ("P.32", "make_multiagent_vec_env(disp, n_instances=0)", "n_instances"),
                      ("P.33", "make_multiagent_vec_env(disp, n_instances=1.5)", "n_instances")):
    add(cid, CP, call, "py", DISP + f"""
import gymnasium as gym
import sb3_fair.envs
from sb3_fair.wrappers import FairnessReward, MemoryAugmentation, FairnessMonitor
def donut(): return gym.make("sb3_fair/DonutAllocation-v0")
def base():
    from sb3_fair.envs import DonutAllocationEnv
    return DonutAllocationEnv()
phase("construct"); w = {call}
if hasattr(w, "reset"): w.reset()
""", names=(nm,))
for cid, call, nm in (("P.40", "welfare([1, 2], 'bogus')", "bogus"), ("P.41", "demographic_parity([1.0, 2.0], [0, 0])", "group"),
                      ("P.42", "gini([-1.0, 2.0])", "u"), ("P.43", "log_nash([float('nan'), 1.0])", "u"),
                      ("P.44", "demographic_parity([1.0, 2.0, 3.0], [0, 1])", "groups"), ("P.45", "nash([])", "u")):
    add(cid, CP, call, "py", f"""
from sb3_fair.metrics import *
phase("construct"); RESULT["v"] = {call}
""", names=(nm,))
for cid, argv, nm in (("P.50", "compare --seeds 0", "--seeds"), ("P.51", "compare --task harvest --alpha -1", "--alpha"),
                      ("P.52", PPO_T + " --learning-rate 0", "--learning-rate"), ("P.53", "train --algo ppo --env CartPole-v1 --timesteps 1.5", "--timesteps"),
                      ("P.54", "train --algo bogus --env CartPole-v1 --timesteps 10", "bogus"), ("P.55", "train --algo ppo --env Bogus-v9 --timesteps 10", "Bogus-v9"),
                      ("P.56", "evaluate nonexist.zip", "nonexist"), ("P.57", PPO_T + " -p novalue", "novalue"),
                      ("P.58", "train --algo fair_dqn --env sb3_fair/DonutAllocation-v0 --variant nope --timesteps 10", "nope"),
                      ("P.59", "sweep --algo ppo --env CartPole-v1 --timesteps 32 --search optuna --space 'learning_rate=bogus(1,2)' --storage {W}/st", "bogus")):
    add(cid, CP, f"CLI {argv[:70]}", "cli", argv, names=(nm,), early=("parse",))


# ----------------------------------------------------------------------------------------------------------------
# running

PRELUDE = r'''
import os, sys, json, math, warnings, logging, traceback
import numpy as np
MARK = os.environ["ADV_MARK"]
_phase = ["setup"]
def phase(p): _phase[0] = p
RESULT = {}
_w = []
class _H(logging.Handler):
    def emit(self, r):
        try: _w.append("log:" + r.getMessage())
        except Exception: pass
logging.getLogger("sb3_fair").addHandler(_H()); logging.getLogger("sb3_fair").setLevel(logging.INFO)
def _sw(message, category, filename, lineno, file=None, line=None): _w.append(f"{category.__name__}: {message}")
warnings.showwarning = _sw
warnings.simplefilter("always")
def trust_kwargs(fn):
    import inspect
    try: ps = inspect.signature(fn).parameters
    except Exception: return {}
    return {n: True for n in ps if n.lower().startswith("trust") or n in ("allow_code", "unsafe", "allow_imports")}
_out = None
try:
__BODY__
    _out = {"ok": True}
except SystemExit as e:
    _out = {"ok": True, "exit": str(e)}
except BaseException as e:
    tb = traceback.extract_tb(e.__traceback__)
    _out = {"ok": False, "exc_type": type(e).__name__, "exc_module": type(e).__module__, "msg": str(e)[:3000],
            "frames": [f"{f.filename}:{f.lineno}" for f in tb][-8:]}
_out.update(phase=_phase[0], result=RESULT, warnings=[str(x)[:300] for x in _w][:20])
print("@@RESULT@@" + json.dumps(_out, default=str), flush=True)
'''

LIB_MARKERS = ("/torch/", "/numpy/", "/stable_baselines3/", "/sb3_contrib/", "/ray/", "/gymnasium/", "/yaml/", "/pettingzoo/",
               "/supersuit/", "/wandb/", "/scipy/", "/optuna/", "python3.")


INTERNAL_MESSAGES = ("Expected parameter", "lam value too large", "argmax of an empty", "slice indices", "Trying to create tensor",
                     "could not convert string", "Number of processes must be", "Python int too large", "cannot access local variable",
                     "Should at least collect")


def _lib_of(frame: str) -> str | None:
    for m in LIB_MARKERS:
        if m in frame:
            return m.strip("/")
    return None


def _tree(root: Path, skip: Path) -> set[str]:
    out = set()
    for dirpath, dirnames, filenames in os.walk(root):
        d = Path(dirpath)
        if d == skip:
            dirnames[:] = []
            continue
        for n in filenames + [x for x in dirnames if (d / x) != skip]:
            out.add(str((d / n).relative_to(root)))
    return out


def _size(p: Path) -> tuple[int, int]:
    total, n = 0, 0
    for dirpath, _, filenames in os.walk(p):
        for f in filenames:
            try:
                total += os.lstat(os.path.join(dirpath, f)).st_size
                n += 1
            except OSError:
                pass
    return total, n


def run_case(c: Case, checkout: str, trust_flag: str | None) -> dict:
    RUNROOT.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix=f"{c.id.replace('/', '_')}_", dir=RUNROOT))
    work = root / "d1" / "d2" / "d3" / "work"
    work.mkdir(parents=True)
    mark = root / "markers"
    mark.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    env.update(OMP_NUM_THREADS="1", WANDB_MODE="offline", WANDB_SILENT="true", MPLBACKEND="Agg", PYTHONPATH=f"{checkout}:{EVIL}",
               ADV_MARK=str(mark), ADV_CHECKOUT=checkout, PYTHONDONTWRITEBYTECODE="1", TQDM_DISABLE="1")
    for k, v in c.env.items():
        if k.startswith("RAY_"):
            env[k] = v
    out: dict[str, Any] = dict(id=c.id, cls=c.cls, what=c.what)
    if c.optin and c.kind == "cli" and not trust_flag:
        out.update(verdict="N/A", note="no opt-in flag (--trust*) in this checkout's CLI")
        shutil.rmtree(root, ignore_errors=True)
        return out

    def limits() -> None:
        os.setsid()
        if c.mem_gb:
            import resource
            lim = int(c.mem_gb * 2**30)
            resource.setrlimit(resource.RLIMIT_AS, (lim, lim))

    def fill(s: str) -> str:
        return s.replace("{W}", str(work)).replace("{R}", str(root)).replace("{M}", str(mark)).replace("{TRUST}", trust_flag or "")

    # setup
    if c.setup:
        sp = work / "_setup.py"
        sp.write_text("import os\nMARK = os.environ['ADV_MARK']\n" + c.setup)
        r = subprocess.run([PY, str(sp)], cwd=work, env=env, capture_output=True, text=True, timeout=120)
        sp.unlink()
        if r.returncode != 0:
            out.update(verdict="ERROR", note="setup failed: " + (r.stderr.strip().splitlines() or ["?"])[-1][:200])
            return out
        for f in mark.iterdir():  # setup may not count
            f.unlink()
    before = _tree(root, work)
    work_before = {str(p) for p in work.rglob("*")}
    stale_backup = None
    if c.env.get("STALE_RAY"):
        cur = Path("/tmp/ray/ray_current_cluster")
        cur.parent.mkdir(parents=True, exist_ok=True)
        if cur.exists():
            stale_backup = cur.read_text()
        cur.write_text("127.0.0.1:1\n")
    if c.kind == "py":
        body = textwrap.indent(fill(textwrap.dedent(c.body)).strip("\n") or "pass", "    ")
        script = root / "case.py"
        script.write_text(PRELUDE.replace("__BODY__", body))
        cmd = [PY, str(script)]
    else:
        import shlex
        argv = shlex.split(fill(c.body))
        # "benchmarks/<method>.py ...": one of the checkout's method benchmarks; anything else: the sb3-fair command
        cmd = [PY, str(Path(checkout) / argv[0]), *argv[1:]] if argv[0].endswith(".py") else [PY, "-m", "sb3_fair.cli", *argv]
    t0 = time.perf_counter()
    timed_out = False
    try:
        proc = subprocess.Popen(cmd, cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=limits)
        try:
            so, se = proc.communicate(timeout=c.timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            so, se = proc.communicate()
        rc = proc.returncode
    finally:
        if c.env.get("STALE_RAY"):
            cur = Path("/tmp/ray/ray_current_cluster")
            if stale_backup is not None:
                cur.write_text(stale_backup)
            else:
                cur.unlink(missing_ok=True)
    elapsed = time.perf_counter() - t0
    after = _tree(root, work)
    new = sorted(after - before)
    markers = sorted(p.name for p in mark.iterdir())
    allow = c.env.get("ALLOW_ESCAPE")
    escaped = [p for p in new if not p.startswith("markers") and p != "case.py" and not (allow and p.startswith(allow))]
    inside_only = c.env.get("ALLOW_INSIDE_ONLY")
    if inside_only:  # the chosen folder is work/<inside_only>: nothing else may appear in work (except wandb/)
        for dirpath, dirnames, filenames in os.walk(work):
            for n in filenames:
                rel = str((Path(dirpath) / n).relative_to(work))
                if not rel.startswith(inside_only + "/") and not rel.startswith("wandb/") and not rel.startswith("_"):
                    escaped.append("work/" + rel)
    nbytes, nfiles = _size(work)
    nbytes_all = nbytes + sum(_size(root / p)[0] for p in new if (root / p).is_file())
    out.update(rc=rc, timeout=timed_out, elapsed=round(elapsed, 2), markers=markers, escaped=escaped[:10], bytes=nbytes_all, n_files=nfiles,
               stdout=so[-4000:], stderr=se[-6000:])
    # the error, and where it came from
    err = None
    res: dict = {}
    if c.kind == "py":
        m = re.search(r"@@RESULT@@(.*)", so)
        if m:
            d = json.loads(m.group(1))
            res = d.get("result", {})
            out["warnings"] = d.get("warnings", [])
            out["phase"] = d.get("phase")
            if not d["ok"]:
                frames = d.get("frames", [])
                err = dict(type=d["exc_type"], msg=d["msg"], frame=frames[-1] if frames else "", frames=frames, phase=d.get("phase"))
        elif not timed_out:
            err = dict(type="died", msg=(se.strip().splitlines() or ["no output"])[-1], frame="", frames=[], phase="?")
    else:
        out["warnings"] = [ln for ln in se.splitlines() if "Warning" in ln or "warn" in ln.lower()][:10]
        if rc not in (0, None) and not timed_out:
            if "Traceback (most recent call last)" in se:
                frames = re.findall(r'File "([^"]+)", line (\d+)', se)
                last = se.strip().splitlines()[-1]
                et, _, msg = last.partition(": ")
                err = dict(type=et.split(".")[-1], msg=msg or last, frame=(f"{frames[-1][0]}:{frames[-1][1]}" if frames else ""),
                           frames=[f"{a}:{b}" for a, b in frames][-8:], phase="late" if _trained(so, work, work_before) else "parse")
            else:
                lines = [ln for ln in se.strip().splitlines() if ln.strip()]
                msg = next((ln for ln in reversed(lines) if "error" in ln.lower()), lines[-1] if lines else f"exit {rc}")
                err = dict(type="exit", msg=msg, frame="sb3_fair/cli.py", frames=[], phase="late" if _trained(so, work, work_before) else "parse")
    out["result"] = res
    out["err"] = err
    out["err_line"] = f"{err['type']}: {err['msg']}".replace("\n", " ")[:400] if err else ""
    out["killed_mem"] = bool(err and ("MemoryError" in err["type"] or "Cannot allocate memory" in err["msg"] or "std::bad_alloc" in err["msg"]))
    internal = False
    if err:
        lib = _lib_of(err["frame"]) if "/sb3_fair/" not in err["frame"] else None
        internal = lib is not None or err["type"] == "died"
        out["where"] = lib or ("sb3_fair" if "/sb3_fair/" in err["frame"] or err["frame"] == "sb3_fair/cli.py" else err["frame"])
    out["crash_internal"] = internal
    verdict, note = classify(c, out)
    out.update(verdict=verdict, note=note)
    if res.get("na"):
        out.update(verdict="N/A", note=res["na"])
    shutil.rmtree(root, ignore_errors=True)
    for p in new:  # anything that escaped beyond root is handled by root's removal; absolute escapes live under root too
        pass
    return out


def _trained(stdout: str, work: Path, before: set) -> bool:
    files = [p for p in work.rglob("*") if p.is_file() and str(p) not in before and not p.name.startswith("_")
             and p.suffix in (".zip", ".pkl", ".csv", ".png")]
    return bool(files)


def classify(c: Case, o: dict) -> tuple[str, str]:
    if o["markers"] and c.expect != "custom":
        return "BAD", f"code ran without opt-in: marker(s) {', '.join(o['markers'])}"
    if o["markers"] and not c.optin:
        return "BAD", f"code ran without opt-in: marker(s) {', '.join(o['markers'])}"
    if o["escaped"] and c.expect != "custom" or (o["escaped"] and c.cls.startswith("2")):
        return "BAD", f"wrote outside its folder: {o['escaped'][:3]}"
    if c.check is not None:
        return c.check(o)
    if o["timeout"]:
        return "BAD", f"hang: killed at the {c.timeout} s timeout"
    err = o["err"]
    if c.expect == "accept":
        if err:
            return "BAD", "legitimate input refused/failed: " + o["err_line"][:200]
        if o["result"].get("valid") is False:
            return "BAD", f"accepted but wrong result: {json.dumps(o['result'])[:200]}"
        return "GOOD", "accepted" + (f" ({o['result'].get('value')})" if "value" in o["result"] else "") + " and correct"
    # expect refuse
    if not err:
        named_w = [w for w in (o.get("warnings") or []) if any(n.lower() in w.lower() for n in c.names)]
        if named_w:
            return "LATE", "accepted, only a warning: " + named_w[0][:200]
        if o["result"].get("loaded"):
            return "BAD", f"accepted silently (loaded as {o['result']['loaded']})"
        return "BAD", "accepted silently" + (f" (result {json.dumps(o['result'])[:120]})" if o["result"] else "")
    msg = f"{err['type']}: {err['msg']}"
    low = msg.lower()
    if c.called and any(s.lower() in low for s in c.called):
        return "BAD", "the named object was imported and called: " + o["err_line"][:200]
    named = (not c.names) or any(n.lower() in low or n.lower().replace("_", " ") in low for n in c.names)
    if not named and any(sig.lower() in low for sig in INTERNAL_MESSAGES):
        return "BAD", "a library-internal message passed through, not naming the cause: " + o["err_line"][:200]
    if c.bad_words and any(b.lower() in low for b in c.bad_words):
        return "BAD", "misleading message: " + o["err_line"][:200]
    if o["crash_internal"] and not named:
        return "BAD", f"crash inside {o.get('where')}: " + o["err_line"][:200]
    if o["crash_internal"] and err["type"] not in ("ValueError", "TypeError", "FloatingPointError", "KeyError"):
        return "BAD", f"crash inside {o.get('where')}: " + o["err_line"][:200]
    early = err.get("phase") in c.early
    if early and named:
        tag = "" if not o["crash_internal"] else f" (raised in {o.get('where')})"
        return "GOOD", "refused: " + o["err_line"][:200] + tag
    if early:
        return "LATE", "refused, but the message does not name the cause: " + o["err_line"][:200]
    if named:
        return "LATE", f"refused only after work started (phase {err.get('phase')}): " + o["err_line"][:200]
    return "LATE", f"refused late, message does not name the cause (phase {err.get('phase')}): " + o["err_line"][:200]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--checkout", required=True)
    ap.add_argument("--out", required=True, help="output name stem, e.g. results_base (written beside this script)")
    ap.add_argument("--only", default="", help="comma-separated id prefixes")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--merge", action="store_true", help="update the cases run in an existing <out>.json/.md")
    args = ap.parse_args()
    checkout = str(Path(args.checkout).resolve())
    env = dict(os.environ, PYTHONPATH=checkout, OMP_NUM_THREADS="1")
    r = subprocess.run([PY, "-c", "import sb3_fair; print(sb3_fair.__file__)"], env=env, capture_output=True, text=True)
    print("sb3_fair from", r.stdout.strip())
    assert r.stdout.strip().startswith(checkout), r.stdout + r.stderr
    h = subprocess.run([PY, "-m", "sb3_fair.cli", "train", "--help"], env=env, capture_output=True, text=True).stdout
    m = re.search(r"(--trust[\w-]*)", h)
    trust_flag = m.group(1) if m else None
    print("opt-in flag:", trust_flag)
    cases = [c for c in CASES if not args.only or any(c.id.startswith(p) for p in args.only.split(","))]
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids)), [i for i in ids if ids.count(i) > 1]
    results: dict[str, dict] = {}
    t0 = time.time()

    def one(c: Case) -> None:
        try:
            res = run_case(c, checkout, trust_flag)
        except Exception as e:  # noqa: BLE001
            res = dict(id=c.id, cls=c.cls, what=c.what, verdict="ERROR", note=f"suite error: {e!r}")
        results[c.id] = res
        print(f"[{time.time() - t0:6.0f}s] {c.id:24s} {res['verdict']:5s} {res.get('note', '')[:150]}", flush=True)

    with ThreadPoolExecutor(args.jobs) as ex:
        list(ex.map(one, [c for c in cases if not c.exclusive]))
    for c in cases:
        if c.exclusive:
            one(c)
    rows = [results[c.id] for c in cases]
    keep = ("id", "cls", "what", "verdict", "note", "rc", "elapsed", "markers", "escaped", "bytes", "err_line", "phase", "warnings")
    rows = [{k: r.get(k) for k in keep} for r in rows]
    stem = HERE / args.out
    if args.merge and stem.with_suffix(".json").is_file():  # re-run some cases into an existing table
        old = {r["id"]: r for r in json.loads(stem.with_suffix(".json").read_text())["cases"]}
        old.update({r["id"]: r for r in rows})
        rows = [old[c.id] for c in CASES if c.id in old]
    write_outputs(rows, stem, checkout, trust_flag, time.time() - t0)


def write_outputs(rows: list, stem: Path, checkout: str, trust_flag: str | None, elapsed: float) -> None:
    stem.with_suffix(".json").write_text(json.dumps({"checkout": checkout, "opt_in_flag": trust_flag, "cases": rows}, indent=1, default=str))
    counts: dict[str, dict[str, int]] = {}
    for r in rows:
        counts.setdefault(r["cls"], {}).setdefault(r["verdict"], 0)
        counts[r["cls"]][r["verdict"]] += 1
    verdicts = ["GOOD", "LATE", "BAD", "N/A", "ERROR"]
    md = [f"# sb3-fair adversarial suite: {checkout}", "", f"opt-in flag found: `{trust_flag}`; {len(rows)} cases; "
          f"last run {elapsed:.0f} s", "", "| class | " + " | ".join(verdicts) + " |", "|---|" + "---|" * len(verdicts)]
    for cls in sorted(counts, key=lambda s: (s.split()[0].rjust(3), s)):
        md.append(f"| {cls} | " + " | ".join(str(counts[cls].get(v, 0)) for v in verdicts) + " |")
    tot = {v: sum(cn.get(v, 0) for cn in counts.values()) for v in verdicts}
    md.append("| **total** | " + " | ".join(str(tot[v]) for v in verdicts) + " |")
    md += ["", "| id | class | verdict | case | what happened |", "|---|---|---|---|---|"]
    for r in rows:
        md.append(f"| {r['id']} | {r['cls']} | {r['verdict']} | {r['what'].replace('|', '/')} | {str(r.get('note', '')).replace('|', '/')} |")
    stem.with_suffix(".md").write_text("\n".join(md) + "\n")
    print("\n".join(md[:4 + len(counts) + 4]))


if __name__ == "__main__":
    main()
