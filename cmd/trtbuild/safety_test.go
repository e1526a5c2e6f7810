//go:build !windows

package main

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// snapshot records every file in the given folders, by name, kind and content hash, so that a
// test can prove that a refused command changed nothing and left no temporary file.
func snapshot(t *testing.T, dirs ...string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, dir := range dirs {
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || p == dir {
				return nil
			}
			st, err := os.Lstat(p)
			if err != nil {
				return nil
			}
			v := st.Mode().Type().String()
			if st.Mode().IsRegular() {
				data, _ := os.ReadFile(p)
				sum := sha256.Sum256(data)
				v += fmt.Sprintf(" %x", sum)
			} else if st.Mode()&fs.ModeSymlink != 0 {
				dest, _ := os.Readlink(p)
				v += " -> " + dest
			}
			m[p] = v
			return nil
		})
	}
	return m
}

func sameSnapshot(t *testing.T, before, after map[string]string) {
	t.Helper()
	for p, v := range before {
		if after[p] != v {
			t.Errorf("%s changed (%q -> %q)", p, v, after[p])
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("%s appeared", p)
		}
	}
}

// trtbuildWithin runs trtbuild and fails the test when it does not exit within a minute: the
// cases below used to block forever on a FIFO.
func trtbuildWithin(t *testing.T, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(testEnv(t), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	code := waitExit(t, cmd, time.Minute)
	return result{code, out.String(), errOut.String()}
}

func mkfifo(t *testing.T, path string) string {
	t.Helper()
	if err := unix.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestUnsafePathsRefused covers the data-loss, escape and hang cases that trtbuild refuses:
// each must end with exit status 2 and one line on stderr, change no file, create none (also
// in TMPDIR), and never block. scripts/fault-campaign.sh runs this table as its refusals, in
// its tally beside the cases a shell tells better.
func TestUnsafePathsRefused(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders, cache and HOME
	type env struct {
		dir, model, tmp, outside string
	}
	cases := []struct {
		name  string
		setup func(t *testing.T, e env) []string
		want  string
	}{
		{"trace over the model", func(t *testing.T, e env) []string {
			return []string{e.model, "--trace", e.model}
		}, "--trace"},
		{"timing cache is the engine", func(t *testing.T, e env) []string {
			c := filepath.Join(e.dir, "c")
			return []string{e.model, "--timing-cache", c, "-o", c}
		}, "are the same file"},
		{"report is the trace", func(t *testing.T, e env) []string {
			r := filepath.Join(e.dir, "r.json")
			return []string{e.model, "--report", r, "--trace", r}
		}, "are the same file"},
		{"engine is a hard link to the model", func(t *testing.T, e env) []string {
			h := filepath.Join(e.dir, "hard.engine")
			os.Link(e.model, h)
			return []string{e.model, "-o", h}
		}, "is the model"},
		{"report is a symlink to the model", func(t *testing.T, e env) []string {
			l := filepath.Join(e.dir, "r.json")
			os.Symlink(e.model, l)
			return []string{e.model, "--report", l}
		}, "is the model"},
		{"engine over external data", func(t *testing.T, e env) []string {
			src := filepath.Join("..", "..", "testdata", "models")
			for _, n := range []string{"external_data.onnx", "external_data.bin"} {
				data, _ := os.ReadFile(filepath.Join(src, n))
				os.WriteFile(filepath.Join(e.dir, n), data, 0o644)
			}
			return []string{filepath.Join(e.dir, "external_data.onnx"), "--no-preflight", "-o", filepath.Join(e.dir, "external_data.bin")}
		}, "external data file"},
		{"engine is a FIFO", func(t *testing.T, e env) []string {
			return []string{e.model, "-o", mkfifo(t, filepath.Join(e.dir, "fifo"))}
		}, "FIFO"},
		{"engine is a link to a FIFO (/dev/stdout of a pipe)", func(t *testing.T, e env) []string {
			f := mkfifo(t, filepath.Join(e.dir, "fifo"))
			l := filepath.Join(e.dir, "stdout")
			os.Symlink(f, l)
			return []string{e.model, "-o", l}
		}, "FIFO"},
		{"engine is a socket", func(t *testing.T, e env) []string {
			s := filepath.Join(e.dir, "sock")
			l, err := net.Listen("unix", s)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { l.Close() })
			return []string{e.model, "-o", s}
		}, "socket"},
		{"report is a FIFO", func(t *testing.T, e env) []string {
			return []string{e.model, "--report", mkfifo(t, filepath.Join(e.dir, "r.json"))}
		}, "FIFO"},
		{"trace is a FIFO nobody reads", func(t *testing.T, e env) []string {
			return []string{e.model, "--trace", mkfifo(t, filepath.Join(e.dir, "t.jsonl"))}
		}, "no process is reading"},
		{"timing cache is a FIFO", func(t *testing.T, e env) []string {
			return []string{e.model, "--timing-cache", mkfifo(t, filepath.Join(e.dir, "c.cache"))}
		}, "FIFO"},
		{"timing cache lock is a FIFO", func(t *testing.T, e env) []string {
			c := filepath.Join(e.dir, "c.cache")
			mkfifo(t, c+".lock")
			return []string{e.model, "--timing-cache", c}
		}, "lock file"},
		{"timing cache is a folder", func(t *testing.T, e env) []string {
			c := filepath.Join(e.dir, "c.cache")
			os.Mkdir(c, 0o755)
			return []string{e.model, "--timing-cache", c}
		}, "is a folder"},
		// No -o: MODEL.engine is a name trtbuild chose, beside a model in a folder others may
		// write, so it follows no link (a user's -o does, TestOutputsWrittenByTheRules).
		{"default engine path is a link to another file", func(t *testing.T, e env) []string {
			victim := filepath.Join(e.outside, "precious")
			os.WriteFile(victim, []byte("root's own file\n"), 0o600)
			os.Symlink(victim, filepath.Join(e.dir, "m.engine"))
			return []string{e.model}
		}, "m.engine is a symbolic link; trtbuild does not follow links for files it names itself"},
		{"default engine path is a dangling link", func(t *testing.T, e env) []string {
			os.Symlink(filepath.Join(e.outside, "made"), filepath.Join(e.dir, "m.engine"))
			return []string{e.model}
		}, "or give the engine's path with -o"},
		{"default engine path is a FIFO", func(t *testing.T, e env) []string {
			mkfifo(t, filepath.Join(e.dir, "m.engine"))
			return []string{e.model}
		}, "FIFO"},
		{"convert's default output is a link", func(t *testing.T, e env) []string {
			os.Symlink(filepath.Join(e.outside, "precious"), filepath.Join(e.dir, "m.fp16.onnx"))
			return []string{"convert", "--fp16", e.model}
		}, "m.fp16.onnx is a symbolic link; trtbuild does not follow links for files it names itself"},
		{"report's default output is a link", func(t *testing.T, e env) []string {
			tr := filepath.Join(e.dir, "t.jsonl")
			os.WriteFile(tr, []byte("{}\n"), 0o644)
			os.Symlink(filepath.Join(e.outside, "precious"), filepath.Join(e.dir, "t.html"))
			return []string{"report", tr}
		}, "t.html is a symbolic link; trtbuild does not follow links for files it names itself"},
		{"timing cache links to a system file", func(t *testing.T, e env) []string {
			victim := filepath.Join(e.outside, "passwd")
			os.WriteFile(victim, []byte("root:x:0:0\n"), 0o644)
			c := filepath.Join(e.dir, "c.cache")
			os.Symlink(victim, c)
			return []string{e.model, "--timing-cache", c}
		}, "symbolic link"},
		{"timing cache is a dangling link", func(t *testing.T, e env) []string {
			c := filepath.Join(e.dir, "c.cache")
			os.Symlink(filepath.Join(e.outside, "made"), c)
			return []string{e.model, "--timing-cache", c}
		}, "symbolic link"},
		{"empty timing cache with --strict-cache", func(t *testing.T, e env) []string {
			c := filepath.Join(e.dir, "c.cache")
			os.WriteFile(c, nil, 0o644)
			return []string{e.model, "--timing-cache", c, "--strict-cache"}
		}, "is empty"},
		{"external data is a link out of the model's folder, --no-preflight", func(t *testing.T, e env) []string {
			src := filepath.Join("..", "..", "testdata", "models")
			for _, n := range []string{"external_data.onnx", "external_data.bin"} {
				dir := e.dir
				if n == "external_data.bin" {
					dir = e.outside
				}
				data, _ := os.ReadFile(filepath.Join(src, n))
				os.WriteFile(filepath.Join(dir, n), data, 0o644)
			}
			os.Symlink(filepath.Join(e.outside, "external_data.bin"), filepath.Join(e.dir, "external_data.bin"))
			return []string{filepath.Join(e.dir, "external_data.onnx"), "--no-preflight"}
		}, "external data"},
		{"matrix emit k8s -o the matrix file", func(t *testing.T, e env) []string {
			mx := matrixFile(t, e.dir)
			return []string{"matrix", "emit", "k8s", mx, "--image", "registry.example/trtbuild:cuda", "-o", mx}
		}, "is the matrix file"},
		{"matrix emit k8s -o a model", func(t *testing.T, e env) []string {
			return []string{"matrix", "emit", "k8s", matrixFile(t, e.dir), "--image", "registry.example/trtbuild:cuda", "-o", e.model}
		}, "is the model"},
		{"matrix emit slurm: the script is a FIFO", func(t *testing.T, e env) []string {
			mx := matrixFile(t, e.dir)
			mkfifo(t, filepath.Join(e.dir, "trtbuild-l4.sbatch"))
			return []string{"matrix", "emit", "slurm", mx, "--trtbuild", "/usr/local/bin/trtbuild"}
		}, "named pipe"},
		{"matrix emit slurm: the script is a planted link", func(t *testing.T, e env) []string {
			mx := matrixFile(t, e.dir)
			os.Symlink(filepath.Join(e.outside, "planted"), filepath.Join(e.dir, "trtbuild-l4.sbatch"))
			return []string{"matrix", "emit", "slurm", mx, "--trtbuild", "/usr/local/bin/trtbuild"}
		}, "symbolic link"},
		{"matrix emit slurm: the log folder is a link", func(t *testing.T, e env) []string {
			mx := matrixFile(t, e.dir)
			os.Symlink(e.outside, filepath.Join(e.dir, "logs"))
			return []string{"matrix", "emit", "slurm", mx, "--trtbuild", "/usr/local/bin/trtbuild"}
		}, "log folder"},
		{"matrix index: the engines folder is a link", func(t *testing.T, e env) []string {
			mx := matrixFile(t, e.dir)
			os.Symlink(e.outside, filepath.Join(e.dir, "engines"))
			return []string{"matrix", "index", mx}
		}, "does not follow links"},
		{"model is a FIFO", func(t *testing.T, e env) []string {
			return []string{mkfifo(t, filepath.Join(e.dir, "m2.onnx"))}
		}, "FIFO"},
		{"inspect a FIFO", func(t *testing.T, e env) []string {
			return []string{"inspect", mkfifo(t, filepath.Join(e.dir, "m2.onnx"))}
		}, "FIFO"},
		{"convert a FIFO", func(t *testing.T, e env) []string {
			return []string{"convert", "--fp16", mkfifo(t, filepath.Join(e.dir, "m2.onnx"))}
		}, "FIFO"},
		{"convert -o a FIFO", func(t *testing.T, e env) []string {
			return []string{"convert", "--fp16", e.model, "-o", mkfifo(t, filepath.Join(e.dir, "o.onnx"))}
		}, "FIFO"},
		{"report command -o over its trace", func(t *testing.T, e env) []string {
			tr := filepath.Join(e.dir, "t.json")
			os.WriteFile(tr, []byte("{}\n"), 0o644)
			return []string{"report", tr, "-o", tr}
		}, "is the trace"},
		{"report command reads a FIFO", func(t *testing.T, e env) []string {
			return []string{"report", mkfifo(t, filepath.Join(e.dir, "t.jsonl"))}
		}, "FIFO"},
		{"plugin is a FIFO", func(t *testing.T, e env) []string {
			return []string{e.model, "--plugins", mkfifo(t, filepath.Join(e.dir, "p.so"))}
		}, "FIFO"},
		{"empty --plugins item", func(t *testing.T, e env) []string {
			return []string{e.model, "--plugins", "a.so,,b.so"}
		}, "empty item"},
		{"--sim-speed NaN", func(t *testing.T, e env) []string { return []string{e.model, "--sim-speed", "NaN"} }, "invalid --sim-speed"},
		{"--sim-speed Inf", func(t *testing.T, e env) []string { return []string{e.model, "--sim-speed", "+Inf"} }, "invalid --sim-speed"},
		{"--sim-speed 1e-300", func(t *testing.T, e env) []string { return []string{e.model, "--sim-speed", "1e-300"} }, "invalid --sim-speed"},
		{"name with a newline and ESC", func(t *testing.T, e env) []string {
			return []string{filepath.Join(e.dir, "x\nBuilt ok \x1b]0;pwned\x07.onnx")}
		}, `\nBuilt ok \x1b]0;pwned\a.onnx" does not exist`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := env{dir: t.TempDir(), tmp: t.TempDir(), outside: t.TempDir()}
			e.model = filepath.Join(e.dir, "m.onnx")
			data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "models", "convnet.onnx"))
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(e.model, data, 0o644)
			args := tc.setup(t, e)
			if args[0] != "inspect" && args[0] != "convert" && args[0] != "report" && args[0] != "matrix" {
				args = append([]string{"--backend", "sim", "--sim-speed", "50"}, args...)
			}
			before := snapshot(t, e.dir, e.tmp, e.outside)
			r := trtbuildWithin(t, []string{"TMPDIR=" + e.tmp}, args...)
			if r.code != 2 {
				t.Fatalf("exit %d, want 2\nstderr: %s", r.code, r.stderr)
			}
			lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "trtbuild: ") || !strings.Contains(lines[0], tc.want) {
				t.Errorf("stderr should be one line with %q; got:\n%s", tc.want, r.stderr)
			}
			if strings.ContainsAny(r.stderr, "\x1b\a") || r.stdout != "" {
				t.Errorf("control bytes on stderr or output on stdout: %q / %q", r.stderr, r.stdout)
			}
			sameSnapshot(t, before, snapshot(t, e.dir, e.tmp, e.outside))
		})
	}
}

