-- The bound a tag declares: see the MySQL migration of the same number.

-- +goose Up
CREATE TABLE IF NOT EXISTS leaf_tag_bound (
  biz_tag     VARCHAR(128) NOT NULL PRIMARY KEY,
  max_id      INTEGER      NOT NULL,
  update_time TIMESTAMP    NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- +goose Down
-- Kept: see the MySQL migration.
