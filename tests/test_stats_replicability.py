"""Replicability: disjoint sample pairs, similarity per pair, bootstrapped intervals."""
from __future__ import annotations

import dataclasses
import multiprocessing
from types import MappingProxyType

import numpy as np
import pandas as pd
import pytest

from encbench import vocab
from encbench.stats import (
    ReplicabilityCancelled, consensus, jaccard_best, project_agreement, replicability, spearman,
)
from encbench.stats.replicability import spearman_brown


def _scores(seed: int, n_datasets: int = 16, n_encoders: int = 7) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    quality = np.linspace(0.0, 0.3, n_encoders)
    rows = [(f"d{d:02d}", f"E{e}", float(rng.random() * 0.5 + quality[e]))
            for d in range(n_datasets) for e in range(n_encoders) if rng.random() > 0.1]
    return pd.DataFrame(rows, columns=["dataset", "encoder", "cv_score"])


def test_pairs_match_naive_loop_over_the_same_draws():
    frame = _scores(0)
    result = replicability(frame, [3, 5], n_pairs=12, seed=4, strategy="Q-M")
    datasets = np.sort(frame.dataset.unique())
    sampling, _ = (np.random.default_rng(s) for s in np.random.SeedSequence(4).spawn(2))
    for size in (3, 5):
        order = np.argsort(sampling.random((12, len(datasets))), axis=1)
        rows = result.pairs[result.pairs.sample_size == size].reset_index(drop=True)
        for p in range(12):
            first = frame[frame.dataset.isin(datasets[order[p, :size]])]
            second = frame[frame.dataset.isin(datasets[order[p, size:2 * size]])]
            assert not set(first.dataset) & set(second.dataset)
            r1, r2 = consensus(first, "Q-M"), consensus(second, "Q-M")
            assert rows.loc[p, "rho"] == pytest.approx(spearman(r1, r2), abs=1e-12, nan_ok=True)
            assert rows.loc[p, "J"] == pytest.approx(jaccard_best(r1, r2))


def test_summary_progress_and_determinism():
    frame = _scores(1, n_datasets=30)
    calls = []
    result = replicability(frame, [2, 5, 10, 15], n_pairs=50, seed=0, strategy="R-M",
                           progress=lambda done, total: calls.append((done, total)))
    assert calls == [(100, 400), (200, 400), (300, 400), (400, 400)]   # samples ranked
    assert list(result.pairs.columns) == ["sample_size", "pair", "rho", "J"]
    assert len(result.pairs) == 200 and result.strategy == "R-M"
    summary = result.summary.set_index("sample_size")
    assert list(summary.index) == [2, 5, 10, 15]
    means = result.pairs.groupby("sample_size")[["rho", "J"]].mean()
    np.testing.assert_allclose(summary["rho_mean"], means["rho"])
    np.testing.assert_allclose(summary["J_mean"], means["J"])
    assert (summary["rho_low"] <= summary["rho_mean"]).all() and (summary["rho_mean"] <= summary["rho_high"]).all()
    assert (summary["J_low"] <= summary["J_mean"]).all() and (summary["J_mean"] <= summary["J_high"]).all()
    # More datasets per sample: more similar rankings (clear signal in this synthetic data).
    assert summary.loc[15, "rho_mean"] > summary.loc[2, "rho_mean"]
    again = replicability(frame, [2, 5, 10, 15], n_pairs=50, seed=0, strategy="R-M")
    pd.testing.assert_frame_equal(result.summary, again.summary)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(sample_sizes=[9]), "sample size 9 needs 18 datasets .*got 16"),
        (dict(sample_sizes=[0]), "sample size must be a positive integer: got 0"),
        (dict(sample_sizes=[]), "sample_sizes is empty"),
        (dict(sample_sizes=[2], n_pairs=0), "n_pairs must be a positive integer: got 0"),
        (dict(sample_sizes=[2], strategy="Q-Best"), "unknown strategy 'Q-Best'"),
    ],
)
def test_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        replicability(_scores(0), **kwargs)


def test_the_registry_not_the_name_decides_which_strategy_uses_processes(monkeypatch):
    """Samples go to a process pool for a strategy the registry marks expensive, not for a name:
    R-Kem marked cheap is ranked inline (one progress report per sample size, no pool), with
    the same result."""
    frame = _scores(3, n_datasets=16)
    expected = replicability(frame, [3, 5], n_pairs=6, seed=1, strategy="R-Kem")
    cheap = dataclasses.replace(vocab.STRATEGY_REGISTRY["R-Kem"], cost=None, worker=None)
    monkeypatch.setattr(vocab, "STRATEGY_REGISTRY", MappingProxyType({**vocab.STRATEGY_REGISTRY, "R-Kem": cheap}))
    calls = []
    inline = replicability(frame, [3, 5], n_pairs=6, seed=1, strategy="R-Kem", n_jobs=2,
                           progress=lambda done, total: calls.append((done, total)))
    assert calls == [(12, 24), (24, 24)]        # a pool reports every task of at most 8 samples
    pd.testing.assert_frame_equal(expected.summary, inline.summary)


