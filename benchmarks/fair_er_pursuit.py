"""Paper 002 (Fair-ER / Fair-E on pursuit-evasion, Figs. 3-5): ``sb3-fair reproduce paper002`` with the
repository's ``benchmarks/`` as output (its RESULTS.md section, fair_er_pursuit*.png and out/fair_er/).

Usage::

    python benchmarks/fair_er_pursuit.py            # = sb3-fair reproduce paper002 --out benchmarks
    python benchmarks/fair_er_pursuit.py --quick    # smoke run (writes into benchmarks/ too)
    python benchmarks/fair_er_pursuit.py --help     # the options (sb3_fair.experiment.reproduce.paper002)
"""

import sys
from pathlib import Path

from sb3_fair.experiment.reproduce.paper002 import main

if __name__ == "__main__":
    main(["--out", str(Path(__file__).resolve().parent), *sys.argv[1:]])
