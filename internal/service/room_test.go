package service

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCopyRefusedWithoutRoom: a model whose copy would leave the state dir's file system less
// than 1 GiB free (or 5% of a small one) is refused, 507, before anything is copied, in one line
// that names the free room, the copy's size with its external data and what to do; the tools'
// copies too. With the room, the same request is accepted. The old code copied whatever the
// free room (a sparse 2 GiB model became 2 GiB on disk per request).
func TestCopyRefusedWithoutRoom(t *testing.T) {
	e := newEnv(t)
	if err := os.Mkdir(filepath.Join(e.models, "ext"), 0o755); err != nil {
		t.Fatal(err)
	}
	copyFile(t, "../../testdata/models/external_data.onnx", filepath.Join(e.models, "ext", "model.onnx"))
	copyFile(t, "../../testdata/models/external_data.bin", filepath.Join(e.models, "ext", "external_data.bin"))
	m := e.manager(t, nil)
	var free, total uint64
	m.hooks.diskSpace = func(dir string) (uint64, uint64, error) {
		if dir != m.cfg.StateDir {
			t.Errorf("the free room of %s was asked, not the state dir's", dir)
		}
		return free, total, nil
	}
	size := func(names ...string) uint64 {
		var n uint64
		for _, name := range names {
			n += uint64(stat(t, filepath.Join(e.models, name)).Size())
		}
		return n
	}
	fast := `{"backend": "sim", "sim-speed": 50, "no-timing-cache": true}`
	share := minRoomShare
	fivePercent := uint64(float64(1<<30) * share) // of a 1 GiB file system, as checkRoom counts it
	for _, tt := range []struct {
		name, model   string
		size          uint64
		free, total   uint64
		want, floorIs string
	}{
		{"1 GiB would be left, less a byte", "convnet.onnx", size("convnet.onnx"), 1<<30 - 1, 1 << 40, "refused", "1.0 GiB"},
		{"1 GiB is left", "convnet.onnx", size("convnet.onnx"), 1 << 30, 1 << 40, "accepted", ""},
		{"with its external data, a byte short", "ext/model.onnx", size("ext/model.onnx", "ext/external_data.bin"), 1<<30 - 1, 1 << 40, "refused", "1.0 GiB"},
		{"5% of a small disk is left", "convnet.onnx", size("convnet.onnx"), fivePercent, 1 << 30, "accepted", ""},
		{"5% of a small disk would be left, less a byte", "convnet.onnx", size("convnet.onnx"), fivePercent - 1, 1 << 30, "refused", "51.2 MiB"},
		{"a model larger than the free room", "convnet.onnx", size("convnet.onnx"), 100, 1 << 40, "refused", "1.0 GiB"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// The free room after the copy: what the case says is left, plus the copy.
			free, total = tt.free+tt.size, tt.total
			if tt.name == "a model larger than the free room" {
				free = tt.free
			}
			s, _, err := m.Submit(Request{Model: tt.model, Options: opts(t, fast)})
			_, release, toolErr := m.OpenModel(tt.model)
			if release != nil {
				release()
			}
			if tt.want == "accepted" {
				if err != nil || toolErr != nil {
					t.Fatalf("refused: %v; the tool: %v", err, toolErr)
				}
				wait(t, m, s.ID)
				return
			}
			for _, err := range []error{err, toolErr} {
				re, ok := err.(*RequestError)
				if !ok || re.Kind != KindNoRoom || strings.Contains(re.Error(), "\n") ||
					!strings.Contains(re.Problem, "the state dir's file system has "+bytesText(free)+" free") ||
					!strings.Contains(re.Problem, "takes "+bytesText(tt.size)) ||
					!strings.HasSuffix(re.Problem, "would leave less than "+tt.floorIs) ||
					!strings.Contains(re.Hint, "--state-dir") {
					t.Errorf("%v; want a one-line 507 that names the free room, the size %s and the floor %s", err, bytesText(tt.size), tt.floorIs)
				}
			}
			if left := entries(t, m.owner.dir); len(left) > 0 {
				t.Errorf("the refused request left %v in runs/", left)
			}
			if left := entries(t, filepath.Join(e.state, toolModels)); len(left) > 0 {
				t.Errorf("the refused tool left %v", left)
			}
		})
	}
}

// TestRetentionCountsModelCopies: the models' copies of running builds count in the size
// bound: the ended builds' files go to make room for them; the copies stay.
func TestRetentionCountsModelCopies(t *testing.T) {
	e := newEnv(t)
	m := e.manager(t, nil)
	ended := built(t, m, "1")
	running, _, err := m.Submit(Request{Model: "convnet.onnx", Options: opts(t, `{"backend": "sim", "sim-speed": 0.5, "no-timing-cache": true, "sim-seed": 2}`)})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, m, running.ID, "step")
	// The bound holds the ended build's files, with a byte to spare, but not the copy too.
	m.cfg.Keep = Keep{Bytes: countOnce(m.treeFiles(filepath.Join("builds", ended.ID)), map[fileID]bool{}) + 1}
	m.retain(time.Now())
	if s, _ := m.Get(ended.ID); !strings.Contains(s.FilesRemoved, "--keep-builds-size") {
		t.Errorf("the ended build's files are kept beside a running build's copy beyond the bound: %+v", s)
	}
	if _, err := os.Stat(filepath.Join(m.owner.runDir(running.ID), modelDir, "convnet.onnx")); err != nil {
		t.Errorf("the running build's copy was removed: %v", err)
	}
	m.cfg.Keep = Keep{}
	if _, err := m.Cancel(running.ID, true); err != nil {
		t.Fatal(err)
	}
	wait(t, m, running.ID)
}

// TestCopiesStartingTogetherShareTheRoom: the room a copy under way will take counts as taken:
// with room for one copy and the floor, the first of two copies starting together is let in and
// the second refused (507); once the first copy has ended (and its build with it, which removes
// the copy: the free room is as before), the next is let in. The old code let every copy that started together in on the
// same free room, and they failed on a full disk.
func TestCopiesStartingTogetherShareTheRoom(t *testing.T) {
	e := newEnv(t)
	m := e.manager(t, nil)
	src, err := m.models.open("convnet.onnx")
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	size := uint64(src.Size())
	free := uint64(minRoom) + size + size/2 // room for one copy and the floor, not two
	m.hooks.diskSpace = func(string) (uint64, uint64, error) { return free, 1 << 40, nil }
	first, err := m.checkRoom(src, "convnet.onnx")
	if err != nil {
		t.Fatalf("the first copy: %v", err)
	}
	if _, err := m.checkRoom(src, "convnet.onnx"); err == nil {
		t.Fatal("the second copy was let in on the room the first one takes")
	} else if re, ok := err.(*RequestError); !ok || re.Kind != KindNoRoom {
		t.Fatalf("the second copy: %v, want 507", err)
	}
	first()
	first() // twice is once
	next, err := m.checkRoom(src, "convnet.onnx")
	if err != nil {
		t.Fatalf("a copy after the first ended: %v", err)
	}
	next()
	if m.copying != 0 {
		t.Errorf("%d bytes still counted as being copied", m.copying)
	}
}
