package timingcache

// The timing cache's tests that hold on every OS: they run here and, with the Windows tests,
// under Wine (scripts/wine.sh test picks *_portable_test.go files too). Their folders come from
// winetest.TempDir, which Wine can remove.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trtbuild/trtbuild/internal/winetest"
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
		{Key{Backend: "tensorrt", TensorRT: 100800, Build: 43, GPU: "NVIDIA L4", ComputeMajor: 8, ComputeMinor: 9}, "trt-10.8.0.43_NVIDIA-L4_sm89"},
	}
	for _, tt := range tests {
		if got := tt.key.Name(); got != tt.want {
			t.Errorf("%+v.Name() = %q, want %q", tt.key, got, tt.want)
		}
	}
}

func TestLoadMissing(t *testing.T) {
	data, err := loadBytes(context.Background(), filepath.Join(winetest.TempDir(t), "none", "x.cache"))
	if data != nil || err != nil {
		t.Fatalf("Load of a missing file = %q, %v; want nil, nil", data, err)
	}
}

func TestSaveCreatesAndMerges(t *testing.T) {
	path := filepath.Join(winetest.TempDir(t), "a", "b", "x.cache")
	ctx := context.Background()
	s, err := saveBytes(ctx, path, union("l1", "l2"))
	if err != nil || !s.Written || s.Path != path {
		t.Fatalf("first save: %+v, %v", s, err)
	}
	s, err = saveBytes(ctx, path, union("l2", "l3"))
	if err != nil || !s.Written {
		t.Fatalf("second save: %+v, %v", s, err)
	}
	if got := strings.Join(entries(t, path), ","); got != "l1,l2,l3" {
		t.Errorf("entries after two saves: %s, want l1,l2,l3", got)
	}
	if st, err := os.Lstat(lockPath(path)); err != nil || !st.Mode().IsRegular() {
		t.Errorf("the lock file beside the cache: %v, %v", st, err)
	}
	// Nothing new: the file is not rewritten.
	st1, _ := os.Stat(path)
	s, err = saveBytes(ctx, path, union("l1"))
	if err != nil || s.Written {
		t.Fatalf("a save that adds nothing wrote the file: %+v, %v", s, err)
	}
	st2, _ := os.Stat(path)
	if !os.SameFile(st1, st2) {
		t.Error("a save that adds nothing replaced the file")
	}
	data, err := loadBytes(ctx, path)
	if err != nil || !bytes.HasPrefix(data, []byte("CACHE\nl1\n")) {
		t.Errorf("Load = %q, %v", data, err)
	}
}

func TestSaveEmptyMergeWritesNothing(t *testing.T) {
	path := filepath.Join(winetest.TempDir(t), "x.cache")
	s, err := saveBytes(context.Background(), path, func([]byte) ([]byte, error) { return nil, nil })
	if err != nil || s.Written {
		t.Fatalf("%+v, %v", s, err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an empty merge created the file: %v", err)
	}
}

// TestConcurrentSavesLoseNothing has builders save into one file at the same time, each with
// entries of its own; the merge sleeps between reading and returning to widen the window in
// which an unlocked read-merge-write would lose another's entries.
func TestConcurrentSavesLoseNothing(t *testing.T) {
	path := filepath.Join(winetest.TempDir(t), "shared.cache")
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
				_, err := saveBytes(context.Background(), path, func(disk []byte) ([]byte, error) {
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
