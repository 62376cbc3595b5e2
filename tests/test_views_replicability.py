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


def _summary(sizes, means, lows, highs):
    return pd.DataFrame({"sample_size": sizes, "rho_mean": means, "rho_low": lows, "rho_high": highs})


def test_datasets_needed_measured_projected_or_not_to_be_relied_on():
    """Measured where a size reached rho 0.9; projected where the fitted Spearman-Brown curve sits in
    the largest size's interval (r = 0.2 exactly: 0.9 * 0.8 / (0.2 * 0.1) = 36 per sample, by
    hand); a lower bound at best where agreement flattens, an upper bound at most where it grows
    faster; nothing where it never grows."""
    measured = _summary([5, 10, 15], [0.7, 0.91, 0.95], [0.6, 0.88, 0.93], [0.8, 0.94, 0.97])
    assert "agree at rho >= 0.9 from 10 datasets per sample (measured)" in \
        replicability.datasets_needed_text(measured)
    means = [2 * 0.2 / 1.2, 4 * 0.2 / 1.6, 8 * 0.2 / 2.4]
    exact = _summary([2, 4, 8], means, [m - 0.02 for m in means], [m + 0.02 for m in means])
    text = replicability.datasets_needed_text(exact)
    assert text.startswith("Agreement stays below rho 0.9 up to 8 datasets per sample.")
    assert "(r = 0.200): about 36 datasets per sample (72 in all)" in text
    flat = _summary([2, 4, 6, 8, 10, 12, 15], [0.11, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2],
                    [0.07, 0.17, 0.17, 0.17, 0.17, 0.17, 0.17], [0.15, 0.23, 0.23, 0.23, 0.23, 0.23, 0.23])
    text = replicability.datasets_needed_text(flat)
    assert "leaves the measured interval at 15" in text and "at best a lower bound" in text
    steep = _summary([2, 4, 6, 8], [0.02, 0.04, 0.1, 0.4], [0.0, 0.02, 0.08, 0.38], [0.04, 0.06, 0.12, 0.42])
    assert "at most an upper bound" in replicability.datasets_needed_text(steep)
    none = _summary([2, 4], [-0.1, 0.0], [-0.2, -0.1], [0.0, 0.1])
    assert "no number of datasets is projected" in replicability.datasets_needed_text(none)
