"""Where encbench finds its read-only resources and keeps its writable data.

encbench runs in two layouts:

- **a checkout** (this repository, possibly installed editable): the SQL migrations live in
  ``db/migrations``, the published results in ``db/seed``, the bundled datasets in
  ``data/bundled``, and the database, uploads, queue and caches go to ``db/``;
- **an installed package** (a wheel): the same resources travel inside the package as
  ``encbench/_resources/{migrations,seed,bundled}`` (copied there when the wheel is built, see
  ``setup.py``), and the writable data goes to a per-user data directory
  (:func:`user_data_dir`), because site-packages is neither private nor writable.

Every lookup of a resource or of the data directory goes through this module, so no other
module counts ``parents[...]`` up from its own file.

Environment variables: ``ENCBENCH_DB`` (the database file; its directory also holds uploads and
the queue), ``ENCBENCH_CACHE`` (the cache root), ``ENCBENCH_HOME`` (the data directory of an
installed package, instead of the per-user default).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

#: the ``encbench`` package directory.
PACKAGE_DIR = Path(__file__).resolve().parent
#: resource name -> path relative to a checkout's root.
CHECKOUT_RESOURCES = {
    "migrations": Path("db") / "migrations",
    "seed": Path("db") / "seed",
    "bundled": Path("data") / "bundled",
}
#: where the resources travel inside a built package (relative to :data:`PACKAGE_DIR`).
PACKAGED_RESOURCES = Path("_resources")


def checkout_root() -> Path | None:
    """The repository root when encbench runs from a checkout (editable installs included), else None.

    A checkout is recognised by the project file and the migrations beside the package.
    """
    root = PACKAGE_DIR.parent
    if (root / "pyproject.toml").is_file() and (root / CHECKOUT_RESOURCES["migrations"]).is_dir():
        return root
    return None


def resource_dir(name: str) -> Path:
    """The directory of a read-only resource: ``"migrations"``, ``"seed"`` or ``"bundled"``.

    From a checkout, the repository's own directory (so edits there take effect at once);
    otherwise the copy inside the installed package.
    """
    if name not in CHECKOUT_RESOURCES:
        raise ValueError(f"unknown resource: got {name!r}, expected one of {sorted(CHECKOUT_RESOURCES)}")
    root = checkout_root()
    if root is not None:
        return root / CHECKOUT_RESOURCES[name]
    return PACKAGE_DIR / PACKAGED_RESOURCES / name


def user_data_dir() -> Path:
    """The per-user data directory of an installed encbench (``$ENCBENCH_HOME`` overrides it).

    Linux and other POSIX: ``$XDG_DATA_HOME/encbench`` (default ``~/.local/share/encbench``);
    macOS: ``~/Library/Application Support/encbench``; Windows: ``%LOCALAPPDATA%\\encbench``.
    """
    env = os.environ.get("ENCBENCH_HOME")
    if env:
        return Path(env).expanduser()
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
        return Path(base) / "encbench"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "encbench"
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base).expanduser() / "encbench"


def data_dir() -> Path:
    """Where the default database, uploads, queue and caches live: ``db/`` in a checkout, else
    :func:`user_data_dir`. Not created here (the writer creates what it writes)."""
    root = checkout_root()
    return root / "db" if root is not None else user_data_dir()


def default_db_path() -> Path:
    """The results database: ``$ENCBENCH_DB`` if set, else ``encbench.duckdb`` in :func:`data_dir`."""
    env = os.environ.get("ENCBENCH_DB")
    return Path(env).expanduser() if env else data_dir() / "encbench.duckdb"


def default_cache_root() -> Path:
    """Root of encbench's caches: ``$ENCBENCH_CACHE`` if set, else ``cache`` in :func:`data_dir`."""
    env = os.environ.get("ENCBENCH_CACHE")
    return Path(env).expanduser() if env else data_dir() / "cache"


def subprocess_env(env: dict | None = None) -> dict:
    """``env`` (default: this process's) made to import this same encbench in a child process.

    An installed package is found by any Python of its environment; a bare checkout that is not
    installed needs its root on ``PYTHONPATH``.
    """
    env = dict(os.environ if env is None else env)
    root = checkout_root()
    if root is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), env.get("PYTHONPATH")]))
    return env


def subprocess_cwd() -> str | None:
    """Working directory for child processes: the checkout's root, else None (inherit)."""
    root = checkout_root()
    return str(root) if root is not None else None
