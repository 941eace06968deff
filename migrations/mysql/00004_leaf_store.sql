-- Several independent stores. leaf_store is what this database says about
-- itself: its identity, made once here and copied with the database (a
-- restored backup is the same store; a clone given a second name is found
-- out), and the set of stores it belongs to with that set's version and
-- state. leaf_marks holds the highest max_id seen of each tag of the other
-- stores of the set, so that a store restored stale is found out even by an
-- instance that just started.

-- +goose Up
CREATE TABLE IF NOT EXISTS `leaf_store` (
  `id` tinyint NOT NULL,
  `store_id` varchar(36) NOT NULL,
  `version` bigint NOT NULL DEFAULT '0',
  `state` varchar(16) NOT NULL DEFAULT '',
  `set_json` text DEFAULT NULL,
  `update_time` timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
  PRIMARY KEY (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

INSERT IGNORE INTO `leaf_store` (`id`, `store_id`) VALUES (1, UUID());

CREATE TABLE IF NOT EXISTS `leaf_marks` (
  `store_id` varchar(36) NOT NULL,
  `biz_tag` varchar(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  `max_id` bigint NOT NULL,
  `update_time` timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
  PRIMARY KEY (`store_id`, `biz_tag`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- +goose Down
-- Dropping leaf_store would give the database a new identity, and its set
-- would be forgotten; the tables are kept.