// TestOutputsWrittenByTheRules builds into a symbolic link, a character device and a folder
// readable only by its owner: the link's target is replaced and the link kept, the device
// stays a device, nothing is left in TMPDIR and no file is more readable than its folder.
func TestOutputsWrittenByTheRules(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders, cache and HOME
	model := repoModel(t, "convnet.onnx")
	tmp := t.TempDir()
	private := filepath.Join(t.TempDir(), "private")
	os.Mkdir(private, 0o700)
	target := filepath.Join(private, "real.engine")
	os.WriteFile(target, []byte("OLD"), 0o600)
	link := filepath.Join(filepath.Dir(model), "link.engine")
	os.Symlink(target, link)
	report := filepath.Join(private, "r.json")

	r := trtbuild(t, []string{"TMPDIR=" + tmp}, "--backend", "sim", "--sim-speed", "50", "--progress", "quiet", "-o", link, "--report", report, model)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the link was replaced")
	}
	plan, _ := os.ReadFile(target)
	if !bytes.HasPrefix(plan, []byte("TRTBUILD-SIMULATED-PLAN")) {
		t.Errorf("the link's target holds %q", plan[:min(len(plan), 30)])
	}
	if st, _ := os.Stat(target); st.Mode().Perm() != 0o600 {
		t.Errorf("the engine's mode is %v, want the old file's 0600", st.Mode().Perm())
	}
	if es, _ := os.ReadDir(tmp); len(es) != 0 {
		t.Errorf("left in TMPDIR: %v", es)
	}
	for _, d := range []string{private, filepath.Dir(model)} {
		assertNoTempFiles(t, d)
	}

	dev := "/dev/null"
	if os.Geteuid() == 0 {
		// As root a replaced device would be the machine's own /dev/null: use a private node.
		dev = filepath.Join(t.TempDir(), "null")
		if err := unix.Mknod(dev, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
			t.Fatalf("mknod: %v", err)
		}
	}
	// A report's format follows its name, so it goes to a link to the device.
	devReport := filepath.Join(t.TempDir(), "report.json")
	os.Symlink(dev, devReport)
	r = trtbuild(t, []string{"TMPDIR=" + tmp}, "--backend", "sim", "--sim-speed", "50", "--progress", "quiet", "-o", dev, "--report", devReport, model)
	if r.code != 0 {
		t.Fatalf("-o %s: exit %d: %s", dev, r.code, r.stderr)
	}
	if st, err := os.Lstat(dev); err != nil || st.Mode()&fs.ModeCharDevice == 0 {
		t.Errorf("%s is no longer a character device: %v", dev, st.Mode())
	}
	if es, _ := os.ReadDir(tmp); len(es) != 0 {
		t.Errorf("left in TMPDIR: %v", es)
	}
}

