// Package history keeps the builds of a build server in one SQLite database file (pure Go,
// modernc.org/sqlite), so that the list of builds, their states and their results outlive the
// server process.
//
// What is stored: one row per build (Build): its id, state, build key, model name as the
// request gave it, the request's options object as given, its idempotency key and request
// hash, its folder relative to the state dir, the result event's JSON line once it ended, its
// created, started and ended times (UTC, in unix nanoseconds, so they round-trip exactly), and
// why its files were removed, once they were. A schema_version table records the layout's
// version; Open brings a file of an older version up to this one, and refuses a newer one.
//
// Where: the file the caller names, history.db in the server's state dir. This package checks
// the file itself (a regular file, never a symbolic link, FIFO or folder; created 0600 when it
// is absent) and the -wal, -shm and -journal files SQLite keeps beside it; the caller checks
// the folder (the server's state dir: owned by this user and private), in which SQLite also
// creates those files.
//
// Concurrency: a Store is safe for use by many goroutines. The file is in WAL mode: writes go
// through one connection, one write at a time, each in its own transaction; reads go through a
// small pool of read-only connections and run alongside the writes, each seeing the database
// as of a committed write. Other processes opening the same file wait up to busy_timeout
// (5 s) for a lock, then fail.
package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/trtbuild/trtbuild/internal/pathtext"
)

// schemaVersion is the version of the layout below; a database records its own version in
// its schema_version table.
const schemaVersion = 2

// schema creates the layout of this version in an empty database.
var schema = []string{
	`CREATE TABLE schema_version (version INTEGER NOT NULL) STRICT`,
	`CREATE TABLE builds (
		id              TEXT PRIMARY KEY NOT NULL,
		state           TEXT NOT NULL,
		build_key       TEXT NOT NULL,
		model           TEXT NOT NULL,
		options         TEXT,
		idempotency_key TEXT NOT NULL,
		request_hash    TEXT NOT NULL,
		dir             TEXT NOT NULL,
		result          TEXT,
		created         INTEGER NOT NULL,
		started         INTEGER,
		ended           INTEGER,
		removed         TEXT NOT NULL DEFAULT ''
	) STRICT`,
	// List: newest first.
	`CREATE INDEX builds_created ON builds (created DESC, id DESC)`,
	// List with a state, Interrupt and Count.
	`CREATE INDEX builds_state ON builds (state, created DESC, id DESC)`,
	// ByIdempotencyKey, and one build per key.
	`CREATE UNIQUE INDEX builds_idempotency_key ON builds (idempotency_key) WHERE idempotency_key != ''`,
}

// upgrades bring a database of version i+1 (the index) to version i+2.
var upgrades = [][]string{
	// 1 to 2: why a build's files were removed ('' while they are there).
	{`ALTER TABLE builds ADD COLUMN removed TEXT NOT NULL DEFAULT ''`},
}

// busyTimeoutMS is how long a connection waits for another process's lock on the file.
const busyTimeoutMS = 5000

// readConns is the number of read-only connections: reads beyond it wait for one.
const readConns = 4

// fix ends the messages about a database file that cannot be used.
const fix = "move it away or use another --state-dir"

// Store is an open history database. Its methods are safe for concurrent use.
type Store struct {
	path string
	w    *sql.DB // the one writing connection
	r    *sql.DB // read-only connections
}

// fileURI is SQLite's URI of the absolute path abs: file:///path. A Windows path is written
// with '/' after a third slash, as SQLite reads it (file:///C:/Users/...; a share
// \\server\share becomes file:////server/share).
func fileURI(abs string) string {
	p := filepath.ToSlash(abs)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return (&url.URL{Scheme: "file", Path: p}).String()
}

