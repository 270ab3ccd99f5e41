"""Paper 003 (FairQCM, Alamdari et al. 2024, arXiv:2312.04772): ``sb3-fair reproduce paper003`` with the
repository's ``benchmarks/`` as output (``RESULTS.md``, the PNGs and ``out/fairqcm/``).

Usage::

    python benchmarks/fairqcm.py [--quick] [--ablation] [--seeds N] ...   # see --help
"""

import sys
from pathlib import Path

from sb3_fair.experiment.reproduce.paper003 import main

if __name__ == "__main__":
    main(["--out", str(Path(__file__).resolve().parent), *sys.argv[1:]])
