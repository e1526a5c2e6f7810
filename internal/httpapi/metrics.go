package httpapi

import (
	"bytes"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/trtbuild/trtbuild/internal/service"
)

// metrics answers in the Prometheus text exposition format (version 0.0.4).
func (s *Server) metrics(w http.ResponseWriter, r *http.Request) {
	st := s.m.Stats()
	var b bytes.Buffer
	metric := func(name, typ, help string) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
	}
	metric("trtbuild_info", "gauge", "trtbuild's version (the value is always 1).")
	fmt.Fprintf(&b, "trtbuild_info{version=%s} 1\n", labelValue(s.cfg.Version))
	metric("trtbuild_builds", "gauge", "Builds in the history, by state.")
	byState := map[string]int{}
	for _, state := range service.States {
		byState[state] = 0
	}
	for state, n := range st.ByState {
		byState[state] = n
	}
	names := make([]string, 0, len(byState))
	for state := range byState {
		names = append(names, state)
	}
	sort.Strings(names)
	for _, state := range names {
		fmt.Fprintf(&b, "trtbuild_builds{state=%s} %d\n", labelValue(state), byState[state])
	}
	metric("trtbuild_queue_length", "gauge", "Builds waiting for a GPU or a simulation slot.")
	fmt.Fprintf(&b, "trtbuild_queue_length %d\n", st.Queued)
	metric("trtbuild_gpu_busy_seconds_total", "counter", "Seconds GPUs spent running TensorRT builds, summed over the GPUs.")
	fmt.Fprintf(&b, "trtbuild_gpu_busy_seconds_total %s\n", strconv.FormatFloat(st.GPUBusySeconds, 'g', -1, 64))
	metric("trtbuild_events_streamed_total", "counter", "Build events sent to event-stream clients.")
	fmt.Fprintf(&b, "trtbuild_events_streamed_total %d\n", st.EventsStreamed)
	metric("trtbuild_sse_clients", "gauge", "Event-stream clients connected now.")
	fmt.Fprintf(&b, "trtbuild_sse_clients %d\n", st.SSEClients)
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(b.Bytes())
}

// labelValue quotes a label's value as the exposition format does: backslash, quote and line
// feed escaped.
func labelValue(v string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(v) + `"`
}
