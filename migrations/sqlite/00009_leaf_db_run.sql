-- The identity of each run of a database node: see the MySQL migration of
-- the same number. An embedded SQLite file's "start" is its machine's
-- boot, which no leaf outlives, so it has no table of runs; leaf_db_start
-- has the column, empty, to be the same table on every store.

-- +goose Up
ALTER TABLE leaf_db_start ADD COLUMN run CHAR(32) NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE leaf_db_start DROP COLUMN run;
