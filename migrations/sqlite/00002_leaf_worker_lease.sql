-- Snowflake mode: one row per leased worker id (0..1023), times in Unix
-- milliseconds.

-- +goose Up
CREATE TABLE IF NOT EXISTS leaf_worker_lease (
  worker_id         INTEGER      NOT NULL PRIMARY KEY CHECK (worker_id BETWEEN 0 AND 1023),
  holder            VARCHAR(191) NOT NULL,
  expires_ms        BIGINT       NOT NULL,
  last_timestamp_ms BIGINT       NOT NULL DEFAULT 0,
  update_time       TIMESTAMP    NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- +goose StatementBegin
CREATE TRIGGER IF NOT EXISTS leaf_worker_lease_update_time
AFTER UPDATE ON leaf_worker_lease FOR EACH ROW
WHEN NEW.update_time = OLD.update_time
BEGIN
  UPDATE leaf_worker_lease SET update_time = CURRENT_TIMESTAMP WHERE worker_id = NEW.worker_id;
END;
-- +goose StatementEnd

-- +goose Down
DROP TABLE IF EXISTS leaf_worker_lease;
