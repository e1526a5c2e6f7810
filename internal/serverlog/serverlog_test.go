package serverlog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
)

// TestLinesAsJSON: each diagnostic line is one JSON record of its own, the build id an
// attribute, the "trtbuild: " and "warning: " prefixes gone; a line written in pieces is one
// record; the output parses line by line.
func TestLinesAsJSON(t *testing.T) {
	var out bytes.Buffer
	l, err := New(&out, "json")
	if err != nil {
		t.Fatal(err)
	}
	w := Lines(l, slog.LevelWarn)
	for _, chunk := range []string{
		"trtbuild: build 018f3a2b4c5d-0a1b2c3d: history: database or disk is full\n",
		"trtbuild: build 018f3a2b4c5d-0a1b2c3d: warning: the engine cache entry \"x\" was not used",
		": its SHA-256 differs\ntrtbuild: cannot keep its events\n\n",
		"a line with \"quotes\" and a tab\there\n",
	} {
		if _, err := w.Write([]byte(chunk)); err != nil {
			t.Fatal(err)
		}
	}
	var got []map[string]any
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		var rec map[string]any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("not a JSON line: %q: %v", sc.Text(), err)
		}
		got = append(got, rec)
	}
	want := []struct{ msg, build string }{
		{"history: database or disk is full", "018f3a2b4c5d-0a1b2c3d"},
		{"the engine cache entry \"x\" was not used: its SHA-256 differs", "018f3a2b4c5d-0a1b2c3d"},
		{"cannot keep its events", ""},
		{"a line with \"quotes\" and a tab\there", ""},
	}
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d:\n%s", len(got), len(want), out.String())
	}
	for i, w := range want {
		build, _ := got[i]["build"].(string)
		if got[i]["msg"] != w.msg || build != w.build || got[i]["level"] != "WARN" {
			t.Errorf("record %d: %v, want msg %q, build %q, level WARN", i, got[i], w.msg, w.build)
		}
	}
}

func TestFormats(t *testing.T) {
	for _, tt := range []struct {
		format, want string
	}{
		{"text", `level=INFO msg="build ended" build=b1 state=succeeded`},
		{"json", `"level":"INFO","msg":"build ended","build":"b1","state":"succeeded"}`},
	} {
		var out bytes.Buffer
		l, err := New(&out, tt.format)
		if err != nil {
			t.Fatal(err)
		}
		l.Info("build ended", "build", "b1", "state", "succeeded")
		if !strings.Contains(out.String(), tt.want) || strings.Count(out.String(), "\n") != 1 {
			t.Errorf("%s: %q, want one line with %q", tt.format, out.String(), tt.want)
		}
	}
	if _, err := New(&bytes.Buffer{}, "xml"); err == nil || !strings.Contains(err.Error(), "text, json") {
		t.Errorf("format xml: %v", err)
	}
}
