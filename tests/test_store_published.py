"""The published results' reproducibility notes (encbench.store.published)."""
import numpy as np
import pandas as pd
import pytest

from encbench import vocab
from encbench.data import load_dataset
from encbench.engine.protocol import Payload, Task, run_task
from encbench.store.published import (
    GLMM_ENCODERS,
    LGBM_LABEL_FINAL_CODE_ENCODERS,
    load_published_results,
    reproducibility_note,
    reproducibility_notes,
)


@pytest.fixture(scope="module")
def monks_lgbm():
    published = load_published_results()
    cells = published[(published["dataset"] == "333") & (published["model"] == "LGBM")
                      & (published["tuning"] == "no")]
    return cells.pivot_table(index="encoder", columns="scoring", values="cv_score")


def test_the_published_data_holds_two_runs_of_lightgbm(monks_lgbm):
    """MT, PBMT, ME and WoE order monks-problems-1's levels alike, so LightGBM grows the same
    trees on them: one published AUC for all. Their label metrics split in two groups, the
    encoders of the study's first LightGBM run (MT, PBMT) and those added later (ME, WoE)."""
    same_trees = ["MT", "PBMT_0.01", "ME_1", "WoE"]
    assert monks_lgbm.loc[same_trees, "AUC"].nunique() == 1
    acc = monks_lgbm["Acc"]
    assert acc["MT"] == acc["PBMT_0.01"]
    assert acc["ME_1"] == acc["WoE"] == acc["ME_10"]
    assert acc["MT"] - acc["ME_1"] == pytest.approx(0.0649, abs=1e-4)


def test_the_engine_gives_one_label_score_to_encoders_with_the_same_trees(monks_lgbm):
    """The engine runs the study's final code: MT and ME_1 get the same Acc, the published ME_1
    one; MT's published Acc is the earlier run's."""
    monks = Payload.from_dataset(load_dataset("bundled:monks-problems-1"))
    means = {}
    for encoder in ("MT", "ME_1"):
        scores = []
        for fold in range(5):
            (row,) = run_task(Task(monks.key, encoder, fold, 5, ("LGBM",), ("Acc",), "no"), monks)
            assert row["status"] == "ok", row["error"]
            scores.append(row["cv_score"])
        means[encoder] = np.mean(scores)
    assert means["MT"] == means["ME_1"] == pytest.approx(monks_lgbm.loc["ME_1", "Acc"], abs=1e-9)
    assert abs(means["MT"] - monks_lgbm.loc["MT", "Acc"]) > 0.05
    assert reproducibility_note("LGBM", "Acc", "MT", "no") != ""
    assert reproducibility_note("LGBM", "Acc", "ME_1", "no") == ""


@pytest.mark.parametrize("model, scoring, encoder, tuning, flagged", [
    ("LGBM", "Acc", "MT", "no", True),
    ("LGBM", "BAcc", "OH", "no", True),
    ("LGBM", "F1", "CVGLMM_5", "no", True),
    ("LGBM", "AUC", "MT", "no", False),
    ("LGBM", "Acc", "WoE", "no", False),
    ("LGBM", "F1", "ME_0.1", "no", False),
    ("DT", "Acc", "MT", "no", False),
    ("kNN", "F1", "OH", "no", False),
    ("LogReg", "AUC", "GLMM", "model", True),
    ("kNN", "AUC", "BUGLMM_10", "model", True),
    ("DT", "AUC", "CVGLMM_2", "model", True),
    ("LogReg", "BAcc", "GLMM", "model", False),
    ("LogReg", "AUC", "GLMM", "no", False),
    ("LogReg", "AUC", "GLMM", "full", False),
    ("LogReg", "AUC", "MT", "model", False),
])
def test_notes_flag_the_published_cells_of_another_code(model, scoring, encoder, tuning, flagged):
    assert (reproducibility_note(model, scoring, encoder, tuning) != "") is flagged


def test_the_final_code_encoders_are_registry_names():
    assert LGBM_LABEL_FINAL_CODE_ENCODERS <= set(vocab.ENCODERS)
    assert GLMM_ENCODERS == {e for e in vocab.ENCODERS if "GLMM" in e}


