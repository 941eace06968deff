-- Per-key sequences, as in the MySQL migration of the same number.

-- +goose Up
CREATE TABLE IF NOT EXISTS leaf_seq_space (
  space       VARCHAR(128) NOT NULL PRIMARY KEY,
  step        BIGINT       NOT NULL,
  sections    INTEGER      NOT NULL,
  create_time TIMESTAMP    NOT NULL DEFAULT CURRENT_TIMESTAMP
);

CREATE TABLE IF NOT EXISTS leaf_seq_section (
  space      VARCHAR(128) NOT NULL,
  section    INTEGER      NOT NULL,
  max_seq    BIGINT       NOT NULL DEFAULT 0,
  holder     VARCHAR(64)  NOT NULL DEFAULT '',
  addr       VARCHAR(255) NOT NULL DEFAULT '',
  expires_ms BIGINT       NOT NULL DEFAULT 0,
  PRIMARY KEY (space, section)
);

CREATE TABLE IF NOT EXISTS leaf_seq_member (
  member     VARCHAR(64)  NOT NULL PRIMARY KEY,
  addr       VARCHAR(255) NOT NULL,
  expires_ms BIGINT       NOT NULL
);

-- +goose Down
DROP TABLE IF EXISTS leaf_seq_member;
DROP TABLE IF EXISTS leaf_seq_section;
DROP TABLE IF EXISTS leaf_seq_space;
