//go:build !windows

package main

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"google.golang.org/protobuf/proto"

	"github.com/trtbuild/trtbuild/internal/manifest"
	"github.com/trtbuild/trtbuild/internal/onnx/onnxpb"
	"github.com/trtbuild/trtbuild/internal/testmodels"
)

// keyOf is `trtbuild key`'s key for a simulated build with args.
func keyOf(t *testing.T, args ...string) string {
	t.Helper()
	r := trtbuild(t, nil, append([]string{"key", "--backend", "sim"}, args...)...)
	if r.code != 0 {
		t.Fatalf("key %v: exit %d\n%s", args, r.code, r.stderr)
	}
	return strings.Fields(r.stdout)[0]
}

func sha(b []byte) string { return fmt.Sprintf("sha256:%x", sha256.Sum256(b)) }

// entryOK checks that the cache entry of key holds an engine its manifest describes, and
// returns the engine.
func entryOK(t *testing.T, cache, key string) []byte {
	t.Helper()
	dir := filepath.Join(cache, "entries", key)
	engine, err := os.ReadFile(filepath.Join(dir, "engine"))
	if err != nil {
		t.Fatalf("entry %s: %v", key, err)
	}
	m, err := manifest.Read(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatalf("entry %s: %v", key, err)
	}
	if m.Key != key || m.Engine.SHA256 != sha(engine) || m.Engine.Bytes != int64(len(engine)) {
		t.Fatalf("entry %s holds an engine its manifest does not describe (manifest key %s)", key, m.Key)
	}
	return engine
}

// TestSharedOutputKeepsKeysApart: builds of one model with different settings, sharing one -o
// and one cache, store each its own engine under its own key: what the build wrote, not what
// the path holds when it is stored.
func TestSharedOutputKeepsKeysApart(t *testing.T) {
	t.Parallel() // real subprocesses in their own folders
	model := repoModel(t, "convnet.onnx")
	dir := filepath.Dir(model)
	cache := filepath.Join(dir, "cache")
	out := filepath.Join(dir, "shared.engine")
	settings := [][]string{{}, {"--fp16"}, {"--bf16"}, {"--opt-level", "0"}, {"--opt-level", "1"}, {"--opt-level", "2"}, {"--opt-level", "4"}, {"--opt-level", "5"}}
	var wg sync.WaitGroup
	for _, s := range settings {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(binary, append([]string{"--backend", "sim", "--sim-speed", "1000", "--progress", "quiet", "--no-timing-cache", model, "-o", out, "--engine-cache", cache}, s...)...)
			cmd.Env = testEnv(t)
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("build %v: %v\n%s", s, err, b)
			}
		}()
	}
	wg.Wait()
	// Whichever engine is at -o, the manifest beside it describes it.
	if r := trtbuild(t, nil, "engine", "inspect", out); r.code != 0 {
		t.Errorf("the shared -o and its manifest disagree: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, s := range settings {
		key := keyOf(t, append([]string{model, "--no-timing-cache"}, s...)...)
		engine := entryOK(t, cache, key)
		want := "precision default"
		opt := "opt_level 3" // TensorRT's default level, which the stand-in records when none is set
		for i, a := range s {
			switch a {
			case "--fp16", "--bf16":
				want = "precision " + a[2:]
			case "--opt-level":
				opt = "opt_level " + s[i+1]
			}
		}
		if !bytes.Contains(engine, []byte("\n"+want+"\n")) || !bytes.Contains(engine, []byte("\n"+opt+"\n")) {
			t.Errorf("the entry of %v holds another build's engine:\n%s", s, engine[:200])
		}
		// And it is what a hit serves.
		served := filepath.Join(t.TempDir(), "served.engine")
		r := simBuild(t, append([]string{model, "--no-timing-cache", "-o", served, "--engine-cache", cache}, s...)...)
		got, _ := os.ReadFile(served)
		if !strings.Contains(r.stdout, "Engine cache hit") || !bytes.Equal(got, engine) {
			t.Errorf("%v: not served from its entry:\n%s", s, r.stdout)
		}
	}
}

