"""consensus / consensus_table: worked examples, hand-computed cases, naive references, errors."""
from __future__ import annotations

import importlib

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from encbench import vocab
from encbench.stats import (
    HEURISTIC_STRATEGIES,
    STRATEGIES,
    consensus,
    consensus_table,
    params_for,
    strategy_parameters,
)
from encbench.store.published import load_published_results

FACTORS = ["model", "tuning", "scoring"]


@pytest.fixture(scope="module")
def published():
    return load_published_results()


def _combo(frame, model, tuning, scoring):
    return frame[(frame.model == model) & (frame.tuning == tuning) & (frame.scoring == scoring)]


# --- worked examples from the issue (published data, LogReg / no tuning / AUC) -----------------

R_M_LOGREG_NO_AUC = (
    "Sum OH WoE Bin BUMT_5 BUMT_10 BUMT_2 DMT_10 DMT_5 PBMT_0.001 PBMT_0.01 CVMT_2 MT ME_0.1 "
    "CVMT_10 CVMT_5 ME_1 BUGLMM_2 CB Ord MH CVGLMM_5 BUGLMM_5 ME_10 DMT_2 BUGLMM_10 PBMT_0.1 "
    "Count GLMM CVGLMM_10 CVGLMM_2 Drop"
).split()


def test_worked_example_r_m(published):
    ranking = consensus(_combo(published, "LogReg", "no", "AUC"), "R-M")
    assert ranking.to_dict() == {name: i for i, name in enumerate(R_M_LOGREG_NO_AUC, start=1)}
    assert ranking.dtype == np.int64 and ranking.index.name == "encoder"


def test_worked_example_q_rm(published):
    ranking = consensus(_combo(published, "LogReg", "no", "AUC"), "Q-RM")
    head = ["GLMM", "BUGLMM_2", "BUGLMM_5", "CVGLMM_5", "CVGLMM_10", "OH", "Sum"]
    assert ranking.iloc[:7].to_dict() == {name: i for i, name in enumerate(head, start=1)}
    assert ranking.iloc[-3:].to_dict() == {"CVGLMM_2": 30, "MH": 31, "BUGLMM_10": 32}


# --- hand-computed small case --------------------------------------------------------------
# d1: A .9  B .8  C .8  D .7   dense A1 B2 C2 D3
# d2: A .6  B .9  C --  D .6   dense B1 A2 D2          (C missing)
# d3: all .5                   dense all 1, IQR 0      (left out by Q-RM)
# d4: A .7  B .6  C .9  D .8   dense C1 D2 A3 B4

SMALL = pd.DataFrame(
    [("d1", "A", 0.9), ("d1", "B", 0.8), ("d1", "C", 0.8), ("d1", "D", 0.7),
     ("d2", "A", 0.6), ("d2", "B", 0.9), ("d2", "D", 0.6),
     ("d3", "A", 0.5), ("d3", "B", 0.5), ("d3", "C", 0.5), ("d3", "D", 0.5),
     ("d4", "A", 0.7), ("d4", "B", 0.6), ("d4", "C", 0.9), ("d4", "D", 0.8)],
    columns=["dataset", "encoder", "cv_score"],
)

SMALL_EXPECTED = {
    # mean ranks A 7/4, B 8/4, C 4/3 (3 datasets), D 8/4
    "R-M": {"C": 1, "A": 2, "B": 3, "D": 3},
    # medians A 1.5, B 1.5, C 1, D 2
    "R-Md": {"C": 1, "A": 2, "B": 2, "D": 3},
    # best tier: A (d1, d3), B (d2, d3), C (d3, d4), D (d3)
    "R-B": {"A": 1, "B": 1, "C": 1, "D": 2},
    # worst tier: A (d2, d3), B (d3, d4), C (d3), D (d1, d2, d3)
    "R-W": {"C": 1, "A": 2, "B": 2, "D": 3},
    # means A .675, B .7, C .7333, D .65
    "Q-M": {"C": 1, "B": 2, "A": 3, "D": 4},
    # medians A .65, B .7, C .8, D .65
    "Q-Md": {"C": 1, "B": 2, "A": 3, "D": 3},
    # rescaled: d1 (IQR .05, min .7) A 4 B 2 C 2 D 0; d2 (IQR .15, min .6) A 0 B 2 D 0;
    # d4 (IQR .15, min .6) A 2/3 B 0 C 2 D 4/3 -> means A 14/9, B 4/3, C 2, D 4/9
    "Q-RM": {"C": 1, "A": 2, "B": 3, "D": 4},
    # theta .95: A (d1, d3), B (d2, d3), C (d3, d4), D (d3)
    "Q-Th": {"A": 1, "B": 1, "C": 1, "D": 2},
}


