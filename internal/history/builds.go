package history

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Build is one build as the history keeps it.
type Build struct {
	ID, State, Key, Model string          // Model: as the request named it (relative to the model root)
	Options               json.RawMessage // the request's options object, as given
	IdempotencyKey        string          // "" if none
	RequestHash           string          // sha256 hex of the canonical request (model + options)
	Dir                   string          // the build's folder, relative to the state dir ("builds/<id>")
	Result                json.RawMessage // the result event's JSON line (nil until it ended)
	Created               time.Time       // when it was submitted; required
	Started, Ended        time.Time       // zero when not yet
	Removed               string          // why its files were removed ("" while they are there)
}

// Filter selects the builds List returns.
type Filter struct {
	State  string // only builds in this state; "" for all
	Limit  int    // at most this many; <= 0 for all
	Before string // a build's ID: only builds after it in List's order (created before it); "" for none
}

// ErrIdempotencyKeyUsed is the error (wrapped) of a Put whose idempotency key another build has.
var ErrIdempotencyKeyUsed = errors.New("idempotency key in use")

// The states Interrupt reads and writes. The service owns the list of states; these are the
// ones a build can be in while a server runs it, and the one it gets when the server stopped
// without ending it.
const (
	stateQueued      = "queued"
	stateRunning     = "running"
	stateInterrupted = "interrupted"
)

// columns are the builds table's columns in the order scanBuild reads them.
const columns = `id, state, build_key, model, options, idempotency_key, request_hash, dir, result, created, started, ended, removed`

