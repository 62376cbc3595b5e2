"""The vectorised ranking and quantile helpers against numpy/scipy references."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from encbench.stats._arrays import RowRanks, nanmean, nanmedian_last, nanquantile_last, rank_last_axis


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


def _adversarial(rng, shape):
    """Ties, values one or a few ulps apart (which the packed sort key cannot tell apart),
    signed zeros, infinities, negative numbers and NaN."""
    base = rng.choice([0.0, -0.0, 0.5, -0.5, 1.0, 1e-300, -1e-300, 5e-324, np.inf, -np.inf], size=shape)
    ulps = rng.integers(-3, 4, size=shape)
    x = base.copy()
    near = rng.random(shape) < 0.5
    for _ in range(3):
        step = np.where(ulps > 0, np.inf, -np.inf)
        move = near & (ulps != 0) & np.isfinite(x)
        x[move] = np.nextafter(x[move], step[move])
        ulps = ulps - np.sign(ulps)
    x[rng.random(shape) < 0.15] = np.nan
    return x


@pytest.mark.parametrize("descending", [True, False])
@pytest.mark.parametrize("m", [1, 2, 7, 32, 33, 70])
def test_ranks_of_near_equal_values_match_scipy(descending, m):
    rng = np.random.default_rng(m + 100 * descending)
    x = _adversarial(rng, (300, m))
    dense, average = rank_last_axis(x, descending=descending)
    for row, d_row, a_row in zip(x, dense, average):
        keep = ~np.isnan(row)
        values = -row[keep] if descending else row[keep]
        np.testing.assert_array_equal(d_row[keep], stats.rankdata(values, method="dense"))
        np.testing.assert_array_equal(a_row[keep], stats.rankdata(values, method="average"))
        assert np.isnan(d_row[~keep]).all() and np.isnan(a_row[~keep]).all()


def test_row_ranks_keep_each_row_in_rank_order():
    rng = np.random.default_rng(11)
    x = _adversarial(rng, (200, 9))
    ranks = RowRanks(x, descending=True)
    for r in range(len(x)):
        n = ranks.n[r]
        assert n == np.count_nonzero(~np.isnan(x[r]))
        np.testing.assert_array_equal(ranks.sorted[r], x[r][ranks.column[r]])
        assert np.isnan(ranks.sorted[r, n:]).all()
        head = ranks.sorted[r, :n]
        assert (head[1:] <= head[:-1]).all()  # best first
        np.testing.assert_array_equal(ranks.dense_sorted[r, :n],
                                      stats.rankdata(-head, method="dense"))
    np.testing.assert_array_equal(ranks.flat, ranks.column + 9 * np.arange(len(x))[:, None])


def test_empty_and_single_rows():
    for shape in [(0, 4), (3, 0), (0,), (5,)]:
        x = np.linspace(0, 1, int(np.prod(shape))).reshape(shape)
        dense, average = rank_last_axis(x, descending=True)
        assert dense.shape == average.shape == shape


@pytest.mark.parametrize("m", [255, 256, 301, 1000])
def test_median_of_long_rows_by_selection_matches_numpy(m):
    # rows from _SELECT_FROM on take medians by partition: ties, NaN, odd and even counts, a row
    # of one number and a row without any
    rng = np.random.default_rng(m)
    x = rng.integers(0, 7, size=(3, 5, m)) / 6.0
    x[rng.random(x.shape) < rng.random((3, 5, 1))] = np.nan
    x[0, 0] = np.nan
    x[0, 1, 1:] = np.nan
    before = x.copy()
    with np.errstate(all="ignore"), pytest.warns(RuntimeWarning):
        expected = np.nanmedian(x, axis=-1)
    np.testing.assert_array_equal(nanmedian_last(x), expected)
    work = np.full(x.size, 7.0)
    np.testing.assert_array_equal(nanmedian_last(x, work=work), expected)  # rows copied there
    counts = np.count_nonzero(~np.isnan(x), axis=-1)
    np.testing.assert_array_equal(nanmedian_last(x, counts=counts), expected)
    assert (work == 7.0).all() == (m < 256)  # long rows only
    np.testing.assert_array_equal(nanmedian_last(np.moveaxis(x, 0, -1)),
                                  np.nanmedian(np.moveaxis(x, 0, -1), axis=-1))
    np.testing.assert_array_equal(x, before)  # the input is left alone
