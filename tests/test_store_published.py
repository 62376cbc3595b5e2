"""The published results' reproducibility notes (encbench.store.published)."""
import numpy as np
import pandas as pd
import pytest

from encbench import vocab
from encbench.data import load_dataset
from encbench.engine.protocol import Payload, Task, run_task
from encbench.store.published import (
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
    assert reproducibility_note("LGBM", "Acc", "MT") != ""
    assert reproducibility_note("LGBM", "Acc", "ME_1") == ""


@pytest.mark.parametrize("model, scoring, encoder, flagged", [
    ("LGBM", "Acc", "MT", True),
    ("LGBM", "BAcc", "OH", True),
    ("LGBM", "F1", "CVGLMM_5", True),
    ("LGBM", "AUC", "MT", False),
    ("LGBM", "Acc", "WoE", False),
    ("LGBM", "F1", "ME_0.1", False),
    ("DT", "Acc", "MT", False),
    ("kNN", "F1", "OH", False),
])
def test_notes_flag_lightgbm_label_metrics_of_the_earlier_run(model, scoring, encoder, flagged):
    assert (reproducibility_note(model, scoring, encoder) != "") is flagged


def test_the_final_code_encoders_are_registry_names():
    assert LGBM_LABEL_FINAL_CODE_ENCODERS <= set(vocab.ENCODERS)


def test_notes_of_a_frame_follow_its_rows():
    frame = pd.DataFrame({"model": ["LGBM", "DT", "LGBM"], "scoring": ["Acc", "Acc", "AUC"],
                          "encoder": ["OH", "OH", "OH"]}, index=[7, 3, 5])
    notes = reproducibility_notes(frame)
    assert list(notes.index) == [7, 3, 5]
    assert [bool(n) for n in notes] == [True, False, False]
    assert reproducibility_notes(frame.iloc[:0]).empty
