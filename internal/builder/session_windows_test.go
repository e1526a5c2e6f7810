package builder

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/progress"
	"github.com/trtbuild/trtbuild/internal/winetest"
)

// TestClosedConsoleStopsTheWorkerInTime closes the console (the SIGTERM of CTRL_CLOSE_EVENT)
// during a build whose worker ignores the cancel: the session stops the worker within
// exitcode.Grace, before Windows would end trtbuild, and the build ends cancelled with 143.
// Without the grace the deaf worker would run for its minute.
func TestClosedConsoleStopsTheWorkerInTime(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := winetest.TempDir(t)
	rec := &recorder{}
	sigs := make(chan os.Signal, 1)
	var cfg Config
	cfg.Worker.Command = []string{exe}
	cfg.Worker.Env = append(os.Environ(), "TRTBUILD_FAKE_WORKER=deaf")
	cfg.Engine = filepath.Join(dir, "m.engine")
	cfg.NewRenderer = func(progress.Controls) progress.Renderer { return rec }
	cfg.Signals = sigs
	cfg.Tick = 10 * time.Millisecond
	sigs <- syscall.SIGTERM
	res, err := runSession(cfg)
	if res.Status != progress.StatusCancelled || exitcode.Of(err) != exitcode.Terminated {
		t.Fatalf("status %s, exit %d (%v); want cancelled with %d", res.Status, exitcode.Of(err), err, exitcode.Terminated)
	}
	if !strings.Contains(rec.text(), "did not stop in the time the system gives") {
		t.Fatalf("notices %q, want the stop within the console's grace", rec.text())
	}
	if _, err := os.Stat(cfg.Engine); !os.IsNotExist(err) {
		t.Fatalf("engine after the cancel: %v, want none", err)
	}
}
