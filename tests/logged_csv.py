"""Reading the CSV that SB3's logger writes (``configure(path, ["csv"])``) in tests."""

from __future__ import annotations

import csv
from pathlib import Path


def read_csv(path: Path) -> list[dict[str, str]]:
    """The rows of a ``progress.csv``, each a dict of column -> text ('' where the dump had no value)."""
    with open(path) as fh:
        return list(csv.DictReader(fh))
