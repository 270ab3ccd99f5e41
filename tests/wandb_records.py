"""Reading what an offline W&B run wrote (``./wandb/offline-run-*/run-<id>.wandb``) in tests.

The file is W&B's transaction log: a 7-byte header (``:W&B``, a magic number, a version), then
LevelDB-log blocks of 32 KiB, each record a 7-byte header (CRC, length, chunk type) and a chunk
of a serialised ``wandb.proto.wandb_internal_pb2.Record``. The records are decoded with W&B's own
protobuf classes; this module only reassembles the chunks.

``run.finish()`` returns before W&B's service has closed the run's stream (its log says
"stream: finishing up" after the client's "finishing run"), so the last run's file may still hold
only its header: :func:`offline_runs` calls ``wandb.teardown()`` first, which waits for the
service to write every run.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

BLOCK = 32 * 1024
HEADER = 7
FULL, FIRST, MIDDLE, LAST = 1, 2, 3, 4


def records(path: Path) -> Iterator[Any]:
    """Every ``Record`` of one ``run-<id>.wandb`` file, in order."""
    from wandb.proto import wandb_internal_pb2

    data = Path(path).read_bytes()
    if data[:4] != b":W&B":
        raise ValueError(f"{path} is not a W&B transaction log (header {data[:HEADER]!r})")
    pos, chunks = HEADER, []
    while pos + HEADER <= len(data):
        left = BLOCK - pos % BLOCK
        if left < HEADER:  # a block's tail too short for a record header is padding
            pos += left
            continue
        _crc, length, kind = struct.unpack("<IHB", data[pos:pos + HEADER])
        chunk = data[pos + HEADER:pos + HEADER + length]
        pos += HEADER + length
        if kind not in (FULL, FIRST, MIDDLE, LAST):
            continue  # zero padding
        chunks.append(chunk)
        if kind in (FULL, LAST):
            record = wandb_internal_pb2.Record()
            record.ParseFromString(b"".join(chunks))
            chunks = []
            yield record


def offline_runs(wandb_dir: Path) -> list[dict[str, Any]]:
    """The runs under ``wandb_dir`` (the ``wandb`` folder of ``dir=``): for each, the run record's name, group,
    tags and job type, the record types in order, and whether the log ends with the run's exit record."""
    import wandb

    wandb.teardown()
    runs = []
    for folder in sorted(Path(wandb_dir).glob("offline-run-*")):
        (log,) = folder.glob("run-*.wandb")
        kinds, run = [], None
        for record in records(log):
            kinds.append(record.WhichOneof("record_type"))
            if kinds[-1] == "run" and run is None:
                run = record.run
        if run is None:
            raise AssertionError(f"{log} holds no run record (record types {kinds})")
        runs.append({"name": run.display_name, "group": run.run_group, "tags": list(run.tags), "job_type": run.job_type,
                     "record_types": kinds, "finished": bool(kinds) and kinds[-1] == "exit"})
    return runs
