package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/trtbuild/trtbuild/internal/buildkey"
	"github.com/trtbuild/trtbuild/internal/cgo"
	"github.com/trtbuild/trtbuild/internal/trt"
	"github.com/trtbuild/trtbuild/internal/worker"
)

// targetSubcommand is the hidden command that describes this machine's build target (TensorRT
// version with build number, GPU) for a build key. It runs in a short-lived child process so
// that the parent of a build never loads TensorRT or the CUDA runtime: only child processes do
// (the build worker, and this probe).
const targetSubcommand = "__target"

// newTargetCmd returns the hidden probe: it loads TensorRT as a worker would, asks the driver
// about the device, and prints the buildkey.Target as one JSON object on stdout.
func newTargetCmd() *cobra.Command {
	var device int
	var libDir string
	cmd := &cobra.Command{
		Use:    targetSubcommand,
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cgo.LoadTensorRT(trt.SearchFromEnv(0, libDir, os.Getenv), false); err != nil {
				return err
			}
			t, err := buildkey.Local("tensorrt", device)
			if err != nil {
				return err
			}
			return json.NewEncoder(cmd.OutOrStdout()).Encode(t)
		},
	}
	cmd.Flags().IntVar(&device, "device", 0, "CUDA device")
	cmd.Flags().StringVar(&libDir, "tensorrt-lib", "", "folder of the TensorRT libraries")
	return cmd
}

// localTarget describes the backend and device a request builds for. The simulated builder
// needs no asking; for TensorRT a child process of this binary loads the library and asks the
// driver (see targetSubcommand).
func localTarget(req worker.Request) (buildkey.Target, error) {
	if req.Backend != "tensorrt" {
		return buildkey.Local(req.Backend, req.Device)
	}
	exe, err := os.Executable()
	if err != nil {
		return buildkey.Target{}, fmt.Errorf("finding trtbuild's own executable to ask TensorRT for its version: %w", err)
	}
	args := []string{targetSubcommand, "--device", strconv.Itoa(req.Device)}
	if req.TensorRTLib != "" {
		args = append(args, "--tensorrt-lib", req.TensorRTLib)
	}
	var out, errOut bytes.Buffer
	c := exec.Command(exe, args...)
	c.Stdout, c.Stderr = &out, &errOut
	if err := c.Run(); err != nil {
		msg := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(errOut.String()), "trtbuild: "))
		if msg == "" {
			msg = err.Error()
		}
		return buildkey.Target{}, fmt.Errorf("asking TensorRT for its version and the GPU: %s", msg)
	}
	var t buildkey.Target
	if err := json.Unmarshal(out.Bytes(), &t); err != nil {
		return buildkey.Target{}, fmt.Errorf("reading the TensorRT version and GPU from %s: %w", targetSubcommand, err)
	}
	return t, nil
}
