"""Where numba keeps the kernel's compiled code: the user's cache directory.

numba's on-disk cache (``cache=True``) goes next to the source files by default,
that is into the installed package or the source tree. Importing this module
points it at ``$XDG_CACHE_HOME/koikoi/numba`` (else ``~/.cache/koikoi/numba``)
instead, unless ``NUMBA_CACHE_DIR`` is already set, which wins. It sets
``NUMBA_CACHE_DIR`` in the environment, so it must be imported before numba is:
the kernel's numba modules (:mod:`koikoi.kernel._compiled`,
:mod:`koikoi.kernel.batch`) import it first. When numba was imported earlier by
someone else, its configuration is updated too, unless it already names a directory.

>>> from pathlib import Path
>>> numba_cache_dir({"XDG_CACHE_HOME": "/var/cache/me"}, home=Path("/home/me")).as_posix()
'/var/cache/me/koikoi/numba'
>>> numba_cache_dir({}, home=Path("/home/me")).as_posix()
'/home/me/.cache/koikoi/numba'
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

__all__ = ["CACHE_DIR", "ENV_VAR", "configure", "numba_cache_dir"]

ENV_VAR = "NUMBA_CACHE_DIR"
"""The environment variable numba reads its cache directory from."""


def numba_cache_dir(environ: Mapping[str, str], home: Path | None = None) -> Path:
    """The directory for numba's cache, from the environment ``environ``.

    ``NUMBA_CACHE_DIR`` when set (not empty), else ``koikoi/numba`` in
    ``XDG_CACHE_HOME`` when that is an absolute path (the XDG rule), else in
    ``~/.cache`` (``home`` stands for ``~``; default: the user's home).
    """
    chosen = environ.get(ENV_VAR, "")
    if chosen:
        return Path(chosen)
    xdg = environ.get("XDG_CACHE_HOME", "")
    if xdg and Path(xdg).is_absolute():
        base = Path(xdg)
    else:
        base = (home if home is not None else Path.home()) / ".cache"
    return base / "koikoi" / "numba"


def configure() -> Path:
    """Point numba's cache at :func:`numba_cache_dir` of this process; return it.

    Sets ``NUMBA_CACHE_DIR`` when it is not set; when numba is already imported
    and its configuration names no cache directory, sets that too.
    """
    path = numba_cache_dir(os.environ)
    if not os.environ.get(ENV_VAR):
        os.environ[ENV_VAR] = str(path)
    config = sys.modules.get("numba.core.config")
    if config is not None and getattr(config, "CACHE_DIR", None) == "":
        setattr(config, "CACHE_DIR", str(path))  # noqa: B010  (an untyped module)
    return path


CACHE_DIR: Path = configure()
"""The directory this process's numba cache uses (chosen at import)."""
