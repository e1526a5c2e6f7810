package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/trtbuild/trtbuild/internal/builder"
	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/httpapi"
	"github.com/trtbuild/trtbuild/internal/mcptools"
	"github.com/trtbuild/trtbuild/internal/serverlog"
	"github.com/trtbuild/trtbuild/internal/service"
	"github.com/trtbuild/trtbuild/internal/webui"
)

// serveRefused are the build options a request to the server may not set: each names a file
// or a device of the server's, which the server chooses itself. The value is the hint.
var serveRefused = map[string]string{
	"save-engine":        "the server keeps each build's engine: GET /v1/builds/{id}/engine",
	"report":             "the server writes each build's report: GET /v1/builds/{id}/report",
	"trace":              "the server keeps each build's trace: GET /v1/builds/{id}/trace",
	"timing-cache":       "the server keeps the timing caches itself",
	"plugins":            "plugin libraries run code in the server's worker; the server loads none a request names",
	"tensorrt-lib":       "the server's TensorRT is chosen when it starts",
	"engine-cache":       "the server's engine cache is set when it starts (trtbuild serve --engine-cache)",
	"engine-cache-size":  "the server's engine cache is set when it starts (trtbuild serve --engine-cache-size)",
	"engine-cache-trust": "the server's engine cache is set when it starts",
	"device":             "the server's queue picks the GPU (trtbuild serve --gpus)",
}

type serveOptions struct {
	listen, tokenFile, modelRoot, stateDir string
	logFormat                              string
	mcpSessions                            int
	mcpSessionIdle                         time.Duration
	allowHosts, allowOrigins, trustProxies []string
	gpus                                   []int
	simSlots                               int
	maxRuns                                int
	shutdownTimeout                        time.Duration
	engineCache, engineCacheSize           string
	exposePaths                            bool
	keep                                   keepFlags
}

