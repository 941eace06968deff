-- What leaf last saw of each database node's start: the node, as the
-- server names itself (@@hostname:@@port), the time it started (Unix
-- seconds, now minus Uptime), whether its settings then said a commit it
-- acknowledged survives a crash, and when leaf last moved every row
-- forward because a node that can forget commits had started again
-- (jumped_ms, by the database clock; 0 never). See
-- docs/high-availability.md, "After a restart that may have forgotten".

-- +goose Up
CREATE TABLE IF NOT EXISTS `leaf_db_start` (
  `node` varchar(255) NOT NULL,
  `started` bigint NOT NULL,
  `durable` tinyint NOT NULL,
  `jumped_ms` bigint NOT NULL DEFAULT '0',
  `update_time` timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
  PRIMARY KEY (`node`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- +goose Down
DROP TABLE IF EXISTS `leaf_db_start`;
