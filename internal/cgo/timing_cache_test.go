package cgo

import (
	"bytes"
	"errors"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// cbufOf copies data into a new CBuffer (nil for nil data).
func cbufOf(t testing.TB, data []byte) *CBuffer {
	t.Helper()
	if data == nil {
		return nil
	}
	c, err := ReadCBuffer(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// writeCache calls WriteTimingCache into a temporary file and returns what it wrote (nil when
// it said nothing changed).
func writeCache(t testing.TB, b *Build, disk DiskCache) ([]byte, error) {
	t.Helper()
	f, err := os.CreateTemp(testDir(t), "cache")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dry, dryErr := b.WriteTimingCache(disk, nil)
	changed, err := b.WriteTimingCache(disk, f)
	if dry != changed || (dryErr == nil) != (err == nil) {
		t.Fatalf("without a file: %v, %v; with one: %v, %v", dry, dryErr, changed, err)
	}
	if err != nil {
		return nil, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	if !changed {
		if len(out) != 0 {
			t.Fatalf("nothing changed, but %d bytes were written", len(out))
		}
		return nil, nil
	}
	return out, nil
}

// ownCache returns the build's own cache (the given one plus what it learned): what it writes
// when there is no file yet; nil when it has none.
func ownCache(t testing.TB, b *Build) ([]byte, error) {
	t.Helper()
	return writeCache(t, b, DiskCache{})
}

// merge is writeCache with the file's bytes.
func merge(t testing.TB, b *Build, disk []byte) ([]byte, error) {
	t.Helper()
	buf := cbufOf(t, disk)
	defer buf.Free()
	return writeCache(t, b, DiskCache{Data: buf})
}

// mergeTestBuild runs a small simulated build to the end and returns it still open, for the calls
// that come after Run.
func mergeTestBuild(t *testing.T, flags uint32, cache []byte) *Build {
	t.Helper()
	o := options(t, &SimOptions{Threads: 2, Layers: []string{"conv", "relu", "pool"}, Tactics: 2, Iterations: 1, Step: time.Microsecond})
	o.LogSeverity = SeverityWarning
	o.Flags = flags
	o.TimingCache = cbufOf(t, cache)
	b, err := NewBuild(BackendSim, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	ran := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		_, err := b.Run()
		ran <- err
	}()
	var batch []RawEvent
	for {
		var done bool
		if batch, done, _, err = b.Drain(batch, 50*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		if done {
			break
		}
	}
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	return b
}

// simCacheEntries parses a simulated-builder cache into "layer tactic" -> nanoseconds.
func simCacheEntries(t *testing.T, cache []byte) map[string]string {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(string(cache), "\n"), "\n")
	if lines[0]+"\n" != cacheMagic {
		t.Fatalf("not a cache: %q", cache)
	}
	out := map[string]string{}
	for _, l := range lines[1:] {
		f := strings.Split(l, "\t")
		out[f[0]+" "+f[1]] = f[2]
	}
	return out
}

func TestMergeTimingCache(t *testing.T) {
	b := mergeTestBuild(t, 0, nil)
	own, err := ownCache(t, b)
	if err != nil || len(simCacheEntries(t, own)) != 6 {
		t.Fatalf("own cache %q, %v", own, err)
	}

	t.Run("no file yet", func(t *testing.T) {
		got, err := merge(t, b, nil)
		if err != nil || !bytes.Equal(got, own) {
			t.Errorf("merge with nothing = %q, %v; want the build's own cache", got, err)
		}
	})
	t.Run("union, entries on disk win", func(t *testing.T) {
		disk := []byte(cacheMagic + "conv\t0\t123\nother\\tlayer\t7\t456\n")
		got, err := merge(t, b, disk)
		if err != nil {
			t.Fatal(err)
		}
		m := simCacheEntries(t, got)
		if len(m) != 7 || m["conv 0"] != "123" || m[`other\tlayer 7`] != "456" {
			t.Errorf("merged: %v", m)
		}
		for k, v := range simCacheEntries(t, own) {
			if k != "conv 0" && m[k] != v {
				t.Errorf("the build's entry %s = %s was lost or changed: %q", k, v, m[k])
			}
		}
	})
	for name, disk := range map[string][]byte{
		"garbage":            []byte("\x00\x01garbage"),
		"bad entry":          []byte(cacheMagic + "conv\tx\t5\n"),
		"another magic line": []byte("TRTBUILD-SIM-TIMING-CACHE 2\nconv\t0\t5\n"),
	} {
		t.Run("rejects "+name, func(t *testing.T) {
			got, err := merge(t, b, disk)
			var nerr *Error
			if !errors.As(err, &nerr) || nerr.Code != CodeCacheRejected || nerr.Message == "" || got != nil {
				t.Errorf("merge with %q = %q, %v; want CodeCacheRejected", disk, got, err)
			}
		})
	}
	t.Run("nothing new", func(t *testing.T) {
		if got, err := merge(t, b, own); err != nil || got != nil {
			t.Errorf("merge into a file that has every entry = %q, %v; want nothing to write", got, err)
		}
	})
	t.Run("unsorted file with repeated keys", func(t *testing.T) {
		disk := []byte(cacheMagic + "zz\\t\\\\\\n\t1\t9\nconv\t0\t5\nconv\t0\t123\n\r\n")
		got, err := merge(t, b, disk)
		if err != nil {
			t.Fatal(err)
		}
		m := simCacheEntries(t, got)
		if len(m) != 7 || m["conv 0"] != "123" || m[`zz\t\\\n 1`] != "9" {
			t.Errorf("merged: %v (the later of two lines wins, escapes survive)", m)
		}
	})
	b.Close()
	if _, err := b.WriteTimingCache(DiskCache{}, nil); !errors.As(err, new(*Error)) || err.(*Error).Code != CodeState {
		t.Errorf("merge after Close: %v", err)
	}
}

func TestMergeTimingCacheBeforeRun(t *testing.T) {
	b, err := NewBuild(BackendSim, options(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var nerr *Error
	if _, err := b.WriteTimingCache(DiskCache{}, nil); !errors.As(err, &nerr) || nerr.Code != CodeState {
		t.Errorf("merge before Run: %v, want CodeState", err)
	}
}

func TestMergeTimingCacheDisabled(t *testing.T) {
	b := mergeTestBuild(t, FlagDisableTimingCache, nil)
	if got, err := merge(t, b, nil); err != nil || got != nil {
		t.Errorf("a build without a cache merged into nothing gives %q, %v", got, err)
	}
	disk := []byte(cacheMagic + "conv\t0\t123\n")
	if got, err := merge(t, b, disk); err != nil || got != nil {
		t.Errorf("a build without a cache changed the file: %q, %v", got, err)
	}
}

// TestWriteTimingCacheGiven covers a file that still holds the cache the build was given: it
// is not read again, and it is rewritten only when the build learned something.
func TestWriteTimingCacheGiven(t *testing.T) {
	first := mergeTestBuild(t, 0, nil)
	full, err := ownCache(t, first)
	if err != nil || len(simCacheEntries(t, full)) != 6 {
		t.Fatalf("first build's cache %q, %v", full, err)
	}
	t.Run("no cache given, no file", func(t *testing.T) {
		got, err := writeCache(t, first, DiskCache{Given: true})
		if err != nil || !bytes.Equal(got, full) {
			t.Errorf("got %q, %v; want the build's cache", got, err)
		}
	})
	t.Run("complete cache", func(t *testing.T) {
		b := mergeTestBuild(t, 0, full)
		if got, err := writeCache(t, b, DiskCache{Given: true}); err != nil || got != nil {
			t.Errorf("a build that learned nothing wrote %q, %v", got, err)
		}
	})
	t.Run("partial cache", func(t *testing.T) {
		lines := strings.SplitAfter(string(full), "\n")
		partial := []byte(strings.Join(lines[:4], "")) // the magic line and three entries
		b := mergeTestBuild(t, 0, partial)
		got, err := writeCache(t, b, DiskCache{Given: true})
		if err != nil || !bytes.Equal(got, full) {
			t.Errorf("got %q, %v; want the complete cache", got, err)
		}
	})
	t.Run("given cache is not one", func(t *testing.T) {
		b := mergeTestBuild(t, 0, []byte("garbage"))
		var nerr *Error
		if _, err := writeCache(t, b, DiskCache{Given: true}); !errors.As(err, &nerr) || nerr.Code != CodeCacheRejected {
			t.Errorf("got %v; want CodeCacheRejected, and the file left alone", err)
		}
	})
}

// FuzzMergeTimingCache merges arbitrary file contents: the merge either refuses them or keeps
// every entry of the build, and what it returns is a cache that merges again unchanged.
func FuzzMergeTimingCache(f *testing.F) {
	f.Add([]byte(""))
	f.Add([]byte(cacheMagic))
	f.Add([]byte(cacheMagic + "conv\t0\t1\n"))
	f.Add([]byte(cacheMagic + "a\\tb\t3\t9\r\n"))
	f.Add([]byte("garbage"))
	f.Fuzz(func(t *testing.T, disk []byte) {
		b := mergeTestBuild(t, 0, nil)
		own, _ := ownCache(t, b)
		got, err := merge(t, b, disk)
		if err != nil {
			var nerr *Error
			if !errors.As(err, &nerr) || nerr.Code != CodeCacheRejected {
				t.Fatalf("merge of %q: %v", disk, err)
			}
			return
		}
		if got == nil {
			got = disk // nothing new: the file already has every entry of the build
		} else {
			m := simCacheEntries(t, got)
			for k := range simCacheEntries(t, own) {
				if _, ok := m[k]; !ok {
					t.Fatalf("entry %s lost merging %q", k, disk)
				}
			}
		}
		again, err := merge(t, b, got)
		if err != nil || again != nil {
			t.Fatalf("merging the result again changed it: %q, %v", again, err)
		}
	})
}
