"""What each quality strategy does with the regression metrics: lower-is-better errors rank the
smallest first, an unbounded R2 ranks the largest first, and the ratio strategies refuse both."""
from __future__ import annotations

import pandas as pd
import pytest

from encbench.stats import consensus


def _scores(scoring: str, values: dict[str, tuple[float, float]]) -> pd.DataFrame:
    rows = [{"dataset": d, "encoder": e, "cv_score": v[i], "scoring": scoring}
            for e, v in values.items() for i, d in enumerate(("d1", "d2"))]
    return pd.DataFrame(rows)


@pytest.mark.parametrize("strategy", ["R-M", "R-Md", "Q-M", "Q-Md", "Q-RM"])
def test_an_error_ranks_the_smallest_first_and_r2_the_largest(strategy):
    errors = _scores("RMSE", {"MT": (1.0, 2.0), "OH": (3.0, 4.0), "Drop": (5.0, 6.0)})
    assert consensus(errors, strategy).to_dict() == {"MT": 1, "OH": 2, "Drop": 3}
    r2 = _scores("R2", {"MT": (0.9, -0.2), "OH": (0.5, -0.5), "Drop": (-1.0, -3.0)})
    assert consensus(r2, strategy).to_dict() == {"MT": 1, "OH": 2, "Drop": 3}


@pytest.mark.parametrize(("scoring", "kind"), [("RMSE", "lower-is-better"), ("MAE", "lower-is-better"),
                                               ("R2", "unbounded")])
@pytest.mark.parametrize("strategy", ["Q-Th", "Q-Imp"])
def test_the_ratio_strategies_refuse_errors_and_r2(scoring, kind, strategy):
    scores = _scores(scoring, {"MT": (1.0, 2.0), "OH": (3.0, 4.0)})
    with pytest.raises(ValueError, match=f"undefined for scoring '{scoring}' \\({kind}\\)"):
        consensus(scores, strategy)
