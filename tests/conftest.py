"""Test-session set-up: under pytest-xdist each worker's torch uses one thread, so the workers do not
oversubscribe the cores (the suite runs one worker per core, see ``[tool.pytest.ini_options]``)."""

from __future__ import annotations

import os

import torch as th

if os.environ.get("PYTEST_XDIST_WORKER"):
    th.set_num_threads(1)
