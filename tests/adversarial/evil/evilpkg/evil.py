"""A module that must never be imported by a config without an explicit opt-in: it leaves marker files."""
import os
from pathlib import Path

_MARK = os.environ.get("ADV_MARK")
if _MARK:
    Path(_MARK, "imported_evilpkg").write_text("evilpkg.evil was imported\n")


def boom(*args, **kwargs):
    if _MARK:
        Path(_MARK, "called_boom").write_text("evilpkg.evil.boom was called\n")
    return 0.1


class Boom:
    def __init__(self, *args, **kwargs):
        boom()


class Wrapper:
    def __new__(cls, env, *args, **kwargs):
        boom()
        return env


import gymnasium as gym
from gymnasium import spaces
import numpy as np


class Env(gym.Env):
    def __init__(self, **kwargs):
        boom()
        self.observation_space = spaces.Box(-1, 1, (2,), np.float32)
        self.action_space = spaces.Discrete(2)

    def reset(self, seed=None, options=None):
        return np.zeros(2, np.float32), {}

    def step(self, a):
        return np.zeros(2, np.float32), 0.0, True, False, {}


gym.register("Evil-v0", entry_point=Env)