func newServeCmd(s *streams) *cobra.Command {
	o := &serveOptions{}
	cmd := &cobra.Command{
		Use:   "serve --model-root DIR",
		Short: "Serve builds over HTTP: an API, their events as Server-Sent Events, a web page",
		Long: `trtbuild serve runs builds for programs and browsers: POST /v1/builds queues a build of a
model under --model-root, GET /v1/builds/{id}/events streams its progress (the --progress json
events, as Server-Sent Events), POST /v1/builds/{id}/cancel cancels it, and the engine, report
and trace are fetched from the server. The builds and their state are kept under --state-dir,
so a restarted server lists what happened. The API is described at /v1/openapi.json; a web page
is at /. See docs/serve.md.

Its log is on stderr, one line per event (--log-format text or json): its start, each build's
start and end, each request it refuses and why, the builds' warnings, history errors.

It listens on 127.0.0.1 only, unless it has --token-file: then every request needs the token.
SIGTERM or Ctrl-C stops taking builds, cancels the running ones at their next step boundary
(within --shutdown-timeout) and exits 143 (130); a second signal stops them at once. On
Windows, Ctrl-C and Ctrl-Break do so with 130, and closing the console window (or logoff or
shutdown) with 143; Windows ends the process 5 s after the close, so the builds get 3 s.`,
		Example: `  trtbuild serve --model-root models/
  curl -s -H 'Content-Type: application/json' -d '{"model": "convnet.onnx", "options": {"backend": "sim"}}' http://127.0.0.1:8470/v1/builds
  trtbuild serve --listen 0.0.0.0:8470 --token-file ~/.config/trtbuild/token --model-root /models --gpus 0,1`,
		Args: cobra.NoArgs,
		// The server answers its signals itself (serveRun), rather than exiting at once.
		PersistentPreRunE: func(*cobra.Command, []string) error { return nil },
		RunE: func(cmd *cobra.Command, args []string) error {
			return serveRun(s, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.listen, "listen", httpapi.DefaultAddr, "address to listen on, host:port (a non-loopback host needs --token-file; port 0 picks a free one)")
	f.StringVar(&o.tokenFile, "token-file", "", "a file holding the token every request must carry (Authorization: Bearer TOKEN); only you may read it (chmod 600); off loopback at least 16 random bytes (openssl rand -hex 32 > FILE)")
	f.StringSliceVar(&o.allowHosts, "allow-host", nil, "another name clients reach the server by (a DNS name, a proxy's), allowed in the Host header: NAME on any port, or NAME:PORT")
	f.StringSliceVar(&o.allowOrigins, "allow-origin", nil, "another origin whose pages may call the API from a browser, scheme://host[:port] (a reverse proxy's https://NAME)")
	f.StringSliceVar(&o.trustProxies, "trust-proxy", nil, "IP addresses or CIDR prefixes of reverse proxies whose X-Forwarded-For, -Host and -Proto headers are believed (default: none, the headers are ignored)")
	f.StringVar(&o.modelRoot, "model-root", "", "the folder requests' models are in (a request names a path inside it; nothing outside it is read)")
	f.StringVar(&o.stateDir, "state-dir", "", "the server's folder: history, engines, reports, traces (default: the user cache folder's trtbuild/serve)")
	f.IntSliceVar(&o.gpus, "gpus", []int{0}, "the GPUs TensorRT builds run on, one build per GPU at a time")
	f.IntVar(&o.simSlots, "sim-slots", 4, "simulated builds (--backend sim) that run at once")
	f.IntVar(&o.maxRuns, "max-runs", service.DefaultMaxRuns, "builds the server holds at once, queued and running (a request that shares another's build adds none); beyond it a submission is refused (503) until one ends")
	f.DurationVar(&o.shutdownTimeout, "shutdown-timeout", 30*time.Second, "after SIGTERM, how long running builds get to stop at a step boundary before they are stopped at once")
	f.StringVar(&o.engineCache, "engine-cache", "", "the engine cache the builds share: DIR, auto (the user cache folder's trtbuild/engines) or off (default: the state dir's engines)")
	f.StringVar(&o.engineCacheSize, "engine-cache-size", builder.DefaultOptions().EngineCache.Size, "remove the least recently used engines beyond this size")
	f.BoolVar(&o.exposePaths, "expose-paths", false, "show clients the server's own paths (state dir, model root, engine cache) in events, reports and tool results; by default they see names relative to the model root and the state dir")
	f.StringVar(&o.logFormat, "log-format", "text", "the server's log on stderr, one line per event: text (key=value) or json")
	f.IntVar(&o.mcpSessions, "mcp-sessions", mcptools.DefaultMaxSessions, "the most MCP sessions at /mcp alive at once: one more closes the session idle longest (503 when all are busy)")
	f.DurationVar(&o.mcpSessionIdle, "mcp-session-idle", mcptools.DefaultSessionIdle, "close an MCP session after this long without a request")
	o.keep.add(f)
	return cmd
}

// keepFlags are the retention rule's flags, of trtbuild serve and trtbuild mcp.
type keepFlags struct {
	age  time.Duration
	size string
}

func (k *keepFlags) add(f *pflag.FlagSet) {
	f.DurationVar(&k.age, "keep-builds", service.DefaultKeepAge, "remove the files (engine, report, events) of builds that ended longer ago than this, and converted models; 0 keeps them")
	f.StringVar(&k.size, "keep-builds-size", fmt.Sprintf("%dG", service.DefaultKeepBytes>>30), "remove the files of the oldest ended builds while they take more than this; 0 for no bound")
}

// rule is the retention rule the flags give.
func (k *keepFlags) rule() (service.Keep, error) {
	if k.age < 0 {
		return service.Keep{}, exitcode.Usagef("--keep-builds %s: give a time of 0 or more, e.g. 168h (0 keeps the builds however old)", k.age)
	}
	rule := service.Keep{Age: k.age}
	if strings.TrimSpace(k.size) != "0" {
		n, err := builder.ParseSize(k.size)
		if err != nil {
			return service.Keep{}, exitcode.Usagef("invalid --keep-builds-size: %v (0 for no bound)", err)
		}
		rule.Bytes = int64(min(n, 1<<62))
	}
	return rule, nil
}

func serveRun(s *streams, o *serveOptions) error {
	log, err := serverlog.New(s.Err, o.logFormat)
	if err != nil {
		return exitcode.Usagef("--log-format %s: give %s", q(o.logFormat), strings.Join(serverlog.Formats, " or "))
	}
	cfg, err := serviceConfig(o)
	if err != nil {
		return err
	}
	// The service's diagnostics (history errors, build warnings, unusable cache entries) are
	// warnings of the server's log; each build's start and end are records of their own.
	cfg.Log, cfg.Logger = serverlog.Lines(log, slog.LevelWarn), log
	sigs, stopSignals := buildSignals(s)
	defer stopSignals()
	m, err := service.New(cfg)
	if err != nil {
		return err
	}
	defer m.Close()
	srv, err := httpapi.New(httpapi.Config{
		Addr: o.listen, TokenFile: o.tokenFile, AllowHosts: o.allowHosts, AllowOrigins: o.allowOrigins, TrustProxies: o.trustProxies,
		Manager: m, Refused: serveRefused, Version: builder.Version, Log: log,
		Page: webui.Handler,
		MCP:  mcptools.HTTPHandler(m, builder.Version, mcptools.HTTPOptions{MaxSessions: o.mcpSessions, SessionIdle: o.mcpSessionIdle, Log: log}),
	})
	if err != nil {
		return err
	}
	l, err := srv.Listen()
	if err != nil {
		return err
	}
	log.Info("listening on http://"+l.Addr().String(), "models", cfg.ModelRoot, "state", cfg.StateDir, "version", builder.Version)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	select {
	case err := <-served:
		shutdownNow(m)
		return fmt.Errorf("serving on %s: %w", l.Addr(), err)
	case sig := <-sigs:
		return shutdown(log, o, srv, m, sig, sigs)
	}
}

// shutdown ends the server after sig: no new builds (503), the running ones cancelled at
// their step boundary within --shutdown-timeout (a second signal, or SIGQUIT, stops them at
// once), the open streams ended with their builds, then the process exits with sig's status.
func shutdown(log *slog.Logger, o *serveOptions, srv *httpapi.Server, m *service.Manager, sig os.Signal, sigs <-chan os.Signal) error {
	code := exitcode.ForSignal(sig)
	srv.Drain()
	within := o.shutdownTimeout
	if d := exitcode.Grace(sig); d > 0 && d < within {
		// The system ends trtbuild soon after this signal (a closed console on Windows): the
		// builds get what time there is, and are stopped at once after it.
		within = d
	}
	if exitcode.StopsAtOnce(sig) {
		within = 0
	} else {
		log.Info(exitcode.SignalName(sig)+"; cancelling the builds (a second signal stops them at once)", "within_s", within.Seconds())
	}
	now, done := secondSignal(sigs, func(sig os.Signal) { log.Info(exitcode.SignalName(sig) + "; stopping the builds now") })
	defer done()
	if err := m.Stop(within, now); err != nil {
		log.Error("shutting the builds down", "error", oneLine(err))
	}
	// The builds have ended, so their streams end too; other connections get a moment.
	httpWait := 5 * time.Second
	if exitcode.Grace(sig) > 0 {
		httpWait = time.Second // what is left before the system ends the process
	}
	httpCtx, cancel := context.WithTimeout(context.Background(), httpWait)
	defer cancel()
	if err := srv.Shutdown(httpCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		srv.Close()
	}
	log.Info("stopped")
	return &exitcode.Error{Code: code, Err: errors.New(exitcode.SignalName(sig)), Reported: true}
}

// shutdownNow stops the builds at once, for a server that could not go on serving.
func shutdownNow(m *service.Manager) { m.Stop(0, nil) }

// secondSignal is closed when a signal comes on sigs (said first, with said) until done is
// called: the top of a server's shutdown ladder.
func secondSignal(sigs <-chan os.Signal, said func(os.Signal)) (now <-chan struct{}, done func()) {
	ch, stop := make(chan struct{}), make(chan struct{})
	go func() {
		select {
		case sig := <-sigs:
			said(sig)
			close(ch)
		case <-stop:
		}
	}()
	return ch, func() { close(stop) }
}

// serviceConfig checks the flags and makes the service's configuration.
func serviceConfig(o *serveOptions) (service.Config, error) {
	var cfg service.Config
	if o.modelRoot == "" {
		return cfg, exitcode.Usagef("trtbuild serve needs --model-root DIR: the folder the requests' models are in")
	}
	root, err := filepath.Abs(o.modelRoot)
	if err != nil {
		return cfg, exitcode.Usagef("--model-root %s: %v", q(o.modelRoot), err)
	}
	if st, err := os.Stat(root); err != nil {
		return cfg, exitcode.Usagef("--model-root %s: %s", q(o.modelRoot), exitcode.PathCause(err)).Hintf("give the folder the models are in")
	} else if !st.IsDir() {
		return cfg, exitcode.Usagef("--model-root %s is not a folder", q(o.modelRoot)).Hintf("give the folder the models are in")
	}
	state := o.stateDir
	if state == "" {
		if state, err = service.DefaultStateDir("serve"); err != nil {
			return cfg, exitcode.Usagef("no user cache folder for the server's state (%v)", err).Hintf("give --state-dir DIR")
		}
	}
	if state, err = filepath.Abs(state); err != nil {
		return cfg, exitcode.Usagef("--state-dir %s: %v", q(o.stateDir), err)
	}
	// service.New makes it, once no other user can swap the folders and links on its path.
	if len(o.gpus) == 0 {
		return cfg, exitcode.Usagef("--gpus is empty").Hintf("give the GPUs to build on, e.g. --gpus 0,1")
	}
	seen := map[int]bool{}
	for _, g := range o.gpus {
		if g < 0 || seen[g] {
			return cfg, exitcode.Usagef("--gpus %v: each GPU is a device number (0, 1, …) given once", o.gpus)
		}
		seen[g] = true
	}
	if o.simSlots < 1 {
		return cfg, exitcode.Usagef("--sim-slots %d: give at least 1", o.simSlots)
	}
	if o.maxRuns < 1 {
		return cfg, exitcode.Usagef("--max-runs %d: give at least 1", o.maxRuns)
	}
	if o.shutdownTimeout <= 0 {
		return cfg, exitcode.Usagef("--shutdown-timeout %s: give a time above 0, e.g. 30s", o.shutdownTimeout)
	}
	if o.mcpSessions < 1 {
		return cfg, exitcode.Usagef("--mcp-sessions %d: give at least 1, e.g. %d", o.mcpSessions, mcptools.DefaultMaxSessions)
	}
	if o.mcpSessionIdle <= 0 {
		return cfg, exitcode.Usagef("--mcp-session-idle %s: give a time above 0, e.g. %s", o.mcpSessionIdle, mcptools.DefaultSessionIdle)
	}
	keep, err := o.keep.rule()
	if err != nil {
		return cfg, err
	}
	cache := builder.DefaultOptions().EngineCache
	if o.engineCacheSize != "" {
		cache.Size = o.engineCacheSize
	}
	switch o.engineCache {
	case "":
		cache.Dir = filepath.Join(state, "engines")
	case "off":
	default:
		cache.Dir = o.engineCache
	}
	return service.Config{
		StateDir: state, ModelRoot: root, GPUs: o.gpus, SimSlots: o.simSlots, MaxRuns: o.maxRuns,
		Refused: serveRefused, EngineCache: cache, KeepHistory: true, ExposePaths: o.exposePaths, Keep: keep,
	}, nil
}
