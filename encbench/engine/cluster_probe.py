"""Whether a Dask cluster can run encbench's tasks, checked before any task is sent.

Every worker and the scheduler run a small probe (:func:`check_cluster`); a process that cannot
import encbench or a library it needs, or holds another encbench (version or sources), stops the
run with one message listing what is missing where and how to install it (:func:`install_hint`).
"""
from __future__ import annotations

import concurrent.futures
import logging
import time
from collections.abc import Mapping, Sequence

from encbench import __version__
from encbench.resources import checkout_root

log = logging.getLogger(__name__)


#: modules a Dask worker (and the scheduler, which unpickles the task graph) must import.
CLUSTER_MODULES = ("encbench", "numpy", "pandas", "sklearn", "scipy", "category_encoders", "lightgbm",
                   "skrub", "skopt")


def _make_probe():
    """A function describing the environment it runs in (pickled by value: it must run even
    where ``encbench`` cannot be imported, to say so)."""

    def probe(modules):
        import hashlib
        import importlib
        import pathlib
        import platform
        import sys

        found = {}
        for name in modules:
            try:
                module = importlib.import_module(name)
            except Exception as exc:  # noqa: BLE001 - reported, not raised
                found[name] = {"error": f"{type(exc).__name__}: {exc}"}
                continue
            found[name] = {"version": str(getattr(module, "__version__", "?"))}
            if name == "encbench":  # same version string, other code? compare the sources
                digest = hashlib.sha256()
                root = pathlib.Path(module.__file__).parent
                for path in sorted(root.rglob("*.py")):
                    digest.update(str(path.relative_to(root)).encode())
                    digest.update(path.read_bytes())
                found[name]["sources"] = digest.hexdigest()[:16]
        return {"python": platform.python_version(), "executable": sys.executable, "modules": found}

    return probe


def environment_problems(local: dict, remote: Mapping[str, dict]) -> tuple[list[str], list[str]]:
    """Compare probe results of cluster processes with this process's: (errors, warnings).

    Errors: a module that does not import, another encbench (version or sources), another Python
    minor version (pickles may not load). Warnings: other versions of the other libraries.
    """
    errors, warnings = [], []
    py = ".".join(local["python"].split(".")[:2])
    for where, info in remote.items():
        if isinstance(info, BaseException) or not isinstance(info, Mapping):
            errors.append(f"{where}: the environment check failed: {info!r}")
            continue
        if ".".join(info["python"].split(".")[:2]) != py:
            errors.append(f"{where}: Python {info['python']} ({info['executable']}), this process "
                          f"runs {local['python']}")
        for name, mine in local["modules"].items():
            theirs = info["modules"].get(name)
            if theirs is None:              # not probed there (custom encoders: workers only)
                continue
            if "error" in theirs:
                errors.append(f"{where}: cannot import {name} ({theirs['error']}) in {info['executable']}")
            elif name == "encbench" and (theirs["version"], theirs.get("sources")) != (
                    mine["version"], mine.get("sources")):
                errors.append(f"{where}: encbench {theirs['version']} (sources {theirs.get('sources')}), "
                              f"this process has {mine['version']} (sources {mine.get('sources')})")
            elif theirs["version"] != mine["version"]:
                warnings.append(f"{where}: {name} {theirs['version']}, this process has {mine['version']}")
    return errors, warnings


def check_cluster(client, *, wait_for_workers: float = 10.0, extra_modules: Sequence[str] = ()) -> None:
    """Stop before any task is sent if the cluster cannot run encbench's tasks.

    Every worker and the scheduler run a small probe; a process that cannot import encbench or
    a library it needs, or holds another encbench, makes this raise one ValueError listing
    what is missing where and how to install it. Other library versions are logged warnings.
    ``extra_modules`` (the modules of a grid's custom encoders) must import on every worker
    too; the scheduler only routes tasks and is not asked for them.
    """
    extra_modules = tuple(m for m in dict.fromkeys(extra_modules) if m not in CLUSTER_MODULES)
    probe = _make_probe()
    try:
        client.wait_for_workers(1, timeout=wait_for_workers)
    except (TimeoutError, OSError) as exc:
        raise ValueError(f"the Dask scheduler has no workers (waited {wait_for_workers:g} s): {exc}; "
                         f"start some with `dask worker <scheduler address>`") from None
    for _ in range(3):
        # the probes import every library once per process (seconds each): the workers', the
        # scheduler's and this process's run at the same time
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            on_workers = pool.submit(client.run, probe, CLUSTER_MODULES + extra_modules, on_error="return")
            on_scheduler = pool.submit(client.run_on_scheduler, probe, CLUSTER_MODULES)
            local = probe(CLUSTER_MODULES + extra_modules)
            remote = {f"worker {addr}": info for addr, info in dict(on_workers.result()).items()}
            try:
                remote["scheduler"] = on_scheduler.result()
            except Exception as exc:  # noqa: BLE001 - reported with the rest
                remote["scheduler"] = exc
        errors, warnings = environment_problems(local, remote)
        # Nodes sharing one source tree (an editable install on a shared disk) hash it at
        # slightly different moments: a file saved in between looks like another encbench.
        # Probe again before calling that a mismatch; real differences persist.
        if not errors or not all("(sources " in e for e in errors):
            break
        log.info("Dask cluster: encbench sources differ, probing again (files being edited?)")
        time.sleep(1.0)
    for message in warnings:
        log.warning("Dask cluster: %s", message)
    if errors:
        listed = "\n".join(f"- {e}" for e in errors)
        custom = [m for m in extra_modules if any(isinstance(info, Mapping) and "error" in info["modules"].get(m, {})
                                                  for info in remote.values())]
        hint = (f"Custom encoder module(s) {', '.join(custom)}: install their package in every "
                f"worker's environment, or put them on the workers' PYTHONPATH. " if custom else "")
        raise ValueError(
            f"the Dask cluster cannot run encbench tasks ({len(errors)} problems):\n{listed}\n"
            f"{hint}{install_hint(local['python'])}; then restart the scheduler and the workers "
            f"(docs/user-guide.md: 'Running on a cluster')")


def install_hint(python: str) -> str:
    """How to put this encbench on a cluster node (a checkout's commands, or the wheel's)."""
    root = checkout_root()
    if root is not None:
        how = (f"`pip install -r {root / 'requirements.txt'}` and `pip install --no-deps -e {root}` "
               f"(or a wheel built by `pip wheel --no-deps {root}`)")
    else:
        how = (f"`pip install encbench-{__version__}-py3-none-any.whl` (the wheel this process was "
               f"installed from, built by `make wheel` in a checkout)")
    return (f"Install the same encbench in every worker's and the scheduler's environment, with "
            f"Python {python}: {how}")
