package cgo

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
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

// mergeTestBuild runs a quick simulated build of convnet.onnx to the end and returns it still
// open, for the calls that come after Run, with what Run said.
func mergeTestBuild(t *testing.T, flags uint32, cache []byte) (*Build, Result) {
	t.Helper()
	sim := quick()
	sim.Threads = 2
	o := options(t, sim)
	o.LogSeverity = SeverityWarning
	o.Flags = flags
	o.TimingCache = cbufOf(t, cache)
	b, err := NewBuild(BackendSim, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	type ran struct {
		res Result
		err error
	}
	done := make(chan ran, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		res, err := b.Run()
		done <- ran{res, err}
	}()
	var batch []RawEvent
	for {
		var finished bool
		if batch, finished, _, err = b.Drain(batch, 50*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		if finished {
			break
		}
	}
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	return b, r.res
}

// cacheHeader is the header of a stand-in timing cache made in this process (TensorRT 11.1's
// stand-in, on its device).
func cacheHeader(t testing.TB, cache []byte) string {
	t.Helper()
	lines := strings.SplitAfterN(string(cache), "\n", 4)
	if len(lines) < 3 {
		t.Fatalf("not a cache: %q", cache)
	}
	return lines[0] + lines[1] + lines[2]
}

// entryLine is a cache line of key, tactic and nanoseconds.
func entryLine(key, tactic string, ns int) string {
	return fmt.Sprintf("%s\t%s\t%d\n", key, tactic, ns)
}

// TestMergeTimingCache: the build's cache merges into a cache file's as trtexec updates its
// --timingCacheFile: with no file, the build's own cache; otherwise the union, where the
// file's entries win; nothing to write when the file has every entry; a file that is no cache
// of this TensorRT and device is refused (CodeCacheRejected), to be left alone; and nothing
// after Close.
func TestMergeTimingCache(t *testing.T) {
	b, res := mergeTestBuild(t, 0, nil)
	own, err := ownCache(t, b)
	if err != nil {
		t.Fatal(err)
	}
	ownEntries := cacheEntries(t, own)
	if len(ownEntries) == 0 || uint64(len(ownEntries)) != res.CacheMisses {
		t.Fatalf("own cache of %d entries, %d timings added: %q", len(ownEntries), res.CacheMisses, own)
	}
	header := cacheHeader(t, own)
	var someKey string
	for k := range ownEntries {
		someKey = k
		break
	}
	const newKey = "00000000000000000000000000000001"

	t.Run("no file yet", func(t *testing.T) {
		got, err := merge(t, b, nil)
		if err != nil || !bytes.Equal(got, own) {
			t.Errorf("merge with nothing = %q, %v; want the build's own cache", got, err)
		}
	})
	t.Run("union, entries on disk win", func(t *testing.T) {
		disk := []byte(header + entryLine(newKey, "00000000000000aa", 456) + entryLine(someKey, "00000000000000bb", 123))
		got, err := merge(t, b, disk)
		if err != nil {
			t.Fatal(err)
		}
		m := cacheEntries(t, got)
		if len(m) != len(ownEntries)+1 || m[someKey] != "00000000000000bb\t123" || m[newKey] != "00000000000000aa\t456" {
			t.Errorf("merged: %v", m)
		}
		for k, v := range ownEntries {
			if k != someKey && m[k] != v {
				t.Errorf("the build's entry %s = %s was lost or changed: %q", k, v, m[k])
			}
		}
	})
	for name, disk := range map[string]string{
		"garbage":            "\x00\x01garbage",
		"bad entry":          header + someKey + "\tx\t5\n",
		"another magic line": strings.Replace(string(own), cacheMagic, "TRTBUILD-SIM-TIMING-CACHE 1\n", 1),
		"another TensorRT":   strings.Replace(string(own), "\ntensorrt ", "\ntensorrt 9.", 1),
		"another device":     strings.Replace(string(own), "\ndevice sm_90\n", "\ndevice sm_80\n", 1),
	} {
		t.Run("rejects "+name, func(t *testing.T) {
			got, err := merge(t, b, []byte(disk))
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
		disk := []byte(header + entryLine(newKey, "00000000000000aa", 9) + entryLine(someKey, "0000000000000001", 5) +
			entryLine(someKey, "0000000000000002", 123))
		got, err := merge(t, b, disk)
		if err != nil {
			t.Fatal(err)
		}
		m := cacheEntries(t, got)
		if len(m) != len(ownEntries)+1 || m[someKey] != "0000000000000002\t123" || m[newKey] != "00000000000000aa\t9" {
			t.Errorf("merged: %v (the later of two lines wins)", m)
		}
		lines := strings.SplitAfter(string(got), "\n")
		if body := lines[3 : len(lines)-1]; !slices.IsSorted(body) {
			t.Errorf("merged cache is not sorted:\n%s", got)
		}
	})
	b.Close()
	if _, err := b.WriteTimingCache(DiskCache{}, nil); !errors.As(err, new(*Error)) || err.(*Error).Code != CodeState {
		t.Errorf("merge after Close: %v", err)
	}
}

// TestMergeTimingCacheBeforeRun: the cache can be written only after Run.
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

// TestMergeTimingCacheDisabled: a build without a timing cache changes no cache file.
func TestMergeTimingCacheDisabled(t *testing.T) {
	b, _ := mergeTestBuild(t, FlagDisableTimingCache, nil)
	if got, err := merge(t, b, nil); err != nil || got != nil {
		t.Errorf("a build without a cache merged into nothing gives %q, %v", got, err)
	}
	other, _ := mergeTestBuild(t, 0, nil)
	disk, err := ownCache(t, other)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := merge(t, b, disk); err != nil || got != nil {
		t.Errorf("a build without a cache changed the file: %q, %v", got, err)
	}
}

// TestWriteTimingCacheGiven covers a file that still holds the cache the build was given: it
// is not read again, and it is rewritten only when the build learned something.
func TestWriteTimingCacheGiven(t *testing.T) {
	first, _ := mergeTestBuild(t, 0, nil)
	full, err := ownCache(t, first)
	if err != nil || len(cacheEntries(t, full)) == 0 {
		t.Fatalf("first build's cache %q, %v", full, err)
	}
	t.Run("no cache given, no file", func(t *testing.T) {
		got, err := writeCache(t, first, DiskCache{Given: true})
		if err != nil || !bytes.Equal(got, full) {
			t.Errorf("got %q, %v; want the build's cache", got, err)
		}
	})
	t.Run("complete cache", func(t *testing.T) {
		b, _ := mergeTestBuild(t, 0, full)
		if got, err := writeCache(t, b, DiskCache{Given: true}); err != nil || got != nil {
			t.Errorf("a build that learned nothing wrote %q, %v", got, err)
		}
	})
	t.Run("partial cache", func(t *testing.T) {
		lines := strings.SplitAfter(string(full), "\n")
		partial := []byte(strings.Join(lines[:4], "")) // the header and one entry
		b, _ := mergeTestBuild(t, 0, partial)
		got, err := writeCache(t, b, DiskCache{Given: true})
		if err != nil || !bytes.Equal(got, full) {
			t.Errorf("got %q, %v; want the complete cache", got, err)
		}
	})
	t.Run("given cache is not one", func(t *testing.T) {
		b, _ := mergeTestBuild(t, 0, []byte("garbage"))
		var nerr *Error
		if _, err := writeCache(t, b, DiskCache{Given: true}); !errors.As(err, &nerr) || nerr.Code != CodeCacheRejected {
			t.Errorf("got %v; want CodeCacheRejected, and the file left alone", err)
		}
	})
}

// FuzzMergeTimingCache merges arbitrary file contents: the merge either refuses them or keeps
// every entry of the build, and what it returns is a cache that merges again unchanged.
func FuzzMergeTimingCache(f *testing.F) {
	header := cacheMagic + "tensorrt 11.1\ndevice sm_90\n"
	f.Add([]byte(""))
	f.Add([]byte(cacheMagic))
	f.Add([]byte(header))
	f.Add([]byte(header + entryLine("0123456789abcdef0123456789abcdef", "1", 1)))
	f.Add([]byte(header + "0123456789abcdef0123456789abcdef\t3\t9\r\n"))
	f.Add([]byte("garbage"))
	f.Fuzz(func(t *testing.T, disk []byte) {
		b, _ := mergeTestBuild(t, 0, nil)
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
			m := cacheEntries(t, got)
			for k := range cacheEntries(t, own) {
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
