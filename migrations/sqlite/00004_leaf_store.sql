-- Several independent stores: see the MySQL migration of the same number.

-- +goose Up
CREATE TABLE IF NOT EXISTS leaf_store (
  id          INTEGER     NOT NULL PRIMARY KEY CHECK (id = 1),
  store_id    VARCHAR(36) NOT NULL,
  version     BIGINT      NOT NULL DEFAULT 0,
  state       VARCHAR(16) NOT NULL DEFAULT '',
  set_json    TEXT,
  update_time TIMESTAMP   NOT NULL DEFAULT CURRENT_TIMESTAMP
);

INSERT OR IGNORE INTO leaf_store (id, store_id) VALUES (1, lower(hex(randomblob(16))));

CREATE TABLE IF NOT EXISTS leaf_marks (
  store_id    VARCHAR(36)  NOT NULL,
  biz_tag     VARCHAR(128) NOT NULL,
  max_id      BIGINT       NOT NULL,
  update_time TIMESTAMP    NOT NULL DEFAULT CURRENT_TIMESTAMP,
  PRIMARY KEY (store_id, biz_tag)
);

-- +goose Down
-- Kept: see the MySQL migration.
