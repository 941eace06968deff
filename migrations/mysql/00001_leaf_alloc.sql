-- Segment mode: Meituan Leaf's own table, column for column, so that a
-- database already used by the Java Leaf keeps its rows and its numbering.
-- IF NOT EXISTS: on such a database this migration changes nothing.

-- +goose Up
CREATE TABLE IF NOT EXISTS `leaf_alloc` (
  `biz_tag` varchar(128) NOT NULL DEFAULT '',
  `max_id` bigint(20) NOT NULL DEFAULT '1',
  `step` int(11) NOT NULL,
  `description` varchar(256) DEFAULT NULL,
  `update_time` timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
  PRIMARY KEY (`biz_tag`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- +goose Down
-- leaf_alloc is never dropped: it may hold a Java Leaf's rows, and losing
-- max_id would make ids repeat.
