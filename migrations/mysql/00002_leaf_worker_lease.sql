-- Snowflake mode: one row per leased worker id (0..1023). Times in Unix
-- milliseconds by the database's clock, so holders on machines with skewed
-- clocks agree on who holds what.

-- +goose Up
CREATE TABLE IF NOT EXISTS `leaf_worker_lease` (
  `worker_id` int NOT NULL,
  `holder` varchar(191) NOT NULL,
  `expires_ms` bigint NOT NULL,
  `last_timestamp_ms` bigint NOT NULL DEFAULT '0',
  `update_time` timestamp(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  PRIMARY KEY (`worker_id`),
  CONSTRAINT `leaf_worker_lease_worker_id` CHECK (`worker_id` BETWEEN 0 AND 1023)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- +goose Down
DROP TABLE IF EXISTS `leaf_worker_lease`;
