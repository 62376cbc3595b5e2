-- Encoding time recorded on its own: the published `time` is the mean per fold of
-- the training-fold *encoding* only (AUC rows have none), while a local `time` is the wall time
-- of encoding + fitting (or tuning) + predicting. `encode_time` compares like with like.
ALTER TABLE results ADD COLUMN encode_time DOUBLE;
UPDATE results SET encode_time = time WHERE run_id = 'published-matteucci2023';

-- The scores view sums in fold order: avg() over a hash aggregate adds the
-- folds in whatever order the rows arrive, so two identical runs could differ by 2e-16 and
-- break ties differently. sum(... ORDER BY fold) / count(*) is the same float as Python's
-- sum of the folds in order divided by their number (numpy's mean of 5 values).
DROP VIEW scores;
CREATE VIEW scores AS
SELECT r.dataset, r.model, r.tuning, r.scoring, r.encoder,
       sum(r.cv_score ORDER BY r.fold) / count(*)    AS cv_score,
       sum(r.time ORDER BY r.fold)                   AS time,
       u.origin,
       r.run_id,
       sum(r.encode_time ORDER BY r.fold) / count(*) AS encode_time
FROM results AS r
JOIN runs AS u USING (run_id)
GROUP BY r.run_id, r.dataset, r.model, r.tuning, r.scoring, r.encoder, u.origin
HAVING bool_and(r.status = 'ok') AND count(*) = max(r.n_folds);
