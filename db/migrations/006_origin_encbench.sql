-- A third origin of results: 'encbench', the results encbench computes itself and ships in
-- db/seed/ (the encoders beyond the study, with the controls OH and MT), kept apart from the
-- published benchmark and from a user's local runs. DuckDB cannot change a CHECK constraint in
-- place, so the runs table is rebuilt (the scores view depends on it and is recreated as 004 made it).
DROP VIEW scores;

CREATE TABLE runs_origin (
    run_id       VARCHAR PRIMARY KEY,
    created_at   TIMESTAMP NOT NULL DEFAULT current_timestamp,
    finished_at  TIMESTAMP,
    status       VARCHAR NOT NULL CHECK (status IN ('queued', 'running', 'done', 'failed', 'cancelled')),
    origin       VARCHAR NOT NULL CHECK (origin IN ('published', 'local', 'encbench')),
    config       JSON,
    error        VARCHAR,
    label        VARCHAR,
    n_expected   INTEGER,
    runner_host  VARCHAR,
    runner_pid   INTEGER,
    heartbeat_at TIMESTAMP,
    owner        VARCHAR
);
INSERT INTO runs_origin
SELECT run_id, created_at, finished_at, status, origin, config, error, label, n_expected,
       runner_host, runner_pid, heartbeat_at, owner
FROM runs;
DROP TABLE runs;
ALTER TABLE runs_origin RENAME TO runs;

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
