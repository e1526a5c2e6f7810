package timingcache

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestKeyName(t *testing.T) {
	tests := []struct {
		key  Key
		want string
	}{
		{Key{}, "sim"},
		{Key{Backend: "sim", GPU: "ignored"}, "sim"},
		{Key{Backend: "tensorrt", TensorRT: 100800, GPU: "NVIDIA H100 80GB HBM3", ComputeMajor: 9}, "trt-10.8.0_NVIDIA-H100-80GB-HBM3_sm90"},
		{Key{Backend: "tensorrt", TensorRT: 110102, GPU: "NVIDIA GeForce RTX 4090", ComputeMajor: 8, ComputeMinor: 9}, "trt-11.1.2_NVIDIA-GeForce-RTX-4090_sm89"},
		{Key{Backend: "tensorrt", TensorRT: 101600, GPU: "../../etc/passwd", ComputeMajor: 8}, "trt-10.16.0_etc-passwd_sm80"},
		{Key{Backend: "tensorrt", TensorRT: 100000, GPU: "  ", ComputeMajor: 7, ComputeMinor: 5}, "trt-10.0.0_nogpu_sm75"},
		{Key{Backend: "tensorrt", TensorRT: 100000, GPU: "Tesla/T4\x00é", ComputeMajor: 7, ComputeMinor: 5}, "trt-10.0.0_Tesla-T4_sm75"},
		{Key{Backend: "other thing", GPU: "G"}, "other-thing_G_sm00"},
	}
	for _, tt := range tests {
		if got := tt.key.Name(); got != tt.want {
			t.Errorf("%+v.Name() = %q, want %q", tt.key, got, tt.want)
		}
	}
}

func FuzzKeyName(f *testing.F) {
	f.Add("tensorrt", 100800, "NVIDIA H100", 9, 0)
	f.Add("x", 0, "../..", 0, 0)
	f.Add("tensorrt", -1, strings.Repeat("é/", 200), -3, 99)
	f.Fuzz(func(t *testing.T, backend string, version int, gpu string, major, minor int) {
		name := Key{Backend: backend, TensorRT: version, GPU: gpu, ComputeMajor: major, ComputeMinor: minor}.Name()
		if name == "" || len(name) > maxName || strings.HasPrefix(name, ".") {
			t.Fatalf("bad file name %q", name)
		}
		for _, r := range name {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
				t.Fatalf("file name %q has %q", name, r)
			}
		}
		if filepath.Base(name) != name {
			t.Fatalf("file name %q is not one path element", name)
		}
	})
}

func TestDefaultPath(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv("HOME", t.TempDir())
	key := Key{Backend: "tensorrt", TensorRT: 100800, GPU: "NVIDIA A100-SXM4-40GB", ComputeMajor: 8}
	got, err := DefaultPath(key)
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(cache, "trtbuild", "timing-cache", "trt-10.8.0_NVIDIA-A100-SXM4-40GB_sm80.cache")
	if got != want {
		t.Errorf("DefaultPath = %s, want %s", got, want)
	}
}

