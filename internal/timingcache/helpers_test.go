package timingcache

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"testing"
)

// union is the merge of a line-based test format: the set of lines of disk and of own.
func union(own ...string) mergeFunc {
	return func(disk []byte) ([]byte, error) {
		if len(disk) > 0 && !bytes.HasPrefix(disk, []byte("CACHE\n")) {
			return nil, fmt.Errorf("no magic line: %w", ErrRejected)
		}
		set := map[string]bool{}
		for _, l := range strings.Split(strings.TrimPrefix(string(disk), "CACHE\n"), "\n") {
			if l != "" {
				set[l] = true
			}
		}
		for _, l := range own {
			set[l] = true
		}
		lines := make([]string, 0, len(set))
		for l := range set {
			lines = append(lines, l)
		}
		sort.Strings(lines)
		return []byte("CACHE\n" + strings.Join(lines, "\n") + "\n"), nil
	}
}

func entries(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(strings.TrimPrefix(string(data), "CACHE\n"))
}

// loadBytes returns the cache file's bytes, or nil when it does not exist yet or is empty. See
// LoadWith, which it calls with a reader into Go memory.
func loadBytes(ctx context.Context, path string) ([]byte, error) {
	var data []byte
	_, err := LoadWith(ctx, path, func(f *os.File, size int64) error {
		var err error
		data, err = io.ReadAll(f)
		return err
	})
	if len(data) == 0 {
		data = nil
	}
	return data, err
}

// mergeFunc combines the cache now on disk (nil when there is none) with what a build learned
// and returns the bytes to save; nil means there is nothing to save. It returns an error that
// wraps ErrRejected when disk is not a cache it can read.
type mergeFunc func(disk []byte) ([]byte, error)

// saveBytes is SaveWith for a merge of bytes in memory: the file is read whole and the merged
// bytes are written when they differ from it.
func saveBytes(ctx context.Context, path string, merge mergeFunc) (Saved, error) {
	return SaveWith(ctx, path, Stamp{}, func(disk Disk, out *os.File) (bool, error) {
		var data []byte
		if disk.File != nil {
			var err error
			if data, err = io.ReadAll(disk.File); err != nil {
				return false, fmt.Errorf("reading the timing cache before merging: %w", err)
			}
		}
		merged, err := merge(data)
		if err != nil || len(merged) == 0 || bytes.Equal(merged, data) {
			return false, err
		}
		if out != nil {
			if _, err := out.Write(merged); err != nil {
				return false, err
			}
		}
		return true, nil
	})
}