@pytest.mark.parametrize("strategy", sorted(SMALL_EXPECTED))
def test_hand_computed_small_case(strategy):
    assert consensus(SMALL, strategy).to_dict() == SMALL_EXPECTED[strategy]


def test_q_th_theta_parameter():
    # theta .85: d1 A B C, d2 B, d3 all, d4 C D -> A 2, B 3, C 3, D 2
    assert consensus(SMALL, "Q-Th", theta=0.85).to_dict() == {"B": 1, "C": 1, "A": 2, "D": 2}


def test_q_rm_ignores_iqr_zero_dataset_and_ranks_undefined_last():
    # E appears only on the IQR-0 dataset d3: its Q-RM is undefined, so it comes last.
    frame = pd.concat([SMALL, pd.DataFrame({"dataset": ["d3"], "encoder": ["E"], "cv_score": [0.5]})])
    ranking = consensus(frame, "Q-RM")
    assert ranking.to_dict() == {"C": 1, "A": 2, "B": 3, "D": 4, "E": 5}
    # Changing the scores on the IQR-0 dataset uniformly changes nothing.
    shifted = frame.assign(cv_score=np.where(frame.dataset == "d3", 0.1, frame.cv_score))
    assert consensus(shifted, "Q-RM").to_dict() == ranking.to_dict()


def test_r_nem_hand_computed():
    # A > B > C on every dataset: mean ranks 1, 2, 3. q(0.05, 3, inf) = 3.314 (Demsar's table
    # gives q/sqrt(2) = 2.343), so CD = 2.343 * sqrt(3 * 4 / (6 N)).
    def frame(n):
        rows = [(f"d{i}", e, s) for i in range(n) for e, s in (("A", 0.9), ("B", 0.8), ("C", 0.7))]
        return pd.DataFrame(rows, columns=["dataset", "encoder", "cv_score"])

    # N = 20: CD = 0.741 < 1, so B has 1 better (A), C has 2 (A, B).
    assert consensus(frame(20), "R-Nem").to_dict() == {"A": 1, "B": 2, "C": 3}
    # N = 2: CD = 2.343 > 2: nothing significant, all tie.
    assert consensus(frame(2), "R-Nem").to_dict() == {"A": 1, "B": 1, "C": 1}
    # N = 5: CD = 1.482: only A vs C is significant -> A 0, B 0, C 1.
    assert consensus(frame(5), "R-Nem").to_dict() == {"A": 1, "B": 1, "C": 2}
    assert consensus(frame(5), "R-Nem", alpha=0.5).to_dict() == {"A": 1, "B": 2, "C": 3}


def test_every_encoder_appears_and_ranks_are_dense():
    rng = np.random.default_rng(4)
    frame = _random_scores(rng, n_groups=1, n_datasets=12, n_encoders=9, missing=0.3)
    for strategy in STRATEGIES:
        ranking = consensus(frame, strategy)
        assert set(ranking.index) == set(frame.encoder)
        assert ranking.min() == 1
        assert set(ranking) == set(range(1, ranking.max() + 1))  # dense
        assert list(ranking) == sorted(ranking)


# --- naive per-combination reference (pandas, one combination at a time) -------------------

