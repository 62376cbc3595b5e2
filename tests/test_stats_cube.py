"""The score cube: cells as a naive pivot puts them, whatever the row order and the key columns'
dtype (text, or categories in any order with some unused)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from encbench.stats import consensus_table
from encbench.stats._cube import build_cube

BY = ("model", "tuning", "scoring")


def _scores(seed: int = 3) -> pd.DataFrame:
    """Seeded scores of 2 x 2 x 2 combinations, 7 datasets, 5 encoders, about 15 % missing,
    rows shuffled (so no column is in sorted order)."""
    rng = np.random.default_rng(seed)
    rows = [(m, t, s, f"d{d}", f"E{e}", float(rng.random()))
            for m in ("LogReg", "DT") for t in ("no", "model") for s in ("AUC", "Acc")
            for d in (3, 11, 2, 7, 5, 13, 1) for e in (4, 0, 2, 1, 3)]
    frame = pd.DataFrame(rows, columns=[*BY, "dataset", "encoder", "cv_score"])
    frame = frame[rng.random(len(frame)) > 0.15]
    return frame.iloc[rng.permutation(len(frame))].reset_index(drop=True)


def _naive(frame: pd.DataFrame) -> tuple[list, list, list, np.ndarray]:
    """Combinations, datasets, encoders (each sorted) and the (G, D, E) array, cell by cell."""
    combos = sorted(set(map(tuple, frame[list(BY)].to_numpy())))
    datasets, encoders = sorted(set(frame["dataset"])), sorted(set(frame["encoder"]))
    values = np.full((len(combos), len(datasets), len(encoders)), np.nan)
    for row in frame.itertuples(index=False):
        g = combos.index((row.model, row.tuning, row.scoring))
        values[g, datasets.index(row.dataset), encoders.index(row.encoder)] = row.cv_score
    return combos, datasets, encoders, values


def _as_categories(frame: pd.DataFrame) -> pd.DataFrame:
    """Key columns as categories in reverse order, each with a category no row uses."""
    out = frame.copy()
    for column in (*BY, "dataset", "encoder"):
        categories = sorted(set(frame[column]), reverse=True) + ["zz-unused"]
        out[column] = pd.Categorical(frame[column], categories=categories)
    return out


def _sorted_categories(frame: pd.DataFrame, reverse: tuple[str, ...] = ()) -> pd.DataFrame:
    """Key columns as categories in sorted order (``reverse``: in reverse order), the factors'
    with a category no row uses: combinations are left out of the cube, datasets and encoders
    are in place."""
    out = frame.astype({c: "category" for c in (*BY, "dataset", "encoder")})
    for column in BY:
        categories = sorted(set(frame[column]), reverse=column in reverse) + ["zz-unused"]
        out[column] = pd.Categorical(frame[column], categories=categories)
    return out


@pytest.mark.parametrize("kind", ["text", "sorted text", "categories", "sorted categories",
                                  "sorted categories, unused", "factor categories in reverse"])
def test_the_cube_holds_each_score_where_a_naive_pivot_puts_it(kind):
    frame = _scores()
    combos, datasets, encoders, expected = _naive(frame)
    # sorted text: the factors' long runs are factorized from their first rows
    given = {"text": frame, "sorted text": frame.sort_values([*BY, "dataset", "encoder"]).astype(
                 {c: "str" for c in (*BY, "dataset", "encoder")}),
             "categories": _as_categories(frame),
             "sorted categories": frame.astype({c: "category" for c in (*BY, "dataset", "encoder")}),
             "sorted categories, unused": _sorted_categories(frame),
             "factor categories in reverse": _sorted_categories(frame, reverse=("model",))}[kind]
    cube = build_cube(given, BY)
    assert list(map(tuple, cube.keys[list(BY)].to_numpy())) == combos
    assert cube.datasets.tolist() == datasets and cube.encoders.tolist() == encoders
    assert np.array_equal(cube.values, expected, equal_nan=True)
    assert np.array_equal(cube.missing, np.isnan(expected))  # kept for the rankings
    assert cube.metrics == tuple((s,) for _, _, s in combos)
    assert cube.signs().tolist() == [1.0] * len(combos)


def test_rankings_do_not_depend_on_the_key_columns_dtype():
    frame = _scores(seed=9)
    text = consensus_table(frame)
    assert text.equals(consensus_table(_as_categories(frame)).astype(text.dtypes.to_dict()))
    assert text.equals(consensus_table(frame.iloc[::-1]))


def test_a_duplicate_cell_is_named_whatever_the_dtype():
    frame = _scores()
    twice = pd.concat([frame, frame.iloc[[0]]], ignore_index=True)
    first = frame.iloc[0]
    for given in (twice, _as_categories(twice)):
        with pytest.raises(ValueError, match=rf"2 rows for dataset='{first.dataset}', "
                                             rf"encoder='{first.encoder}', model='{first.model}'"):
            build_cube(given, BY)


def test_factorizing_runs_gives_pandas_codes_and_labels():
    from encbench.stats._cube import _factorize_runs

    rng = np.random.default_rng(4)
    values = np.repeat(rng.choice(["b", "a", "c", "é", ""], size=60), rng.integers(1, 40, size=60))
    many = np.repeat(rng.choice(["b", "a", "c", "é", ""], size=9000), rng.integers(1, 40, size=9000))
    mixed = rng.choice(["b", "a", "c", "é", ""], size=80_000)  # runs of about one row
    # runs: whether the codes come from the runs' first rows (sorted when asked); the last
    # column's first rows have no runs, so the whole column is hashed
    for column, runs in ((pd.Series(values, dtype="str"), True), (pd.Series(values, dtype=object), False),
                         (pd.Series(values).iloc[::-1].astype("str"), True),
                         (pd.Series(values[:1], dtype="str"), False), (pd.Series(many, dtype="str"), True),
                         (pd.Series(mixed, dtype="str"), False),
                         (pd.Series(np.concatenate([mixed, many]), dtype="str"), False)):
        for sort in (False, True):
            codes, labels, in_order = _factorize_runs(column, sort=sort)
            expected_codes, expected_labels = pd.factorize(column, sort=sort and in_order)
            np.testing.assert_array_equal(codes, expected_codes)
            assert list(labels) == list(expected_labels)
            assert not in_order or sort
        assert _factorize_runs(column, sort=True)[2] == runs


@pytest.mark.parametrize("unused", [1, 200_000])
@pytest.mark.parametrize("by", [BY, ("model", "tuning")])
def test_categories_no_row_uses_are_left_out_whatever_their_number(unused, by):
    # Few unused categories get a place in the cube at first (left out afterwards); very many
    # are looked for first. One model scored by RMSE (negated in the cube); without scoring
    # among the by columns, each combination's metric comes from its rows.
    frame = _scores(seed=5)
    frame = frame[frame.scoring == "AUC"].copy()
    frame.loc[frame.model == "DT", "scoring"] = "RMSE"
    given = frame.copy()
    for column in (*BY, "dataset", "encoder"):
        spare = [f"zz{i}" for i in range(unused if column == "dataset" else 3)]
        given[column] = pd.Categorical(frame[column], categories=spare + sorted(set(frame[column])))
    cube = build_cube(given, by)
    combos = sorted(set(map(tuple, frame[list(by)].to_numpy())))
    datasets, encoders = sorted(set(frame["dataset"])), sorted(set(frame["encoder"]))
    expected = np.full((len(combos), len(datasets), len(encoders)), np.nan)
    for row in frame.itertuples(index=False):
        sign = -1.0 if row.scoring == "RMSE" else 1.0
        g = combos.index(tuple(getattr(row, c) for c in by))
        expected[g, datasets.index(row.dataset), encoders.index(row.encoder)] = sign * row.cv_score
    assert list(map(tuple, cube.keys[list(by)].to_numpy())) == combos
    assert cube.datasets.tolist() == datasets and cube.encoders.tolist() == encoders
    assert np.array_equal(cube.values, expected, equal_nan=True)
    assert np.array_equal(cube.missing, np.isnan(expected))  # kept for the rankings
    assert cube.signs().tolist() == [-1.0 if c[0] == "DT" else 1.0 for c in combos]
    assert cube.metrics == tuple(("RMSE",) if c[0] == "DT" else ("AUC",) for c in combos)
    strategies = ["R-M", "R-Nem", "Q-Md", "Q-RM"]
    text = consensus_table(frame, strategies, by=by)
    assert text.equals(consensus_table(given, strategies, by=by).astype(text.dtypes.to_dict()))


@pytest.mark.parametrize("kind", ["text", "sorted text", "text and categories"])
def test_key_columns_coded_in_threads_give_the_naive_cube(kind, monkeypatch):
    # a large table's key columns are coded in two threads: the cube a naive pivot makes
    import encbench.stats._cube as cube_module

    frame = _scores(seed=9)
    if kind == "sorted text":
        frame = frame.sort_values([*BY, "dataset"]).reset_index(drop=True)
    elif kind == "text and categories":
        frame = frame.astype({"model": "category", "encoder": "category"})
    monkeypatch.setattr(cube_module, "PARALLEL_ROWS", 0)
    monkeypatch.setattr(cube_module, "threads", lambda: 2)
    started = []
    real = cube_module.ThreadPoolExecutor
    monkeypatch.setattr(cube_module, "ThreadPoolExecutor", lambda *a, **k: started.append(a) or real(*a, **k))
    cube = build_cube(frame, BY)
    assert len(started) == 1
    combos, datasets, encoders, values = _naive(frame.astype(str).assign(cv_score=frame["cv_score"]))
    assert list(map(tuple, cube.keys[list(BY)].astype(str).to_numpy())) == combos
    assert list(cube.datasets) == datasets and list(cube.encoders) == encoders
    np.testing.assert_array_equal(cube.values, values)
