-- The scores view without aggregating what needs none. A run whose every row is ok, has
-- n_folds = 1 and one fold value (the published import, encbench's own results: one row per
-- experiment, fold -1) has exactly one row per experiment, and that row is its score: its sum
-- over folds is itself and it divides by a count of 1, so the values are bit for bit those of
-- 007's aggregation. Those rows are passed through; every other run is grouped as in 007. A
-- few-group pass over `results` finds the runs; grouping a million rows into a million
-- experiments was most of every page's first query.
DROP VIEW scores;

CREATE VIEW scores AS
WITH one_row_runs AS (
    SELECT run_id FROM results
    GROUP BY run_id
    HAVING bool_and(status = 'ok') AND min(n_folds) = 1 AND max(n_folds) = 1
       AND min(fold) = max(fold)
)
SELECT r.dataset, r.model, r.tuning, r.scoring, r.encoder,
       r.cv_score,
       r.time,
       u.origin,
       r.run_id,
       r.encode_time,
       r.split,
       r.task
FROM results AS r
JOIN runs AS u USING (run_id)
WHERE r.run_id IN (SELECT run_id FROM one_row_runs)
UNION ALL
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
WHERE r.run_id NOT IN (SELECT run_id FROM one_row_runs)
GROUP BY r.run_id, r.dataset, r.model, r.tuning, r.scoring, r.encoder, r.split, r.task, u.origin
HAVING bool_and(r.status = 'ok') AND count(*) = max(r.n_folds);
