package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/trtbuild/trtbuild/internal/builder"
	"github.com/trtbuild/trtbuild/internal/buildflags"
	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/progress"
	"github.com/trtbuild/trtbuild/internal/tui"
)

// buildOptions are the builder's options of this command line: args is the model, or empty.
func buildOptions(o *buildflags.Flags, args []string) (builder.Options, error) {
	opts := o.Opts
	model := o.ONNX
	switch {
	case len(args) > 1:
		return opts, exitcode.Usagef("expected one model, got %d arguments (%s)", len(args), strings.Join(args, " ")).Hintf("usage: trtbuild [flags] MODEL.onnx")
	case len(args) == 1 && model != "" && args[0] != model:
		return opts, exitcode.Usagef("two models given (%s and --onnx %s)", args[0], model).Hintf("give one")
	case len(args) == 1:
		model = args[0]
	}
	opts.Model = model
	opts.Command = append([]string{"trtbuild"}, os.Args[1:]...)
	return opts, nil
}

// runBuild runs one build through the builder, shown in the view progressFlag selects; opts
// gives the build's options (an error is the build's refusal).
func runBuild(s *streams, progressFlag string, opts func() (builder.Options, error)) (err error) {
	began := time.Now() // --timeout counts from here: the engine cache's work is in the budget
	mode, err := progressMode(s, progressFlag, true)
	if err != nil {
		return err
	}
	// A program reading --progress json learns why a build was refused before it started
	// from the stream itself: a result line, as every stream ends with.
	streamed := false
	if mode == tui.ModeJSON {
		defer func() {
			if err != nil && !streamed {
				_ = progress.NewJSONLines(s.Out, nil).End(builder.RefusalResult(err))
			}
		}()
	}
	o, err := opts()
	if err != nil {
		return err
	}
	sigs, stop := buildSignals(s)
	defer stop()
	onTerminal := mode == tui.ModeTTY || (mode == tui.ModePlain && s.OutTTY)
	var notices = s.Err
	if onTerminal {
		notices = nil // the renderer shows them on the same terminal
	}
	// Progress goes through a writer that never blocks (internal/outstream): a reader that does
	// not read delays no signal, budget or kill timer. The live view keeps the terminal.
	var stdout *builder.ProgressOutput
	out := s.Out
	if mode != tui.ModeTTY {
		stdout = builder.NewProgressOutput(s.Out, s.Err)
		out = stdout
	}
	res, err := builder.Run(context.Background(), o, builder.Frontend{
		NewRenderer: func(c progress.Controls) progress.Renderer {
			streamed = true
			return newRenderer(mode, s, out, o.Verbose, c)
		},
		Cached: func(info progress.BuildInfo, start time.Time, hit []progress.Event, res progress.Result) error {
			streamed = true
			return showCacheHit(s, mode, info, start, hit, res)
		},
		Diagnostics: s.Err,
		Notices:     notices,
		Signals:     sigs,
		Tick:        tickFor(mode),
		Began:       began,
	})
	if stdout != nil {
		if sig := stdout.Drain(sigs); sig != nil && err == nil {
			err = exitcode.SignalError(sig, fmt.Sprintf("while the progress output was written; the engine %s is built", q(res.Engine)))
		}
	}
	if err != nil && !onTerminal {
		// The outcome went to a pipe or nowhere: say it on stderr as well, unless it is a
		// time budget, whose message the notice already put there.
		var e *exitcode.Error
		if errors.As(err, &e) && !(e.Code == exitcode.TimedOut && notices != nil) {
			e.Reported = false
		}
	}
	return err
}

// showCacheHit shows an engine cache hit, which builds nothing: the JSON stream of a build
// (its build line, the hit, the result), or the hit's one line.
func showCacheHit(s *streams, mode tui.Mode, info progress.BuildInfo, start time.Time, hit []progress.Event, res progress.Result) error {
	switch mode {
	case tui.ModeJSON:
		j := progress.NewJSONLines(s.Out, nil)
		j.Begin(progress.NewState(info, start))
		j.Handle(hit)
		if err := j.End(res); err != nil && !exitcode.IsClosedPipe(err) {
			return err
		}
	case tui.ModeQuiet:
	default:
		fmt.Fprintln(s.Out, escapeControls(hit[0].Message))
	}
	return nil
}

func newRenderer(mode tui.Mode, s *streams, out io.Writer, verbose bool, c progress.Controls) progress.Renderer {
	return newRendererAt(mode, s, out, verbose, c, nil)
}

// newRendererAt is newRenderer with the views' clock now (nil: time.Now); a replay gives the
// recording's.
func newRendererAt(mode tui.Mode, s *streams, out io.Writer, verbose bool, c progress.Controls, now func() time.Time) progress.Renderer {
	switch mode {
	case tui.ModeJSON:
		return progress.NewJSONLines(out, now)
	case tui.ModeQuiet:
		return tui.Quiet{}
	case tui.ModeTTY:
		return tui.NewTTY(s.OutFile, s.In, tui.TTYOptions{
			Controls: c, Verbose: verbose, Color: tui.ColorFromEnv(s.Getenv, true), Getenv: s.Getenv, Now: now, Console: s.Console,
		})
	default:
		// Plain text is for logs: colour only when the user forces it (CLICOLOR_FORCE).
		return tui.NewPlain(out, tui.PlainOptions{Verbose: verbose, Color: tui.ColorFromEnv(s.Getenv, false), Now: now})
	}
}

// tickFor is how often the session ticks the renderer: the live view takes its snapshots of
// the build's state on the tick, ten a second; the other modes only need heartbeats.
func tickFor(mode tui.Mode) time.Duration {
	if mode == tui.ModeTTY {
		return tui.TickEvery()
	}
	return time.Second
}
