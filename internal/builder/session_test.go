package builder

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/progress"
	"github.com/trtbuild/trtbuild/internal/worker"
)

// The test binary doubles as a fake build worker: with TRTBUILD_FAKE_WORKER set it speaks the
// worker protocol (control lines on stdin, events on fd 3) with a scripted behaviour, so the
// session's budgets and cancel ladder are tested against a real child process.
// Started as the build worker (WorkerSubcommand), it is the real one, for the tests that run
// builds through Run.
func TestMain(m *testing.M) {
	if mode := os.Getenv("TRTBUILD_FAKE_WORKER"); mode != "" {
		fakeWorker(mode)
		os.Exit(0)
	}
	if len(os.Args) > 1 && os.Args[1] == ProbeSubcommand {
		// The probe of a build over stand-in TensorRT libraries (TestWorkerSaysWhatItLoaded).
		device, lib := 0, ""
		for i := 2; i+1 < len(os.Args); i += 2 {
			switch os.Args[i] {
			case "--device":
				device, _ = strconv.Atoi(os.Args[i+1])
			case "--tensorrt-lib":
				lib = os.Args[i+1]
			}
		}
		if err := ServeProbe(os.Stdout, device, lib, false); err != nil {
			fmt.Fprintln(os.Stderr, "trtbuild:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if len(os.Args) > 1 && os.Args[1] == WorkerSubcommand {
		if err := ServeWorker(); err != nil {
			fmt.Fprintln(os.Stderr, "trtbuild: build worker:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// fakeWorker behaviours:
//
//	silent     starts two phases, then reports nothing; stops when cancelled
//	deaf       starts two phases, then reports nothing and ignores cancel
//	steady     reports a step every 20ms for ever; stops when cancelled
//	finish     reports a step every 20ms and is built after 150 steps (3s)
func fakeWorker(mode string) {
	events, _, err := worker.Channels()
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake worker:", err)
		os.Exit(1)
	}
	var mu sync.Mutex
	emit := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(events, format+"\n", args...)
	}
	start := time.Now()
	t := func() float64 { return time.Since(start).Seconds() }
	in := bufio.NewScanner(os.Stdin)
	in.Scan() // the build request
	cancelled := make(chan struct{})
	go func() {
		for in.Scan() {
			if strings.Contains(in.Text(), `"cancel"`) {
				close(cancelled)
				break
			}
		}
		for in.Scan() {
		}
	}()
	emit(`{"v":1,"type":"phase_start","t":%f,"id":1,"parent":0,"name":"Building engine","steps":4,"thread":1}`, t())
	emit(`{"v":1,"type":"phase_start","t":%f,"id":2,"parent":1,"name":"Timing graph nodes","steps":1000,"thread":1}`, t())
	stop := func() {
		emit(`{"v":1,"type":"phase_finish","t":%f,"id":2}`, t())
		emit(`{"v":1,"type":"phase_finish","t":%f,"id":1}`, t())
		emit(`{"v":1,"type":"result","t":%f,"status":"cancelled","duration":%f}`, t(), t())
	}
	switch mode {
	case "silent":
		<-cancelled
		stop()
	case "deaf":
		time.Sleep(time.Minute)
	case "steady", "finish":
		for i := 0; ; i++ {
			select {
			case <-cancelled:
				stop()
				return
			case <-time.After(20 * time.Millisecond):
			}
			emit(`{"v":1,"type":"step","t":%f,"id":2,"step":%d}`, t(), i)
			if mode == "finish" && i == 149 {
				emit(`{"v":1,"type":"phase_finish","t":%f,"id":2}`, t())
				emit(`{"v":1,"type":"phase_finish","t":%f,"id":1}`, t())
				emit(`{"v":1,"type":"result","t":%f,"status":"built","engine_bytes":3,"duration":%f}`, t(), t())
				return
			}
		}
	}
}

// recorder is a renderer that keeps notices and the result.
type recorder struct {
	mu      sync.Mutex
	notices []progress.Notice
	res     progress.Result
}

func (r *recorder) Begin(progress.View)     {}
func (r *recorder) Handle([]progress.Event) {}
func (r *recorder) Tick(time.Time)          {}
func (r *recorder) End(res progress.Result) error {
	r.mu.Lock()
	r.res = res
	r.mu.Unlock()
	return nil
}
func (r *recorder) Notice(n progress.Notice) {
	r.mu.Lock()
	r.notices = append(r.notices, n)
	r.mu.Unlock()
}

func (r *recorder) text() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	for _, n := range r.notices {
		b.WriteString(n.Message + "\n")
	}
	return b.String()
}

// hung is how long a session may run before the test gives up on it and cancels it (through
// Config.Stop), so that a budget that never fires fails the test instead of hanging it. It
// only stops a hung test: every build here ends within seconds.
const hung = 2 * time.Minute

func run(t *testing.T, mode string, cfg Config) (progress.Result, error, *recorder) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	cfg.Worker.Command = []string{exe}
	cfg.Worker.Env = append(os.Environ(), "TRTBUILD_FAKE_WORKER="+mode)
	cfg.Engine = filepath.Join(t.TempDir(), "m.engine")
	cfg.NewRenderer = func(progress.Controls) progress.Renderer { return rec }
	stop := make(chan struct{})
	safety := time.AfterFunc(hung, func() { close(stop) })
	defer safety.Stop()
	cfg.Stop = stop
	cfg.CancelMessage = "The test stopped the build: it ran for " + hung.String()
	res, err := runSession(cfg)
	return res, err, rec
}

var runningFor = regexp.MustCompile(`running for ([0-9.]+)s\)`)

// TestBudgets ends builds of a fake worker with each time budget. Each case waits for what
// proves the budget worked (the build's status and notices), never for a bound on how long it
// took: the worker runs for ever, or for a minute, unless the budget ends it.
func TestBudgets(t *testing.T) {
	tests := []struct {
		name       string
		mode       string
		cfg        Config
		status     progress.Status
		message    []string // in the notices and the result's error
		minRunning float64  // the phase named must have run at least this long, in seconds
	}{
		{
			name: "timeout while progressing", mode: "steady",
			// The budget has its own timer, and does not wait for the renderer's tick: with the
			// tick an hour away, the timeout still ends a build that would otherwise run for
			// ever. How long the stage ran depends on how fast the worker started: not checked.
			cfg:    Config{Timeout: 400 * time.Millisecond, Frontend: Frontend{Tick: time.Hour}},
			status: progress.StatusTimedOut, message: []string{"Build exceeded --timeout 400ms in \"", "build exceeded --timeout 400ms in \""},
		},
		{
			name: "stall", mode: "silent",
			cfg:    Config{StallTimeout: 500 * time.Millisecond},
			status: progress.StatusTimedOut, message: []string{"No progress for --stall-timeout 500ms", `in "Timing graph nodes"`},
			// Measured up to now, not up to the last event, which came at the start: a phase
			// open through a silence of 500ms has run for at least that long, however the
			// machine schedules the processes.
			minRunning: 0.5,
		},
		{
			name: "steady progress is no stall", mode: "finish",
			// The build (150 steps 20ms apart) outlasts the stall window while steps keep
			// arriving; it ends built, not stalled.
			cfg:    Config{StallTimeout: 2 * time.Second, Timeout: 30 * time.Second},
			status: progress.StatusBuilt,
		},
		{
			name: "kill after a budget when the builder ignores cancel", mode: "deaf",
			cfg:    Config{Timeout: 300 * time.Millisecond, KillAfter: 400 * time.Millisecond},
			status: progress.StatusTimedOut, message: []string{"Build exceeded --timeout 300ms", "did not stop within --kill-after 400ms"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err, rec := run(t, tt.mode, tt.cfg)
			if res.Status != tt.status {
				t.Fatalf("status %q (error %q), want %q; notices:\n%s", res.Status, res.Error, tt.status, rec.text())
			}
			if tt.status == progress.StatusBuilt {
				if err != nil {
					t.Errorf("error %v for a built engine", err)
				}
				return
			}
			if code := exitcode.Of(err); code != exitcode.TimedOut {
				t.Errorf("exit code %d, want %d", code, exitcode.TimedOut)
			}
			text := rec.text() + res.Error
			for _, want := range tt.message {
				if !strings.Contains(text, want) {
					t.Errorf("the messages lack %q:\n%s", want, text)
				}
			}
			m := runningFor.FindStringSubmatch(res.Error)
			if m == nil {
				t.Fatalf("the result's error does not say how long the phase ran: %q", res.Error)
			}
			if secs, _ := strconv.ParseFloat(m[1], 64); secs < tt.minRunning {
				t.Errorf("the phase is said to have run %ss, want at least %.1fs: %q", m[1], tt.minRunning, res.Error)
			}
		})
	}
}

func TestUntilBudget(t *testing.T) {
	t0 := time.Unix(1000, 0)
	s := &session{start: t0, lastProgress: t0.Add(3 * time.Second)}
	if _, ok := s.untilBudget(t0); ok {
		t.Error("a budget without timeouts")
	}
	s.cfg = Config{Timeout: 10 * time.Second, StallTimeout: 5 * time.Second}
	if d, ok := s.untilBudget(t0.Add(4 * time.Second)); !ok || d != 4*time.Second {
		t.Errorf("untilBudget = %v, %v; want the stall deadline 4s away", d, ok)
	}
	if d, _ := s.untilBudget(t0.Add(9 * time.Second)); d != 0 {
		t.Errorf("a passed deadline is %v away, want 0", d)
	}
	s.lastProgress = t0.Add(8 * time.Second)
	if d, _ := s.untilBudget(t0.Add(9 * time.Second)); d != time.Second {
		t.Errorf("untilBudget = %v, want the timeout 1s away", d)
	}
}
