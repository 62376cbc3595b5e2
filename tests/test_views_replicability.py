"""The Replicability page's view: chart rows and sample sizes."""
from __future__ import annotations

import pandas as pd

from encbench.views import replicability


def test_sample_sizes_and_chart_rows():
    assert replicability.default_sample_sizes(50) == [5, 10, 15, 20, 25]
    assert replicability.default_sample_sizes(13, step=5) == [5, 6]
    assert replicability.default_sample_sizes(3) == []
    summary = pd.DataFrame({"sample_size": [5], "rho_mean": [0.5], "rho_low": [0.4], "rho_high": [0.6],
                            "J_mean": [0.2], "J_low": [0.1], "J_high": [0.3]})
    long = replicability.replicability_long(summary, "R-M")
    assert set(long["measure"]) == {"rho-replicability", "J-replicability"} and len(long) == 2
    rho = long[long["measure"] == "rho-replicability"].iloc[0]
    assert (rho["mean"], rho["low"], rho["high"], rho["strategy"]) == (0.5, 0.4, 0.6, "R-M")