// Open opens the history database at path, creating the file (0600) and the schema when the
// file is absent. It refuses a path that is a symbolic link or anything but a regular file, a
// file that is not an SQLite database, and a database of a newer schema than this trtbuild's.
func Open(path string) (*Store, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("history database %s: %w", pathtext.Q(path), err)
	}
	if err := prepareFile(abs); err != nil {
		return nil, err
	}
	uri := fileURI(abs)
	// mode=rw: the file exists now; SQLite must not create it (with the umask's mode) if it
	// was removed since. _txlock=immediate: a write transaction takes the write lock when it
	// begins, so it waits (busy_timeout) instead of failing when it finds another writer.
	w, err := sql.Open("sqlite", fmt.Sprintf("%s?mode=rw&_txlock=immediate&_pragma=busy_timeout(%d)&_pragma=synchronous(NORMAL)", uri, busyTimeoutMS))
	if err != nil {
		return nil, openError(abs, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	s := &Store{path: abs, w: w}
	if err := s.init(); err != nil {
		w.Close()
		return nil, err
	}
	r, err := sql.Open("sqlite", fmt.Sprintf("%s?mode=rw&_pragma=busy_timeout(%d)&_pragma=query_only(1)", uri, busyTimeoutMS))
	if err != nil {
		w.Close()
		return nil, openError(abs, err)
	}
	r.SetMaxOpenConns(readConns)
	r.SetMaxIdleConns(readConns)
	r.SetConnMaxLifetime(0)
	r.SetConnMaxIdleTime(0)
	if err := r.Ping(); err != nil {
		r.Close()
		w.Close()
		return nil, openError(abs, err)
	}
	s.r = r
	return s, nil
}

// Close closes the database. SQLite checkpoints the WAL into the file when its last
// connection closes.
func (s *Store) Close() error {
	rerr := s.r.Close()
	werr := s.w.Close()
	if err := errors.Join(rerr, werr); err != nil {
		return fmt.Errorf("closing the history database %s: %w", pathtext.Q(s.path), err)
	}
	return nil
}

// prepareFile checks that path and SQLite's files beside it are regular files, not links,
// and creates path (0600, empty: SQLite writes the header) when it is absent.
func prepareFile(path string) error {
	for _, p := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
		if err := checkRegular(p); err != nil {
			return err
		}
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL|createNoFollow, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("creating the history database: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("creating the history database: %w", err)
	}
	return nil
}

// checkRegular returns an error when path exists and is not a regular file.
func checkRegular(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("history database: %w", err)
	}
	what := "not a regular file"
	switch m := fi.Mode(); {
	case m.IsRegular():
		return nil
	case m&fs.ModeSymlink != 0:
		what = "a symbolic link, not a regular file"
	case m.IsDir():
		what = "a folder, not a regular file"
	case m&fs.ModeNamedPipe != 0:
		what = "a FIFO, not a regular file"
	case m&fs.ModeSocket != 0:
		what = "a socket, not a regular file"
	case m&fs.ModeDevice != 0:
		what = "a device, not a regular file"
	}
	return fmt.Errorf("history database file %s is %s; %s", pathtext.Q(path), what, fix)
}

// openError words an error SQLite gave while opening or setting up the file.
func openError(path string, err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_NOTADB {
		return fmt.Errorf("history database %s is not an SQLite database; %s", pathtext.Q(path), fix)
	}
	return fmt.Errorf("opening the history database %s: %w", pathtext.Q(path), err)
}

// init puts the file in WAL mode and creates the schema in an empty database, or checks the
// version of an existing one.
func (s *Store) init() error {
	ctx := context.Background()
	var mode string
	if err := s.w.QueryRowContext(ctx, "PRAGMA journal_mode = WAL").Scan(&mode); err != nil {
		return openError(s.path, err)
	}
	if mode != "wal" {
		return fmt.Errorf("history database %s cannot be put in WAL mode (SQLite kept %q); put --state-dir on a local file system", pathtext.Q(s.path), mode)
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return openError(s.path, err)
	}
	defer tx.Rollback()
	var tables int
	var versioned bool
	err = tx.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(name = 'schema_version'), 0) FROM sqlite_schema WHERE type = 'table'`).Scan(&tables, &versioned)
	if err != nil {
		return openError(s.path, err)
	}
	switch {
	case tables == 0:
		for _, stmt := range schema {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("creating the history database %s: %w", pathtext.Q(s.path), err)
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_version (version) VALUES (?)`, schemaVersion); err != nil {
			return fmt.Errorf("creating the history database %s: %w", pathtext.Q(s.path), err)
		}
	case !versioned:
		return fmt.Errorf("history database %s is an SQLite database of something else (it has no schema_version table); %s", pathtext.Q(s.path), fix)
	default:
		var v sql.NullInt64
		if err := tx.QueryRowContext(ctx, `SELECT max(version) FROM schema_version`).Scan(&v); err != nil {
			return openError(s.path, err)
		}
		if !v.Valid {
			return fmt.Errorf("history database %s has an empty schema_version table; %s", pathtext.Q(s.path), fix)
		}
		version := v.Int64
		if version > schemaVersion {
			return fmt.Errorf("history database %s has schema version %d, newer than this trtbuild's %d; use a newer trtbuild or another --state-dir", pathtext.Q(s.path), version, schemaVersion)
		}
		if version < 1 {
			return fmt.Errorf("history database %s has schema version %d, which no trtbuild wrote; %s", pathtext.Q(s.path), version, fix)
		}
		for ; version < schemaVersion; version++ {
			for _, stmt := range upgrades[version-1] {
				if _, err := tx.ExecContext(ctx, stmt); err != nil {
					return fmt.Errorf("upgrading the history database %s to schema version %d: %w", pathtext.Q(s.path), version+1, err)
				}
			}
			if _, err := tx.ExecContext(ctx, `UPDATE schema_version SET version = ?`, version+1); err != nil {
				return fmt.Errorf("upgrading the history database %s to schema version %d: %w", pathtext.Q(s.path), version+1, err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return openError(s.path, err)
	}
	return nil
}
