package store

// The SQL of the store. Both dialects take `?` placeholders; a query is
// shared when its text works on both, and has one constant per dialect
// otherwise.

// dialectSQL holds the statements whose text differs by dialect.
type dialectSQL struct {
	allocate, allocateAbove, selectRowsLocked, takeExpiredLease, renewLease, recordMarks string
}

var (
	mysqlSQL = dialectSQL{allocateMySQL, allocateAboveMySQL, selectRowsLockedMySQL,
		takeExpiredLeaseMySQL, renewLeaseMySQL, recordMarksMySQL}
	sqliteSQL = dialectSQL{allocateSQLite, allocateAboveSQLite, selectRowsLockedSQLite,
		takeExpiredLeaseSQLite, renewLeaseSQLite, recordMarksSQLite}
)

// leaf_alloc.
//
// Every range is taken from the one statement that raised max_id: on MySQL
// the statement returns the new max_id as its last insert id
// (LAST_INSERT_ID(expr)), on SQLite with RETURNING. A later statement of the
// same transaction would not do: on a multi-primary cluster (Galera) a
// transaction can be aborted by a conflicting write set while a later
// SELECT runs, and that SELECT still answers the old committed value with
// no error (see RELIABILITY.md). Each statement runs on its own
// (autocommit), so its success is the commit.
const (
	// allocateMySQL raises max_id by an explicit step, unless that would
	// pass the int64 maximum (the subtraction cannot overflow; the sum is
	// never computed for a row that would). Args: step, tag, step.
	allocateMySQL = `UPDATE leaf_alloc SET max_id = LAST_INSERT_ID(max_id + ?)
WHERE biz_tag = ? AND max_id <= 9223372036854775807 - ?`
	// allocateSQLite is allocateMySQL in SQLite's words.
	allocateSQLite = `UPDATE leaf_alloc SET max_id = max_id + ?
WHERE biz_tag = ? AND max_id <= 9223372036854775807 - ?
RETURNING max_id`

	// allocateAbove* first raise max_id to at least a floor, then by the
	// step. Args: floor, step, tag, floor, step.
	allocateAboveMySQL = `UPDATE leaf_alloc SET max_id = LAST_INSERT_ID(GREATEST(max_id, ?) + ?)
WHERE biz_tag = ? AND GREATEST(max_id, ?) <= 9223372036854775807 - ?`
	allocateAboveSQLite = `UPDATE leaf_alloc SET max_id = MAX(max_id, ?) + ?
WHERE biz_tag = ? AND MAX(max_id, ?) <= 9223372036854775807 - ?
RETURNING max_id`

	// selectRowsLocked* read the rows of a list of names, as stored, in a
	// transaction that then raises them (AllocateBatch): on MySQL they are
	// locked until it ends, so that the raise finds them as read; SQLite's
	// transactions begin IMMEDIATE and hold the whole file. Args: the
	// names, expanded by sqlx.In.
	selectRowsLockedMySQL  = `SELECT biz_tag, max_id, step FROM leaf_alloc WHERE biz_tag IN (?) FOR UPDATE`
	selectRowsLockedSQLite = `SELECT biz_tag, max_id, step FROM leaf_alloc WHERE biz_tag IN (?)`

	// raiseRowsSet and raiseRowsWhere, joined by raiseRows, set several
	// rows' max_id each to a value given for it, only where the row
	// still has the max_id given for it: a compare-and-set of every row in
	// one statement. Args: per row name and new max_id, then per row
	// name and old max_id (then what a condition appended asks).
	raiseRowsSet   = `UPDATE leaf_alloc SET max_id = CASE biz_tag`
	raiseRowsWhen  = ` WHEN ? THEN ?`
	raiseRowsWhere = ` END WHERE (`
	raiseRowsRow   = `(biz_tag = ? AND max_id = ?)`
	// raiseRowsInSet, appended to raiseRows*, makes the raise hold only
	// while the store is active under the set version the ranges were
	// computed for, as moveInClass does. Args: version.
	raiseRowsInSet = ` AND EXISTS (SELECT 1 FROM leaf_store WHERE id = 1 AND version = ? AND state = 'active')`

	// handBack sets max_id back to the first unused id of the range that
	// ends at it, only while it still ends there: nobody took a range
	// since. Args: first unused, tag, end of the range.
	handBack = `UPDATE leaf_alloc SET max_id = ? WHERE biz_tag = ? AND max_id = ?`

	// selectStep reads the row's name as stored (MySQL's collations match
	// "ORDERS" to the row "orders") and its step, the floor of the
	// adaptive step and the step of a first load. Args: tag.
	selectStep = `SELECT biz_tag, step FROM leaf_alloc WHERE biz_tag = ?`

	// selectTag reads one row. Args: tag.
	selectTag = `SELECT biz_tag, max_id, step, description, update_time
FROM leaf_alloc WHERE biz_tag = ?`

	// selectTagNames reads the names as stored of the rows whose name
	// matches one of a list (in the column's collation; the caller keeps
	// only exact matches). Args: the names, expanded by sqlx.In.
	selectTagNames = `SELECT biz_tag FROM leaf_alloc WHERE biz_tag IN (?)`

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

	// selectLeases reads the rows of the ids in range. Args: the lowest
	// id, the end of the range.
	selectLeases = `SELECT worker_id, holder, instance, expires_ms, last_timestamp_ms
FROM leaf_worker_lease WHERE worker_id >= ? AND worker_id < ? ORDER BY worker_id`

	// selectLease reads one id's row, whoever holds it. Args: worker_id.
	selectLease = `SELECT worker_id, holder, instance, expires_ms, last_timestamp_ms
FROM leaf_worker_lease WHERE worker_id = ?`

	// insertLease takes an id never used before; a primary-key conflict
	// means another holder was first. The new row's last timestamp is 0.
	// Args: worker_id, holder, instance, expires_ms.
	insertLease = `INSERT INTO leaf_worker_lease (worker_id, holder, instance, expires_ms, last_timestamp_ms)
VALUES (?, ?, ?, ?, 0)`

	// takeExpiredLease* take an id whose lease has run out and return the
	// last timestamp its earlier holders recorded; they change nothing when
	// another holder took or renewed it meanwhile.
	// Args: holder, instance, expires_ms, worker_id, now.
	takeExpiredLeaseMySQL = `UPDATE leaf_worker_lease SET holder = ?, instance = ?, expires_ms = ?,
  last_timestamp_ms = LAST_INSERT_ID(last_timestamp_ms)
WHERE worker_id = ? AND expires_ms <= ?`
	takeExpiredLeaseSQLite = `UPDATE leaf_worker_lease SET holder = ?, instance = ?, expires_ms = ?
WHERE worker_id = ? AND expires_ms <= ?
RETURNING last_timestamp_ms`

	// renewLease* extend an acquisition's lease, live or expired, record
	// the larger of the stored and the given last timestamp and return it.
	// They change nothing when the row is no longer the acquisition's, or
	// when its stored last timestamp is below the one the holder last
	// recorded: the database went back in time (a failover to a copy that
	// missed the last writes).
	// Args: expires_ms, last, last, worker_id, holder, instance, recorded.
	renewLeaseMySQL = `UPDATE leaf_worker_lease SET expires_ms = ?,
  last_timestamp_ms = LAST_INSERT_ID(CASE WHEN last_timestamp_ms < ? THEN ? ELSE last_timestamp_ms END)
WHERE worker_id = ? AND holder = ? AND instance = ? AND last_timestamp_ms >= ?`
	renewLeaseSQLite = `UPDATE leaf_worker_lease SET expires_ms = ?,
  last_timestamp_ms = CASE WHEN last_timestamp_ms < ? THEN ? ELSE last_timestamp_ms END
WHERE worker_id = ? AND holder = ? AND instance = ? AND last_timestamp_ms >= ?
RETURNING last_timestamp_ms`

	// releaseLease ends an acquisition's lease now and records the last
	// timestamp it used, which may be below the bound its renewals
	// recorded. Args: expires_ms, last, worker_id, holder, instance.
	releaseLease = `UPDATE leaf_worker_lease SET expires_ms = ?, last_timestamp_ms = ?
WHERE worker_id = ? AND holder = ? AND instance = ?`
)