// TestCorruptEntryIsRebuilt: an entry whose engine is not what its manifest says, or is not an
// entry at all, is never served: the build says so, removes it, builds, and stores a good one.
func TestCorruptEntryIsRebuilt(t *testing.T) {
	t.Parallel() // real subprocesses in their own folders
	for _, tc := range []struct {
		name   string
		break_ func(entry string) error
		want   string
	}{
		{"flipped byte", func(e string) error {
			b, err := os.ReadFile(filepath.Join(e, "engine"))
			if err != nil {
				return err
			}
			b[len(b)/2] ^= 1
			return os.WriteFile(filepath.Join(e, "engine"), b, 0o644)
		}, "SHA-256 differs"},
		{"truncated", func(e string) error { return os.Truncate(filepath.Join(e, "engine"), 100) }, "has 100 bytes"},
		{"zero bytes", func(e string) error { return os.Truncate(filepath.Join(e, "engine"), 0) }, "has 0 bytes"},
		{"a file for a folder", func(e string) error {
			if err := os.RemoveAll(e); err != nil {
				return err
			}
			return os.WriteFile(e, []byte("junk"), 0o644)
		}, "not a folder"},
		{"no manifest", func(e string) error { return os.Remove(filepath.Join(e, "manifest.json")) }, "manifest is missing"},
		{"engine a FIFO", func(e string) error {
			if err := os.Remove(filepath.Join(e, "engine")); err != nil {
				return err
			}
			return syscall.Mkfifo(filepath.Join(e, "engine"), 0o644)
		}, "not a regular file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			model := repoModel(t, "convnet.onnx")
			dir := filepath.Dir(model)
			cache := filepath.Join(dir, "cache")
			simBuild(t, model, "-o", filepath.Join(dir, "a.engine"), "--engine-cache", cache)
			key := keyOf(t, model)
			good := entryOK(t, cache, key)
			if err := tc.break_(filepath.Join(cache, "entries", key)); err != nil {
				t.Fatal(err)
			}
			b := filepath.Join(dir, "b.engine")
			r := trtbuildWithin(t, nil, "--backend", "sim", "--sim-speed", "1000", "--progress", "plain", model, "-o", b, "--engine-cache", cache)
			if r.code != 0 || strings.Contains(r.stdout, "Engine cache hit") || !strings.Contains(r.stderr, tc.want) || !strings.Contains(r.stderr, "removed it") {
				t.Fatalf("exit %d; want a rebuild that says %q\nstdout: %s\nstderr: %s", r.code, tc.want, r.stdout, r.stderr)
			}
			got, _ := os.ReadFile(b)
			if !bytes.HasPrefix(got, []byte("TRTBUILD-SIMULATED-PLAN 1\n")) || len(got) < len(good)/2 {
				t.Fatalf("the rebuilt engine is not a whole plan (%d bytes)", len(got))
			}
			entryOK(t, cache, key) // repaired
		})
	}
}

