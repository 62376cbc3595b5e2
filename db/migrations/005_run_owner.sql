-- Who may delete a run from the app: the browser session that launched it, by the random token
-- that session holds (never shown to other sessions). NULL for runs started from the command
-- line and for runs recorded before owners existed: only the command line deletes those.
ALTER TABLE runs ADD COLUMN owner VARCHAR;
