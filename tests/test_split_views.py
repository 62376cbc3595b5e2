"""The split in the app: filters, Sensitivity over cv/time, the Run page's plain
statement, leakage checks of the upload validation, time-column proposals."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pandas as pd
import pytest
from pagetest import charts, open_page, texts
from test_engine_split import drifting_frame

from encbench import vocab
from encbench.views import sensitivity
from encbench.views.run_result import compare_splits, split_headline
from encbench.data import prepare
from encbench.engine import Grid, run_grid
from encbench.engine.splits import late_level_warnings, time_column_candidates

COMMON = dict(encoders=["Drop", "MT"], models=["DT"], scorings=["BAcc"])


@pytest.fixture(scope="module")
def split_db(published_db, tmp_path_factory):
    """The published database plus a cv and a time run of the drifting dataset."""
    root = tmp_path_factory.mktemp("split")
    db = root / "split.duckdb"
    shutil.copyfile(published_db, db)
    path = root / "drift.csv"
    drifting_frame().to_csv(path, index=False)
    for split in ("cv:day", "time:day"):
        run_grid(Grid(datasets=[f"{path}:y"], split=split, **COMMON), db_path=db, workers=0)
    return db


@pytest.fixture()
def split_env(split_db, monkeypatch):
    monkeypatch.setenv("ENCBENCH_DB", str(split_db))


# -- pure functions --------------------------------------------------------------------------------
def _scores(cv: dict, time: dict) -> pd.DataFrame:
    rows = [dict(model="DT", tuning="no", scoring="BAcc", encoder=e, cv_score=v, split=s)
            for s, values in (("cv", cv), ("time", time)) for e, v in values.items()]
    return pd.DataFrame(rows)


def test_compare_splits_says_whether_the_best_encoders_change():
    changed = compare_splits(_scores({"MT": 0.7, "Drop": 0.6, "OH": 0.5}, {"MT": 0.5, "Drop": 0.6, "OH": 0.55}))
    assert [c.changed for c in changed] == [True]
    assert changed[0].best_cv == ("MT",) and changed[0].best_time == ("Drop",)
    assert "the best encoders change" in changed[0].summary and "MT" in changed[0].summary
    assert "change between cv and the time split on your data in every" in split_headline(changed)
    same = compare_splits(_scores({"MT": 0.7, "Drop": 0.6}, {"MT": 0.65, "Drop": 0.5}))
    assert not same[0].changed and "do not change" in split_headline(same)
    assert compare_splits(_scores({"MT": 0.7}, {})) == []  # only one split: nothing to say
    assert "No combination" in split_headline([])


def test_sensitivity_view_varies_the_split_on_shared_datasets():
    rows = pd.concat([
        _scores({"MT": 0.7, "Drop": 0.6, "OH": 0.5}, {"MT": 0.5, "Drop": 0.6, "OH": 0.55}).assign(dataset="d"),
        _scores({"MT": 0.1, "Drop": 0.9, "OH": 0.5}, {}).assign(dataset="only-cv"),
    ])
    fixed = {f: sensitivity.AVERAGE_ALL for f in vocab.FACTORS}
    result = sensitivity.sensitivity_view(rows, "split", fixed)
    assert result.labels == ("cv", "time")
    assert result.jaccard.loc["cv", "time"] == 0.0  # MT best under cv (on "d" only), Drop forward
    with pytest.raises(ValueError, match="mix the splits"):
        sensitivity.sensitivity_view(rows, "model", fixed)


def test_single_feature_auc_flags_leaks_and_not_ordinary_columns():
    frame = drifting_frame(400)
    rng = np.random.default_rng(1)
    frame["after"] = np.where(frame["y"] == "yes", 1.0, 0.0) + rng.normal(0, 0.01, len(frame))
    frame["status"] = np.where(frame["y"] == "yes", "closed", "open")
    frame.loc[0, "status"] = "pending"  # three levels: not the one-to-one check's case
    report = prepare(frame.drop(columns=["day"]), "y").report
    leaks = [w for w in report.warnings if "single-feature AUC" in w]
    assert len(leaks) == 2 and "'after'" in leaks[0] and "'status'" in leaks[1]
    assert {"after", "status"} <= set(report.suspect_columns)
    assert "x" not in report.suspect_columns and "campaign" not in report.suspect_columns


def test_late_levels_are_warned_about():
    frame = drifting_frame(400)
    (warning,) = late_level_warnings(frame, "day", ["campaign"])
    assert warning.startswith("column 'campaign': 16 level(s) appear only after day = ")
    stable = frame.assign(campaign=np.where(frame.index % 2, "a", "b"))
    assert late_level_warnings(stable, "day", ["campaign"]) == []


def test_time_column_candidates():
    frame = drifting_frame(100).assign(seq=range(100), code=[f"{i % 7}" for i in range(100)])
    assert time_column_candidates(frame, exclude=["y"]) == ["day", "seq"]
    assert time_column_candidates(frame[["campaign", "x"]]) == []


# -- pages -----------------------------------------------------------------------------------------
def test_published_only_views_offer_no_split(published_db, monkeypatch):
    monkeypatch.setenv("ENCBENCH_DB", str(published_db))
    at = open_page("consensus")
    assert not [r for r in at.radio if r.key == "split"]


def test_sensitivity_varies_the_split(split_env):
    at = open_page("sensitivity", {"vary": "split", "origin": "local"})
    spec = json.dumps(json.loads(charts(at)[0].proto.spec))
    assert '"cv"' in spec and '"time"' in spec
    assert "Varying **split**" in texts(at)


def test_sensitivity_on_published_results_explains_where_time_results_are(split_env):
    at = open_page("sensitivity", {"vary": "split"})
    assert "choose *both* or *local*" in texts(at)


@pytest.mark.parametrize("page", ["explorer", "consensus"])
def test_filters_show_time_results(split_env, page):
    at = open_page(page, {"origin": "local", "split": "time", "model": "DT", "metric": "BAcc"})
    assert [r for r in at.radio if r.key == "split"][0].value == "time"
    assert at.dataframe, texts(at)
    cv = open_page(page, {"origin": "local", "model": "DT", "metric": "BAcc"})
    assert [r for r in cv.radio if r.key == "split"][0].value == "cv"  # the default


def test_a_run_result_export_names_the_split_of_its_folds(split_db):
    """The provenance of a run result's export says whether its folds were cv or time."""
    from encbench.store import Reader, queries
    from pages.ui.run_panels import result_filters

    reader = Reader(split_db)
    try:
        runs = queries.list_runs(reader)
        local = runs[runs["origin"] == "local"]["run_id"].tolist()
        splits = {}
        for run_id in local:
            rows = queries.load_scores(reader, run_ids=[run_id])
            filters = result_filters(run_id, "mine.csv", rows["dataset"].iloc[0], rows)
            assert filters["run"] == run_id and filters["model"] == ["DT"] and filters["metric"] == ["BAcc"]
            assert filters["dataset"] == "mine.csv"
            splits[run_id] = filters["split"]
    finally:
        reader.close()
    assert sorted(splits.values()) == ["cv", "time"]


