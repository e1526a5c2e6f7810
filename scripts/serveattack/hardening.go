package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// The hardening cases: what one client does stays its own, and what the server keeps is
// bounded. The server runs with --mcp-sessions given as -sessions.
//
//	serveattack -url URL -sessions N hardening

// hardening runs the cases and prints one line each.
func hardening(sessions int) {
	check("sharing: a sharer's 1s budget times out alone, the other builds", sharerBudget())
	check("sharing: a cancelled sharer leaves, the other builds", sharerCancel())
	check(fmt.Sprintf("MCP: 10x --mcp-sessions (%d) initializes keep at most %d alive", sessions, sessions), sessionCap(sessions))
	check("DELETE: a running build is 409, an ended one 204 then 404", deleteBuild())
}

// slow are the options of a build that lasts a few seconds; seed makes its key its own (the
// workspace is in the key and changes nothing a simulated build does).
func slow(seed int) map[string]any {
	return map[string]any{"sim-speed": 1, "workspace": fmt.Sprintf("%dM", 64+seed%100000)}
}

func sharerBudget() error {
	n := seed()
	short := slow(n)
	short["timeout"] = "1s"
	a, err := submit(short)
	if err != nil {
		return err
	}
	b, err := submit(slow(n))
	if err != nil {
		return err
	}
	if a.ID == b.ID {
		return fmt.Errorf("two requests got one build %s", a.ID)
	}
	ea, err := waitState(a.ID, time.Minute)
	if err != nil {
		return err
	}
	if ea.State != "timed_out" {
		return fmt.Errorf("the 1s sharer ended %s, want timed_out", ea.State)
	}
	eb, err := waitState(b.ID, 2*time.Minute)
	if err != nil {
		return err
	}
	if eb.State != "succeeded" || !eb.Engine {
		return fmt.Errorf("the sharer without a budget ended %s (engine %v), want succeeded", eb.State, eb.Engine)
	}
	return nil
}

func sharerCancel() error {
	n := seed()
	a, err := submit(slow(n))
	if err != nil {
		return err
	}
	b, err := submit(slow(n))
	if err != nil {
		return err
	}
	if _, err := waitState(a.ID, time.Minute, "running"); err != nil {
		return err
	}
	for _, hard := range []bool{false, true} {
		u := *base + "/v1/builds/" + a.ID + "/cancel"
		if hard {
			u += "?hard=true"
		}
		resp, err := hc.Post(u, "application/json", nil)
		if err != nil {
			return err
		}
		resp.Body.Close()
	}
	ea, err := waitState(a.ID, time.Minute)
	if err != nil {
		return err
	}
	if ea.State != "cancelled" {
		return fmt.Errorf("the cancelled sharer ended %s", ea.State)
	}
	eb, err := waitState(b.ID, 2*time.Minute)
	if err != nil {
		return err
	}
	if eb.State != "succeeded" {
		return fmt.Errorf("the other sharer ended %s, want succeeded: one client's cancel stopped another's build", eb.State)
	}
	return nil
}

// mcpPost posts one JSON-RPC message to /mcp, in session id ("" for none), and returns the
// status and the session the server names.
func mcpPost(id, body string) (int, string, error) {
	req, err := http.NewRequest("POST", *base+"/mcp", strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if id != "" {
		req.Header.Set("Mcp-Session-Id", id)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, "", err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), nil
}

func sessionCap(max int) error {
	const initialize = `{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "serveattack", "version": "1"}}}`
	var ids []string
	for range 10 * max {
		code, id, err := mcpPost("", initialize)
		if err != nil {
			return err
		}
		if code != http.StatusOK || id == "" {
			return fmt.Errorf("initialize: %d, session %q", code, id)
		}
		ids = append(ids, id)
	}
	alive := 0
	for _, id := range ids {
		code, _, err := mcpPost(id, `{"jsonrpc": "2.0", "id": 2, "method": "ping"}`)
		if err != nil {
			return err
		}
		if code == http.StatusOK || code == http.StatusAccepted {
			alive++
		}
	}
	if alive > max {
		return fmt.Errorf("%d of %d sessions answer, with --mcp-sessions %d", alive, len(ids), max)
	}
	if alive == 0 {
		return fmt.Errorf("no session answers: the newest should")
	}
	return nil
}

func deleteBuild() error {
	b, err := submit(slow(seed()))
	if err != nil {
		return err
	}
	del := func() (int, string, error) {
		req, _ := http.NewRequest("DELETE", *base+"/v1/builds/"+b.ID, nil)
		resp, err := hc.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(bytes.TrimSpace(data)), nil
	}
	if code, body, err := del(); err != nil || code != http.StatusConflict {
		return fmt.Errorf("DELETE of a queued or running build: %d %s %v, want 409", code, body, err)
	}
	resp, err := hc.Post(*base+"/v1/builds/"+b.ID+"/cancel?hard=true", "application/json", nil)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if _, err := waitState(b.ID, time.Minute); err != nil {
		return err
	}
	if code, body, err := del(); err != nil || code != http.StatusNoContent {
		return fmt.Errorf("DELETE of an ended build: %d %s %v, want 204", code, body, err)
	}
	resp, err = hc.Get(*base + "/v1/builds/" + b.ID)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		return fmt.Errorf("GET of a deleted build: %s, want 404", resp.Status)
	}
	return nil
}
