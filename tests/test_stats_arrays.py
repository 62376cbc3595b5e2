"""The vectorised ranking and quantile helpers against numpy/scipy references."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from encbench.stats._arrays import nanmean, nanmedian_last, nanquantile_last, rank_last_axis


def _random_with_ties_and_nans(rng, shape):
    x = rng.integers(0, 6, size=shape).astype(float) / 5.0  # few distinct values: many ties
    x[rng.random(shape) < 0.25] = np.nan
    return x


@pytest.mark.parametrize("descending", [True, False])
def test_ranks_match_scipy_rankdata_row_by_row(descending):
    rng = np.random.default_rng(1)
    x = _random_with_ties_and_nans(rng, (4, 7, 9))
    dense, average = rank_last_axis(x, descending=descending)
    for index in np.ndindex(x.shape[:-1]):
        row = x[index]
        keep = ~np.isnan(row)
        values = -row[keep] if descending else row[keep]
        np.testing.assert_array_equal(dense[index][keep], stats.rankdata(values, method="dense"))
        np.testing.assert_array_equal(average[index][keep], stats.rankdata(values, method="average"))
        assert np.isnan(dense[index][~keep]).all() and np.isnan(average[index][~keep]).all()


def test_exact_ties_share_a_dense_rank():
    dense, average = rank_last_axis(np.array([0.5, 0.9, 0.5, np.nan, 0.1]), descending=True)
    np.testing.assert_array_equal(dense[[0, 1, 2, 4]], [2, 1, 2, 3])
    np.testing.assert_array_equal(average[[0, 1, 2, 4]], [2.5, 1, 2.5, 4])


@pytest.mark.parametrize("q", [0.0, 0.25, 0.5, 0.75, 1.0, 0.1])
def test_quantile_is_bit_identical_to_numpy_linear(q):
    rng = np.random.default_rng(2)
    x = rng.random((50, 33))
    x[rng.random(x.shape) < 0.3] = np.nan
    expected = np.nanquantile(x, q, axis=-1)
    np.testing.assert_array_equal(nanquantile_last(x, q), expected)


def test_median_and_mean_match_numpy_and_handle_empty_rows():
    rng = np.random.default_rng(3)
    x = rng.random((20, 8))
    x[rng.random(x.shape) < 0.4] = np.nan
    x[0] = np.nan
    with np.errstate(all="ignore"), pytest.warns(RuntimeWarning):
        expected_median = np.nanmedian(x, axis=-1)
        expected_mean = np.nanmean(x, axis=-1)
    np.testing.assert_array_equal(nanmedian_last(x), expected_median)
    np.testing.assert_allclose(nanmean(x, axis=-1), expected_mean, rtol=1e-15)
    assert np.isnan(nanquantile_last(x, 0.25)[0])