def test_replicability_offers_the_split_once_time_results_exist(split_env):
    """Replicability reads the published protocol's cv rows unless the user picks time ones."""
    cv = open_page("replicability")
    assert [r for r in cv.radio if r.key == "split"][0].value == "cv"
    assert charts(cv), texts(cv)
    time_split = open_page("replicability", {"split": "time"})
    assert [r for r in time_split.radio if r.key == "split"][0].value == "time"
    assert "No results for LogReg / no / AUC" in texts(time_split)   # time rows are local only
    local = open_page("replicability", {"split": "time", "origin": "local", "model": "DT", "metric": "BAcc"})
    assert "1 dataset(s) with results: at least 4 are needed" in texts(local)


def test_the_left_out_count_equals_what_both_mixes_in_plus_the_other_split(split_env):
    """The database holds a cv and a time run (2 score rows each): the published view leaves 4
    local rows out; *both* mixes in the 2 cv rows and says that the 2 time rows are left out."""
    published = texts(open_page("overview"))
    assert "4 local score rows (1 dataset(s), 2 run(s)) are left out" in published
    both = " ".join(w.value for w in open_page("overview", {"origin": "both"}).warning)
    assert "Local results are mixed in: 2 local score rows" in both
    assert ("2 local score rows of another split (2 time) are left out: this view shows split cv; "
            "the Results explorer and Consensus rankings show them under *Evaluation split*.") in both
    explorer = " ".join(w.value for w in open_page("explorer", {"origin": "both", "model": "DT",
                                                                "metric": "BAcc"}).warning)
    assert "2 local score rows of another split (2 time) are left out: this view shows split cv, " \
           "the other is chosen under *Evaluation split*." in explorer
    timed = " ".join(w.value for w in open_page("explorer", {"origin": "both", "model": "DT", "metric": "BAcc",
                                                             "split": "time"}).warning)
    assert "2 local score rows of another split (2 cv) are left out: this view shows split time" in timed
