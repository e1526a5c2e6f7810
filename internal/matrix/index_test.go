package matrix

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestWriteIndex(t *testing.T) {
	f := load(t)
	dir := t.TempDir()
	x := &Index{Matrix: "matrix.yaml", Finished: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	for i, c := range f.Cells()[:3] {
		e := NewIndexCell(c)
		e.Status = []string{StatusBuilt, StatusCached, StatusFailed}[i]
		if e.Status == StatusFailed {
			e.Error = `<script>alert("x")</script>`
		}
		x.Cells = append(x.Cells, e)
	}
	if err := WriteIndex(dir, x); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, IndexName))
	if err != nil {
		t.Fatal(err)
	}
	var back Index
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Version != IndexVersion || back.Built != 1 || back.Cached != 1 || back.Failed != 1 || len(back.Cells) != 3 || back.Cells[2].Profile != "b1" {
		t.Fatalf("index read back: %+v", back)
	}
	page, err := os.ReadFile(filepath.Join(dir, PageName))
	if err != nil {
		t.Fatal(err)
	}
	var table strings.Builder
	if err := WriteTable(&table, &back); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(table.String()), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "CELL") || !strings.Contains(lines[2], "cached") || !strings.Contains(lines[3], "failed (see index.json)") {
		t.Errorf("table:\n%s", table.String())
	}
	s := string(page)
	if !strings.Contains(s, "1 built, 1 from the engine cache, 1 failed") || strings.Contains(s, "<script>") || !strings.Contains(s, "classifier") {
		t.Errorf("page:\n%s", s)
	}
}

// TestWriteTableEscapesManifestText: a collected cell's key comes from a manifest in a folder
// others may write; the table shows it on one line, its control bytes escaped, so a planted
// manifest can neither add lines nor send escape sequences to the terminal.
func TestWriteTableEscapesManifestText(t *testing.T) {
	f := load(t)
	e := NewIndexCell(f.Cells()[0])
	e.Status, e.Key = StatusBuilt, "\x1b]0;x\x07\nFAKE"
	var table strings.Builder
	if err := WriteTable(&table, &Index{Cells: []IndexCell{e}}); err != nil {
		t.Fatal(err)
	}
	if s := table.String(); strings.ContainsAny(s, "\x1b\x07") || strings.Count(s, "\n") != 2 {
		t.Errorf("table:\n%q", s)
	}
}
