package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpClient is a Go SDK client session with a trtbuild MCP server (`trtbuild mcp` over stdio,
// or /mcp of a trtbuild serve) that keeps the progress notifications it receives.
type mcpClient struct {
	session *mcp.ClientSession
	logs    fmt.Stringer // the server's stderr, for failure messages

	mu       sync.Mutex
	progress []*mcp.ProgressNotificationParams
	notified chan struct{} // receives (without blocking) on every progress notification
}

// connectMCPClient connects the SDK's client over transport and closes the session when the
// test ends; logs is the server's stderr.
func connectMCPClient(t *testing.T, transport mcp.Transport, logs fmt.Stringer) (*mcpClient, error) {
	t.Helper()
	c := &mcpClient{logs: logs, notified: make(chan struct{}, 1)}
	client := mcp.NewClient(&mcp.Implementation{Name: "trtbuild-test", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			c.mu.Lock()
			c.progress = append(c.progress, req.Params)
			c.mu.Unlock()
			select {
			case c.notified <- struct{}{}:
			default:
			}
		},
	})
	session, err := client.Connect(context.Background(), transport, nil)
	if err != nil {
		return nil, err
	}
	c.session = session
	t.Cleanup(func() { session.Close() })
	return c, nil
}

// notifications are the progress notifications received so far.
func (c *mcpClient) notifications() []*mcp.ProgressNotificationParams {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*mcp.ProgressNotificationParams(nil), c.progress...)
}

// waitProgress waits until n progress notifications have arrived.
func (c *mcpClient) waitProgress(t *testing.T, n int) {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for len(c.notifications()) < n {
		select {
		case <-c.notified:
		case <-deadline:
			t.Fatalf("%d progress notifications after a minute, want %d; stderr:\n%s", len(c.notifications()), n, c.logs)
		}
	}
}

// call calls a tool, and stops the test if the call itself fails (a tool error is a result).
func (c *mcpClient) call(t *testing.T, ctx context.Context, params *mcp.CallToolParams) *mcp.CallToolResult {
	t.Helper()
	res, err := c.session.CallTool(ctx, params)
	if err != nil {
		t.Fatalf("calling %s: %v; stderr:\n%s", params.Name, err, c.logs)
	}
	return res
}

// wantToolError checks that res is a one-line tool error (not a protocol error) that says each
// of want.
func wantToolError(t *testing.T, res *mcp.CallToolResult, want ...string) {
	t.Helper()
	text := resultText(t, res)
	if !res.IsError || strings.Contains(text, "\n") {
		t.Fatalf("result %q (IsError %v), want a one-line tool error", text, res.IsError)
	}
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("message %q does not say %q", text, w)
		}
	}
}
