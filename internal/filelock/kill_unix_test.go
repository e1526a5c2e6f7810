//go:build !windows

package filelock

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// holdEnv names the lock file a child test process holds until it is killed.
const holdEnv = "FILELOCK_TEST_HOLD"

func TestMain(m *testing.M) {
	if path := os.Getenv(holdEnv); path != "" {
		l, held, err := TryLock(path, true)
		if err != nil || !held {
			fmt.Println("not held:", err)
			os.Exit(1)
		}
		fmt.Println("held")
		var b [1]byte
		os.Stdin.Read(b[:]) // until the parent kills it
		l.Release()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestKilledHolderReleases: a process killed with SIGKILL holds its lock no more.
func TestKilledHolderReleases(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), holdEnv+"="+path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "held\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the child says %q (%v)", line, err)
	}
	if _, held, err := TryLock(path, false); held || err != nil {
		t.Fatalf("a lock the child holds was taken here: %v %v", held, err)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait() // the child is gone, and its files closed
	l, held, err := TryLock(path, true)
	if err != nil || !held {
		t.Fatalf("the killed child's lock is still held: %v %v", held, err)
	}
	l.Release()
}

// TestNamed: a lock whose file was removed and made anew at its path is no longer named by it.
func TestNamed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	l, held, err := TryLock(path, true)
	if err != nil || !held {
		t.Fatal(held, err)
	}
	defer l.Release()
	if !l.Named() {
		t.Fatal("a fresh lock's path does not name it")
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if l.Named() {
		t.Fatal("a lock whose path names another file says it is named")
	}
}
