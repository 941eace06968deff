package store

import (
	"context"
	"database/sql/driver"
	"strings"
	"unicode"

	"github.com/jmoiron/sqlx"
	"modernc.org/sqlite"

	"github.com/leafid/leaf/segment"
)

// Tag names are unique whatever their case, on every store: "Orders" is
// refused beside "orders" on SQLite as on MySQL, whose usual collations
// compare names without case, and a table of a binary collation follows
// the same rule. The refusal names the tag the new name collides with.
const (
	// caseTwinsMySQL reads the rows whose name may differ from the
	// argument only in case (LOWER folds by the column's character set).
	caseTwinsMySQL = `SELECT biz_tag FROM leaf_alloc WHERE LOWER(biz_tag) = LOWER(?)`
	// caseTwinsSQLite does the same with leaf_fold (foldKey), as SQLite's
	// LOWER folds only ASCII letters.
	caseTwinsSQLite = `SELECT biz_tag FROM leaf_alloc WHERE leaf_fold(biz_tag) = leaf_fold(?)`
	// collationTwin reads the row the column's collation takes for the
	// argument, after an INSERT found its key taken.
	collationTwin = `SELECT biz_tag FROM leaf_alloc WHERE biz_tag = ?`
)

func init() {
	sqlite.MustRegisterDeterministicScalarFunction("leaf_fold", 1, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		switch v := args[0].(type) {
		case string:
			return foldKey(v), nil
		case []byte:
			return foldKey(string(v)), nil
		}
		return args[0], nil
	})
}

// foldKey is s with each character replaced by the least character that
// differs from it only in case (unicode.SimpleFold), so that two names
// have one key exactly when strings.EqualFold takes them as equal.
func foldKey(s string) string {
	return strings.Map(func(r rune) rune {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		return least
	}, s)
}

// insertNewTag inserts t's row within tx, unless a row has its name or a
// name that differs from it only in case: that is a *segment.ExistsError
// naming the row. Other errors are the INSERT's.
func (s *Store) insertNewTag(ctx context.Context, tx *sqlx.Tx, t segment.Tag) error {
	twins := caseTwinsMySQL
	if s.dialect == SQLite {
		twins = caseTwinsSQLite
	}
	var names []string
	if err := sqlx.SelectContext(ctx, tx, &names, twins, t.Name); err != nil && !isCharsetMismatch(err) {
		return err
	}
	for _, n := range names {
		if strings.EqualFold(n, t.Name) {
			return &segment.ExistsError{Name: t.Name, Existing: n}
		}
	}
	if _, err := tx.ExecContext(ctx, insertTag, t.Name, t.MaxID, t.Step, nullString(t.Description)); err != nil {
		if !isDuplicateKey(err) {
			return unstorable(err)
		}
		existing := t.Name
		if err := tx.GetContext(ctx, &existing, collationTwin, t.Name); err != nil {
			existing = t.Name
		}
		return &segment.ExistsError{Name: t.Name, Existing: existing}
	}
	return nil
}