// TestClosedStdout is `trtbuild ... | head -1`: the build must finish, the engine be written,
// the exit status be 0, and stderr say once that the output stopped.
func TestClosedStdout(t *testing.T) {
	model := repoModel(t, "convnet.onnx")
	engine := strings.TrimSuffix(model, ".onnx") + ".engine"
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close() // the reader is gone before trtbuild writes anything
	cmd := exec.Command(binary, "--backend", "sim", "--sim-speed", "20", model)
	cmd.Env = testEnv(t)
	cmd.Stdout = w
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if code := waitExit(t, cmd, time.Minute); code != 0 {
		t.Fatalf("exit %d, want 0\nstderr: %s", code, errOut.String())
	}
	if n := strings.Count(errOut.String(), "stdout was closed"); n != 1 {
		t.Errorf("stderr says %d times that stdout was closed:\n%s", n, errOut.String())
	}
	if plan, err := os.ReadFile(engine); err != nil || !bytes.HasPrefix(plan, []byte("TRTBUILD-SIMULATED-PLAN")) {
		t.Errorf("no engine: %v", err)
	}
	assertNoTempFiles(t, filepath.Dir(model))
}

// TestSignalsWhileStdoutIsFull sends SIGTERM while stdout is a pipe that is full and that
// nobody reads: the build must be cancelled (exit 143) long before it could end by itself.
func TestSignalsWhileStdoutIsFull(t *testing.T) {
	for _, mode := range []string{"plain", "json"} {
		t.Run(mode, func(t *testing.T) {
			model := repoModel(t, "convnet.onnx")
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			// The smallest pipe, so that a few lines fill it.
			if _, err := unix.FcntlInt(w.Fd(), unix.F_SETPIPE_SZ, 4096); err != nil {
				t.Skip("cannot shrink the pipe:", err)
			}
			// With this many tactics and measuring steps the build takes minutes even at speed 20, and prints much.
			cmd := exec.Command(binary, "--backend", "sim", "--sim-speed", "20", "--sim-tactics", "64", "--sim-iterations", "256",
				"--no-timing-cache", "--progress", mode, "--verbose", model)
			cmd.Env = testEnv(t)
			cmd.Stdout = w
			var errOut bytes.Buffer
			cmd.Stderr = &errOut
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			w.Close()
			// Wait until a thread of trtbuild is blocked writing to the full pipe.
			deadline := time.Now().Add(time.Minute)
			for !blockedInPipeWrite(t, cmd.Process.Pid) {
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					n, _ := unix.IoctlGetInt(int(r.Fd()), unix.TIOCINQ)
					t.Fatalf("no write to stdout ever blocked (%d bytes in the pipe)", n)
				}
				time.Sleep(20 * time.Millisecond)
			}
			cmd.Process.Signal(syscall.SIGTERM)
			if code := waitExit(t, cmd, time.Minute); code != 143 {
				t.Fatalf("exit %d, want 143\nstderr: %s", code, errOut.String())
			}
			io.Copy(io.Discard, r)
		})
	}
}