def _naive(frame: pd.DataFrame, strategy: str, theta=0.95, alpha=0.05) -> pd.Series:
    f = frame.copy()
    f["rank"] = f.groupby("dataset")["cv_score"].rank(method="dense", ascending=False)
    f["avg"] = f.groupby("dataset")["cv_score"].rank(method="average", ascending=False)
    by_enc = f.groupby("encoder")
    if strategy == "R-M":
        agg, higher = by_enc["rank"].mean(), False
    elif strategy == "R-Md":
        agg, higher = by_enc["rank"].median(), False
    elif strategy == "R-B":
        agg, higher = by_enc["rank"].apply(lambda r: (r == 1).sum()), True
    elif strategy == "R-W":
        worst = f.groupby("dataset")["rank"].transform("max")
        agg, higher = (f["rank"] == worst).groupby(f["encoder"]).sum(), False
    elif strategy == "Q-M":
        agg, higher = by_enc["cv_score"].mean(), True
    elif strategy == "Q-Md":
        agg, higher = by_enc["cv_score"].median(), True
    elif strategy == "Q-RM":
        parts = []
        for _, d in f.groupby("dataset"):
            iqr = stats.iqr(d["cv_score"].to_numpy())
            if iqr != 0:
                parts.append(pd.Series((d["cv_score"] - d["cv_score"].min()).to_numpy() / iqr,
                                       index=d["encoder"].to_numpy()))
        rescaled = pd.concat(parts) if parts else pd.Series(dtype=float)
        agg = rescaled.groupby(level=0).mean().reindex(by_enc.size().index)
        higher = True
    elif strategy == "Q-Th":
        best = f.groupby("dataset")["cv_score"].transform("max")
        agg, higher = (f["cv_score"] >= theta * best).groupby(f["encoder"]).sum(), True
    elif strategy == "R-Nem":
        mean = by_enc["avg"].mean()
        k, n = len(mean), f["dataset"].nunique()
        q = stats.studentized_range.ppf(1 - alpha, k, np.inf)
        cd = q / np.sqrt(2) * np.sqrt(k * (k + 1) / (6 * n))
        agg = pd.Series({e: sum(mean[o] < mean[e] and mean[e] - mean[o] > cd for o in mean.index)
                         for e in mean.index})
        higher = False
    else:
        raise AssertionError(strategy)
    key = agg.astype(float).fillna(-np.inf if higher else np.inf)
    return key.rank(method="dense", ascending=not higher).astype(int)


def _random_scores(rng, n_groups, n_datasets, n_encoders, missing, levels=None):
    rows = []
    for g in range(n_groups):
        for d in range(n_datasets):
            for e in range(n_encoders):
                if rng.random() < missing:
                    continue
                score = rng.integers(0, levels) / levels if levels else rng.random()
                rows.append((f"m{g % 3}", f"t{g // 3}", "s", f"d{d}", f"E{e}", score))
    frame = pd.DataFrame(rows, columns=FACTORS + ["dataset", "encoder", "cv_score"])
    # Give one dataset identical scores (IQR 0) in every group.
    frame.loc[frame.dataset == "d0", "cv_score"] = 0.5
    return frame


@pytest.mark.parametrize("levels", [None, 4])
def test_table_matches_naive_reference_on_random_sparse_data(levels):
    rng = np.random.default_rng(5 if levels is None else 6)
    frame = _random_scores(rng, n_groups=6, n_datasets=15, n_encoders=8, missing=0.25, levels=levels)
    table = consensus_table(frame, HEURISTIC_STRATEGIES, theta=0.9, alpha=0.1)
    for (model, tuning, scoring), combo in frame.groupby(FACTORS):
        got = table[(table.model == model) & (table.tuning == tuning) & (table.scoring == scoring)]
        for strategy in HEURISTIC_STRATEGIES:
            mine = got[got.strategy == strategy].set_index("encoder")["rank"].sort_index()
            ref = _naive(combo, strategy, theta=0.9, alpha=0.1).sort_index()
            pd.testing.assert_series_equal(mine, ref, check_names=False, check_dtype=False,
                                           obj=f"{strategy} {model} {tuning}")


def test_table_matches_naive_reference_on_published_data(published):
    table = consensus_table(published)
    assert list(table.columns) == FACTORS + ["strategy", "encoder", "rank"]
    assert table.groupby(FACTORS).ngroups == 48
    assert len(table) == 48 * 9 * 32
    for strategy in ("R-M", "Q-RM", "R-Nem", "R-W"):
        for key, combo in list(published.groupby(FACTORS))[::6]:
            got = table[(table[FACTORS] == pd.Series(key, index=FACTORS)).all(axis=1)
                        & (table.strategy == strategy)]
            mine = got.set_index("encoder")["rank"].sort_index()
            ref = _naive(combo, strategy).sort_index()
            pd.testing.assert_series_equal(mine, ref, check_names=False, check_dtype=False,
                                           obj=f"{strategy} {key}")


