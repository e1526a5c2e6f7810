package mcptools

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/trtbuild/trtbuild/internal/service"
)

// TestStdioSurvivesBadLines: a line that is not JSON (a message cut short, a stray word) gets a
// JSON-RPC parse error, one that is no JSON-RPC message an invalid-request error, and the session goes on answering the next requests.
func TestStdioSurvivesBadLines(t *testing.T) {
	m, err := service.New(service.Config{StateDir: filepath.Join(t.TempDir(), "state")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	st := NewStdio(NewServer(m, "test"), inR, outW)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran := make(chan error, 1)
	go func() { ran <- st.Run(ctx) }()
	lines := make(chan map[string]any, 16)
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var msg map[string]any
			if json.Unmarshal(sc.Bytes(), &msg) == nil {
				lines <- msg
			}
		}
	}()
	send := func(s string) {
		t.Helper()
		if _, err := io.WriteString(inW, s+"\n"); err != nil {
			t.Fatalf("writing %q: %v", s, err)
		}
	}
	next := func() map[string]any {
		t.Helper()
		select {
		case msg := <-lines:
			return msg
		case err := <-ran:
			t.Fatalf("the session ended: %v", err)
		case <-time.After(30 * time.Second):
			t.Fatal("no answer within 30 s")
		}
		return nil
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if msg := next(); msg["id"] != 1.0 || msg["result"] == nil {
		t.Fatalf("initialize: %v", msg)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for _, bad := range []struct {
		line string
		code float64
	}{
		{`{"jsonrpc":"2.0","id":2,"method":`, -32700},
		{`not json`, -32700},
		{`[1,2,3]`, -32600},
		{`"a string"`, -32600},
		{`[]`, -32600},
	} {
		send(bad.line)
		msg := next()
		e, _ := msg["error"].(map[string]any)
		if e == nil || e["code"] != bad.code {
			t.Fatalf("bad line %q: %v, want error %v", bad.line, msg, bad.code)
		}
	}
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
	if msg := next(); msg["id"] != 3.0 || msg["result"] == nil {
		t.Fatalf("tools/list after the bad lines: %v", msg)
	}
	inW.Close()
	select {
	case <-ran:
	case <-time.After(30 * time.Second):
		t.Fatal("the session did not end with its input")
	}
}