// TestWorkerGoneWhenParentKilledIgnoringCancel kills the parent of a build whose builder
// ignores cancel requests: the worker must exit by itself (ParentGoneGrace) instead of
// building on for minutes.
func TestWorkerGoneWhenParentKilledIgnoringCancel(t *testing.T) {
	model := repoModel(t, "convnet.onnx")
	cmd, _, _ := startBuild(t, "--backend", "sim", "--sim-speed", "0.05", "--sim-ignore-cancel", "--no-timing-cache", model)
	workerPid := childOf(t, cmd.Process.Pid)
	cmd.Process.Kill()
	cmd.Wait()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if err := syscall.Kill(workerPid, 0); err != nil {
			assertNoTempFiles(t, filepath.Dir(model))
			return
		}
		if state, _ := os.ReadFile("/proc/" + itoa(workerPid) + "/stat"); strings.Contains(string(state), ") Z ") {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	syscall.Kill(workerPid, syscall.SIGKILL)
	t.Fatal("the worker kept building after its parent was killed")
}

// blockedInPipeWrite says whether a thread of process pid sleeps in the kernel writing to a
// pipe (its wchan; "0" is a running thread).
func blockedInPipeWrite(t *testing.T, pid int) bool {
	t.Helper()
	tasks, _ := filepath.Glob("/proc/" + itoa(pid) + "/task/*/wchan")
	readable := false
	for _, task := range tasks {
		w, err := os.ReadFile(task)
		if err != nil {
			continue
		}
		readable = true
		if strings.Contains(string(w), "pipe_write") || strings.Contains(string(w), "pipe_wait") {
			return true
		}
	}
	if !readable && len(tasks) > 0 {
		t.Skip("the kernel does not show where threads wait (/proc/*/wchan)")
	}
	return false
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}

// TestEmptyCacheWarns: without --strict-cache an empty cache file is replaced, and the build
// says so.
func TestEmptyCacheWarns(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders, cache and HOME
	model := repoModel(t, "convnet.onnx")
	c := filepath.Join(filepath.Dir(model), "c.cache")
	os.WriteFile(c, nil, 0o644)
	r := trtbuild(t, nil, "--backend", "sim", "--sim-speed", "50", "--progress", "plain", "--timing-cache", c, model)
	if r.code != 0 || !strings.Contains(r.stdout, "is empty") {
		t.Fatalf("exit %d; output lacks the warning:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if st, _ := os.Stat(c); st.Size() == 0 {
		t.Error("the cache was not written")
	}
}

// matrixFile writes a matrix file (writeMatrix) of one model, m.onnx, on one simulated
// target, l4, into dir.
func matrixFile(t *testing.T, dir string) string {
	t.Helper()
	writeMatrix(t, dir, "version: 1\nmodels:\n  - path: m.onnx\nprecisions: [fp32]\ntargets:\n  - name: l4\n    gpu: NVIDIA-L4\n    compute_capability: \"8.9\"\n    gres: l4\nbackend: sim\n")
	return filepath.Join(dir, "matrix.yaml")
}
