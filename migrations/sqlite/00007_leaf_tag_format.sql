-- Formatted and opaque tags: see the MySQL migration of the same number.

-- +goose Up
CREATE TABLE IF NOT EXISTS leaf_tag_format (
  biz_tag       VARCHAR(128) NOT NULL PRIMARY KEY,
  format        VARCHAR(256) NOT NULL DEFAULT '',
  reset         VARCHAR(8)   NOT NULL DEFAULT 'never',
  time_zone     VARCHAR(64)  NOT NULL DEFAULT '',
  opaque_bits   INTEGER      NOT NULL DEFAULT 0,
  key_id        VARCHAR(16)  NOT NULL DEFAULT '',
  pruned_before VARCHAR(8)   NOT NULL DEFAULT '',
  update_time   TIMESTAMP    NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- +goose Down
-- Kept: see the MySQL migration.
