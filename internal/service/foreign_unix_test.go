//go:build unix

package service

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trtbuild/trtbuild/internal/builder"
	"github.com/trtbuild/trtbuild/internal/exitcode"
)

// TestForeignFolderInStateDir: a folder inside a private state dir that another user owns (a
// state dir whose owner changed with a chown that was not recursive, or a folder planted before
// the state dir was private) is refused when the server starts, exit status 2, in one line that
// names it and what to do. Its owner could otherwise swap builds/ID for a folder of its own,
// whose engine the server would serve, or for a link, through which the server would write its
// files outside the state dir; making the folder 0700, as the old code did, leaves it its
// owner's.
func TestForeignFolderInStateDir(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("giving a folder to another user takes root")
	}
	const other = 65534 // nobody
	for _, sub := range []string{"builds", "runs", "engines", toolModels, "converted"} {
		t.Run(sub, func(t *testing.T) {
			e := newEnv(t)
			if err := os.MkdirAll(filepath.Join(e.state, sub), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(filepath.Join(e.state, sub), other, other); err != nil {
				t.Fatal(err)
			}
			m, err := New(Config{StateDir: e.state, ModelRoot: e.models, KeepHistory: true,
				EngineCache: builder.EngineCache{Dir: filepath.Join(e.state, "engines"), Size: "1G", Trust: "self"}})
			if err == nil {
				m.Close()
				t.Fatalf("the server started on a state dir whose %s is user %d's", sub, other)
			}
			var fe *ForeignFolderError
			msg := err.Error()
			if !errors.As(err, &fe) || exitcode.Of(err) != exitcode.Usage || strings.Contains(msg, "\n") ||
				!strings.Contains(msg, filepath.Join(e.state, sub)) || !strings.Contains(msg, "user 65534") || !strings.Contains(msg, "chown -R") {
				t.Fatalf("start: %v (exit %v), want one line, exit 2, naming %s, its owner and chown -R", err, exitcode.Of(err), sub)
			}
		})
	}
}
