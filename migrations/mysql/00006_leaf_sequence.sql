-- Per-key sequences: spaces, the sections of each with their persisted
-- max_seq and the lease of their owner, and the members (instances) that
-- serve them. Times in Unix milliseconds by the database's clock. Names
-- compare byte for byte (utf8mb4_bin): a space is exactly its name.

-- +goose Up
CREATE TABLE IF NOT EXISTS `leaf_seq_space` (
  `space` varchar(128) NOT NULL,
  `step` bigint NOT NULL,
  `sections` int NOT NULL,
  `create_time` timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP,
  PRIMARY KEY (`space`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS `leaf_seq_section` (
  `space` varchar(128) NOT NULL,
  `section` int NOT NULL,
  `max_seq` bigint NOT NULL DEFAULT '0',
  `holder` varchar(64) NOT NULL DEFAULT '',
  `addr` varchar(255) NOT NULL DEFAULT '',
  `expires_ms` bigint NOT NULL DEFAULT '0',
  PRIMARY KEY (`space`, `section`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS `leaf_seq_member` (
  `member` varchar(64) NOT NULL,
  `addr` varchar(255) NOT NULL,
  `expires_ms` bigint NOT NULL,
  PRIMARY KEY (`member`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- +goose Down
DROP TABLE IF EXISTS `leaf_seq_member`;
DROP TABLE IF EXISTS `leaf_seq_section`;
DROP TABLE IF EXISTS `leaf_seq_space`;
