"""A synthetic table shaped like OpenML 470 *profb* (the published fingerprint: 672 rows, its ten
columns, target ``Home/Away`` with 448 ``at_home`` and 224 ``away``), for tests that need a copy of
a published dataset whose target is not its last column. Its last column, ``Overtime``, is
missing in 640 rows and has one class in the others, as in the real file."""
from __future__ import annotations

import numpy as np
import pandas as pd

TEAMS = [f"team{i:02d}" for i in range(28)]


def profb_frame(seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n = 672
    home = np.array(["at_home"] * 448 + ["away"] * 224, dtype=object)
    rng.shuffle(home)
    overtime = np.array([None] * n, dtype=object)
    overtime[rng.choice(n, 32, replace=False)] = "yes"
    return pd.DataFrame({
        "Home/Away": home,
        "Favorite_Points": rng.integers(0, 45, n), "Underdog_Points": rng.integers(0, 40, n),
        "Pointspread": rng.integers(1, 20, n).astype(float) / 2,
        "Favorite_Name": rng.choice(TEAMS, n), "Underdog_name": rng.choice(TEAMS, n),
        "Year": rng.choice([89, 90, 91], n), "Week": rng.integers(1, 18, n),
        "Weekday": rng.choice(["Sun", "Mon", "Sat", "Thu"], n), "Overtime": overtime,
    })
