-- What leaf last saw of the database's start: see the MySQL migration of
-- the same number. For SQLite the node is the machine, and its start the
-- machine's boot.

-- +goose Up
CREATE TABLE IF NOT EXISTS leaf_db_start (
  node        VARCHAR(255) NOT NULL PRIMARY KEY,
  started     BIGINT       NOT NULL,
  durable     INTEGER      NOT NULL,
  jumped_ms   BIGINT       NOT NULL DEFAULT 0,
  update_time TIMESTAMP    NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- +goose Down
DROP TABLE IF EXISTS leaf_db_start;