def test_notes_of_a_frame_follow_its_rows():
    frame = pd.DataFrame({"model": ["LGBM", "DT", "LGBM", "DT"], "scoring": ["Acc", "Acc", "AUC", "AUC"],
                          "encoder": ["OH", "OH", "OH", "GLMM"], "tuning": ["no", "no", "no", "model"]},
                         index=[7, 3, 5, 2])
    notes = reproducibility_notes(frame)
    assert list(notes.index) == [7, 3, 5, 2]
    assert [bool(n) for n in notes] == [True, False, False, True]
    assert reproducibility_notes(frame.iloc[:0]).empty


def test_under_model_tuning_the_published_glmm_auc_is_an_auc_of_labels():
    """An AUC computed from predicted labels is a balanced accuracy. Under model tuning the
    published AUC of the GLMM encoders is about their BAcc, for every model; every other group of
    cells (other encoders, other tuning strategies, GLMM without tuning) has AUC well above BAcc."""
    published = load_published_results()
    wide = published.pivot_table(index=["dataset", "encoder", "model", "tuning"], columns="scoring",
                                 values="cv_score").dropna(subset=["AUC", "BAcc"]).reset_index()
    wide["gap"] = wide["AUC"] - wide["BAcc"]
    wide["glmm"] = wide["encoder"].isin(GLMM_ENCODERS)
    gaps = wide.groupby(["tuning", "model", "glmm"])["gap"].mean()
    for (tuning, model, glmm), gap in gaps.items():
        if tuning == "model" and glmm:
            assert -0.02 < gap < 0.005, (tuning, model, gap)
        else:
            assert gap > 0.04, (tuning, model, glmm, gap)
    assert set(gaps.loc["model"].index.get_level_values("model")) == {"DT", "kNN", "LogReg"}


def test_the_engine_reproduces_a_published_glmm_auc_as_a_tuned_balanced_accuracy():
    """monks-problems-1, LogReg, model tuning, CVGLMM_2: the published AUC (0.7464) is the
    engine's tuned BAcc of the cell, and far from the engine's AUC on probabilities."""
    published = load_published_results()
    cell = published[(published["dataset"] == "333") & (published["encoder"] == "CVGLMM_2")
                     & (published["model"] == "LogReg") & (published["tuning"] == "model")]
    published_auc = cell.set_index("scoring").loc["AUC", "cv_score"]
    monks = Payload.from_dataset(load_dataset("bundled:monks-problems-1"))
    scores = {"AUC": [], "BAcc": []}
    for fold in range(5):
        for row in run_task(Task(monks.key, "CVGLMM_2", fold, 5, ("LogReg",), ("AUC", "BAcc"), "model"), monks):
            assert row["status"] == "ok", row["error"]
            scores[row["scoring"]].append(row["cv_score"])
    assert np.mean(scores["BAcc"]) == pytest.approx(published_auc, abs=1e-4)
    assert abs(np.mean(scores["AUC"]) - published_auc) > 0.1
    assert reproducibility_note("LogReg", "AUC", "CVGLMM_2", "model") != ""


def test_vote_cells_of_the_scripts_that_shifted_its_labels_are_noted():
    """vote's published DT/kNN/LogReg/SVM cells without and with model tuning came from scripts that
    shifted its labels by one row: they sit far below the same models under full tuning (code
    that kept each row's label) and below LightGBM, and only they carry the note."""
    published = load_published_results()
    vote = published[(published["dataset"] == "56") & (published["scoring"] == "AUC")]
    median = vote.groupby(["model", "tuning"])["cv_score"].median()
    for model in ("DT", "kNN", "LogReg"):
        assert median[(model, "no")] < 0.82 and median[(model, "model")] < 0.82
        assert median[(model, "full")] > 0.95
    assert median[("LGBM", "no")] > 0.98
    frame = pd.DataFrame({"dataset": ["56", "56", "56", "56", "31"], "model": ["DT", "SVM", "LGBM", "DT", "DT"],
                          "scoring": ["AUC"] * 5, "encoder": ["OH"] * 5,
                          "tuning": ["no", "model", "no", "full", "no"]})
    assert [bool(n) for n in reproducibility_notes(frame)] == [True, True, False, False, False]
    assert reproducibility_note("kNN", "F1", "MT", "no", "56") != ""
    assert reproducibility_note("kNN", "F1", "MT", "no") == ""   # without the dataset: unknown
