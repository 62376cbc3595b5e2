"""Fetch dataset files from OpenML through the ``openml`` package, failing fast when offline.

The ``openml`` package keeps its downloads in a cache; ours lives in ``db/cache/openml`` (or
``$ENCBENCH_CACHE/openml``). A dataset already in that cache is read without any network access.
Otherwise a TCP connection to the server is tried first (a few seconds at most) and the
package is told to try once (``set_retry_policy("robot", 1)``), so an unreachable OpenML gives a
:class:`~encbench.data.errors.DatasetError` within seconds instead of ten seconds of retries or a
hang, with a message saying how to work offline (a bundled copy or a local file).

We download the ARFF file (not OpenML's Parquet mirror) and read it with our own reader, so an
OpenML dataset is processed exactly like its bundled copy or a local file.
"""
from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

from encbench import resources
from encbench.data.bundled import bundled_names
from encbench.data.errors import DatasetError

logger = logging.getLogger(__name__)

DEFAULT_CACHE_ROOT = resources.data_dir() / "cache"
#: Seconds allowed for the reachability check of the OpenML server.
CONNECT_TIMEOUT = 3.0

_CONFIG_LOCK = threading.RLock()


def cache_root() -> Path:
    """Root of encbench's caches: ``$ENCBENCH_CACHE`` if set, else ``db/cache`` in a checkout or
    ``cache`` in the per-user data directory (:mod:`encbench.resources`)."""
    return resources.default_cache_root()


def openml_cache_dir() -> Path:
    """Where the ``openml`` package caches downloads: ``<cache root>/openml``."""
    return cache_root() / "openml"


@dataclass(frozen=True)
class OpenMLFile:
    """A downloaded (or cached) OpenML data file and the metadata needed to use it."""

    openml_id: int
    name: str
    path: Path
    default_target: str | None
    row_id_attribute: str | None
    ignore_attributes: tuple[str, ...]


def offline_hint(openml_id: int | str) -> str:
    """How to work without OpenML, for error messages."""
    return (
        "To work offline use a local copy: a bundled dataset (load_dataset('bundled:<name>') or "
        f"--datasets bundled:<name>; bundled: {bundled_names()}), or a file you downloaded "
        f"yourself, e.g. the ARFF of dataset {openml_id} from openml.org "
        "(load_dataset('path/to/file.arff:<target>') or --datasets path/to/file.csv:<target>)."
    )


def _unreachable(openml_id: int, server: str, reason: str) -> DatasetError:
    return DatasetError(
        f"OpenML is unreachable ({server}: {reason}), so dataset {openml_id} cannot be "
        f"downloaded. {offline_hint(openml_id)}")


def _check_reachable(server: str, timeout: float) -> None:
    """Open (and close) a TCP connection to the server or its proxy; OSError if impossible."""
    parsed = urlparse(server)
    host, port = parsed.hostname, parsed.port or (443 if parsed.scheme == "https" else 80)
    proxy = urllib.request.getproxies().get(parsed.scheme)
    if proxy and not urllib.request.proxy_bypass(host or ""):
        proxy_url = urlparse(proxy if "://" in proxy else f"http://{proxy}")
        host, port = proxy_url.hostname, proxy_url.port or 80
    if not host:
        raise OSError(f"no host in server URL {server!r}")
    with socket.create_connection((host, port), timeout=timeout):
        pass


@contextlib.contextmanager
def _openml_config(cache_dir: Path, server: str | None):
    """Point the ``openml`` package at our cache (and server), fail-fast retries; restore after."""
    import openml

    config = openml.config
    with _CONFIG_LOCK:
        saved = config.get_config_as_dict()
        saved_env = os.environ.get("OPENML_SKIP_PARQUET")
        try:
            config.set_root_cache_directory(cache_dir)
            if server is not None:
                config.server = server
            config.set_retry_policy("robot", 1)
            # ARFF only: the Parquet mirror is a second host to be unreachable and another format.
            os.environ["OPENML_SKIP_PARQUET"] = "true"
            yield config
        finally:
            config.set_root_cache_directory(saved["cachedir"])
            config.server = saved["server"]
            config.set_retry_policy(saved["retry_policy"], saved["connection_n_retries"])
            if saved_env is None:
                os.environ.pop("OPENML_SKIP_PARQUET", None)
            else:
                os.environ["OPENML_SKIP_PARQUET"] = saved_env


def dataset_cache_dir(openml_id: int, *, cache_dir: str | os.PathLike | None = None,
                      server: str | None = None) -> Path:
    """The directory where ``openml`` keeps dataset ``openml_id`` for this cache and server.

    Useful to pre-populate a cache (``description.xml`` and ``dataset.arff``) for offline use.
    """
    with _openml_config(Path(cache_dir) if cache_dir else openml_cache_dir(), server) as config:
        return Path(config.get_cache_directory()) / "datasets" / str(int(openml_id))


def fetch_openml(openml_id: int | str, *, cache_dir: str | os.PathLike | None = None,
                 server: str | None = None,
                 connect_timeout: float = CONNECT_TIMEOUT) -> OpenMLFile:
    """Download (or find in the cache) the ARFF file of an OpenML dataset.

    Parameters
    ----------
    openml_id : int or str
        The OpenML dataset id.
    cache_dir : path-like, optional
        Root of the ``openml`` cache; default :func:`openml_cache_dir`.
    server : str, optional
        OpenML API URL (default: the package's, ``https://www.openml.org/api/v1/xml``).
    connect_timeout : float
        Seconds allowed to reach the server before giving up.

    Raises
    ------
    DatasetError
        OpenML unreachable (the message says how to use a local file or a bundled copy), or the
        server refused the dataset.
    """
    try:
        openml_id = int(openml_id)
    except (TypeError, ValueError):
        raise DatasetError(f"an OpenML id is a whole number, got {openml_id!r}") from None
    cache = Path(cache_dir) if cache_dir else openml_cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    import openml
    import requests

    with _openml_config(cache, server) as config:
        server_url = config.server
        did_dir = Path(config.get_cache_directory()) / "datasets" / str(openml_id)
        cached = (did_dir / "description.xml").is_file() and (did_dir / "dataset.arff").is_file()
        if not cached:
            try:
                _check_reachable(server_url, connect_timeout)
            except OSError as exc:
                raise _unreachable(openml_id, server_url, str(exc) or type(exc).__name__) \
                    from None
        try:
            dataset = openml.datasets.get_dataset(
                openml_id, download_data=True, download_qualities=False,
                download_features_meta_data=False)
        except (requests.exceptions.RequestException, ConnectionError, TimeoutError) as exc:
            raise _unreachable(openml_id, server_url, type(exc).__name__) from None
        except openml.exceptions.OpenMLServerException as exc:
            raise DatasetError(f"OpenML refused dataset {openml_id}: {exc}") from None
        except openml.exceptions.PyOpenMLError as exc:
            raise DatasetError(f"cannot get OpenML dataset {openml_id}: {exc}") from None
    if not dataset.data_file:
        raise DatasetError(f"OpenML gave no data file for dataset {openml_id}")
    ignore = dataset.ignore_attribute or []
    if isinstance(ignore, str):
        ignore = [ignore]
    logger.info("OpenML dataset %d (%s) at %s", openml_id, dataset.name, dataset.data_file)
    return OpenMLFile(openml_id=openml_id, name=str(dataset.name), path=Path(dataset.data_file),
                      default_target=dataset.default_target_attribute or None,
                      row_id_attribute=dataset.row_id_attribute or None,
                      ignore_attributes=tuple(str(a) for a in ignore))
