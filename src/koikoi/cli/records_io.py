"""``koikoi import`` and ``koikoi export``: game records from and to other formats.

* ``koikoi import guan FILE... [--out DIR]`` — Guan game files (the KoiKoi-Japan
  app's JSON, see :mod:`koikoi.lab.guan`) to koikoi records, each replayed and
  checked under the ``koikoi-japan`` rules; a folder stands for its ``*.json``
  files. One record per game: ``DIR/NAME.record.json``.
* ``koikoi export guan RECORD... [--out DIR]`` — koikoi records of
  ``koikoi-japan`` matches to Guan game files: ``DIR/NAME.guan.json``.

Every input is converted before anything is written: a file that fails stops
the command with one line naming it, and nothing is written.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from koikoi.cli.common import add_command

__all__ = ["register", "run_export", "run_import"]

FORMATS = ("guan",)


def register(subparsers: Any) -> None:
    """Add ``koikoi import`` and ``koikoi export``."""
    for verb, func, what, source in (
        ("import", run_import, "game records of other formats to koikoi records", "FILE"),
        ("export", run_export, "koikoi records to other formats", "RECORD"),
    ):
        parser = add_command(
            subparsers, verb, run=func, help=f"convert {what}", description=f"Convert {what}."
        )
        parser.set_defaults(io_format=None, _io_parser=parser)
        sub = parser.add_subparsers(dest="io_format", metavar="FORMAT")
        if verb == "import":
            guan = sub.add_parser(
                "guan",
                help="Guan game files (the KoiKoi-Japan app's JSON) to koikoi records",
                description=(
                    "Convert Guan game files (JSON, one game each, as published with the "
                    "2023 Koi-Koi transformer study) to koikoi records. Each game is replayed "
                    "under the koikoi-japan rules from its recorded deals; every move, round "
                    "result and the final scores are checked. Writes DIR/NAME.record.json."
                ),
            )
            guan.add_argument(
                "files", nargs="+", metavar="FILE", help="Guan game files, or folders of them"
            )
        else:
            guan = sub.add_parser(
                "guan",
                help="koikoi records of koikoi-japan matches to Guan game files",
                description=(
                    "Write koikoi records (of matches under the koikoi-japan rules) as Guan "
                    "game files, after replaying and checking them. Writes DIR/NAME.guan.json."
                ),
            )
            guan.add_argument(
                "files", nargs="+", metavar=source, help="koikoi records, or folders of them"
            )
        guan.add_argument(
            "--out",
            default=".",
            metavar="DIR",
            help="folder to write into (created if missing; default: the current folder)",
        )


def _usage(args: argparse.Namespace) -> int | None:
    if args.io_format is None:
        args._io_parser.print_help()
        return 2
    return None


def _out_folder(out: str) -> Path:
    from koikoi.game.errors import RecordError

    folder = Path(out)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RecordError(f"cannot create {out!r}: {exc.strerror or exc}") from None
    return folder


def _write(path: Path, text: str) -> None:
    from koikoi.game.errors import RecordError

    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise RecordError(f"cannot write {str(path)!r}: {exc.strerror or exc}") from None


def _write_all(out: str, converted: list[tuple[Path, str, str, str]]) -> Path:
    """Write every converted file into the folder ``out`` (created if missing), one
    line each; the folder.

    Args:
        out: the folder.
        converted: ``(source, target file name, text, note)`` for each file.
    """
    folder = _out_folder(out)
    for path, name, text, note in converted:
        target = folder / name
        _write(target, text)
        print(f"{path} -> {target} ({note})")
    return folder


def _rounds(n: int) -> str:
    from koikoi.i18n import tn

    return tn("{n} round", "{n} rounds", n)


def _is_guan_file(path: Path) -> bool:
    from koikoi.game.errors import RecordError
    from koikoi.lab.guan import is_guan, load_guan

    try:
        data, _ = load_guan(path)
    except RecordError:
        return False
    return is_guan(data)


def _converted(
    args: argparse.Namespace,
    convert: Callable[[Path], tuple[Path, str, str, str]],
    done: Callable[[int, Path], str],
) -> int:
    """Convert every input file, then write them all and say what was done.

    Args:
        args: the command's arguments (``files``, ``out``).
        convert: one input file to ``(source, target file name, text, note)``.
        done: the closing line, from the number of files and the folder.
    """
    usage = _usage(args)
    if usage is not None:
        return usage
    from koikoi.lab.guan import json_files

    converted = [convert(path) for path in json_files(args.files)]
    folder = _write_all(args.out, converted)
    print(done(len(converted), folder))
    return 0


def _import_one(path: Path) -> tuple[Path, str, str, str]:
    from koikoi.game.errors import RecordError
    from koikoi.i18n import t
    from koikoi.lab.guan import guan_to_record, is_guan, load_guan

    data, where = load_guan(path)
    if not is_guan(data):
        hint = " (it is a koikoi record)" if isinstance(data, dict) and "format" in data else ""
        raise RecordError(
            f"{where}: not a Guan game file{hint}: expected an object with 'info', "
            "'result' and 'record'"
        )
    record = guan_to_record(data, where=where)
    outcome = t("unfinished") if not record.finished else t("scores {scores}", scores=record.scores)
    note = f"{_rounds(len(record.deals))}, {outcome}"
    return path, f"{path.stem}.record.json", record.to_json(), note


def _export_one(path: Path) -> tuple[Path, str, str, str]:
    from koikoi.game.errors import RecordError
    from koikoi.game.record import load_record
    from koikoi.lab.guan import guan_to_json, record_to_guan

    try:
        record = load_record(path)
    except RecordError as exc:
        if _is_guan_file(path):
            raise RecordError(f"{exc} (it is a Guan game file: see koikoi import guan)") from None
        raise
    try:
        data = record_to_guan(record)
    except RecordError as exc:
        raise RecordError(f"{path}: {exc}") from None
    name = f"{path.stem.removesuffix('.record')}.guan.json"
    return path, name, guan_to_json(data), _rounds(len(data["record"]))


def run_import(args: argparse.Namespace) -> int:
    """Run ``koikoi import FORMAT FILE...``."""
    from koikoi.i18n import tn

    return _converted(
        args,
        _import_one,
        lambda n, folder: tn(
            "imported {n} game into {folder}", "imported {n} games into {folder}", n, folder=folder
        ),
    )


def run_export(args: argparse.Namespace) -> int:
    """Run ``koikoi export FORMAT RECORD...``."""
    from koikoi.i18n import tn

    return _converted(
        args,
        _export_one,
        lambda n, folder: tn(
            "exported {n} record into {folder}",
            "exported {n} records into {folder}",
            n,
            folder=folder,
        ),
    )
