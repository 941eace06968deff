-- The identity of each run of a database node. leaf_db_run is a MEMORY
-- table: its definition stays, its rows are gone whenever the server
-- starts again, and Galera does not replicate its rows, so each node holds
-- its own. The first leaf instance to find it empty on a node writes a
-- random id for the run; every instance reads it before taking numbers
-- through a connection to that node, and leaf_db_start records the run it
-- last saw (column run). A node that started again, however soon after
-- the last start, has another id: no tolerance window in which a restart
-- passes unseen. See docs/high-availability.md, "After a restart that may
-- have forgotten".

-- +goose Up
CREATE TABLE IF NOT EXISTS `leaf_db_run` (
  `id` tinyint NOT NULL,
  `run` char(32) NOT NULL,
  PRIMARY KEY (`id`)
) ENGINE=MEMORY DEFAULT CHARSET=ascii COLLATE=ascii_bin;
-- The column is added only where it is missing, so that the migration, as
-- every one of leaf's, can run again (MySQL 8.4 has no ADD COLUMN IF NOT
-- EXISTS).
SET @leaf_add_run = (SELECT IF(COUNT(*) = 0,
  'ALTER TABLE `leaf_db_start` ADD COLUMN `run` char(32) NOT NULL DEFAULT '''' AFTER `started`', 'DO 0')
  FROM information_schema.COLUMNS
  WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'leaf_db_start' AND COLUMN_NAME = 'run');
PREPARE leaf_add_run FROM @leaf_add_run;
EXECUTE leaf_add_run;
DEALLOCATE PREPARE leaf_add_run;

-- +goose Down
ALTER TABLE `leaf_db_start` DROP COLUMN `run`;
DROP TABLE IF EXISTS `leaf_db_run`;
