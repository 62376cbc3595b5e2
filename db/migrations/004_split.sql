-- The outer evaluation scheme is part of an experiment's identity: 'cv' is the
-- published stratified 5-fold protocol, 'time' forward folds over a time column. Every row so far
-- (published and local) is 'cv'. `split` enters the primary key, so a cv and a time result of the
-- same coordinates both fit even under one run id; DuckDB cannot change a primary key in place,
-- so the table is rebuilt (the scores view depends on it and is recreated below).
DROP VIEW scores;

CREATE TABLE results_split (
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
    PRIMARY KEY (run_id, dataset, encoder, model, tuning, scoring, split, fold)
);
INSERT INTO results_split
SELECT run_id, dataset, encoder, model, tuning, scoring, fold, n_folds, cv_score, time, status,
       error, finished_at, encode_time, 'cv'
FROM results;
DROP TABLE results;
ALTER TABLE results_split RENAME TO results;

-- 003's view (fold-ordered sums, encode_time) with `split` as one more factor: grouped by it, so
-- the two schemes are never averaged together, and listed last so earlier columns keep their place.
CREATE VIEW scores AS
SELECT r.dataset, r.model, r.tuning, r.scoring, r.encoder,
       sum(r.cv_score ORDER BY r.fold) / count(*)    AS cv_score,
       sum(r.time ORDER BY r.fold)                   AS time,
       u.origin,
       r.run_id,
       sum(r.encode_time ORDER BY r.fold) / count(*) AS encode_time,
       r.split
FROM results AS r
JOIN runs AS u USING (run_id)
GROUP BY r.run_id, r.dataset, r.model, r.tuning, r.scoring, r.encoder, r.split, u.origin
HAVING bool_and(r.status = 'ok') AND count(*) = max(r.n_folds);
