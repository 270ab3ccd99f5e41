"""F-PPO (Hu, Lear, Zhang 2024, arXiv:2401.06318) on lending, attention allocation and epidemic control:
``sb3-fair reproduce paper004`` (:mod:`sb3_fair.experiment.reproduce.paper004`) with the repository's
``benchmarks/`` as output (``RESULTS.md``, ``fppo_<part>.png``, the runs in ``benchmarks/out/fppo/``).

Usage::

    PYTHONPATH=. python benchmarks/fppo.py --part lending --seeds 3 --workers 2
    PYTHONPATH=. python benchmarks/fppo.py --part epidemic --seeds 3 --report
"""

import sys
from pathlib import Path

from sb3_fair.experiment.reproduce.paper004 import main

if __name__ == "__main__":
    main(["--out", str(Path(__file__).resolve().parent), *sys.argv[1:]])
