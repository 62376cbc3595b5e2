"""The time split: forward folds, the split as a factor of the results, and a dataset
built so that a target encoder leaks under stratified folds but not forward in time."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from encbench.data import DatasetError
from encbench.engine import Grid, plan, run_grid
from encbench.engine.protocol import Payload, _Fold, fold_indices
from encbench.engine.splits import (
    block_bounds, check_time_column, forward_fold_indices, parse_split, time_values,
)
from encbench.store import Writer, queries


def drifting_frame(n: int = 800, seed: int = 0) -> pd.DataFrame:
    """Rows in random file order; ``campaign`` levels each live in one 20-hour window of time
    with their own target rate (0.1 or 0.9), ``x`` carries a stable signal.

    Under stratified folds a test row's campaign is in the training folds (rows of the same
    window), so a target encoder (MT) knows its rate: a leak of the future. Forward in time
    every test block holds campaigns the past never saw: MT encodes them as unseen (-1), and
    a model that learnt to trust MT fails where one without it (Drop) still uses ``x``.
    """
    rng = np.random.default_rng(seed)
    hours = np.arange(n)
    level = hours // 20
    rate = np.where(rng.random(level.max() + 1) < 0.5, 0.1, 0.9)
    x = rng.normal(size=n)
    p = 0.5 * rate[level] + 0.5 / (1 + np.exp(-2 * x))
    y = rng.random(n) < p
    frame = pd.DataFrame({
        "day": (pd.Timestamp("2024-01-01") + pd.to_timedelta(hours, "h")).astype(str),
        "campaign": [f"c{v}" for v in level], "x": x, "y": np.where(y, "yes", "no"),
    })
    return frame.iloc[rng.permutation(n)].reset_index(drop=True)


# -- parsing ---------------------------------------------------------------------------------------
def test_parse_split():
    assert str(parse_split(None)) == "cv" and str(parse_split("cv")) == "cv"
    assert parse_split("time:day").kind == "time" and parse_split("time: day ").column == "day"
    assert str(parse_split("cv:day")) == "cv:day"
    for bad in ("time", "time:", "random", "shuffle:day"):
        with pytest.raises(ValueError, match=repr(bad)):
            parse_split(bad)


def test_time_values_reads_numbers_dates_and_refuses_text():
    assert time_values(pd.Series([3, 1, 2], name="t")).tolist() == [3.0, 1.0, 2.0]
    assert time_values(pd.Series(["3", "1", None], name="t"))[:2].tolist() == [3.0, 1.0]
    dates = time_values(pd.Series(["2024-01-02", "2023-12-31", "2024-01-01 06:00"], name="t"))
    assert list(np.argsort(dates)) == [1, 2, 0]
    stamps = time_values(pd.Series(pd.to_datetime(["2024-01-02", "2024-01-01"]), name="t"))
    assert stamps[0] > stamps[1]
    with pytest.raises(ValueError, match=r"'t' has 1 value\(s\) .* got 'soon'"):
        time_values(pd.Series(["2024-01-01", "soon"], name="t"))


def test_missing_times_are_refused_naming_the_column_and_count():
    X = pd.DataFrame({"when": ["2024-01-01", None, "", "2024-01-03"], "a": list("abab")})
    with pytest.raises(ValueError, match=r"'when' has 2 row\(s\) without a time"):
        check_time_column(X, "when")
    with pytest.raises(ValueError, match="'nope' is not a column"):
        check_time_column(X, "nope")


# -- forward folds ---------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("gap", [0, 7])
def test_forward_folds_never_train_on_later_rows(seed, gap):
    rng = np.random.default_rng(seed)
    times = rng.integers(0, 60, size=300).astype(float)  # many ties
    n_folds = 5
    seen_test = []
    previous_train = 0
    for fold in range(n_folds):
        train, test = forward_fold_indices(times, n_folds, fold, gap=gap)
        assert len(train) and len(test)
        assert times[train].max() < times[test].min()  # strictly earlier: ties stay together
        assert not set(train) & set(test)
        assert np.all(np.diff(times[train]) >= 0) and np.all(np.diff(times[test]) >= 0)  # time order
        assert len(train) > previous_train  # expanding window
        previous_train = len(train)
        seen_test.append(test)
    # test blocks are consecutive, disjoint, and cover everything after the first block
    covered = np.concatenate(seen_test)
    assert len(covered) == len(set(covered))
    first = block_bounds(times, n_folds)[1]
    assert len(covered) == len(times) - first
    assert times[covered].min() > np.sort(times)[first - 1]


def test_gap_leaves_rows_out_between_train_and_test():
    times = np.arange(60.0)
    train0, test0 = forward_fold_indices(times, 5, 2)
    train, test = forward_fold_indices(times, 5, 2, gap=4)
    assert list(test) == list(test0) and list(train) == list(train0[:-4])
    with pytest.raises(ValueError, match="gap 100 leaves fold 1"):
        forward_fold_indices(times, 5, 0, gap=100)
    with pytest.raises(ValueError, match="distinct time"):
        forward_fold_indices(np.zeros(50), 5, 0)


def test_fold_indices_default_is_the_published_stratified_split():
    y = np.array([0, 1] * 20)
    from sklearn.model_selection import StratifiedKFold

    expected = list(StratifiedKFold(5).split(np.zeros(40), y))
    for fold in range(5):
        train, test = fold_indices(y, 5, fold)
        assert list(train) == list(expected[fold][0]) and list(test) == list(expected[fold][1])
    with pytest.raises(ValueError, match="needs the time"):
        fold_indices(y, 5, 0, split="time")


# -- grid and plan ---------------------------------------------------------------------------------
def test_split_enters_the_run_id_only_when_not_the_default():
    base = Grid(datasets=["bundled:credit-g"], encoders="OH", models="LogReg", scorings="AUC")
    assert "split" not in base.identity() and "split" not in base.to_dict()
    assert base.run_id == Grid(**base.to_dict()).run_id
    timed = Grid(datasets=["bundled:credit-g"], encoders="OH", models="LogReg", scorings="AUC",
                 split="time:day", gap=3)
    assert timed.run_id != base.run_id and timed.split_kind == "time" and timed.time_column == "day"
    assert Grid(**timed.to_dict()).run_id == timed.run_id
    with pytest.raises(ValueError, match="gap applies to a time split only"):
        Grid(datasets=["bundled:credit-g"], gap=2)
    with pytest.raises(ValueError, match="gap must be"):
        Grid(datasets=["bundled:credit-g"], split="time:day", gap=-1)


def test_plan_refuses_rows_without_time(tmp_path):
    frame = drifting_frame(200)
    frame.loc[[3, 10, 11], "day"] = None
    path = tmp_path / "gaps.csv"
    frame.to_csv(path, index=False)
    with pytest.raises(DatasetError, match=r"'day' has 3 row\(s\) without a time"):
        plan(Grid(datasets=[f"{path}:y"], encoders="MT", models="DT", scorings="BAcc", split="time:day"))
    with pytest.raises(DatasetError, match="'when' is not a column"):
        plan(Grid(datasets=[f"{path}:y"], encoders="MT", models="DT", scorings="BAcc", split="time:when"))


def test_time_column_is_not_a_feature(tmp_path):
    path = tmp_path / "drift.csv"
    drifting_frame(200).to_csv(path, index=False)
    for split in ("time:day", "cv:day"):
        the_plan = plan(Grid(datasets=[f"{path}:y"], encoders="MT", models="DT", scorings="BAcc",
                             split=split))
        ds = next(iter(the_plan.datasets.values()))
        assert "day" in ds.categorical  # the data is untouched (worker caches share it) ...
        fold = _Fold(the_plan.tasks[0], Payload.from_dataset(ds))
        assert "day" not in fold.X_train.columns and "day" not in fold.categorical  # ... the fold drops it
    fold = _Fold(plan(Grid(datasets=[f"{path}:y"], encoders="MT", models="DT", scorings="BAcc")).tasks[0],
                 Payload.from_dataset(ds))
    assert "day" in fold.X_train.columns  # the published protocol keeps every column


# -- end to end: the leak, in the store ------------------------------------------------------------
def test_target_encoder_leaks_under_cv_and_not_forward_in_time(tmp_path):
    path = tmp_path / "drift.csv"
    drifting_frame().to_csv(path, index=False)
    db = tmp_path / "split.duckdb"
    common = dict(datasets=[f"{path}:y"], encoders=["Drop", "MT"], models=["DT", "LogReg"],
                  scorings=["BAcc"])
    cv_run = run_grid(Grid(**common, split="cv:day"), db_path=db, workers=0)
    time_run = run_grid(Grid(**common, split="time:day"), db_path=db, workers=0)
    assert cv_run != time_run
    with Writer(db, publish=False) as writer:
        scores = queries.load_scores(writer)
        assert queries.factor_levels(writer)["split"] == ["cv", "time"]
        with pytest.raises(ValueError, match="unknown split 'random'"):
            queries.load_scores(writer, splits=["random"])
    assert set(scores["split"]) == {"cv", "time"} and len(scores) == 8
    one = queries.one_score_per_experiment(scores)  # the two schemes are never averaged together
    assert len(one) == 8
    wide = scores.pivot_table(index=["model", "split"], columns="encoder", values="cv_score")
    for model in ("DT", "LogReg"):
        cv, time_ = wide.loc[(model, "cv")], wide.loc[(model, "time")]
        assert cv["MT"] > cv["Drop"] + 0.03, (model, cv)        # the leak: MT wins under cv
        assert time_["Drop"] > time_["MT"] + 0.03, (model, time_)  # forward in time it loses


def test_a_cv_and_a_time_result_of_the_same_coordinates_both_fit(mem_writer):
    mem_writer.ensure_run("r", origin="local")
    row = dict(run_id="r", dataset="d", encoder="MT", model="DT", tuning="no", scoring="AUC", fold=0,
               n_folds=1, cv_score=0.7, time=1.0, status="ok")
    assert mem_writer.write_results([row, dict(row, split="time", cv_score=0.6)]) == 2
    assert mem_writer.write_results([dict(row, split="time", cv_score=0.1)]) == 0  # resumed: kept
    got = mem_writer.query("SELECT split, cv_score FROM scores ORDER BY split")
    assert got.values.tolist() == [["cv", 0.7], ["time", 0.6]]
    with pytest.raises(ValueError, match="split must be cv or time"):
        mem_writer.write_results([dict(row, split="random")])


def test_published_rows_are_cv(published_reader):
    got = published_reader.query("SELECT split, count(*) AS n FROM scores GROUP BY split")
    assert got["split"].tolist() == ["cv"] and int(got["n"].iloc[0]) == 61812