// leaf_store and leaf_marks: a store of a set of several (see storeset).
const (
	// selectRecord reads what the store says about itself.
	selectRecord = `SELECT store_id, version, state, set_json FROM leaf_store WHERE id = 1`

	// updateRecord replaces the store's copy of the set, only while its
	// version and state are still the ones the caller read.
	// Args: version, state, set, old version, old state.
	updateRecord = `UPDATE leaf_store SET version = ?, state = ?, set_json = ?
WHERE id = 1 AND version = ? AND state = ?`

	// selectVersion reads the store's set version and state.
	selectVersion = `SELECT version, state FROM leaf_store WHERE id = 1`

	// selectRow reads a row's name as stored, max_id and step. Args: tag.
	selectRow = `SELECT biz_tag, max_id, step FROM leaf_alloc WHERE biz_tag = ?`

	// moveInClass sets max_id to the end of a range of the store's class,
	// only while the row is where it was read and the store is active
	// under the set version the range was computed for: a compare-and-set,
	// so the range is the caller's alone, and no range is taken under a
	// set that changed. Args: new max_id, tag, old max_id, version.
	moveInClass = `UPDATE leaf_alloc SET max_id = ?
WHERE biz_tag = ? AND max_id = ?
AND EXISTS (SELECT 1 FROM leaf_store WHERE id = 1 AND version = ? AND state = 'active')`

	// selectHighest reads the highest max_id of any row.
	selectHighest = `SELECT COALESCE(MAX(max_id), 0) FROM leaf_alloc`

	// selectMarks reads the marks of one store's tags. Args: store id,
	// then the tags, expanded by sqlx.In.
	selectMarks = `SELECT biz_tag, max_id FROM leaf_marks WHERE store_id = ? AND biz_tag IN (?)`

	// selectHighestMark reads the highest mark of one store. Args: store id.
	selectHighestMark = `SELECT COALESCE(MAX(max_id), 0) FROM leaf_marks WHERE store_id = ?`

	// recordMarks* raise the marks of one store's tags, never lowering
	// one; the rows' values are appended for each mark.
	recordMarksMySQL = `INSERT INTO leaf_marks (store_id, biz_tag, max_id) VALUES %s
ON DUPLICATE KEY UPDATE max_id = GREATEST(max_id, VALUES(max_id))`
	recordMarksSQLite = `INSERT INTO leaf_marks (store_id, biz_tag, max_id) VALUES %s
ON CONFLICT (store_id, biz_tag) DO UPDATE SET max_id = MAX(max_id, excluded.max_id)`

	// lowerMarks* set back several marks of one store's tags, each to a
	// value given for it (To), only where it is above that and not above
	// the end of the run handed back (From): a compare-and-set of every
	// mark in one statement. Args: per mark tag and new value, then the
	// store id, then per mark tag, new value and end.
	lowerMarksSet   = `UPDATE leaf_marks SET max_id = CASE biz_tag`
	lowerMarksWhen  = ` WHEN ? THEN ?`
	lowerMarksWhere = ` END WHERE store_id = ? AND (`
	lowerMarksRow   = `(biz_tag = ? AND max_id > ? AND max_id <= ?)`
	// lowerMark sets back one mark the same way. Args: new value, store
	// id, tag, new value, end.
	lowerMark = `UPDATE leaf_marks SET max_id = ? WHERE store_id = ? AND biz_tag = ? AND max_id > ? AND max_id <= ?`
)
