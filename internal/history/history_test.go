package history

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// base is a created time with every nanosecond digit set, in a zone other than UTC.
var base = time.Date(2025, 3, 4, 5, 6, 7, 123456789, time.FixedZone("X", 3600+1800))

func open(t testing.TB) (*Store, string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "history.db")
	s, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s, p
}

// result is a realistic result event line (about 400 bytes).
func result(id string) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"v":1,"type":"result","t":12.345678,"status":"succeeded","engine":"builds/%s/model.engine",`+
		`"key":"8f14e45fceea167a5a36dedd4bea2543b1c9a1f3b9d6e0e2d4c1a7f3e5b9c2d1","cache":"miss","seconds":12.3,`+
		`"report":"builds/%s/report.html","trace":"builds/%s/events.jsonl","size":48213904,`+
		`"profile":{"min":"input:1x3x224x224","opt":"input:8x3x224x224","max":"input:32x3x224x224"},"precision":["fp16","int8"]}`, id, id, id))
}

// build is a build with every field set, created i seconds after base.
func build(i int, state string) Build {
	id := fmt.Sprintf("b%05d", i)
	b := Build{
		ID:          id,
		State:       state,
		Key:         fmt.Sprintf("%064x", i),
		Model:       "models/resnet50.onnx",
		Options:     json.RawMessage(`{"fp16":true,"shapes":"input:8x3x224x224"}`),
		RequestHash: fmt.Sprintf("%064x", i*7),
		Dir:         "builds/" + id,
		Created:     base.Add(time.Duration(i) * time.Second),
	}
	if state != stateQueued {
		b.Started = b.Created.Add(1500 * time.Millisecond)
	}
	if state != stateQueued && state != stateRunning {
		b.Ended = b.Started.Add(12*time.Second + 345678901)
		b.Result = result(id)
	}
	return b
}

// same reports whether a and b hold the same build: the same fields, the same instants.
func same(a, b Build) bool {
	if !a.Created.Equal(b.Created) || !a.Started.Equal(b.Started) || !a.Ended.Equal(b.Ended) {
		return false
	}
	a.Created, a.Started, a.Ended = time.Time{}, time.Time{}, time.Time{}
	b.Created, b.Started, b.Ended = time.Time{}, time.Time{}, time.Time{}
	return reflect.DeepEqual(a, b)
}

func ids(builds []Build) []string {
	var s []string
	for _, b := range builds {
		s = append(s, b.ID)
	}
	return s
}

func TestRoundTrip(t *testing.T) {
	full := build(1, "succeeded")
	full.IdempotencyKey = "req-1"
	full.Removed = "older than --keep-builds 168h0m0s"
	tests := []struct {
		name string
		b    Build
	}{
		{"every field", full},
		{"only what is required", Build{ID: "b2", State: "queued", Created: base}},
		{"queued", build(3, stateQueued)},
		{"running", build(4, stateRunning)},
		{"empty options and result, not nil", Build{ID: "b5", State: "failed", Created: base,
			Options: json.RawMessage{}, Result: json.RawMessage{}}},
		{"odd text", Build{ID: "b6 ünï\ncode", State: "cancelled", Model: "a b/'c\";--.onnx", Created: base,
			Options: json.RawMessage("{\"x\":\"\\u0000\xff\"}"), IdempotencyKey: "k\x00ey"}},
		{"nanoseconds near the ends of the range", Build{ID: "b7", State: "timed_out",
			Created: time.Unix(0, -1<<63+1), Started: time.Unix(0, 1), Ended: time.Unix(0, 1<<63-1)}},
	}
	s, _ := open(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := s.Put(tt.b); err != nil {
				t.Fatal(err)
			}
			got, found, err := s.Get(tt.b.ID)
			if err != nil || !found {
				t.Fatalf("Get(%q) = found %v, %v", tt.b.ID, found, err)
			}
			if !same(got, tt.b) {
				t.Errorf("Get(%q) =\n%+v\nwant\n%+v", tt.b.ID, got, tt.b)
			}
			for _, tm := range []time.Time{got.Created, got.Started, got.Ended} {
				if !tm.IsZero() && tm.Location() != time.UTC {
					t.Errorf("time %v is not in UTC", tm)
				}
			}
			if (got.Options == nil) != (tt.b.Options == nil) || (got.Result == nil) != (tt.b.Result == nil) {
				t.Errorf("nil options/result not kept: got %#v %#v", got.Options, got.Result)
			}
			if tt.b.IdempotencyKey != "" {
				byKey, found, err := s.ByIdempotencyKey(tt.b.IdempotencyKey)
				if err != nil || !found || !same(byKey, tt.b) {
					t.Errorf("ByIdempotencyKey(%q) = %+v, %v, %v", tt.b.IdempotencyKey, byKey, found, err)
				}
			}
		})
	}
}

func TestPutUpdates(t *testing.T) {
	s, _ := open(t)
	b := build(1, stateQueued)
	if err := s.Put(b); err != nil {
		t.Fatal(err)
	}
	b.State = stateRunning
	b.Started = b.Created.Add(time.Second)
	if err := s.Put(b); err != nil {
		t.Fatal(err)
	}
	b.State = "succeeded"
	b.Ended = b.Started.Add(time.Second)
	b.Result = result(b.ID)
	if err := s.Put(b); err != nil {
		t.Fatal(err)
	}
	got, _, err := s.Get(b.ID)
	if err != nil || !same(got, b) {
		t.Fatalf("after updates Get = %+v, %v; want %+v", got, err, b)
	}
	n, err := s.Count()
	if err != nil || !reflect.DeepEqual(n, map[string]int{"succeeded": 1}) {
		t.Fatalf("Count = %v, %v; want one succeeded build", n, err)
	}
}

func TestAbsent(t *testing.T) {
	s, _ := open(t)
	if err := s.Put(Build{ID: "a", State: "queued", Created: base}); err != nil {
		t.Fatal(err)
	}
	if b, found, err := s.Get("nope"); found || err != nil {
		t.Errorf("Get(nope) = %+v, %v, %v; want not found", b, found, err)
	}
	// "" is no key: it must not find the builds that have none.
	for _, key := range []string{"nope", ""} {
		if b, found, err := s.ByIdempotencyKey(key); found || err != nil {
			t.Errorf("ByIdempotencyKey(%q) = %+v, %v, %v; want not found", key, b, found, err)
		}
	}
}

func TestPutRefuses(t *testing.T) {
	tests := []struct {
		name string
		b    Build
		want string
	}{
		{"no ID", Build{State: "queued", Created: base}, "needs an ID"},
		{"no state", Build{ID: "a", Created: base}, "build a has no state"},
		{"no created time", Build{ID: "a", State: "queued"}, "build a has no created time"},
		{"created after 2262", Build{ID: "a", State: "queued", Created: time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)},
			"build a: created time 3000-01-01T00:00:00Z is outside the years 1678 to 2262"},
		{"started before 1678", Build{ID: "a", State: "queued", Created: base, Started: time.Date(1000, 1, 1, 0, 0, 0, 0, time.UTC)},
			"build a: started time 1000-01-01T00:00:00Z is outside"},
	}
	s, _ := open(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.Put(tt.b)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Put = %v; want an error with %q", err, tt.want)
			}
		})
	}
	if n, err := s.Count(); err != nil || len(n) != 0 {
		t.Errorf("after refused Puts Count = %v, %v; want none", n, err)
	}
}

func TestList(t *testing.T) {
	s, _ := open(t)
	// b00001..b00006 at distinct times; t1, t2, t3 at one created time (ties go by ID).
	states := []string{"succeeded", "failed", stateQueued, stateRunning, "failed", "succeeded"}
	for i, st := range states {
		if err := s.Put(build(i+1, st)); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"t2", "t1", "t3"} {
		if err := s.Put(Build{ID: id, State: "failed", Created: base.Add(3*time.Second + 500*time.Millisecond)}); err != nil {
			t.Fatal(err)
		}
	}
	all := []string{"b00006", "b00005", "b00004", "t3", "t2", "t1", "b00003", "b00002", "b00001"}
	tests := []struct {
		name string
		f    Filter
		want []string
	}{
		{"all", Filter{}, all},
		{"negative limit is no limit", Filter{Limit: -3}, all},
		{"limit", Filter{Limit: 2}, all[:2]},
		{"limit over the count", Filter{Limit: 100}, all},
		{"state", Filter{State: "failed"}, []string{"b00005", "t3", "t2", "t1", "b00002"}},
		{"state and limit", Filter{State: "failed", Limit: 3}, []string{"b00005", "t3", "t2"}},
		{"state nobody is in", Filter{State: "cancelled"}, nil},
		{"before", Filter{Before: "b00004"}, all[3:]},
		{"before a tie", Filter{Before: "t2"}, []string{"t1", "b00003", "b00002", "b00001"}},
		{"before and limit", Filter{Before: "t3", Limit: 2}, []string{"t2", "t1"}},
		{"before a build of another state", Filter{Before: "b00004", State: "failed"}, []string{"t3", "t2", "t1", "b00002"}},
		{"before the oldest", Filter{Before: "b00001"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.List(tt.f)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ids(got), tt.want) {
				t.Errorf("List(%+v) = %v; want %v", tt.f, ids(got), tt.want)
			}
		})
	}

	t.Run("pages", func(t *testing.T) {
		var walked []string
		f := Filter{Limit: 2}
		for range 10 {
			page, err := s.List(f)
			if err != nil {
				t.Fatal(err)
			}
			if len(page) == 0 {
				break
			}
			walked = append(walked, ids(page)...)
			f.Before = page[len(page)-1].ID
		}
		if !slices.Equal(walked, all) {
			t.Errorf("pages of 2 = %v; want %v", walked, all)
		}
	})

	t.Run("full rows", func(t *testing.T) {
		got, err := s.List(Filter{Limit: 1})
		if err != nil || len(got) != 1 || !same(got[0], build(6, "succeeded")) {
			t.Errorf("List(limit 1) = %+v, %v; want %+v", got, err, build(6, "succeeded"))
		}
	})

	t.Run("unknown before", func(t *testing.T) {
		got, err := s.List(Filter{Before: "zz"})
		if err == nil || !strings.Contains(err.Error(), "no build zz") {
			t.Errorf("List(before zz) = %v, %v; want the error no build zz", ids(got), err)
		}
	})
}

func TestIdempotencyKey(t *testing.T) {
	s, _ := open(t)
	a := build(1, stateQueued)
	a.IdempotencyKey = "k"
	b := build(2, stateQueued)
	b.IdempotencyKey = "k"
	if err := s.Put(a); err != nil {
		t.Fatal(err)
	}
	err := s.Put(b)
	if !errors.Is(err, ErrIdempotencyKeyUsed) || !strings.Contains(err.Error(), "build b00001 has idempotency key \"k\"") {
		t.Fatalf("Put of a second build with key k = %v; want ErrIdempotencyKeyUsed naming b00001", err)
	}
	if _, found, _ := s.Get(b.ID); found {
		t.Error("the refused build was stored")
	}
	// The same build again keeps its key.
	a.State = stateRunning
	if err := s.Put(a); err != nil {
		t.Fatalf("Put of the same build with its own key: %v", err)
	}
	// Builds without a key never clash.
	for i := 3; i < 6; i++ {
		if err := s.Put(build(i, stateQueued)); err != nil {
			t.Fatalf("Put of a build without a key: %v", err)
		}
	}
	// Once a lets go of k, b may take it.
	a.IdempotencyKey = "k2"
	if err := s.Put(a); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(b); err != nil {
		t.Fatalf("Put of b after a changed its key: %v", err)
	}
	for key, want := range map[string]string{"k": b.ID, "k2": a.ID} {
		got, found, err := s.ByIdempotencyKey(key)
		if err != nil || !found || got.ID != want {
			t.Errorf("ByIdempotencyKey(%q) = %s, %v, %v; want %s", key, got.ID, found, err, want)
		}
	}
}

func TestInterrupt(t *testing.T) {
	s, _ := open(t)
	states := []string{"succeeded", stateQueued, stateRunning, "failed", stateRunning, "cancelled", stateQueued}
	before := map[string]Build{}
	for i, st := range states {
		b := build(i+1, st)
		before[b.ID] = b
		if err := s.Put(b); err != nil {
			t.Fatal(err)
		}
	}
	at := time.Date(2025, 3, 5, 1, 2, 3, 987654321, time.Local)
	got, err := s.Interrupt(at)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"b00007", "b00005", "b00003", "b00002"}; !slices.Equal(ids(got), want) {
		t.Fatalf("Interrupt returned %v; want %v", ids(got), want)
	}
	for _, b := range got {
		want := before[b.ID]
		want.State, want.Ended = stateInterrupted, at
		if !same(b, want) {
			t.Errorf("Interrupt returned %+v; want %+v", b, want)
		}
	}
	for id, b := range before {
		stored, _, err := s.Get(id)
		if err != nil {
			t.Fatal(err)
		}
		if b.State == stateQueued || b.State == stateRunning {
			b.State, b.Ended = stateInterrupted, at
		}
		if !same(stored, b) {
			t.Errorf("after Interrupt Get(%s) = %+v; want %+v", id, stored, b)
		}
	}
	again, err := s.Interrupt(at.Add(time.Hour))
	if err != nil || len(again) != 0 {
		t.Errorf("a second Interrupt = %v, %v; want none", ids(again), err)
	}
	if _, err := s.Interrupt(time.Time{}); err == nil {
		t.Error("Interrupt(zero time) did not fail")
	}
}

func TestCount(t *testing.T) {
	s, _ := open(t)
	if n, err := s.Count(); err != nil || len(n) != 0 {
		t.Fatalf("Count of an empty history = %v, %v", n, err)
	}
	states := []string{"succeeded", "failed", "succeeded", stateQueued, "succeeded", stateRunning}
	for i, st := range states {
		if err := s.Put(build(i, st)); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]int{"succeeded": 3, "failed": 1, stateQueued: 1, stateRunning: 1}
	if n, err := s.Count(); err != nil || !reflect.DeepEqual(n, want) {
		t.Errorf("Count = %v, %v; want %v", n, err, want)
	}
}

func TestReopen(t *testing.T) {
	p := filepath.Join(t.TempDir(), "history.db")
	s, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	var want []Build
	for i := range 5 {
		b := build(i, "succeeded")
		want = append([]Build{b}, want...)
		if err := s.Put(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for round := range 2 {
		s, err := Open(p)
		if err != nil {
			t.Fatalf("reopening (round %d): %v", round, err)
		}
		got, err := s.List(Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("after reopening List = %v; want %v", ids(got), ids(want))
		}
		for i := range got {
			if !same(got[i], want[i]) {
				t.Errorf("after reopening build %d = %+v; want %+v", i, got[i], want[i])
			}
		}
		b := build(10+round, stateQueued)
		if err := s.Put(b); err != nil {
			t.Fatal(err)
		}
		want = append([]Build{b}, want...)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestOpenFile(t *testing.T) {
	s, p := open(t)
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Errorf("history.db mode %v; want 0600", perm)
	}
	var mode string
	if err := s.r.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v; want wal", mode, err)
	}
	if err := s.Put(build(1, stateQueued)); err != nil {
		t.Fatal(err)
	}
	// SQLite gives the files beside the database the database's mode.
	for _, side := range []string{"-wal", "-shm"} {
		fi, err := os.Lstat(p + side)
		if err != nil {
			t.Fatal(err)
		}
		if perm := fi.Mode().Perm(); perm&0o077 != 0 {
			t.Errorf("history.db%s mode %v; want no access for others", side, perm)
		}
	}
}

// raw runs SQL on the file at p without this package.
func raw(t *testing.T, p string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", p)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, stmt := range stmts {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
}

func TestOpenRefuses(t *testing.T) {
	// valid makes a history database at p.
	valid := func(t *testing.T, p string) {
		s, err := Open(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name  string
		setup func(t *testing.T, p string)
		want  string // %s: the path
	}{
		{"symbolic link to a history", func(t *testing.T, p string) {
			valid(t, p+".real")
			if err := os.Symlink(p+".real", p); err != nil {
				t.Fatal(err)
			}
		}, "history database file %s is a symbolic link, not a regular file; move it away or use another --state-dir"},
		{"dangling symbolic link", func(t *testing.T, p string) {
			if err := os.Symlink(p+".nowhere", p); err != nil {
				t.Fatal(err)
			}
		}, "history database file %s is a symbolic link, not a regular file; move it away or use another --state-dir"},
		{"FIFO", func(t *testing.T, p string) {
			mkfifo(t, p)
		}, "history database file %s is a FIFO, not a regular file; move it away or use another --state-dir"},
		{"folder", func(t *testing.T, p string) {
			if err := os.Mkdir(p, 0o700); err != nil {
				t.Fatal(err)
			}
		}, "history database file %s is a folder, not a regular file; move it away or use another --state-dir"},
		{"symbolic link as the WAL", func(t *testing.T, p string) {
			if err := os.Symlink(p+".elsewhere", p+"-wal"); err != nil {
				t.Fatal(err)
			}
		}, "history database file %s-wal is a symbolic link, not a regular file; move it away or use another --state-dir"},
		{"not a database", func(t *testing.T, p string) {
			if err := os.WriteFile(p, []byte(strings.Repeat("not SQLite\n", 100)), 0o600); err != nil {
				t.Fatal(err)
			}
		}, "history database %s is not an SQLite database; move it away or use another --state-dir"},
		{"another program's database", func(t *testing.T, p string) {
			raw(t, p, "CREATE TABLE notes (text TEXT)")
		}, "history database %s is an SQLite database of something else (it has no schema_version table); move it away or use another --state-dir"},
		{"newer schema", func(t *testing.T, p string) {
			valid(t, p)
			raw(t, p, "UPDATE schema_version SET version = 3")
		}, "history database %s has schema version 3, newer than this trtbuild's 2; use a newer trtbuild or another --state-dir"},
		{"empty version table", func(t *testing.T, p string) {
			valid(t, p)
			raw(t, p, "DELETE FROM schema_version")
		}, "history database %s has an empty schema_version table; move it away or use another --state-dir"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "history.db")
			tt.setup(t, p)
			s, err := Open(p)
			if err == nil {
				s.Close()
				t.Fatal("Open did not fail")
			}
			if want := fmt.Sprintf(tt.want, p); err.Error() != want {
				t.Errorf("Open error\n%s\nwant\n%s", err, want)
			}
		})
	}
}

func TestConcurrent(t *testing.T) {
	s, _ := open(t)
	const workers, each = 8, 30
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				b := build(w*each+i, stateQueued)
				b.IdempotencyKey = b.ID
				if err := s.Put(b); err != nil {
					errs <- err
					return
				}
				b.State, b.Started = stateRunning, b.Created.Add(time.Second)
				if err := s.Put(b); err != nil {
					errs <- err
					return
				}
				list, err := s.List(Filter{Limit: 50})
				if err != nil {
					errs <- err
					return
				}
				if !slices.IsSortedFunc(list, func(a, b Build) int { return b.Created.Compare(a.Created) }) {
					errs <- fmt.Errorf("List is not newest first: %v", ids(list))
					return
				}
				got, found, err := s.ByIdempotencyKey(b.ID)
				if err != nil || !found || !same(got, b) {
					errs <- fmt.Errorf("ByIdempotencyKey(%s) = %+v, %v, %v; want %+v", b.ID, got, found, err, b)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	n, err := s.Count()
	if err != nil || !reflect.DeepEqual(n, map[string]int{stateRunning: workers * each}) {
		t.Errorf("Count = %v, %v; want %d running", n, err, workers*each)
	}
	list, err := s.List(Filter{})
	if err != nil || len(list) != workers*each {
		t.Errorf("List = %d builds, %v; want %d", len(list), err, workers*each)
	}
}

// TestTwoStores opens one file twice, as two server processes on one state dir would: writes
// from both wait for each other's lock (busy_timeout) instead of failing.
func TestTwoStores(t *testing.T) {
	s1, p := open(t)
	s2, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	const each = 50
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for w, s := range []*Store{s1, s2} {
		wg.Go(func() {
			for i := range each {
				if err := s.Put(build(w*each+i, "succeeded")); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for _, s := range []*Store{s1, s2} {
		if list, err := s.List(Filter{}); err != nil || len(list) != 2*each {
			t.Errorf("List = %d builds, %v; want %d", len(list), err, 2*each)
		}
	}
}

// BenchmarkList10000 lists a history of 10,000 ended builds, each with a result line of about
// 400 bytes.
func BenchmarkList10000(b *testing.B) {
	if n := len(result("b00000")); n < 350 || n > 450 {
		b.Fatalf("the result line has %d bytes; want about 400", n)
	}
	s, _ := open(b)
	for i := range 10000 {
		if err := s.Put(build(i, "succeeded")); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		list, err := s.List(Filter{})
		if err != nil {
			b.Fatal(err)
		}
		if len(list) != 10000 {
			b.Fatalf("List = %d builds; want 10000", len(list))
		}
	}
}

// TestDelete: a deleted build is gone, with its idempotency key; deleting it again is no error.
func TestDelete(t *testing.T) {
	s, _ := open(t)
	b := build(1, "succeeded")
	b.IdempotencyKey = "k"
	if err := s.Put(b); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if err := s.Delete(b.ID); err != nil {
			t.Fatal(err)
		}
	}
	if _, found, err := s.Get(b.ID); found || err != nil {
		t.Fatalf("Get after Delete: found %v, %v", found, err)
	}
	if err := s.Put(build(2, "queued")); err != nil {
		t.Fatal(err)
	}
	other := build(3, "queued")
	other.IdempotencyKey = "k"
	if err := s.Put(other); err != nil {
		t.Fatalf("the deleted build's idempotency key is still taken: %v", err)
	}
}

// TestUpgradeFromVersion1: a database that an earlier trtbuild wrote (schema version 1, without
// the removed column) is brought up to this version, its builds kept.
func TestUpgradeFromVersion1(t *testing.T) {
	p := filepath.Join(t.TempDir(), "history.db")
	raw(t, p, "CREATE TABLE schema_version (version INTEGER NOT NULL) STRICT")
	raw(t, p, "INSERT INTO schema_version (version) VALUES (1)")
	raw(t, p, `CREATE TABLE builds (id TEXT PRIMARY KEY NOT NULL, state TEXT NOT NULL, build_key TEXT NOT NULL, model TEXT NOT NULL, options TEXT,
		idempotency_key TEXT NOT NULL, request_hash TEXT NOT NULL, dir TEXT NOT NULL, result TEXT, created INTEGER NOT NULL, started INTEGER, ended INTEGER) STRICT`)
	raw(t, p, `INSERT INTO builds VALUES ('old', 'succeeded', 'k', 'm.onnx', NULL, '', 'h', 'builds/old', NULL, 1, NULL, 2)`)
	s, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, found, err := s.Get("old")
	if err != nil || !found || got.State != "succeeded" || got.Removed != "" {
		t.Fatalf("the old build: %+v %v %v", got, found, err)
	}
	got.Removed = "gone"
	if err := s.Put(got); err != nil {
		t.Fatal(err)
	}
	if again, _, _ := s.Get("old"); again.Removed != "gone" {
		t.Fatalf("removed after the upgrade: %q", again.Removed)
	}
}
