package store

// The SQL of the store. Both dialects take `?` placeholders; a query is
// shared when its text works on both, and has one constant per dialect
// otherwise.

// leaf_alloc.
const (
	// allocateByStep raises max_id by an explicit step, unless that would
	// pass the int64 maximum (the subtraction cannot overflow; the sum is
	// never computed for a row that would).
	// Args: step, tag, step.
	allocateByStep = `UPDATE leaf_alloc SET max_id = max_id + ?
WHERE biz_tag = ? AND max_id <= 9223372036854775807 - ?`

	// allocateByRowStep raises max_id by the row's own step.
	// Args: tag.
	allocateByRowStep = `UPDATE leaf_alloc SET max_id = max_id + step
WHERE biz_tag = ? AND step > 0 AND max_id <= 9223372036854775807 - step`

	// selectTag reads one row. Args: tag.
	selectTag = `SELECT biz_tag, max_id, step, description, update_time
FROM leaf_alloc WHERE biz_tag = ?`

	// selectTags reads every row.
	selectTags = `SELECT biz_tag, max_id, step, description, update_time
FROM leaf_alloc ORDER BY biz_tag`

	// insertTag creates a row. Args: tag, max_id, step, description.
	insertTag = `INSERT INTO leaf_alloc (biz_tag, max_id, step, description)
VALUES (?, ?, ?, ?)`

	// updateTag changes the fields given (NULL leaves a field alone) and
	// refuses to lower max_id.
	// Args: step, set description, description, max_id, tag, max_id.
	updateTag = `UPDATE leaf_alloc SET
  step = COALESCE(?, step),
  description = CASE WHEN ? = 1 THEN ? ELSE description END,
  max_id = COALESCE(?, max_id)
WHERE biz_tag = ? AND max_id <= COALESCE(?, max_id)`
)

// leaf_worker_lease. Times are Unix milliseconds by the database's clock,
// read with the dialect's nowMillis query first and passed as arguments.
const (
	// mysqlNowMillis is independent of the session's time_zone.
	mysqlNowMillis = `SELECT TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) DIV 1000`
	// sqliteNowMillis: julianday of the Unix epoch is 2440587.5.
	sqliteNowMillis = `SELECT CAST(ROUND((julianday('now') - 2440587.5) * 86400000.0) AS INTEGER)`

	// selectLeases reads the rows of the ids in range. Args: maxWorkers.
	selectLeases = `SELECT worker_id, holder, instance, expires_ms, last_timestamp_ms
FROM leaf_worker_lease WHERE worker_id < ? ORDER BY worker_id`

	// selectLease reads one id if this acquisition has it.
	// Args: worker_id, holder, instance.
	selectLease = `SELECT worker_id, holder, instance, expires_ms, last_timestamp_ms
FROM leaf_worker_lease WHERE worker_id = ? AND holder = ? AND instance = ?`

	// insertLease takes an id never used before; a primary-key conflict
	// means another holder was first.
	// Args: worker_id, holder, instance, expires_ms.
	insertLease = `INSERT INTO leaf_worker_lease (worker_id, holder, instance, expires_ms, last_timestamp_ms)
VALUES (?, ?, ?, ?, 0)`

	// takeExpiredLease takes an id whose lease has run out; it changes
	// nothing when another holder took or renewed it meanwhile.
	// Args: holder, instance, expires_ms, worker_id, now.
	takeExpiredLease = `UPDATE leaf_worker_lease SET holder = ?, instance = ?, expires_ms = ?
WHERE worker_id = ? AND expires_ms <= ?`

	// renewLease extends an acquisition's lease, live or expired, and
	// records the larger of the stored and the given last timestamp.
	// Args: expires_ms, last, last, worker_id, holder, instance.
	renewLease = `UPDATE leaf_worker_lease SET expires_ms = ?,
  last_timestamp_ms = CASE WHEN last_timestamp_ms < ? THEN ? ELSE last_timestamp_ms END
WHERE worker_id = ? AND holder = ? AND instance = ?`

	// releaseLease ends an acquisition's lease now and records the last
	// timestamp it used, which may be below the bound its renewals
	// recorded. Args: expires_ms, last, worker_id, holder, instance.
	releaseLease = `UPDATE leaf_worker_lease SET expires_ms = ?, last_timestamp_ms = ?
WHERE worker_id = ? AND holder = ? AND instance = ?`
)
