package main

import (
	"context"
	"errors"
	"os"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/replay"
	"github.com/trtbuild/trtbuild/internal/report"
	"github.com/trtbuild/trtbuild/internal/tui"
)

type replayOptions struct {
	speed, progress string
	verbose         bool
}

func newReplayCmd(s *streams) *cobra.Command {
	o := &replayOptions{}
	cmd := &cobra.Command{
		Use:   "replay TRACE.jsonl",
		Short: "Play a recorded build through the progress views, without a GPU",
		Long: `replay plays a build recorded with --trace FILE or --progress json through the same views a
build uses (the live view, plain lines, JSON), with the recorded timing, so a real build's
progress can be watched, shared and debugged anywhere. Notices such as a cancel request were
recorded as warnings and are shown as warnings. Ctrl-C stops the replay.`,
		Example: `  trtbuild model.onnx --trace build.jsonl
  trtbuild replay build.jsonl --speed 10
  trtbuild replay build.jsonl --speed inf --progress plain`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return replayRun(s, o, args[0])
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.speed, "speed", "1", "play this many times faster than recorded; 0 or inf: as fast as possible")
	f.StringVar(&o.progress, "progress", "auto", "progress output: auto, tty, plain, json or quiet (env TRTBUILD_PROGRESS applies when auto)")
	f.BoolVarP(&o.verbose, "verbose", "v", false, "show every phase and the builder's info lines")
	return cmd
}

// replayControls turns the live view's Ctrl-C into stopping the replay.
type replayControls struct{ cancel context.CancelFunc }

// RequestCancel implements progress.Controls.
func (c replayControls) RequestCancel() { c.cancel() }

// replayTick is how often the session ticks during a replay: the live view at its frame rate;
// the other outputs once a second of the recording, as during the build, so that a faster
// replay prints the status lines the build printed (the plain log's, whenever it was quiet for
// 8 s of the recording).
func replayTick(mode tui.Mode, speed float64) time.Duration {
	tick := tickFor(mode)
	if mode == tui.ModeTTY || speed <= 1 {
		return tick
	}
	return max(time.Duration(float64(tick)/speed), 10*time.Millisecond)
}

func replayRun(s *streams, o *replayOptions, path string) error {
	speed, err := replay.ParseSpeed(o.speed)
	if err != nil {
		return exitcode.Wrap(exitcode.Usage, err)
	}
	mode, err := progressMode(s, o.progress, true)
	if err != nil {
		return err
	}
	tr, closeTrace, err := report.OpenTrace(path)
	if err != nil {
		return err
	}
	defer closeTrace()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs, stopSignals := buildSignals(s)
	defer stopSignals()
	var stoppedBy atomic.Value // the signal that stopped the replay
	go func() {
		select {
		case sig := <-sigs:
			stoppedBy.Store(sig)
			cancel()
		case <-ctx.Done():
		}
	}()
	// The views read the recording's clock, so the footer's elapsed time is the recorded
	// build's, as the rows' times are.
	clock := replay.NewClock(speed)
	r := newRendererAt(mode, s, s.Out, o.verbose, replayControls{cancel}, clock.Now)
	err = replay.PlayReader(ctx, tr, r, replay.Options{Speed: speed, Tick: replayTick(mode, speed), Clock: clock})
	var bad *replay.TraceError
	switch {
	case errors.Is(err, context.Canceled):
		code := exitcode.Interrupted // a key in the live view
		if sig, ok := stoppedBy.Load().(os.Signal); ok {
			code = exitcode.ForSignal(sig)
		}
		return &exitcode.Error{Code: code, Err: errors.New("replay stopped"), Reported: true}
	case errors.As(err, &bad):
		return report.TraceError(path, bad.Err)
	case err != nil:
		return err
	}
	return nil
}