@pytest.mark.parametrize(("joint", "blocks"), [(True, True), (True, False), (False, True)])
def test_table_matches_naive_reference_with_nan_scores_ties_and_missing_cells(joint, blocks, monkeypatch):
    # Scores in fifths (many ties, sums exact in any order), cells left out and rows with a NaN
    # score, 300 datasets per combination (the medians of such long rows are taken by
    # selection); R-Nem's average ranks summed from the positions (joint counts) or from the
    # average ranks themselves; the ranks counted per combination or over all at once.
    module = importlib.import_module("encbench.stats.consensus")
    if not joint:
        monkeypatch.setattr(module._RankedCube, "JOINT_COUNTS", 0)
    monkeypatch.setattr(module._RankedCube, "BLOCK_CELLS", 0 if blocks else 1 << 40)
    rng = np.random.default_rng(31)
    frame = _random_scores(rng, n_groups=3, n_datasets=300, n_encoders=7, missing=0.3, levels=5)
    frame.loc[rng.random(len(frame)) < 0.1, "cv_score"] = np.nan
    frame.loc[(frame.dataset == "d1") & (frame.encoder != "E0"), "cv_score"] = np.nan  # one score
    table = consensus_table(frame, HEURISTIC_STRATEGIES, theta=0.9, alpha=0.1)
    for (model, tuning, scoring), combo in frame.groupby(FACTORS):
        got = table[(table.model == model) & (table.tuning == tuning) & (table.scoring == scoring)]
        scored = combo.dropna(subset=["cv_score"])
        for strategy in HEURISTIC_STRATEGIES:
            mine = got[got.strategy == strategy].set_index("encoder")["rank"].sort_index()
            ref = _naive(scored, strategy, theta=0.9, alpha=0.1).sort_index()
            pd.testing.assert_series_equal(mine, ref, check_names=False, check_dtype=False,
                                           obj=f"{strategy} {model} {tuning} {joint=} {blocks=}")


def test_table_equals_consensus_per_combination_for_all_strategies():
    rng = np.random.default_rng(7)
    frame = _random_scores(rng, n_groups=4, n_datasets=10, n_encoders=6, missing=0.2)
    table = consensus_table(frame, STRATEGIES)
    assert list(table.strategy.unique()) == list(STRATEGIES)
    for key, combo in frame.groupby(FACTORS):
        got = table[(table[FACTORS] == pd.Series(key, index=FACTORS)).all(axis=1)]
        for strategy in STRATEGIES:
            mine = got[got.strategy == strategy].set_index("encoder")["rank"]
            pd.testing.assert_series_equal(mine, consensus(combo, strategy), check_names=False)


def test_table_by_other_columns_and_string_by():
    frame = SMALL.assign(group="g")
    table = consensus_table(frame, ["R-M"], by="group")
    assert list(table.columns) == ["group", "strategy", "encoder", "rank"]
    assert dict(zip(table.encoder, table["rank"])) == SMALL_EXPECTED["R-M"]
    bare = consensus_table(SMALL, "Q-M", by=())
    assert list(bare.columns) == ["strategy", "encoder", "rank"]


def test_nan_scores_count_as_missing():
    frame = pd.concat([SMALL, pd.DataFrame({"dataset": ["d2"], "encoder": ["C"], "cv_score": [np.nan]})])
    assert consensus(frame, "R-M").to_dict() == SMALL_EXPECTED["R-M"]


def test_strategy_parameters():
    assert strategy_parameters("Q-Th") == ("theta",)
    assert strategy_parameters("R-Nem") == ("alpha",)
    assert strategy_parameters("R-M") == ()


def test_strategies_come_from_the_registry():
    assert STRATEGIES == tuple(vocab.STRATEGY_REGISTRY)
    assert HEURISTIC_STRATEGIES == ("R-M", "R-Md", "R-B", "R-W", "Q-M", "Q-Md", "Q-RM", "Q-Th", "R-Nem")
    for name, spec in vocab.STRATEGY_REGISTRY.items():
        assert strategy_parameters(name) == spec.param_names


def test_registry_defaults_are_the_library_defaults():
    # a parameter left out takes the registry's default
    assert consensus(SMALL, "Q-Th").to_dict() == consensus(SMALL, "Q-Th", theta=vocab.THETA.default).to_dict()
    assert consensus(SMALL, "R-Nem").to_dict() == consensus(SMALL, "R-Nem", alpha=vocab.ALPHA.default).to_dict()


def test_a_bad_parameter_names_the_strategies_that_use_it():
    """The error of a bad parameter value names the strategy (or strategies) asked for that use
    it, the parameter, what it accepts and the value: the registry's constraint speaks."""
    with pytest.raises(ValueError) as caught:
        consensus(SMALL, "Q-Th", theta=1.5)
    assert str(caught.value) == "strategy 'Q-Th': theta must be a number in (0, 1]: got 1.5"
    with pytest.raises(ValueError) as caught:
        consensus_table(SMALL, ["R-M", "R-Nem"], by=(), alpha=2)
    assert str(caught.value) == "strategy 'R-Nem': alpha must be a number in (0, 1): got 2"
    with pytest.raises(ValueError) as caught:
        params_for(["Q-Imp"], {"n_iter": 2.5})
    assert str(caught.value) == "strategy 'Q-Imp': n_iter must be a positive integer: got 2.5"


