"""Column kinds and levels (encbench/data/columns.py): distinct counts and level codes against pandas."""
from __future__ import annotations

import numpy as np
import pandas as pd

from encbench.data.columns import as_category_text, distinct_counts, level_codes


def testdistinct_counts_equal_nunique_for_every_dtype():
    rng = np.random.default_rng(2)
    n = 50
    floats = rng.integers(0, 6, n).astype(float)
    floats[[0, 5, 9]] = np.nan
    floats[1], floats[2] = -0.0, 0.0
    frame = pd.DataFrame({
        "f": floats, "i": rng.integers(0, 7, n), "big": 2**60 + rng.integers(0, 3, n), "b": rng.random(n) < 0.5,
        "s": pd.Series(rng.choice(["a", "b", None], n), dtype="str"),
        "o": pd.Series([1, "1", None, 2.5, "x"] * 10, dtype=object),
        "cat": pd.Categorical(rng.choice(["u", "v", None], n)),
        "nullable": pd.array([1, None, 3, 3, 4] * 10, dtype="Int64"),
        "when": pd.to_datetime(["2020-01-01", None, "2021-05-02", "2020-01-01", "2022-01-01"] * 10),
        "const": np.ones(n),
    })
    for dropna in (True, False):
        pd.testing.assert_series_equal(distinct_counts(frame, dropna=dropna), frame.nunique(dropna=dropna),
                                       check_dtype=False)
    assert distinct_counts(frame.iloc[:0], dropna=True).tolist() == [0] * frame.shape[1]
    # level codes: one code per level as the text spells it, missing one more
    codes = level_codes(frame[["f", "s", "o"]])
    for j, name in enumerate(["f", "s", "o"]):
        text = as_category_text(frame[name]).fillna("<missing>")
        assert pd.Series(codes[:, j]).groupby(text.to_numpy()).nunique().eq(1).all()
        assert codes[:, j].max() + 1 == text.nunique()
