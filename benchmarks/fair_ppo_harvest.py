"""Paper 001 (La Malfa et al. 2025, arXiv:2502.03953), Table 1 / Fig. 1: ``sb3-fair reproduce paper001``
with the repository's ``benchmarks/`` as output (``RESULTS.md``, ``fair_ppo_harvest.png``, runs
under ``benchmarks/out/fair_ppo/``); the logic is :mod:`sb3_fair.experiment.reproduce.paper001`.

Usage::

    python benchmarks/fair_ppo_harvest.py           # full run
    python benchmarks/fair_ppo_harvest.py --quick   # smoke run
"""

import sys
from pathlib import Path

from sb3_fair.experiment.reproduce.paper001 import main

if __name__ == "__main__":
    main(["--out", str(Path(__file__).resolve().parent), *sys.argv[1:]])
