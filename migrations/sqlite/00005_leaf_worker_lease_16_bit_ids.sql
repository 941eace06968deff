-- Snowflake mode: worker ids of up to 16 bits, 0..65535, as in the MySQL
-- migration of the same number. SQLite cannot change a CHECK constraint in
-- place, so the table is made anew with the wider one, the rows are copied
-- to it as they are, and it takes the old one's name and trigger; goose
-- runs all of it in one transaction.

-- +goose Up
CREATE TABLE leaf_worker_lease_new (
  worker_id         INTEGER      NOT NULL PRIMARY KEY CHECK (worker_id BETWEEN 0 AND 65535),
  holder            VARCHAR(191) NOT NULL,
  expires_ms        BIGINT       NOT NULL,
  last_timestamp_ms BIGINT       NOT NULL DEFAULT 0,
  update_time       TIMESTAMP    NOT NULL DEFAULT CURRENT_TIMESTAMP,
  instance          VARCHAR(64)  NOT NULL DEFAULT ''
);

INSERT INTO leaf_worker_lease_new (worker_id, holder, expires_ms, last_timestamp_ms, update_time, instance)
SELECT worker_id, holder, expires_ms, last_timestamp_ms, update_time, instance FROM leaf_worker_lease;

-- Drops the old table's trigger with it.
DROP TABLE leaf_worker_lease;

ALTER TABLE leaf_worker_lease_new RENAME TO leaf_worker_lease;

-- +goose StatementBegin
CREATE TRIGGER leaf_worker_lease_update_time
AFTER UPDATE ON leaf_worker_lease FOR EACH ROW
WHEN NEW.update_time = OLD.update_time
BEGIN
  UPDATE leaf_worker_lease SET update_time = CURRENT_TIMESTAMP WHERE worker_id = NEW.worker_id;
END;
-- +goose StatementEnd

-- +goose Down
-- Fails while the table holds a worker id above 1023: its row keeps the
-- last timestamp used on that id, which no holder may forget.
CREATE TABLE leaf_worker_lease_old (
  worker_id         INTEGER      NOT NULL PRIMARY KEY CHECK (worker_id BETWEEN 0 AND 1023),
  holder            VARCHAR(191) NOT NULL,
  expires_ms        BIGINT       NOT NULL,
  last_timestamp_ms BIGINT       NOT NULL DEFAULT 0,
  update_time       TIMESTAMP    NOT NULL DEFAULT CURRENT_TIMESTAMP,
  instance          VARCHAR(64)  NOT NULL DEFAULT ''
);

INSERT INTO leaf_worker_lease_old (worker_id, holder, expires_ms, last_timestamp_ms, update_time, instance)
SELECT worker_id, holder, expires_ms, last_timestamp_ms, update_time, instance FROM leaf_worker_lease;

DROP TABLE leaf_worker_lease;

ALTER TABLE leaf_worker_lease_old RENAME TO leaf_worker_lease;

-- +goose StatementBegin
CREATE TRIGGER leaf_worker_lease_update_time
AFTER UPDATE ON leaf_worker_lease FOR EACH ROW
WHEN NEW.update_time = OLD.update_time
BEGIN
  UPDATE leaf_worker_lease SET update_time = CURRENT_TIMESTAMP WHERE worker_id = NEW.worker_id;
END;
-- +goose StatementEnd