def test_params_for_keeps_what_the_strategies_use_and_validates():
    values = {"theta": 0.9, "alpha": 0.1}
    assert params_for(["R-M"], values) == {}
    assert params_for("Q-Th", values) == {"theta": 0.9}
    assert params_for(["R-Nem", "Q-Th"], values) == {"theta": 0.9, "alpha": 0.1}  # order of values
    assert params_for(["R-M", "R-Kem"]) == {}
    assert params_for(["Q-Imp"], {"n_iter": 5}) == {"n_iter": 5}
    assert isinstance(params_for("Q-Th", {"theta": np.float64(0.9)})["theta"], float)
    with pytest.raises(ValueError, match=r"theta must be a number in \(0, 1\]: got 1.5"):
        params_for(["Q-Th"], {"theta": 1.5})
    with pytest.raises(ValueError, match="unknown strategy parameter 'thetta'"):
        params_for(["Q-Th"], {"thetta": 0.9})
    with pytest.raises(ValueError, match="unknown strategy 'Q-X'"):
        params_for(["Q-X"], values)
    with pytest.raises(ValueError, match="strategies is empty"):
        params_for([], values)


# --- errors ----------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: consensus(SMALL, "R-Mean"), "unknown strategy 'R-Mean'"),
        (lambda: consensus(SMALL.drop(columns="encoder"), "R-M"), r"lacks required column\(s\) \['encoder'\]"),
        (lambda: consensus(SMALL.iloc[:0], "R-M"), "empty"),
        (lambda: consensus(SMALL.assign(cv_score="high"), "R-M"), "numeric: got 'high'"),
        (lambda: consensus(SMALL.assign(cv_score=SMALL.cv_score.astype(object).where(SMALL.index != 3, "0.5")), "R-M"),
         "numeric: got '0.5' in row 3"),
        (lambda: consensus(SMALL.assign(cv_score=True), "R-M"), "numeric"),
        (lambda: consensus(SMALL.assign(cv_score=np.inf), "R-M"), "finite: got inf"),
        (lambda: consensus(SMALL.assign(cv_score=np.nan), "R-M"), "no usable rows"),
        (lambda: consensus(pd.concat([SMALL, SMALL.iloc[:1]]), "R-M"), "2 rows for dataset='d1', encoder='A'"),
        (lambda: consensus(SMALL, "Q-Th", theta=1.5), "theta must be a number in \\(0, 1\\]: got 1.5"),
        (lambda: consensus(SMALL, "R-Nem", alpha=0), "alpha must be a number in \\(0, 1\\): got 0"),
        (lambda: consensus(SMALL, "R-M", theta=0.9), "unknown parameter 'theta'"),
        (lambda: consensus(SMALL, "Q-Imp", n_iter=0), "n_iter must be a positive integer: got 0"),
        (lambda: consensus(SMALL, "R-Kem", time_limit=-1), "time_limit .* got -1"),
        (lambda: consensus([1, 2], "R-M"), "DataFrame: got 'list'"),
        (lambda: consensus_table(SMALL, ["R-M", "nope"], by=()), "unknown strategy 'nope'"),
        (lambda: consensus_table(SMALL, ["R-M"]), r"lacks required column\(s\) \['model', 'tuning', 'scoring'\]"),
        (lambda: consensus_table(SMALL, [], by=()), "strategies is empty"),
        (lambda: consensus_table(SMALL.assign(model=[None] + ["x"] * 14), ["R-M"], by="model"),
         "missing values in key column 'model'"),
    ],
)
def test_errors_name_the_offending_value(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_several_combinations_passed_to_consensus_is_an_error(published):
    with pytest.raises(ValueError, match="pass one factor combination"):
        consensus(published, "R-M")


def test_a_registry_strategy_without_a_computation_fails_at_import():
    import importlib

    module = importlib.import_module("encbench.stats.consensus")  # the package exports a function of that name
    spec = vocab.STRATEGY_REGISTRY["R-M"]
    assert module._bind("R-M", spec).compute is module._COMPUTE["R-M"]
    with pytest.raises(ValueError, match="strategy 'X-New' of encbench.vocab.STRATEGY_REGISTRY has no computation"):
        module._bind("X-New", spec)
    assert tuple(module._REGISTRY) == module.STRATEGIES == vocab.AGGREGATIONS


@pytest.mark.parametrize("nudged", [False, True])
def test_table_matches_naive_reference_with_near_ties_and_a_lower_is_better_metric(nudged):
    # Scores in quarters (sums exact in any order), missing cells, 40 encoders (6 bits of the rank sort's key) and an
    # RMSE combination (negated in the cube). Nudged: some scores one ulp from another, which
    # the packed sort key cannot tell apart (their rows are sorted again); the rank strategies
    # are checked there, the quality ones not, as pandas sums the scores in another order.
    rng = np.random.default_rng(21)
    frame = _random_scores(rng, n_groups=4, n_datasets=12, n_encoders=40, missing=0.3, levels=4)
    # Q-Th refuses RMSE; Q-RM's quotients are inexact, so pandas' other order of summing them
    # can round apart (it is checked against the reference in the tests above)
    strategies = [s for s in HEURISTIC_STRATEGIES if s not in ("Q-Th", "Q-RM")]
    if nudged:
        near = rng.random(len(frame)) < 0.3
        frame.loc[near, "cv_score"] = np.nextafter(frame.loc[near, "cv_score"].to_numpy(), 2.0)
        strategies = [s for s in strategies if s.startswith("R-")]
    frame.loc[frame.model == "m1", "scoring"] = "RMSE"
    table = consensus_table(frame, strategies, alpha=0.1)
    for (model, tuning, scoring), combo in frame.groupby(FACTORS):
        got = table[(table.model == model) & (table.tuning == tuning) & (table.scoring == scoring)]
        oriented = combo.assign(cv_score=-combo.cv_score) if scoring == "RMSE" else combo
        for strategy in strategies:
            mine = got[got.strategy == strategy].set_index("encoder")["rank"].sort_index()
            ref = _naive(oriented, strategy, alpha=0.1).sort_index()
            pd.testing.assert_series_equal(mine, ref, check_names=False, check_dtype=False,
                                           obj=f"{strategy} {model} {tuning} {scoring}")


@pytest.mark.parametrize("threads", [2, 3])
def test_a_cube_split_over_threads_ranks_as_one_pass(threads, published, monkeypatch):
    # The published results (48 combinations) and random scores with NaN, missing cells, ties
    # and a lower-is-better combination, every strategy: the threads' shares joined give the
    # ranks of one pass over the cube, bit for bit, in the order the strategies were asked.
    module = importlib.import_module("encbench.stats.consensus")
    rng = np.random.default_rng(41)
    frame = _random_scores(rng, n_groups=5, n_datasets=30, n_encoders=9, missing=0.3, levels=6)
    frame.loc[rng.random(len(frame)) < 0.1, "cv_score"] = np.nan
    frame.loc[frame.model == "m1", "scoring"] = "RMSE"
    cases = [(published, HEURISTIC_STRATEGIES, {}),
             (frame, tuple(s for s in STRATEGIES if s not in ("Q-Th", "Q-Imp")), {"alpha": 0.1})]
    for scores, strategies, params in cases:
        monkeypatch.setattr(module, "PARALLEL_CELLS", 1 << 60)
        one_pass = consensus_table(scores, strategies, **params)
        monkeypatch.setattr(module, "PARALLEL_CELLS", 0)
        monkeypatch.setattr(module, "threads", lambda: threads)
        split = consensus_table(scores, strategies, **params)
        pd.testing.assert_frame_equal(split, one_pass)
        assert list(split.strategy.unique()) == list(strategies)


def test_threads_used_for_a_large_cube_only(monkeypatch):
    module = importlib.import_module("encbench.stats.consensus")
    started = []
    real = module.ThreadPoolExecutor

    def counting(*args, **kwargs):
        started.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, "ThreadPoolExecutor", counting)
    monkeypatch.setattr(module, "threads", lambda: 2)
    rng = np.random.default_rng(43)
    frame = _random_scores(rng, n_groups=4, n_datasets=10, n_encoders=6, missing=0.2)
    consensus_table(frame)
    assert started == []  # 240 cells: one pass
    monkeypatch.setattr(module, "PARALLEL_CELLS", 200)
    consensus_table(frame)
    assert len(started) == 1
    consensus(frame[frame.model == "m0"].query("tuning == 't0'"), "R-M")  # one combination
    assert len(started) == 1
