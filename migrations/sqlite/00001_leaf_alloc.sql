-- Segment mode: Meituan Leaf's leaf_alloc in SQLite's dialect. SQLite has
-- no ON UPDATE clause, so a trigger keeps update_time.

-- +goose Up
CREATE TABLE IF NOT EXISTS leaf_alloc (
  biz_tag     VARCHAR(128) NOT NULL DEFAULT '' PRIMARY KEY,
  max_id      BIGINT       NOT NULL DEFAULT 1,
  step        INTEGER      NOT NULL,
  description VARCHAR(256) DEFAULT NULL,
  update_time TIMESTAMP    NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- +goose StatementBegin
CREATE TRIGGER IF NOT EXISTS leaf_alloc_update_time
AFTER UPDATE ON leaf_alloc FOR EACH ROW
WHEN NEW.update_time = OLD.update_time
BEGIN
  UPDATE leaf_alloc SET update_time = CURRENT_TIMESTAMP WHERE biz_tag = NEW.biz_tag;
END;
-- +goose StatementEnd

-- +goose Down
-- leaf_alloc is never dropped: losing max_id would make ids repeat.