// Put stores b, replacing the build with the same ID if there is one. It refuses a build
// without an ID, state or created time, a time outside the years 1678 to 2262 (what unix
// nanoseconds hold), and an idempotency key another build has (ErrIdempotencyKeyUsed).
func (s *Store) Put(b Build) error {
	if b.ID == "" {
		return errors.New("history: a build to store needs an ID")
	}
	if b.State == "" {
		return fmt.Errorf("history: build %s has no state", b.ID)
	}
	if b.Created.IsZero() {
		return fmt.Errorf("history: build %s has no created time", b.ID)
	}
	created, err := nanos(b.ID, "created", b.Created)
	if err != nil {
		return err
	}
	started, err := nanos(b.ID, "started", b.Started)
	if err != nil {
		return err
	}
	ended, err := nanos(b.ID, "ended", b.Ended)
	if err != nil {
		return err
	}
	_, err = s.w.Exec(`INSERT INTO builds (`+columns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET
			state = excluded.state, build_key = excluded.build_key, model = excluded.model,
			options = excluded.options, idempotency_key = excluded.idempotency_key,
			request_hash = excluded.request_hash, dir = excluded.dir, result = excluded.result,
			created = excluded.created, started = excluded.started, ended = excluded.ended,
			removed = excluded.removed`,
		b.ID, b.State, b.Key, b.Model, text(b.Options), b.IdempotencyKey, b.RequestHash, b.Dir,
		text(b.Result), created, started, ended, b.Removed)
	if isUnique(err) && b.IdempotencyKey != "" {
		var other string
		if s.r.QueryRow(`SELECT id FROM builds WHERE idempotency_key = ?`, b.IdempotencyKey).Scan(&other) == nil {
			return fmt.Errorf("history: build %s: %w: build %s has idempotency key %q", b.ID, ErrIdempotencyKeyUsed, other, b.IdempotencyKey)
		}
		return fmt.Errorf("history: build %s: %w: another build has idempotency key %q", b.ID, ErrIdempotencyKeyUsed, b.IdempotencyKey)
	}
	if err != nil {
		return fmt.Errorf("history: storing build %s: %w", b.ID, err)
	}
	return nil
}

// Delete removes the build with this ID; removing one that is not there is no error.
func (s *Store) Delete(id string) error {
	if _, err := s.w.Exec(`DELETE FROM builds WHERE id = ?`, id); err != nil {
		return fmt.Errorf("history: removing build %s: %w", id, err)
	}
	return nil
}

// Get returns the build with this ID; found is false when there is none.
func (s *Store) Get(id string) (b Build, found bool, err error) {
	return s.one(`SELECT `+columns+` FROM builds WHERE id = ?`, id, "build "+id)
}

// ByIdempotencyKey returns the build with this idempotency key; found is false when there is
// none, and always for "" (no key).
func (s *Store) ByIdempotencyKey(key string) (b Build, found bool, err error) {
	if key == "" {
		return Build{}, false, nil
	}
	return s.one(`SELECT `+columns+` FROM builds WHERE idempotency_key = ?`, key, fmt.Sprintf("the build with idempotency key %q", key))
}

func (s *Store) one(query, arg, what string) (Build, bool, error) {
	b, err := scanBuild(s.r.QueryRow(query, arg))
	if errors.Is(err, sql.ErrNoRows) {
		return Build{}, false, nil
	}
	if err != nil {
		return Build{}, false, fmt.Errorf("history: reading %s: %w", what, err)
	}
	return b, true, nil
}

// List returns the builds f selects, newest first (by created time, then by ID, both
// descending). Filter.Before names a build (of any state) that must exist: List starts
// right after it, so that passing the last build of one page gives the next page.
func (s *Store) List(f Filter) ([]Build, error) {
	tx, err := s.r.Begin() // one snapshot for the Before look-up and the list
	if err != nil {
		return nil, fmt.Errorf("history: listing builds: %w", err)
	}
	defer tx.Rollback()
	var where []string
	var args []any
	if f.State != "" {
		where = append(where, "state = ?")
		args = append(args, f.State)
	}
	if f.Before != "" {
		var created int64
		err := tx.QueryRow(`SELECT created FROM builds WHERE id = ?`, f.Before).Scan(&created)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("history: no build %s (the list's before)", f.Before)
		}
		if err != nil {
			return nil, fmt.Errorf("history: listing builds: %w", err)
		}
		where = append(where, "(created, id) < (?, ?)")
		args = append(args, created, f.Before)
	}
	q := `SELECT ` + columns + ` FROM builds`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	q += ` ORDER BY created DESC, id DESC LIMIT ?`
	limit := f.Limit
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	args = append(args, limit)
	rows, err := tx.Query(q, args...)
	if err != nil {
		return nil, fmt.Errorf("history: listing builds: %w", err)
	}
	builds, err := scanBuilds(rows)
	if err != nil {
		return nil, fmt.Errorf("history: listing builds: %w", err)
	}
	return builds, nil
}

// Interrupt marks every queued or running build "interrupted", ended at at, in one
// transaction, and returns those builds as they are now, newest first. A server calls it when
// it starts, for the builds the last server process did not end.
func (s *Store) Interrupt(at time.Time) ([]Build, error) {
	if at.IsZero() {
		return nil, errors.New("history: Interrupt needs the time the builds ended")
	}
	ended, err := nanos("", "interrupt", at)
	if err != nil {
		return nil, err
	}
	rows, err := s.w.Query(`UPDATE builds SET state = ?, ended = ? WHERE state IN (?, ?) RETURNING `+columns,
		stateInterrupted, ended, stateQueued, stateRunning)
	if err != nil {
		return nil, fmt.Errorf("history: marking unfinished builds interrupted: %w", err)
	}
	builds, err := scanBuilds(rows)
	if err != nil {
		return nil, fmt.Errorf("history: marking unfinished builds interrupted: %w", err)
	}
	slices.SortFunc(builds, func(a, b Build) int {
		if c := b.Created.Compare(a.Created); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	return builds, nil
}

// Count returns the number of builds in each state; a state without builds is absent.
func (s *Store) Count() (map[string]int, error) {
	rows, err := s.r.Query(`SELECT state, count(*) FROM builds GROUP BY state`)
	if err != nil {
		return nil, fmt.Errorf("history: counting builds: %w", err)
	}
	defer rows.Close()
	n := map[string]int{}
	for rows.Next() {
		var state string
		var c int
		if err := rows.Scan(&state, &c); err != nil {
			return nil, fmt.Errorf("history: counting builds: %w", err)
		}
		n[state] = c
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("history: counting builds: %w", err)
	}
	return n, nil
}

// scanner is a *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

// scanBuild reads one row of the columns.
func scanBuild(r scanner) (Build, error) {
	var b Build
	var options, result sql.Null[[]byte]
	var created int64
	var started, ended sql.NullInt64
	err := r.Scan(&b.ID, &b.State, &b.Key, &b.Model, &options, &b.IdempotencyKey, &b.RequestHash,
		&b.Dir, &result, &created, &started, &ended, &b.Removed)
	if err != nil {
		return Build{}, err
	}
	if options.Valid {
		b.Options = json.RawMessage(options.V)
	}
	if result.Valid {
		b.Result = json.RawMessage(result.V)
	}
	b.Created = time.Unix(0, created).UTC()
	if started.Valid {
		b.Started = time.Unix(0, started.Int64).UTC()
	}
	if ended.Valid {
		b.Ended = time.Unix(0, ended.Int64).UTC()
	}
	return b, nil
}

// scanBuilds reads and closes rows.
func scanBuilds(rows *sql.Rows) ([]Build, error) {
	defer rows.Close()
	var builds []Build
	for rows.Next() {
		b, err := scanBuild(rows)
		if err != nil {
			return nil, err
		}
		builds = append(builds, b)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return builds, rows.Close()
}

// nanos is t in unix nanoseconds for the database: nil (NULL) for the zero time, an error for
// a time that int64 nanoseconds cannot hold.
func nanos(id, which string, t time.Time) (any, error) {
	if t.IsZero() {
		return nil, nil
	}
	n := t.UnixNano()
	if !time.Unix(0, n).Equal(t) {
		if id == "" {
			return nil, fmt.Errorf("history: %s time %s is outside the years 1678 to 2262", which, t.Format(time.RFC3339Nano))
		}
		return nil, fmt.Errorf("history: build %s: %s time %s is outside the years 1678 to 2262", id, which, t.Format(time.RFC3339Nano))
	}
	return n, nil
}

// text is a JSON value for a TEXT column: NULL for nil, else its bytes as they are.
func text(j json.RawMessage) any {
	if j == nil {
		return nil
	}
	return string(j)
}

// isUnique reports whether err is SQLite's unique constraint failure.
func isUnique(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE
}
