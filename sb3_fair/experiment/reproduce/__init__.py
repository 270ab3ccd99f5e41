"""``sb3-fair reproduce PAPER``: each paper's benchmark at its scaled preset, through
:func:`~sb3_fair.experiment.run.train`, writing its section of ``RESULTS.md`` and its plots.

==========  ==================================================================  ===============================
paper       what is reproduced                                                  module
==========  ==================================================================  ===============================
paper001    Table 1 / Fig. 1: PPO vs FairPPO (DP, CSP, CF) on Allelopathic      :mod:`.paper001`
            Harvest (small preset)
paper002    Figs. 3-5: Fair-ER / Fair-E (FairDDPG) on pursuit-evasion           :mod:`.paper002`
paper003    Figs. 2-3: FairQCM vs DQN with full / min / reset memory on the     :mod:`.paper003`
            doughnut and lending tasks
paper004    Figs. 1, 3, 4: F-PPO, F-PPO-L, A-PPO and PPO on lending, attention  :mod:`.paper004`
            and epidemic control
==========  ==================================================================  ===============================

Each module has a ``main(argv)`` taking the command line after the paper's name (``--help`` lists
it; ``--quick`` is a smoke run; ``--out DIR`` is where ``RESULTS.md``, the PNGs and the runs go,
default ``./benchmarks``). The scripts in the repository's ``benchmarks/`` call these.

Example::

    sb3-fair reproduce paper003 --quick --out /tmp/repro
    sb3-fair reproduce paper004 --part lending --seeds 3
"""

from __future__ import annotations

import importlib
from typing import Any

#: paper name -> (module, one line on what it reproduces)
PAPERS: dict[str, tuple[str, str]] = {
    "paper001": ("sb3_fair.experiment.reproduce.paper001", "fair-PPO on Allelopathic Harvest (Table 1, Fig. 1)"),
    "paper002": ("sb3_fair.experiment.reproduce.paper002", "Fair-ER / Fair-E on pursuit-evasion (Figs. 3-5)"),
    "paper003": ("sb3_fair.experiment.reproduce.paper003", "FairQCM on doughnuts and lending (Figs. 2-3)"),
    "paper004": ("sb3_fair.experiment.reproduce.paper004", "F-PPO on lending, attention, epidemic (Figs. 1, 3, 4)"),
}


def reproduce(paper: str, argv: list[str] | None = None) -> Any:
    """Run the reproduction of ``paper`` with the command-line arguments ``argv``.

    :param paper: one of :data:`PAPERS` (``"paper001"`` ... ``"paper004"``).
    :param argv: the reproduction's own arguments, e.g. ``["--quick", "--out", "/tmp/r"]``.
    :return: what the module's ``main`` returns.
    """
    if paper not in PAPERS:
        raise ValueError(f"unknown paper {paper!r}; accepted: {sorted(PAPERS)}")
    return importlib.import_module(PAPERS[paper][0]).main(argv)


__all__ = ["PAPERS", "reproduce"]
