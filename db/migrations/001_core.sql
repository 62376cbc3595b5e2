-- Core tables of the results store (docs/ARCHITECTURE.md, Results database). Names are a contract.
CREATE TABLE datasets (
    dataset        VARCHAR PRIMARY KEY,      -- OpenML id as text, or 'file:<sha256 prefix>'
    name           VARCHAR NOT NULL,
    source         VARCHAR NOT NULL CHECK (source IN ('openml', 'upload', 'bundled')),
    openml_id      INTEGER,
    n_rows         INTEGER,
    n_features     INTEGER,
    n_categorical  INTEGER,
    target         VARCHAR,
    positive_class VARCHAR,
    sha256         VARCHAR,
    added_at       TIMESTAMP NOT NULL DEFAULT current_timestamp
);

CREATE TABLE runs (
    run_id      VARCHAR PRIMARY KEY,
    created_at  TIMESTAMP NOT NULL DEFAULT current_timestamp,
    finished_at TIMESTAMP,
    status      VARCHAR NOT NULL CHECK (status IN ('queued', 'running', 'done', 'failed', 'cancelled')),
    origin      VARCHAR NOT NULL CHECK (origin IN ('published', 'local')),
    config      JSON,
    error       VARCHAR,
    label       VARCHAR,                      -- human-readable name shown in the app
    n_expected  INTEGER                       -- result rows the run will write when complete
);

-- One row per (experiment, fold). Published rows are already fold-averaged: fold = -1, n_folds = 1.
CREATE TABLE results (
    run_id      VARCHAR NOT NULL,
    dataset     VARCHAR NOT NULL,
    encoder     VARCHAR NOT NULL,
    model       VARCHAR NOT NULL,
    tuning      VARCHAR NOT NULL,
    scoring     VARCHAR NOT NULL,
    fold        INTEGER NOT NULL,
    n_folds     INTEGER NOT NULL,             -- folds the experiment has when complete
    cv_score    DOUBLE,
    time        DOUBLE,
    status      VARCHAR NOT NULL CHECK (status IN ('ok', 'failed', 'timeout')),
    error       VARCHAR,
    finished_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
    PRIMARY KEY (run_id, dataset, encoder, model, tuning, scoring, fold)
);

-- One row per complete experiment, folds averaged; an experiment with any failed or missing fold is
-- left out. Every ranking reads this view.
CREATE VIEW scores AS
SELECT r.dataset, r.model, r.tuning, r.scoring, r.encoder,
       avg(r.cv_score) AS cv_score,
       sum(r.time)     AS time,
       u.origin,
       r.run_id
FROM results AS r
JOIN runs AS u USING (run_id)
GROUP BY r.run_id, r.dataset, r.model, r.tuning, r.scoring, r.encoder, u.origin
HAVING bool_and(r.status = 'ok') AND count(*) = max(r.n_folds);