def test_r_kem_on_processes_matches_one_process_and_can_be_cancelled():
    """The pool's result equals one process's; a cancel raises, and leaves no pool worker alive:
    with the pool shut down without waiting, a cancelled computation in a worker process (the
    Replicability page's R-Kem job) hung at exit waiting for a worker that never stopped."""
    frame = _scores(3, n_datasets=16)
    one = replicability(frame, [3, 5], n_pairs=6, seed=1, strategy="R-Kem")
    calls = []
    two = replicability(frame, [3, 5], n_pairs=6, seed=1, strategy="R-Kem", n_jobs=2,
                        progress=lambda done, total: calls.append((done, total)))
    pd.testing.assert_frame_equal(one.pairs, two.pairs)
    pd.testing.assert_frame_equal(one.summary, two.summary)
    assert calls[-1] == (24, 24) and all(t == 24 for _, t in calls)
    with pytest.raises(ReplicabilityCancelled):
        replicability(frame, [3, 5], n_pairs=6, seed=1, strategy="R-Kem", n_jobs=2, should_stop=lambda: True)
    assert multiprocessing.active_children() == []
    polls = []
    with pytest.raises(ReplicabilityCancelled):  # cancelled while the pool is busy
        replicability(frame, [3, 5], n_pairs=200, seed=1, strategy="R-Kem", n_jobs=2,
                      should_stop=lambda: polls.append(1) or len(polls) > 3)
    assert multiprocessing.active_children() == []
    with pytest.raises(ReplicabilityCancelled):
        replicability(frame, [3], n_pairs=6, strategy="R-M", should_stop=lambda: True)


# --------------------------------------------------------------------------- projection

def _summary(sizes, means, half_width=0.02):
    means = np.asarray(means, dtype=float)
    return pd.DataFrame({"sample_size": sizes, "rho_mean": means, "rho_low": means - half_width,
                         "rho_high": means + half_width})


def test_projection_recovers_a_spearman_brown_curve():
    """Means exactly on n r / (1 + (n - 1) r) with r = 0.2 give back r, and rho 0.9 needs
    0.9 * 0.8 / (0.2 * 0.1) = 36 datasets per sample (by hand)."""
    sizes = [2, 4, 8]
    means = [2 * 0.2 / 1.2, 4 * 0.2 / 1.6, 8 * 0.2 / 2.4]
    got = project_agreement(_summary(sizes, means))
    assert got.r == pytest.approx(0.2, abs=1e-6)
    assert (got.needed, got.target, got.fits, got.above) == (36, 0.9, True, False)
    assert project_agreement(_summary(sizes, means), target=0.5).needed == 4  # 0.5 * 0.8 / (0.2 * 0.5)


def test_projection_says_when_agreement_flattens():
    """Agreement stuck at 0.2 from 4 datasets on does not grow as exchangeable datasets' would:
    the least-squares curve overshoots the largest size's interval, so it does not fit."""
    flat = _summary([2, 4, 6, 8, 10, 12, 15], [0.11, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2])
    got = project_agreement(flat)
    assert not got.fits and got.above and got.needed is not None
    assert spearman_brown(15, got.r) > 0.2 + 0.02                    # the curve overshoots at 15
    # agreement that grows faster than the formula: the curve falls below the last interval
    steep = project_agreement(_summary([2, 4, 6, 8], [0.02, 0.04, 0.1, 0.4]))
    assert not steep.fits and not steep.above


def test_projection_without_agreement_and_bad_targets():
    flat = project_agreement(_summary([2, 4], [-0.05, 0.0]))
    assert flat.r == pytest.approx(0.0, abs=1e-6) and flat.needed is None
    for target in (0.0, 1.0, 1.5):
        with pytest.raises(ValueError, match="target is an agreement"):
            project_agreement(_summary([2, 4], [0.1, 0.2]), target=target)
    with pytest.raises(ValueError, match="no sample size"):
        project_agreement(_summary([], []))


def test_projection_predicts_the_agreement_of_larger_samples():
    """On a seeded benchmark of exchangeable datasets (a fixed encoder quality plus noise per
    dataset), the curve fitted to samples of 2 to 8 datasets predicts the measured agreement of
    samples of 20 and 40 within 0.03."""
    rng = np.random.default_rng(7)
    quality = np.linspace(0.0, 0.25, 12)
    frame = pd.DataFrame([(f"d{d:03d}", f"E{e:02d}", float(quality[e] + rng.normal(0, 0.5)))
                          for d in range(80) for e in range(12)], columns=["dataset", "encoder", "cv_score"])
    got = project_agreement(replicability(frame, [2, 4, 6, 8], n_pairs=200, seed=1).summary)
    assert got.fits
    large = replicability(frame, [20, 40], n_pairs=200, seed=2).summary
    predicted = spearman_brown(large["sample_size"], got.r)
    assert np.abs(predicted - large["rho_mean"].to_numpy()).max() < 0.03
