-- Snowflake mode: worker ids of up to 16 bits, 0..65535, the pool of the
-- widest worker field a layout may have (sonyflake's 16-bit machine ids
-- among them); migration 2 allowed 0..1023. One ALTER drops the narrow
-- check and adds the wide one under the same name, which both servers
-- accept in one statement: the table is never without a check, and a
-- failure leaves it as it was.

-- +goose Up
ALTER TABLE `leaf_worker_lease`
  DROP CONSTRAINT `leaf_worker_lease_worker_id`,
  ADD CONSTRAINT `leaf_worker_lease_worker_id` CHECK (`worker_id` BETWEEN 0 AND 65535);

-- +goose Down
-- Fails while the table holds a worker id above 1023: its row keeps the
-- last timestamp used on that id, which no holder may forget.
ALTER TABLE `leaf_worker_lease`
  DROP CONSTRAINT `leaf_worker_lease_worker_id`,
  ADD CONSTRAINT `leaf_worker_lease_worker_id` CHECK (`worker_id` BETWEEN 0 AND 1023);
