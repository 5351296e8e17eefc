#!/usr/bin/env python3
"""Fetch the pinned axe-core (the accessibility checker of the browser tests).

Usage::

    python scripts/fetch-axe.py [--dest .cache/axe-core]

Downloads the ``axe-core`` tarball of :data:`VERSION` from the npm registry,
checks it against the registry's integrity hash (:data:`INTEGRITY`, a Subresource
Integrity ``sha512-...`` string) and writes its ``axe.min.js`` to ``DEST``
(default ``.cache/axe-core/axe.min.js``, gitignored). Does nothing when that file
is already there and carries the pinned version. Standard library only, so that a
fresh machine with Python and make can run it (``make test`` does). axe-core's
code is never committed to this repository.

To move to a new version, take its ``dist.tarball`` and ``dist.integrity`` from
``npm view axe-core@VERSION dist`` and change the three constants below.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import io
import sys
import tarfile
import urllib.request
from pathlib import Path
from typing import Final

VERSION: Final = "4.10.3"
"""The axe-core release the tests run."""
TARBALL: Final = f"https://registry.npmjs.org/axe-core/-/axe-core-{VERSION}.tgz"
INTEGRITY: Final = (
    "sha512-Xm7bpRXnDSX2YE2YFfBk2FnF0ep6tmG7xPh8iHee8MIcrgq762Nkce856dYtJYLkuIoYZvGfTs/"
    "PbZhideTcEg=="
)
"""The registry's ``dist.integrity`` of :data:`TARBALL`."""
MEMBER: Final = "package/axe.min.js"
ROOT: Final = Path(__file__).resolve().parent.parent
DEFAULT_DEST: Final = ROOT / ".cache" / "axe-core"


def check_integrity(data: bytes, integrity: str = INTEGRITY) -> None:
    """Raises ``ValueError`` unless ``data`` has the Subresource Integrity hash ``integrity``.

    Args:
        data: The downloaded bytes.
        integrity: ``"sha512-"`` followed by the base64 digest.

    Raises:
        ValueError: The algorithm is not sha512, or the digest differs (naming both).
    """
    algorithm, _, expected = integrity.partition("-")
    if algorithm != "sha512":
        raise ValueError(f"integrity {integrity!r}: only sha512 is supported")
    got = base64.b64encode(hashlib.sha512(data).digest()).decode("ascii")
    if got != expected:
        raise ValueError(
            f"{TARBALL}: integrity check failed: expected sha512-{expected}, got sha512-{got}"
        )


def axe_source(tarball: bytes) -> bytes:
    """The ``axe.min.js`` inside an axe-core npm tarball.

    Raises:
        ValueError: The tarball has no ``package/axe.min.js``.
    """
    with tarfile.open(fileobj=io.BytesIO(tarball), mode="r:gz") as archive:
        try:
            member = archive.extractfile(MEMBER)
        except KeyError:
            member = None
        if member is None:
            raise ValueError(f"{TARBALL} has no {MEMBER}")
        return member.read()


def fetch(dest: Path = DEFAULT_DEST) -> Path:
    """Make sure ``dest/axe.min.js`` holds axe-core :data:`VERSION`; returns its path."""
    target = dest / "axe.min.js"
    stamp = dest / "VERSION"
    if target.exists() and stamp.exists() and stamp.read_text().strip() == VERSION:
        return target
    with urllib.request.urlopen(TARBALL, timeout=60) as response:
        data = response.read()
    check_integrity(data)
    source = axe_source(data)
    dest.mkdir(parents=True, exist_ok=True)
    target.write_bytes(source)
    stamp.write_text(VERSION + "\n")
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--dest", type=Path, default=DEFAULT_DEST, help="folder for axe.min.js")
    args = parser.parse_args(argv)
    try:
        path = fetch(args.dest)
    except (OSError, ValueError) as error:
        print(f"fetch-axe: {error}", file=sys.stderr)
        return 1
    print(f"axe-core {VERSION}: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
