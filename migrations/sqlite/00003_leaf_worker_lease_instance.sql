-- Snowflake mode: each acquisition of a worker id gets its own instance
-- token, so that two processes that share a holder name never renew or
-- release each other's lease.

-- +goose Up
ALTER TABLE leaf_worker_lease ADD COLUMN instance VARCHAR(64) NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE leaf_worker_lease DROP COLUMN instance;
