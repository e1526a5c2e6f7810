//go:build !windows

package httpapi

import (
	"fmt"
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

// TestTokenFileOfAnotherUser: a token file that belongs to another user than the server's
// is refused in one line that names both users, mode 0600 or not; the old code accepted a
// file of nobody's for a root server.
func TestTokenFileOfAnotherUser(t *testing.T) {
	m := newTestServer(t).m
	newServer := func(file string) error {
		_, err := New(Config{Addr: "127.0.0.1:0", TokenFile: file, Manager: m})
		return err
	}
	mine := strongToken(t)
	if err := newServer(mine); err != nil {
		t.Fatalf("the server's own token file: %v", err)
	}
	t.Run("the server runs as another user", func(t *testing.T) {
		euid := os.Geteuid()
		geteuid = func() int { return euid + 1 }
		defer func() { geteuid = os.Geteuid }()
		want := fmt.Sprintf("belongs to user %d, not to the server's user %d; give a token file of your own (chown %d ", euid, euid+1, euid+1)
		if err := newServer(mine); err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Fatalf("New: %v, want one line with %q", err, want)
		}
	})
	t.Run("root and a file of nobody's", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("only root can give a file to another user")
		}
		nobody := strongToken(t)
		if err := os.Chown(nobody, 65534, 65534); err != nil {
			t.Skip(err)
		}
		if err := newServer(nobody); err == nil || !strings.Contains(err.Error(), "belongs to user 65534, not to the server's user 0") {
			t.Fatalf("New: %v, want the file of user 65534 refused", err)
		}
	})
}
