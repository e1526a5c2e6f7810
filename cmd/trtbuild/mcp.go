package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/trtbuild/trtbuild/internal/builder"
	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/mcptools"
	"github.com/trtbuild/trtbuild/internal/pathtext"
	"github.com/trtbuild/trtbuild/internal/service"
)

// mcpShutdownTimeout is how long `trtbuild mcp` waits, when it ends, for its builds to stop at
// a step boundary before it stops their workers at once (a second signal does that at once).
const mcpShutdownTimeout = 30 * time.Second

type mcpOptions struct {
	stateDir string
	simSlots int
	gpus     string
	keep     keepFlags
}

// newMCPCmd returns `trtbuild mcp`, the Model Context Protocol server on stdin and stdout.
func newMCPCmd(s *streams) *cobra.Command {
	o := &mcpOptions{}
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve trtbuild's tools to an MCP client (an IDE, an agent) on stdin and stdout",
		Long: `mcp is a Model Context Protocol server on stdin and stdout, for an MCP client that starts it
(VS Code, Cursor, an agent runtime): the tools build, inspect, convert, key and engine_inspect.
A build call with a progress token gets progress notifications (the top phase's steps, the
current phase path), cancelling the call stops the build at its next step boundary, and its
timeout argument is the caller's time budget. Models are paths, as on the command line.

stdout carries the protocol only; messages go to stderr. The server ends when stdin closes,
or on SIGINT or SIGTERM, cancelling its builds and waiting for them (a second signal stops
them at once). docs/mcp.md describes the tools and the client configuration.`,
		Example: `  trtbuild mcp                                  # started by the MCP client
  trtbuild mcp --state-dir ~/.cache/trtbuild/mcp --sim-slots 2`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return mcpRun(s, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.stateDir, "state-dir", "", "the folder of the server's builds, their engines and event logs (default: trtbuild/mcp in the user cache folder)")
	f.IntVar(&o.simSlots, "sim-slots", 4, "simulated builds (--backend sim) that run at once")
	f.StringVar(&o.gpus, "gpus", "0", "CUDA devices to build on, one TensorRT build on each at a time, e.g. 0,1")
	o.keep.add(f)
	return cmd
}

func mcpRun(s *streams, o *mcpOptions) error {
	gpus, err := parseGPUs(o.gpus)
	if err != nil {
		return err
	}
	if o.simSlots < 1 {
		return exitcode.Usagef("invalid --sim-slots %d: give 1 or more simulated builds at once", o.simSlots)
	}
	keep, err := o.keep.rule()
	if err != nil {
		return err
	}
	dir := o.stateDir
	if dir == "" {
		if dir, err = service.DefaultStateDir("mcp"); err != nil {
			return exitcode.Usagef("no user cache folder for the server's builds (%v)", err).Hintf("give --state-dir")
		}
	}
	m, err := service.New(service.Config{StateDir: dir, GPUs: gpus, SimSlots: o.simSlots, Log: s.Err, Keep: keep})
	if err != nil {
		if exitcode.Of(err) == exitcode.Usage {
			return err // it names the state dir and what to do
		}
		return exitcode.Usagef("--state-dir: %v", err)
	}
	defer m.Close()
	fmt.Fprintf(s.Err, "trtbuild mcp: serving MCP on stdin and stdout; builds in %s\n", pathtext.Q(dir))

	sigs, stop := buildSignals(s)
	defer stop()
	run, endRun := context.WithCancel(context.Background())
	defer endRun()
	served := make(chan error, 1)
	session := mcptools.NewStdio(mcptools.NewServer(m, builder.Version), s.In, s.Out)
	go func() { served <- session.Run(run) }()

	var sig os.Signal
	select {
	case err = <-served:
		// stdin closed: the SDK cancelled the calls in flight, which cancelled their builds
		// and waited for their results.
	case sig = <-sigs:
		fmt.Fprintf(s.Err, "trtbuild mcp: %s: cancelling the builds\n", exitcode.SignalName(sig))
	}
	mcpShutdown(s, m, sigs)
	if sig != nil {
		// The calls in flight answer with their builds' results; once those are written, the
		// session ends.
		drain, stopDrain := context.WithTimeout(context.Background(), mcpShutdownTimeout)
		session.Drain(drain)
		stopDrain()
		endRun()
		<-served
		return exitcode.SignalError(sig, "received: the builds were cancelled and the MCP server stopped")
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("MCP session: %w", err)
	}
	return nil
}

// mcpShutdown cancels m's builds and waits for them to end: within mcpShutdownTimeout, or until
// another signal, they stop at a step boundary; then their workers are stopped at once.
func mcpShutdown(s *streams, m *service.Manager, sigs <-chan os.Signal) {
	now, done := secondSignal(sigs, func(sig os.Signal) {
		fmt.Fprintf(s.Err, "trtbuild mcp: %s again: stopping the builds at once\n", exitcode.SignalName(sig))
	})
	defer done()
	if err := m.Stop(mcpShutdownTimeout, now); err != nil {
		fmt.Fprintf(s.Err, "trtbuild mcp: stopping the builds: %s\n", oneLine(err))
	}
}
