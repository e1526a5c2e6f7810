// Package serverlog is the log of trtbuild serve: one line per event on stderr, as text
// (key=value) or JSON, through log/slog; and Lines, which turns the diagnostic lines the
// service and the builder write ("trtbuild: build ID: warning: …") into records of that log.
package serverlog

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
)

// Formats are the formats New takes.
var Formats = []string{"text", "json"}

// New is a logger writing one line per record to w: format "text" is slog's key=value text,
// "json" one JSON object a line.
func New(w io.Writer, format string) (*slog.Logger, error) {
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, nil)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, nil)), nil
	}
	return nil, fmt.Errorf("log format %q is not one of %s", format, strings.Join(Formats, ", "))
}

// Lines is a writer that logs each line written to it as one record of l at level: its text
// without a leading "trtbuild: ", a "build ID: " after it as the attribute build=ID, and a
// "warning: " after that left to the level. An unfinished line waits for its end.
func Lines(l *slog.Logger, level slog.Level) io.Writer {
	return &lines{l: l, level: level}
}

type lines struct {
	l     *slog.Logger
	level slog.Level
	mu    sync.Mutex
	part  []byte
}

// maxLine bounds an unfinished line kept: beyond it, the line is logged as it is.
const maxLine = 64 << 10

func (w *lines) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.part = append(w.part, p...)
			if len(w.part) > maxLine {
				w.log(string(w.part))
				w.part = w.part[:0]
			}
			break
		}
		line := string(append(w.part, p[:i]...))
		w.part = w.part[:0]
		p = p[i+1:]
		w.log(line)
	}
	return n, nil
}

func (w *lines) log(line string) {
	line = strings.TrimRight(line, "\r")
	if strings.TrimSpace(line) == "" {
		return
	}
	msg := strings.TrimPrefix(line, "trtbuild: ")
	var attrs []slog.Attr
	if rest, ok := strings.CutPrefix(msg, "build "); ok {
		if id, text, ok := strings.Cut(rest, ": "); ok && id != "" && !strings.ContainsAny(id, " \t") {
			attrs = append(attrs, slog.String("build", id))
			msg = text
		}
	}
	if w.level >= slog.LevelWarn {
		msg = strings.TrimPrefix(msg, "warning: ")
	}
	w.l.LogAttrs(context.Background(), w.level, msg, attrs...)
}
