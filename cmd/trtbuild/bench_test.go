//go:build !windows

package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// BenchmarkEventThroughput measures events per second through the whole pipeline: the
// simulated builder in flood mode → C queue → worker (resolve, encode) → pipe → parent (decode, tree) → JSON
// renderer → a reader. It also reports the peak RSS (VmHWM, sampled from /proc) of the parent and
// the worker for a build and for one with 4× the events, to show memory stays flat as the event
// count grows.
func BenchmarkEventThroughput(b *testing.B) {
	model := benchModel(b)
	var total int
	var spent time.Duration
	var small peaks
	for b.Loop() {
		n, d, p := throughputRun(b, model, 64)
		total += n
		spent += d
		small = small.max(p)
	}
	n4, d4, large := throughputRun(b, model, 256)
	b.ReportMetric(float64(total)/spent.Seconds(), "events/s")
	b.ReportMetric(float64(n4)/d4.Seconds(), "events/s-4x")
	b.ReportMetric(float64(total)/float64(b.N), "events/build")
	b.ReportMetric(float64(small.parent)/1024, "parent-MiB")
	b.ReportMetric(float64(large.parent)/1024, "parent-MiB-4x")
	b.ReportMetric(float64(small.worker)/1024, "worker-MiB")
	b.ReportMetric(float64(large.worker)/1024, "worker-MiB-4x")
}

type peaks struct{ parent, worker int64 } // KiB

func (p peaks) max(q peaks) peaks { return peaks{max(p.parent, q.parent), max(p.worker, q.worker)} }

func throughputRun(b *testing.B, model string, iterations int) (events int, elapsed time.Duration, hwm peaks) {
	cmd := exec.Command(binary, "--backend", "sim", "--progress", "json", "--no-timing-cache",
		// Flood: the builder never sleeps (a 1 ns sleep costs tens of microseconds, which made
		// this benchmark measure nanosleep); one builder thread, as TensorRT by default.
		"--sim-flood", "--sim-threads", "1", "--sim-tactics", "64", "--sim-iterations", strconv.Itoa(iterations),
		"-o", b.TempDir()+"/bench.engine", model)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + b.TempDir()}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	sampled := make(chan peaks)
	go func() {
		var p peaks
		for {
			p.parent = max(p.parent, vmHWM(cmd.Process.Pid))
			if w := childPid(cmd.Process.Pid); w > 0 {
				p.worker = max(p.worker, vmHWM(w))
			}
			select {
			case <-done:
				sampled <- p
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		events++
	}
	close(done)
	hwm = <-sampled
	if err := cmd.Wait(); err != nil {
		b.Fatal(err)
	}
	return events, time.Since(start), hwm
}

// vmHWM returns a process's peak resident set size in KiB, or 0 once it is gone.
func vmHWM(pid int) int64 {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return 0
}

// childPid returns a child process of pid, or 0. The children files are per thread, and Go
// forks from any of its threads, so every thread is read.
func childPid(pid int) int {
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
	for _, f := range tasks {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if fields := strings.Fields(string(data)); len(fields) > 0 {
			n, _ := strconv.Atoi(fields[0])
			return n
		}
	}
	return 0
}

// BenchmarkCancelLatency measures the time from SIGINT to the moment a simulated builder thread
// sees the cancel flag at a step boundary (steps of 1 ms): parent signal handling, the control
// pipe, the worker's cancel call, and the wait for the next step. Both ends read CLOCK_MONOTONIC.
func BenchmarkCancelLatency(b *testing.B) {
	model := benchModel(b)
	var lat []time.Duration
	for b.Loop() {
		cmd := exec.Command(binary, "--backend", "sim", "--progress", "json", "--no-timing-cache",
			"--sim-step", "1ms", "--sim-threads", "16", "-o", b.TempDir()+"/c.engine", model)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + b.TempDir()}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var sent int64
		var seen int64
		for sc.Scan() {
			line := sc.Text()
			if sent == 0 && strings.Contains(line, `"Measuring tactic time"`) {
				sent = monotonic()
				cmd.Process.Signal(syscall.SIGINT)
			}
			if strings.Contains(line, `"type":"result"`) {
				var r struct {
					CancelSeen int64 `json:"cancel_seen_ns"`
				}
				json.Unmarshal([]byte(line), &r)
				seen = r.CancelSeen
			}
		}
		err = cmd.Wait()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 130 {
			b.Fatalf("exit %v, want 130", err)
		}
		if seen == 0 || sent == 0 {
			b.Fatalf("no cancel observed (sent %d, seen %d)", sent, seen)
		}
		lat = append(lat, time.Duration(seen-sent))
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
}

func monotonic() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic(err)
	}
	return ts.Nano()
}

func benchModel(b *testing.B) string {
	b.Helper()
	src := "../../testdata/models/convnet.onnx"
	data, err := os.ReadFile(src)
	if err != nil {
		b.Fatal(err)
	}
	dst := b.TempDir() + "/convnet.onnx"
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		b.Fatal(err)
	}
	return dst
}
