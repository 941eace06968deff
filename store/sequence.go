package store

import "github.com/leafid/leaf/sequence"

var _ sequence.Store = (*Store)(nil)

// The SQL of the sequences (leaf_seq_space, leaf_seq_section,
// leaf_seq_member). Times are Unix milliseconds by the database's clock,
// read with the dialect's nowMillis query and passed as arguments. The
// calls that run them are in spaces.go, members.go and sections.go; the
// ordered tags' lease rows, which live in leaf_seq_section too, in
// ordered.go.
//
// A space is exactly its name. MySQL compares strings with trailing spaces
// ignored (PAD SPACE, utf8mb4_bin included), so "inbox " would reach the
// rows of "inbox": a statement that finds a section by a name adds
// HEX(space) = HEX(?), byte for byte on both dialects, beside the
// space = ? that the primary key serves (the tables are utf8mb4, so both
// sides are the same bytes). A space read by name is compared with the
// name asked. Member ids (the holders) are random tokens that may not end
// in a space (sequence.Options), so holder = ? is exact as it is.
const (
	insertSpace  = `INSERT INTO leaf_seq_space (space, step, sections) VALUES (?, ?, ?)`
	selectSpace  = `SELECT space, step, sections FROM leaf_seq_space WHERE space = ?`
	selectSpaces = `SELECT space, step, sections FROM leaf_seq_space ORDER BY space`

	// insertSections is followed by one "(?, ?)" per section.
	insertSections = `INSERT INTO leaf_seq_section (space, section) VALUES `

	// heartbeat* insert or refresh a member. Args: member, addr, expires_ms.
	heartbeatMySQL = `INSERT INTO leaf_seq_member (member, addr, expires_ms) VALUES (?, ?, ?)
ON DUPLICATE KEY UPDATE addr = VALUES(addr), expires_ms = VALUES(expires_ms)`
	heartbeatSQLite = `INSERT INTO leaf_seq_member (member, addr, expires_ms) VALUES (?, ?, ?)
ON CONFLICT (member) DO UPDATE SET addr = excluded.addr, expires_ms = excluded.expires_ms`
	// forgetMembers deletes the rows of members gone long ago. Args: a
	// time well before now.
	forgetMembers = `DELETE FROM leaf_seq_member WHERE expires_ms < ?`
	leaveMember   = `DELETE FROM leaf_seq_member WHERE member = ?`
	// selectMembers reads the live members. Args: now.
	selectMembers = `SELECT member, addr FROM leaf_seq_member WHERE expires_ms > ? ORDER BY member`

	selectSections = `SELECT space, section, holder, addr, expires_ms FROM leaf_seq_section ORDER BY space, section`
	// renewSections extends every lease of a holder. Args: expires_ms,
	// holder.
	renewSections = `UPDATE leaf_seq_section SET expires_ms = ? WHERE holder = ? AND holder <> ''`

	// acquireSection* take a section whose lease has run out or is the
	// member's already, and answer its max_seq from the same statement.
	// Args: holder, addr, expires_ms, space, space, section, now, holder.
	acquireSectionMySQL = `UPDATE leaf_seq_section SET holder = ?, addr = ?, expires_ms = ?,
  max_seq = LAST_INSERT_ID(max_seq)
WHERE space = ? AND HEX(space) = HEX(?) AND section = ? AND (expires_ms <= ? OR holder = ?)`
	acquireSectionSQLite = `UPDATE leaf_seq_section SET holder = ?, addr = ?, expires_ms = ?
WHERE space = ? AND HEX(space) = HEX(?) AND section = ? AND (expires_ms <= ? OR holder = ?)
RETURNING max_seq`

	// releaseSection clears a holder's lease. Args: space, space, section,
	// holder.
	releaseSection = `UPDATE leaf_seq_section SET holder = '', addr = '', expires_ms = 0
WHERE space = ? AND HEX(space) = HEX(?) AND section = ? AND holder = ?`

	// releaseSections clears every lease of a holder. Args: holder.
	releaseSections = `UPDATE leaf_seq_section SET holder = '', addr = '', expires_ms = 0 WHERE holder = ? AND holder <> ''`

	// raiseMax* raise max_seq while the holder holds the section, unless
	// that passes the int64 maximum, and answer the new value.
	// Args: by, space, space, section, holder, by.
	raiseMaxMySQL = `UPDATE leaf_seq_section SET max_seq = LAST_INSERT_ID(max_seq + ?)
WHERE space = ? AND HEX(space) = HEX(?) AND section = ? AND holder = ? AND max_seq <= 9223372036854775807 - ?`
	raiseMaxSQLite = `UPDATE leaf_seq_section SET max_seq = max_seq + ?
WHERE space = ? AND HEX(space) = HEX(?) AND section = ? AND holder = ? AND max_seq <= 9223372036854775807 - ?
RETURNING max_seq`

	// selectSectionHolder reads a section's holder. Args: space, space,
	// section.
	selectSectionHolder = `SELECT holder FROM leaf_seq_section WHERE space = ? AND HEX(space) = HEX(?) AND section = ?`
)
