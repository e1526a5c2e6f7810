package service

import (
	"fmt"
	"sync"

	"github.com/trtbuild/trtbuild/internal/onnx"
	"github.com/trtbuild/trtbuild/internal/pathtext"
	"github.com/trtbuild/trtbuild/internal/progress"
)

// The room a model's copy must leave on the state dir's file system: the smaller of minRoom
// and minRoomShare of the file system's size, so that a small disk is not refused outright.
const (
	minRoom      = 1 << 30
	minRoomShare = 0.05
)

// checkRoom refuses (507) a copy of the model src holds, named name, that would leave the state
// dir's file system less free room than minRoom (or minRoomShare of its size, if smaller): the
// copy takes the model's size and its external data's, holes and all (a sparse file's copy is
// written out in full where the file system cannot share blocks). The room of copies that have
// started and not ended counts as taken, so copies starting together cannot each be let in on
// the same free room; call copied once the copy has ended, written or not. A file system whose
// free room cannot be read is not refused: the copy's own error says what went wrong.
func (m *Manager) checkRoom(src *onnx.Source, name string) (copied func(), err error) {
	size := uint64(max(src.Size(), 0))
	if meta, err := src.Metadata(); err == nil {
		for _, f := range src.ExternalFiles(meta) {
			if f.Regular && f.Size > 0 {
				size += uint64(f.Size)
			}
		}
	}
	m.roomMu.Lock()
	defer m.roomMu.Unlock()
	free, total, err := m.diskSpace(m.cfg.StateDir)
	if err != nil || total == 0 {
		return func() {}, nil
	}
	// A copy under way has written part of its bytes, which free no longer holds, and counts
	// all of them here: the room is counted short while copies run, never long.
	free -= min(free, m.copying)
	floor := min(uint64(minRoom), uint64(float64(total)*minRoomShare))
	if free >= size && free-size >= floor {
		m.copying += size
		var once sync.Once
		return func() {
			once.Do(func() {
				m.roomMu.Lock()
				m.copying -= size
				m.roomMu.Unlock()
			})
		}, nil
	}
	return nil, &RequestError{Kind: KindNoRoom,
		Problem: fmt.Sprintf("the state dir's file system has %s free beside the copies under way, and the copy of the model %s with its external data takes %s, which would leave less than %s",
			bytesText(free), pathtext.Q(name), bytesText(size), bytesText(floor)),
		Hint: "submit it again once running builds have ended and freed their copies; the server's operator can free room there (a smaller --keep-builds-size) or give a --state-dir with more room"}
}

// diskSpace is the free bytes (for this user) and the size of the file system that holds dir.
func (m *Manager) diskSpace(dir string) (free, total uint64, err error) {
	if m.hooks.diskSpace != nil {
		return m.hooks.diskSpace(dir)
	}
	return diskSpace(dir)
}

// bytesText is n bytes for a message (progress.FormatBytes).
func bytesText(n uint64) string {
	return progress.FormatBytes(int64(min(n, 1<<62)))
}
