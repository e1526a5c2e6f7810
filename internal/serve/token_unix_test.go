//go:build !windows

package serve

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestTokenFileNotRegular: a FIFO, a link to a FIFO and a device given as --token-file are
// refused in one line before anything is read, where os.Open of a FIFO would block the server
// at its start, beyond the reach of SIGINT.
func TestTokenFileNotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "token.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "token.link")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	m := newTestServer(t).m
	for _, tt := range []struct{ name, file, want string }{
		{"a FIFO", fifo, "is a named pipe (FIFO), not a regular file"},
		{"a link to a FIFO", link, "is a named pipe (FIFO), not a regular file"},
		{"a device", "/dev/zero", "is a character device, not a regular file"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := os.Stat(tt.file); err != nil {
				t.Skip(err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := New(Config{Addr: "127.0.0.1:0", TokenFile: tt.file, Manager: m})
				done <- err
			}()
			err := waitUnblocking(t, done, fifo)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "give a file holding the token") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("New: %v, want one line with %q", err, tt.want)
			}
		})
	}
}

// waitUnblocking waits for done. Should the test near its deadline first (a read blocked on
// the FIFO), it opens the FIFO's other end, again until the read has let go, and fails the
// test if a read was waiting there: the failure is reported rather than the test binary
// killed.
func waitUnblocking(t *testing.T, done <-chan error, fifo string) error {
	t.Helper()
	var late <-chan time.Time
	if d, ok := t.Deadline(); ok {
		late = time.After(time.Until(d) - 30*time.Second)
	}
	select {
	case err := <-done:
		return err
	case <-late:
	}
	for unblocked := false; ; {
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			unblocked = true // a reader was waiting on the FIFO
			w.Close()
		}
		select {
		case err := <-done:
			if unblocked {
				t.Fatal("reading the token file blocked on the FIFO")
			}
			return err
		case <-time.After(100 * time.Millisecond):
		}
	}
}
