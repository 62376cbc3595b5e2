-- The task type is part of an experiment's identity: 'binary' (the published study's binary
-- classification), 'multiclass' or 'regression'. Every row so far (published and local) is
-- binary. A dataset has one task, and a result row carries its dataset's, so that the scores view
-- groups by it and a consensus never pools two tasks. `task` enters the primary key after
-- `split`; DuckDB cannot change a primary key in place, so the table is rebuilt (the scores view
-- depends on it and is recreated below).
ALTER TABLE datasets ADD COLUMN task VARCHAR NOT NULL DEFAULT 'binary';

DROP VIEW scores;

CREATE TABLE results_task (
    run_id      VARCHAR NOT NULL,
    dataset     VARCHAR NOT NULL,
    encoder     VARCHAR NOT NULL,
    model       VARCHAR NOT NULL,
    tuning      VARCHAR NOT NULL,
    scoring     VARCHAR NOT NULL,
    fold        INTEGER NOT NULL,
    n_folds     INTEGER NOT NULL,
    cv_score    DOUBLE,
    time        DOUBLE,
    status      VARCHAR NOT NULL CHECK (status IN ('ok', 'failed', 'timeout')),
    error       VARCHAR,
    finished_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
    encode_time DOUBLE,
    split       VARCHAR NOT NULL DEFAULT 'cv' CHECK (split IN ('cv', 'time')),
    task        VARCHAR NOT NULL DEFAULT 'binary'
                CHECK (task IN ('binary', 'multiclass', 'regression')),
    PRIMARY KEY (run_id, dataset, encoder, model, tuning, scoring, split, task, fold)
);
INSERT INTO results_task
SELECT run_id, dataset, encoder, model, tuning, scoring, fold, n_folds, cv_score, time, status,
       error, finished_at, encode_time, split, 'binary'
FROM results;
DROP TABLE results;
ALTER TABLE results_task RENAME TO results;

-- 006's view with `task` as one more never-pooled column: grouped by it, and listed last so
-- earlier columns keep their place.
CREATE VIEW scores AS
SELECT r.dataset, r.model, r.tuning, r.scoring, r.encoder,
       sum(r.cv_score ORDER BY r.fold) / count(*)    AS cv_score,
       sum(r.time ORDER BY r.fold)                   AS time,
       u.origin,
       r.run_id,
       sum(r.encode_time ORDER BY r.fold) / count(*) AS encode_time,
       r.split,
       r.task
FROM results AS r
JOIN runs AS u USING (run_id)
GROUP BY r.run_id, r.dataset, r.model, r.tuning, r.scoring, r.encoder, r.split, r.task, u.origin
HAVING bool_and(r.status = 'ok') AND count(*) = max(r.n_folds);