// union is the merge of a line-based test format: the set of lines of disk and of own.
func union(own ...string) MergeFunc {
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

func TestLoadMissing(t *testing.T) {
	data, err := Load(context.Background(), filepath.Join(t.TempDir(), "none", "x.cache"))
	if data != nil || err != nil {
		t.Fatalf("Load of a missing file = %q, %v; want nil, nil", data, err)
	}
}

func TestSaveCreatesAndMerges(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b", "x.cache")
	ctx := context.Background()
	s, err := Save(ctx, path, union("l1", "l2"))
	if err != nil || !s.Written || s.Path != path {
		t.Fatalf("first save: %+v, %v", s, err)
	}
	s, err = Save(ctx, path, union("l2", "l3"))
	if err != nil || !s.Written {
		t.Fatalf("second save: %+v, %v", s, err)
	}
	if got := strings.Join(entries(t, path), ","); got != "l1,l2,l3" {
		t.Errorf("entries after two saves: %s, want l1,l2,l3", got)
	}
	// Nothing new: the file is not rewritten.
	st1, _ := os.Stat(path)
	s, err = Save(ctx, path, union("l1"))
	if err != nil || s.Written {
		t.Fatalf("a save that adds nothing wrote the file: %+v, %v", s, err)
	}
	st2, _ := os.Stat(path)
	if !os.SameFile(st1, st2) {
		t.Error("a save that adds nothing replaced the file")
	}
	data, err := Load(ctx, path)
	if err != nil || !bytes.HasPrefix(data, []byte("CACHE\nl1\n")) {
		t.Errorf("Load = %q, %v", data, err)
	}
}

func TestSaveEmptyMergeWritesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.cache")
	s, err := Save(context.Background(), path, func([]byte) ([]byte, error) { return nil, nil })
	if err != nil || s.Written {
		t.Fatalf("%+v, %v", s, err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an empty merge created the file: %v", err)
	}
}

func TestSaveLeavesRejectedFileAlone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.cache")
	garbage := []byte("\x00\x01 not a cache at all")
	if err := os.WriteFile(path, garbage, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Save(context.Background(), path, union("l1"))
	if !errors.Is(err, ErrRejected) {
		t.Fatalf("Save over a foreign file: %v, want ErrRejected", err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, garbage) {
		t.Errorf("the foreign file was changed to %q", got)
	}
}

func TestSaveUnwritableFolder(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(blocker, "sub", "x.cache")
	if data, err := Load(context.Background(), path); data != nil || err != nil {
		t.Errorf("Load under a file = %q, %v; want no cache and no error (Save reports the folder)", data, err)
	}
	_, err := Save(context.Background(), path, union("l1"))
	if err == nil || !strings.Contains(err.Error(), "creating the timing cache folder") || !errors.Is(err, syscall.ENOTDIR) {
		t.Fatalf("Save under a file: %v", err)
	}
}

func TestSaveFollowsSymlink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.cache")
	link := filepath.Join(dir, "link.cache")
	if err := os.Symlink(real, link); err != nil {
		t.Skip("no symlinks:", err)
	}
	if _, err := Save(context.Background(), link, union("l1")); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v", err)
	}
	if got := entries(t, real); len(got) != 1 {
		t.Errorf("the link's target holds %v", got)
	}
}

// TestConcurrentSavesLoseNothing has builders save into one file at the same time, each with
// entries of its own; the merge sleeps between reading and returning to widen the window in
// which an unlocked read-merge-write would lose another's entries.
func TestConcurrentSavesLoseNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shared.cache")
	const builders, rounds = 4, 5
	var wg sync.WaitGroup
	errs := make(chan error, builders*rounds)
	for b := 0; b < builders; b++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < rounds; r++ {
				own := []string{fmt.Sprintf("b%d-r%d", b, r)}
				inner := union(own...)
				_, err := Save(context.Background(), path, func(disk []byte) ([]byte, error) {
					time.Sleep(5 * time.Millisecond)
					return inner(disk)
				})
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := entries(t, path); len(got) != builders*rounds {
		t.Errorf("%d entries after %d saves of one new entry each: %v", len(got), builders*rounds, got)
	}
}

func TestSaveWaitsForLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.cache")
	ctx := context.Background()
	release := make(chan struct{})
	inside := make(chan struct{})
	done := make(chan error)
	go func() {
		_, err := Save(ctx, path, func(disk []byte) ([]byte, error) {
			close(inside)
			<-release
			return union("first")(disk)
		})
		done <- err
	}()
	<-inside
	second := make(chan error)
	go func() {
		_, err := Save(ctx, path, union("second"))
		second <- err
	}()
	select {
	case err := <-second:
		t.Fatalf("the second save did not wait for the first's lock: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := <-second; err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(entries(t, path), ","); got != "first,second" {
		t.Errorf("entries %s, want first,second", got)
	}
}

func TestSaveGivesUpWhenCancelled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.cache")
	release := make(chan struct{})
	inside := make(chan struct{})
	go Save(context.Background(), path, func(disk []byte) ([]byte, error) { //nolint:errcheck
		close(inside)
		<-release
		return nil, nil
	})
	<-inside
	defer close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := Save(ctx, path, union("x")); err == nil || !strings.Contains(err.Error(), "locking") {
		t.Fatalf("Save with a cancelled context while another holds the lock: %v", err)
	}
}
