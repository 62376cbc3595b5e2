-- Who is running a run and when it last reported, so a run whose process was killed is shown as
-- interrupted instead of running forever.
ALTER TABLE runs ADD COLUMN runner_host VARCHAR;
ALTER TABLE runs ADD COLUMN runner_pid INTEGER;
ALTER TABLE runs ADD COLUMN heartbeat_at TIMESTAMP;
