-- Formatted and opaque tags (README, "Formatted and opaque tags"). A tag's
-- settings live here, keyed by its name, so that leaf_alloc stays Meituan
-- Leaf's table byte for byte. The numbers of a tag that resets come from
-- leaf_alloc rows named tag@KEY, one per period; pruned_before is the
-- first period key whose row is kept: the rows of the periods before it
-- were pruned and are never created again. key_id is the fingerprint of
-- the key an opaque tag's ids are made with, never the key.

-- +goose Up
CREATE TABLE IF NOT EXISTS `leaf_tag_format` (
  `biz_tag` varchar(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  `format` varchar(256) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT '',
  `reset` varchar(8) NOT NULL DEFAULT 'never',
  `time_zone` varchar(64) NOT NULL DEFAULT '',
  `opaque_bits` tinyint NOT NULL DEFAULT 0,
  `key_id` varchar(16) NOT NULL DEFAULT '',
  `pruned_before` varchar(8) NOT NULL DEFAULT '',
  `update_time` timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
  PRIMARY KEY (`biz_tag`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- +goose Down
-- Kept: dropping it would turn formatted tags back into plain ones, whose
-- numbers would repeat the sequences of their periods.
