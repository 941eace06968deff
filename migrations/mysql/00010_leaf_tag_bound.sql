-- The bound a tag declares (README, "Headroom"): the largest id it may
-- issue, below the int64 maximum, such as an INT column's 2147483647 or the
-- 9007199254740991 a JavaScript number holds. Its own table, keyed by the
-- tag's name, so that leaf_alloc stays Meituan Leaf's table byte for byte
-- and a tag's kind does not change with its bound.

-- +goose Up
CREATE TABLE IF NOT EXISTS `leaf_tag_bound` (
  `biz_tag` varchar(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  `max_id` bigint NOT NULL,
  `update_time` timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
  PRIMARY KEY (`biz_tag`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- +goose Down
-- Kept: dropping it would let bounded tags issue ids past their bounds.
