"""benchmarks/curate_suites.py: its rules on small hand-made tables."""
import importlib.util
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from encbench.data import rdatasets_source as rs

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "curate_suites.py"
_spec = importlib.util.spec_from_file_location("curate_suites", SCRIPT)
cs = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("curate_suites", cs)  # dataclasses look their module up there
_spec.loader.exec_module(cs)


def _table(n=400, seed=0):
    """A binary target ``y`` with: an integer id (unique per row), a text ``customer_id`` of
    100 values, a copy of the target with 1 % noise (``echo``), a column given only when y is
    'yes' (``gap``), a city of 60 levels, and plain noise."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.4, "yes", "no")
    echo = np.where(rng.random(n) < 0.01, 1 - (y == "yes"), (y == "yes")).astype(float)
    return pd.DataFrame({
        "row": np.arange(n) * 7 + 3,
        "customer_id": [f"c{i % 100}" for i in range(n)],
        "echo": echo + rng.normal(0, 0.01, n),
        "gap": np.where(y == "yes", rng.normal(size=n), np.nan),
        "city": [f"city{int(i)}" for i in rng.integers(0, 60, n)],
        "noise": rng.normal(size=n),
        "y": y,
    })


def test_identifiers_and_leaks_are_left_out_with_their_reason():
    """On a hand-made binary table: the unique integer column and the id-named one are left out
    as identifiers, the noisy copy of the target and the column missing exactly when y is 'no'
    as leaks; the city (60 levels) stays and is the widest feature; the table passes."""
    v = cs.judge(cs.Candidate(cs.B, "AER", "Example", "y"), frame=_table())
    assert v.ok, v.failures
    assert set(v.drop) == {"row", "customer_id", "echo", "gap"}
    assert "all 400 values distinct" in v.drop["row"]
    assert "named like an identifier, 100 distinct values" in v.drop["customer_id"]
    assert "leaks the target" in v.drop["echo"] and "by where it is missing" in v.drop["gap"]
    assert (v.task, v.rows, v.max_levels, v.n_features) == ("binary", 400, 60, 2)
    entry = v.entry()
    assert entry.drop_columns == ("row", "customer_id", "echo", "gap")
    assert entry.licence == "GPL-2 | GPL-3" and entry.name == "example-y"


def test_keep_spares_a_column_the_identifier_rules_flag():
    """A column kept by hand (a measurement distinct in every row) is not left out."""
    v = cs.judge(cs.Candidate(cs.B, "AER", "Example", "y", keep={"row": "a measurement"}),
                 frame=_table())
    assert v.ok and "row" not in v.drop


def test_rules_that_fail_a_candidate_say_which():
    """Reserved items, too few rows, the wrong task for the suite, a package whose licence is
    not checked and a hand skip each fail with their rule named."""
    reserved = cs.judge(cs.Candidate(cs.M, "AER", "BankWages", "job"))
    assert reserved.failures == ["reserved for independent evaluation (rdatasets_source.RESERVED)"]
    copy = cs.judge(cs.Candidate(cs.B, "openintro", "nycflights", "carrier"))
    assert "nycflights13::flights" in copy.failures[0]
    small = cs.judge(cs.Candidate(cs.B, "AER", "Example", "y"), frame=_table(150))
    assert any(f.startswith("rows: 150, outside 200..20000") for f in small.failures)
    wrong = cs.judge(cs.Candidate(cs.M, "AER", "Example", "y"), frame=_table())
    assert any("the target reads as binary, the suite is multiclass" in f for f in wrong.failures)
    unknown = cs.judge(cs.Candidate(cs.B, "nopkg", "Example", "y"), frame=_table())
    assert unknown.failures == ["licence of nopkg not checked on CRAN"]
    skipped = cs.judge(cs.Candidate(cs.B, "AER", "Example", "y", skip="compute"))
    assert skipped.failures == ["left out by hand: compute"]


def test_a_large_table_is_subsampled_with_the_fixed_seed(monkeypatch):
    """Over MAX_ROWS rows with a target, the candidate is judged on, and records, the same
    seeded subsample read_item loads."""
    monkeypatch.setattr(cs, "MAX_ROWS", 300)
    v = cs.judge(cs.Candidate(cs.B, "AER", "Example", "y"), frame=_table())
    assert v.ok and v.subsample == 300 and v.rows == 300 and v.entry().subsample == 300


def test_near_duplicates_are_found_whatever_the_names_types_and_labels():
    """A copy with renamed columns, relabelled levels, integer codes for text and one row more is
    a near-duplicate; a different table of the same shape is not."""
    frame = _table()
    copy = frame.rename(columns=str.upper).assign(
        Y=frame["y"].map({"yes": 1, "no": 0}),
        CITY=frame["city"].str.replace("city", "town"))
    copy = pd.concat([copy, copy.iloc[[0]]], ignore_index=True)
    other = _table(seed=5).assign(noise=np.arange(400.0), echo=np.arange(400.0) ** 2)
    other = other.rename(columns=lambda c: c + "_x")
    assert cs.near_duplicate(cs.fingerprint(frame), cs.fingerprint(copy))
    assert not cs.near_duplicate(cs.fingerprint(frame), cs.fingerprint(other))


def test_curate_keeps_the_first_of_two_copies_and_one_item_per_suite():
    """The manifest-wide rules on real items: modeldata's penguins is palmerpenguins' copy (kept
    first, as a protected entry), and one item is not taken twice in a suite."""
    protected = [e for e in rs.manifest() if e.name == "penguins-species"]
    verdicts = cs.curate([cs.Candidate(cs.M, "modeldata", "penguins", "species"),
                          cs.Candidate(cs.M, "palmerpenguins", "penguins", "island")], protected)
    assert verdicts[0].failures == ["near-duplicate of palmerpenguins/penguins"]
    assert verdicts[1].failures == ["palmerpenguins/penguins is already in encbench-multiclass"]


def test_study_lookalikes_are_named():
    """An item named like a study dataset, or of a study dataset's shape, is flagged with it."""
    assert "Titanic" in cs.study_lookalike("carData", "TitanicSurvival", 1309, 4)
    assert "credit-g" in cs.study_lookalike("x", "anything", 1000, 21)
    assert cs.study_lookalike("carData", "Wells", 3020, 5) is None


def test_write_manifest_rebuilds_only_the_named_suites(tmp_path):
    """Writing one suite keeps its protected entries as they are, adds the passing candidates,
    and leaves the other suites' entries untouched; the file reads back the same."""
    current = list(rs.manifest())
    v = cs.judge(cs.Candidate(cs.B, "AER", "Example", "y"), frame=_table())
    path = tmp_path / "manifest.csv"
    written = cs.write_manifest(path, current, [v], {cs.B})
    assert rs.read_manifest(path) == tuple(written)
    others = [e for e in current if e.suite != cs.B]
    assert sorted(e.name for e in written if e.suite != cs.B) == sorted(e.name for e in others)
    assert [e.name for e in written if e.suite == cs.B] == ["example-y"]
    assert {e.name: e for e in written}["wage-wage"] == {e.name: e for e in current}["wage-wage"]