// TestManifestIsAnOutput: the manifest is checked against the model, its data and every other
// output before anything starts, never replaces a file that is not a manifest, and follows no
// link; --no-manifest writes none.
func TestManifestIsAnOutput(t *testing.T) {
	t.Parallel() // real subprocesses in their own folders
	ext := func(t *testing.T, dir string) string {
		t.Helper()
		data := make([]byte, 16384)
		for i := range data {
			data[i] = byte(i)
		}
		if err := os.WriteFile(filepath.Join(dir, "v.engine.json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		w := testmodels.External("w", []int64{4096}, "v.engine.json", 0, 16384)
		g := &onnxpb.GraphProto{
			Name:        "g",
			Node:        []*onnxpb.NodeProto{testmodels.Node("add", "Add", []string{"x", "w"}, []string{"y"})},
			Initializer: []*onnxpb.TensorProto{w},
			Input:       []*onnxpb.ValueInfoProto{testmodels.Value("x", onnxpb.TensorProto_FLOAT, 4096)},
			Output:      []*onnxpb.ValueInfoProto{testmodels.Value("y", onnxpb.TensorProto_FLOAT, 4096)},
		}
		b, err := proto.Marshal(testmodels.Model(g))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, "v.onnx")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, dir, model string) []string
		want  string
	}{
		{"the model is the manifest", func(t *testing.T, dir, model string) []string {
			m := filepath.Join(dir, "m.engine.json")
			if err := os.Rename(model, m); err != nil {
				t.Fatal(err)
			}
			return []string{m, "-o", filepath.Join(dir, "m.engine")}
		}, "the model"},
		{"external data is the manifest", func(t *testing.T, dir, model string) []string {
			return []string{ext(t, dir)}
		}, "external data"},
		{"--report is the manifest", func(t *testing.T, dir, model string) []string {
			return []string{model, "-o", filepath.Join(dir, "x.engine"), "--report", filepath.Join(dir, "x.engine.json")}
		}, "the manifest"},
		{"--trace is the manifest", func(t *testing.T, dir, model string) []string {
			return []string{model, "-o", filepath.Join(dir, "x.engine"), "--trace", filepath.Join(dir, "x.engine.json")}
		}, "the manifest"},
		{"--timing-cache is the manifest", func(t *testing.T, dir, model string) []string {
			return []string{model, "-o", filepath.Join(dir, "x.engine"), "--timing-cache", filepath.Join(dir, "x.engine.json")}
		}, "the manifest"},
		{"a foreign file at the manifest's path", func(t *testing.T, dir, model string) []string {
			if err := os.Mkdir(filepath.Join(dir, "deploy"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "deploy", "config.json"), []byte(`{"replicas": 3}`), 0o644); err != nil {
				t.Fatal(err)
			}
			return []string{model, "-o", filepath.Join(dir, "deploy", "config")}
		}, "not a trtbuild manifest"},
		{"a link at the manifest's path", func(t *testing.T, dir, model string) []string {
			secret := filepath.Join(dir, "secret")
			if err := os.WriteFile(secret, []byte("root only"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(secret, filepath.Join(dir, "x.engine.json")); err != nil {
				t.Fatal(err)
			}
			return []string{model, "-o", filepath.Join(dir, "x.engine")}
		}, "symbolic link"},
		{"a FIFO at the manifest's path", func(t *testing.T, dir, model string) []string {
			mkfifo(t, filepath.Join(dir, "x.engine.json"))
			return []string{model, "-o", filepath.Join(dir, "x.engine")}
		}, "FIFO"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			model := repoModel(t, "convnet.onnx")
			dir := filepath.Dir(model)
			args := tc.setup(t, dir, model)
			before := snapshot(t, dir)
			common := []string{"--backend", "sim", "--sim-speed", "1000"}
			if !strings.Contains(tc.name, "timing-cache") {
				common = append(common, "--no-timing-cache")
			}
			r := trtbuildWithin(t, nil, append(common, args...)...)
			if r.code != 2 || !strings.Contains(r.stderr, tc.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
				t.Fatalf("exit %d, stderr %q; want 2 and one line with %q", r.code, r.stderr, tc.want)
			}
			sameSnapshot(t, before, snapshot(t, dir))
		})
	}
	t.Run("--no-manifest", func(t *testing.T) {
		model := repoModel(t, "convnet.onnx")
		dir := filepath.Dir(model)
		if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"replicas": 3}`), 0o644); err != nil {
			t.Fatal(err)
		}
		simBuild(t, model, "-o", filepath.Join(dir, "config"), "--no-manifest")
		assertUnchanged(t, filepath.Join(dir, "config.json"), `{"replicas": 3}`)
	})
	t.Run("an old manifest is replaced", func(t *testing.T) {
		model := repoModel(t, "convnet.onnx")
		dir := filepath.Dir(model)
		simBuild(t, model, "-o", filepath.Join(dir, "x.engine"))
		simBuild(t, model, "-o", filepath.Join(dir, "x.engine"), "--fp16")
		m, err := manifest.Read(filepath.Join(dir, "x.engine.json"))
		if err != nil || m.Precision != "fp16" {
			t.Fatalf("the second build's manifest: %+v %v", m, err)
		}
	})
}

// TestOutputFolderSwappedMidBuild: the output folder replaced by a link while the build runs
// does not move the engine, its manifest or the report: they land in the folder as it was.
func TestOutputFolderSwappedMidBuild(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders
	model := repoModel(t, "convnet.onnx")
	dir := filepath.Dir(model)
	out := filepath.Join(dir, "out")
	elsewhere := filepath.Join(dir, "elsewhere")
	for _, d := range []string{out, elsewhere} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd, errOut, stdout := startBuild(t, "--backend", "sim", "--sim-speed", "5", "--progress", "plain", "--no-timing-cache", model,
		"-o", filepath.Join(out, "m.engine"), "--report", filepath.Join(out, "r.json"))
	if err := os.Rename(out, out+".orig"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, out); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, cmd, 2*time.Minute); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, errOut, stdout)
	}
	if left, _ := os.ReadDir(elsewhere); len(left) != 0 {
		t.Fatalf("files landed in the folder the link points at: %v", left)
	}
	for _, name := range []string{"m.engine", "m.engine.json", "r.json"} {
		if _, err := os.Stat(filepath.Join(out+".orig", name)); err != nil {
			t.Errorf("%s is not in the original folder: %v", name, err)
		}
	}
}

// holdLock takes the engine cache's lock as another build would, until the test ends.
func holdLock(t *testing.T, cache string) {
	t.Helper()
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(cache, "lock"), os.O_RDONLY|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
}

// waitingForLock waits until the process pid has the cache's lock file open: it is waiting
// for the lock. It fails the test when the process ends first.
func waitingForLock(t *testing.T, pid int, cache string) {
	t.Helper()
	lock := filepath.Join(cache, "lock")
	for {
		fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		for _, fd := range fds {
			if target, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); target == lock {
				return
			}
		}
		if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err != nil || strings.Contains(string(st), ") Z ") {
			t.Fatal("the build ended before it waited for the lock")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSignalsDuringCacheWork: Ctrl-C, SIGTERM and --timeout end a build whose store waits for
// the engine cache's lock (held by another build), with their exit codes: the engine is built
// and stays, the cache is left as it was. A lookup takes no lock, so it never waits.
func TestSignalsDuringCacheWork(t *testing.T) {
	t.Parallel() // real subprocesses in their own folders
	for _, tc := range []struct {
		name   string
		signal syscall.Signal
		args   []string
		code   int
		want   string
	}{
		{"SIGINT", syscall.SIGINT, nil, 130, "interrupted (SIGINT) while the manifest was written and the engine stored in the engine cache"},
		{"SIGTERM", syscall.SIGTERM, nil, 143, "terminated (SIGTERM) while the manifest was written and the engine stored in the engine cache"},
		{"--timeout", 0, []string{"--timeout", "20s"}, 124, "exceeded --timeout 20s while the manifest was written and the engine stored"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			model := repoModel(t, "convnet.onnx")
			dir := filepath.Dir(model)
			cache := filepath.Join(dir, "cache")
			holdLock(t, cache)
			engine := filepath.Join(dir, "m.engine")
			cmd := exec.Command(binary, append([]string{"--backend", "sim", "--sim-speed", "1000", "--progress", "plain", model, "-o", engine, "--engine-cache", cache}, tc.args...)...)
			cmd.Env = testEnv(t)
			var errOut bytes.Buffer
			cmd.Stderr = &errOut
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			waitingForLock(t, cmd.Process.Pid, cache)
			if tc.signal != 0 {
				if err := cmd.Process.Signal(tc.signal); err != nil {
					t.Fatal(err)
				}
			}
			if code := waitExit(t, cmd, 2*time.Minute); code != tc.code || !strings.Contains(errOut.String(), tc.want) {
				t.Fatalf("exit %d, want %d and %q\nstderr: %s", code, tc.code, tc.want, errOut.String())
			}
			if r := trtbuild(t, nil, "engine", "inspect", engine); r.code != 0 {
				t.Fatalf("the built engine and its manifest: exit %d\n%s", r.code, r.stderr)
			}
			if left, _ := os.ReadDir(filepath.Join(cache, "entries")); len(left) != 0 {
				t.Fatalf("entries stored: %v", left)
			}
			assertNoTempFiles(t, dir)
		})
	}
}

// TestPlantedEntriesOfAnotherUser: entries another user planted in a shared cache are not
// served, however they are made. Needs root to make files owned by another user.
func TestPlantedEntriesOfAnotherUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make files owned by another user")
	}
	t.Parallel() // real subprocesses in their own folders
	const attacker = 54321
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, entry, secret string)
	}{
		{"a link to a root-only file", func(t *testing.T, entry, secret string) {
			if err := os.Symlink(secret, filepath.Join(entry, "engine")); err != nil {
				t.Fatal(err)
			}
			plantManifest(t, entry, []byte("root only secret"))
		}},
		{"a plain file with a matching manifest", func(t *testing.T, entry, secret string) {
			if err := os.WriteFile(filepath.Join(entry, "engine"), []byte("TRTBUILD-SIMULATED-PLAN 1\nplanted\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			plantManifest(t, entry, []byte("TRTBUILD-SIMULATED-PLAN 1\nplanted\n"))
		}},
		{"no manifest", func(t *testing.T, entry, secret string) {
			if err := os.WriteFile(filepath.Join(entry, "engine"), []byte("TRTBUILD-SIMULATED-PLAN 1\nplanted\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			model := repoModel(t, "convnet.onnx")
			dir := filepath.Dir(model)
			cache := filepath.Join(dir, "cache")
			if err := os.MkdirAll(filepath.Join(cache, "entries"), 0o777); err != nil {
				t.Fatal(err)
			}
			os.Chmod(filepath.Join(cache, "entries"), 0o1777)
			secret := filepath.Join(dir, "secret")
			if err := os.WriteFile(secret, []byte("root only secret"), 0o600); err != nil {
				t.Fatal(err)
			}
			key := keyOf(t, model)
			entry := filepath.Join(cache, "entries", key)
			if err := os.Mkdir(entry, 0o755); err != nil {
				t.Fatal(err)
			}
			tc.plant(t, entry, secret)
			filepath.Walk(entry, func(p string, _ os.FileInfo, _ error) error { return os.Lchown(p, attacker, attacker) })
			out := filepath.Join(dir, "m.engine")
			r := simBuild(t, model, "-o", out, "--engine-cache", cache)
			got, _ := os.ReadFile(out)
			if strings.Contains(r.stdout, "Engine cache hit") || bytes.Contains(got, []byte("planted")) || bytes.Contains(got, []byte("secret")) {
				t.Fatalf("a planted entry was served:\n%s\n%s", r.stdout, got)
			}
			if !strings.Contains(r.stderr, "not used") {
				t.Errorf("the build did not say the entry was not used:\n%s", r.stderr)
			}
			assertUnchanged(t, secret, "root only secret")
			if st, _ := os.Stat(out); st.Mode().Perm() != 0o644 {
				t.Errorf("the engine has mode %o", st.Mode().Perm())
			}
			entryOK(t, cache, key) // replaced by the build's own
		})
	}
}

// plantManifest writes a manifest that describes engine under the entry's key.
func plantManifest(t *testing.T, entry string, engine []byte) {
	t.Helper()
	b, err := manifest.Marshal(&manifest.Manifest{Key: filepath.Base(entry), Engine: manifest.Engine{File: "engine", Bytes: int64(len(engine)), SHA256: sha(engine)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(entry, "manifest.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestPlantedWritableOutput: an -o file another user planted writable by all does not leave
// the new engine writable by them (they could rewrite it after it is in place, under the
// manifest's and the cache's hash). Needs root to make files owned by another user.
func TestPlantedWritableOutput(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make files owned by another user")
	}
	t.Parallel() // real subprocesses in their own folders
	model := repoModel(t, "convnet.onnx")
	dir := filepath.Dir(model)
	out := filepath.Join(dir, "b.engine")
	if err := os.WriteFile(out, []byte("x"), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(out, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(out, 54321, 54321); err != nil {
		t.Fatal(err)
	}
	simBuild(t, model, "-o", out, "--engine-cache", filepath.Join(dir, "cache"))
	st, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm()&0o022 != 0 {
		t.Fatalf("the engine is mode %o: writable by the user who planted the file", st.Mode().Perm())
	}
}

// TestPlantedCacheLockDegrades: a FIFO or a link planted as the cache's lock does not hang or
// fail the build: it says the cache is not used and builds, creating nothing.
func TestPlantedCacheLockDegrades(t *testing.T) {
	t.Parallel() // real subprocesses in their own folders
	for _, plant := range []string{"fifo", "link"} {
		t.Run(plant, func(t *testing.T) {
			model := repoModel(t, "convnet.onnx")
			dir := filepath.Dir(model)
			cache := filepath.Join(dir, "cache")
			if err := os.Mkdir(cache, 0o755); err != nil {
				t.Fatal(err)
			}
			target := filepath.Join(dir, "made-by-trtbuild")
			if plant == "fifo" {
				mkfifo(t, filepath.Join(cache, "lock"))
			} else if err := os.Symlink(target, filepath.Join(cache, "lock")); err != nil {
				t.Fatal(err)
			}
			r := trtbuildWithin(t, nil, "--backend", "sim", "--sim-speed", "1000", "--progress", "plain", model, "--engine-cache", cache)
			if r.code != 0 || !strings.Contains(r.stderr, "not using the engine cache") || !strings.Contains(r.stderr, "lock file") {
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
			if _, err := os.Lstat(target); err == nil {
				t.Fatal("the link's target was created")
			}
		})
	}
}

// TestSignalWhileHashingTheModel: with --engine-cache the key is computed before the build,
// hashing every weight; a signal while a large model is hashed ends the command at once, with
// its exit code and nothing written.
func TestSignalWhileHashingTheModel(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders
	dir := t.TempDir()
	const size = 4 << 30 // sparse: hashing it reads 4 GiB of zeros, seconds on any machine
	data := filepath.Join(dir, "w.bin")
	f, err := os.Create(data)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		f.Close()
		t.Skipf("no sparse 4 GiB file here: %v", err)
	}
	f.Close()
	w := testmodels.External("w", []int64{size / 4}, "w.bin", 0, size)
	g := &onnxpb.GraphProto{
		Name:        "g",
		Node:        []*onnxpb.NodeProto{testmodels.Node("add", "Add", []string{"x", "w"}, []string{"y"})},
		Initializer: []*onnxpb.TensorProto{w},
		Input:       []*onnxpb.ValueInfoProto{testmodels.Value("x", onnxpb.TensorProto_FLOAT, size/4)},
		Output:      []*onnxpb.ValueInfoProto{testmodels.Value("y", onnxpb.TensorProto_FLOAT, size/4)},
	}
	b, err := proto.Marshal(testmodels.Model(g))
	if err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(dir, "big.onnx")
	if err := os.WriteFile(model, b, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "--backend", "sim", "--progress", "plain", model, "--engine-cache", filepath.Join(dir, "cache"))
	cmd.Env = testEnv(t)
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Hashing has started once the process has the data file open.
	for !hasOpen(cmd.Process.Pid, data) {
		if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", cmd.Process.Pid)); err != nil || strings.Contains(string(st), ") Z ") {
			t.Fatalf("the build ended before it hashed the model:\n%s", errOut.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, cmd, 2*time.Minute); code != 130 || !strings.Contains(errOut.String(), "during the engine cache lookup; nothing was built") {
		t.Fatalf("exit %d, want 130 during the lookup\nstderr: %s", code, errOut.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "big.engine")); err == nil {
		t.Fatal("an engine was written")
	}
}

// hasOpen reports whether process pid has path open.
func hasOpen(pid int, path string) bool {
	fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	for _, fd := range fds {
		if target, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); target == path {
			return true
		}
	}
	return false
}
