#!/usr/bin/env python3
"""Build the shipped human-games dataset from the published Guan game files.

Usage::

    python scripts/build-human-games.py FOLDER [--out src/koikoi/lab/data/human-games.jsonl.gz]

Reads every ``*.json`` game file of FOLDER (the ``gamerecords_dataset`` folder of
``guansanghai/KoiKoi-AI``, 201 files) in natural order, converts each to a
koikoi record with :func:`koikoi.lab.guan.guan_to_record` (which replays it and
checks every turn and result), and writes the records one a line (compact JSON)
into a gzip file. The output is reproducible: a record's ``created`` is the
game's start time and the gzip header carries no name and no time. The license
(``LICENSE-human-games`` beside the output) is not written by this script.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from koikoi.game.errors import RecordError
from koikoi.game.record import GameRecord
from koikoi.lab.datasets import HUMAN_GAMES
from koikoi.lab.guan import guan_to_record, json_files, load_guan

DEFAULT_OUT = Path(__file__).resolve().parent.parent / "src" / "koikoi" / "lab" / "data"


def convert(folder: Path) -> list[GameRecord]:
    """The checked records of the Guan game files in ``folder``, in natural file order.

    Raises:
        RecordError: a file that is not a Guan game or does not replay.
    """
    records = []
    for path in json_files([folder]):
        data, where = load_guan(path)
        start = data.get("info", {}).get("startTime") if isinstance(data, dict) else None
        created = start.replace(" ", "T") if isinstance(start, str) else "unknown"
        records.append(guan_to_record(data, where=where, created=created))
    return records


def dataset_bytes(records: Sequence[GameRecord]) -> bytes:
    """The gzip bytes of ``records``, one compact JSON record a line."""
    text = "".join(
        json.dumps(r.to_dict(), ensure_ascii=False, separators=(",", ":")) + "\n" for r in records
    )
    out = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=out, compresslevel=9, mtime=0) as gz:
        gz.write(text.encode("utf-8"))
    return out.getvalue()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="the folder of Guan game files")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT / HUMAN_GAMES)
    args = parser.parse_args(argv)
    try:
        records = convert(args.folder)
    except RecordError as exc:
        print(f"build-human-games: error: {exc}", file=sys.stderr)
        return 2
    data = dataset_bytes(records)
    args.out.write_bytes(data)
    actions = sum(len(r.actions) for r in records)
    print(f"{len(records)} games, {actions} actions -> {args.out} ({len(data):,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
