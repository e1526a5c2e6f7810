package matrix

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/trtbuild/trtbuild/internal/builder"
	"github.com/trtbuild/trtbuild/internal/manifest"
	"github.com/trtbuild/trtbuild/internal/outpath"
	"github.com/trtbuild/trtbuild/internal/pathtext"
	"github.com/trtbuild/trtbuild/internal/progress"
	"github.com/trtbuild/trtbuild/internal/regfile"
)

// IndexVersion is the version of index.json's format.
const IndexVersion = 1

// Cell outcomes in the index.
const (
	StatusBuilt   = "built"   // built by this run
	StatusCached  = "cached"  // copied from the engine cache
	StatusFailed  = "failed"  // the build failed; Error says why
	StatusSkipped = "skipped" // not buildable on this machine (another GPU type)
	StatusMissing = "missing" // collected (matrix index): the cell has no engine and manifest
)

// Index is what a matrix run wrote: one entry per cell, in cell order.
type Index struct {
	Version  int         `json:"index_version"`
	Matrix   string      `json:"matrix"`
	Finished time.Time   `json:"finished"`
	Seconds  float64     `json:"seconds"`
	Cells    []IndexCell `json:"cells"`
	Built    int         `json:"built"`
	Cached   int         `json:"cached"`
	Failed   int         `json:"failed"`
	Skipped  int         `json:"skipped"`
	Missing  int         `json:"missing,omitempty"`
	// Collected says that the index was read from the cells' manifests after a cluster run
	// (Collect), not written by a matrix build: Seconds is then the cells' build times added up.
	Collected bool   `json:"collected,omitempty"`
	CacheDir  string `json:"engine_cache"`
	OutputDir string `json:"output"`
}

// IndexCell is one cell's entry: cell → key → engine → report. Paths are relative to the
// index's folder.
type IndexCell struct {
	Index     int     `json:"index"`
	ID        string  `json:"id"`
	Target    string  `json:"target"`
	GPU       string  `json:"gpu"`
	Model     string  `json:"model"`
	Profile   string  `json:"profile,omitempty"`
	Precision string  `json:"precision"`
	Status    string  `json:"status"`
	Key       string  `json:"key,omitempty"`
	Engine    string  `json:"engine,omitempty"`
	Manifest  string  `json:"manifest,omitempty"`
	Report    string  `json:"report,omitempty"`
	Bytes     int64   `json:"engine_bytes,omitempty"`
	Seconds   float64 `json:"seconds"` // this run's time for the cell
	Error     string  `json:"error,omitempty"`
}

// NewIndexCell fills the cell's description.
func NewIndexCell(c Cell) IndexCell {
	e := IndexCell{Index: c.Index, ID: c.ID(), Target: c.Target.Name, GPU: c.Target.GPU, Model: c.Model.Name, Precision: c.Precision}
	if c.Profile != nil {
		e.Profile = c.Profile.Name
	}
	return e
}

// Count fills the totals from the cells.
func (x *Index) Count() {
	x.Built, x.Cached, x.Failed, x.Skipped, x.Missing = 0, 0, 0, 0, 0
	for _, c := range x.Cells {
		switch c.Status {
		case StatusBuilt:
			x.Built++
		case StatusCached:
			x.Cached++
		case StatusFailed:
			x.Failed++
		case StatusSkipped:
			x.Skipped++
		case StatusMissing:
			x.Missing++
		}
	}
}

// IndexName and PageName are the files WriteIndex writes.
const (
	IndexName = "index.json"
	PageName  = "index.html"
)

// CheckIndexPaths says, before a matrix is built, whether index.json and index.html can be
// written into dir: files trtbuild names itself, so no link, FIFO or folder may be there, and
// a file there must be one trtbuild wrote (an index, a page with trtbuild's generator tag),
// never the user's own that the index would replace. A missing dir is fine.
func CheckIndexPaths(dir string) error {
	for _, name := range []string{IndexName, PageName} {
		path := filepath.Join(dir, name)
		t, err := outpath.InspectOwn(path)
		if err != nil {
			continue // the folder is made later
		}
		if why := t.Refusal(outpath.Own); why != "" {
			return fmt.Errorf("%s %s", pathtext.Q(path), why)
		}
		if t.Kind != outpath.Regular {
			continue
		}
		f, _, err := regfile.OpenNoFollow(path)
		if err != nil {
			return fmt.Errorf("cannot read %s: %w", pathtext.Q(path), err)
		}
		head, _ := io.ReadAll(io.LimitReader(f, 4096))
		f.Close()
		ours := false
		if name == IndexName {
			ours = bytes.Contains(head, []byte(`"index_version"`))
		} else {
			ours = bytes.Contains(head, []byte(`<title>trtbuild matrix `)) // pages before the generator tag have this too
		}
		if !ours {
			return fmt.Errorf("%s is not a file trtbuild wrote, and the matrix index would replace it: move it, or set another output folder in the matrix file", pathtext.Q(path))
		}
	}
	return nil
}

// WriteIndex writes index.json and index.html into dir, each replaced atomically.
func WriteIndex(dir string, x *Index) error {
	x.Version = IndexVersion
	x.Count()
	b, err := json.MarshalIndent(x, "", "  ")
	if err != nil {
		return err
	}
	// Files the matrix names itself: no link followed (internal/outpath, Own).
	if err := outpath.WriteOwn(filepath.Join(dir, IndexName), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing the matrix index: %w", err)
	}
	var page bytes.Buffer
	if err := pageTemplate.Execute(&page, x); err != nil {
		return fmt.Errorf("rendering the matrix page: %w", err)
	}
	if err := outpath.WriteOwn(filepath.Join(dir, PageName), page.Bytes(), 0o644); err != nil {
		return fmt.Errorf("writing the matrix page: %w", err)
	}
	return nil
}

var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"short": func(k string) string {
		if len(k) > 18 {
			return k[:18] + "…"
		}
		return k
	},
	"size": func(n int64) string {
		if n <= 0 {
			return ""
		}
		return progress.FormatBytes(n)
	},
	"secs": func(s float64) string { return fmt.Sprintf("%.2f s", s) },
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="generator" content="trtbuild matrix">
<title>trtbuild matrix {{.Matrix}}</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; }
th, td { padding: 4px 10px; border-bottom: 1px solid #ddd; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
code { font-size: 12px; }
.built { color: #1a7f37; } .cached { color: #0969da; } .failed { color: #cf222e; } .skipped { color: #777; }
</style>
</head>
<body>
<h1>Matrix {{.Matrix}}</h1>
{{if .Collected}}<p>{{len .Cells}} cells, collected from their manifests: {{.Built}} built, {{.Cached}} from the engine cache, {{.Missing}} without an engine (see their tasks' logs); {{secs .Seconds}} of builds. Collected {{.Finished.Format "2006-01-02 15:04:05 MST"}}.</p>
{{else}}<p>{{len .Cells}} cells: {{.Built}} built, {{.Cached}} from the engine cache, {{.Failed}} failed, {{.Skipped}} skipped (another GPU type), in {{secs .Seconds}}. Finished {{.Finished.Format "2006-01-02 15:04:05 MST"}}.</p>{{end}}
<table>
<thead><tr><th>#</th><th>target</th><th>model</th><th>profile</th><th>precision</th><th>status</th><th>key</th><th>engine</th><th>size</th><th>time</th><th>report</th></tr></thead>
<tbody>
{{range .Cells}}<tr>
<td class="num">{{.Index}}</td><td title="{{.GPU}}">{{.Target}}</td><td>{{.Model}}</td><td>{{.Profile}}</td><td>{{.Precision}}</td>
<td class="{{.Status}}"{{if .Error}} title="{{.Error}}"{{end}}>{{.Status}}</td>
<td><code title="{{.Key}}">{{short .Key}}</code></td>
<td>{{if .Engine}}<a href="{{.Engine}}">{{.Engine}}</a>{{if .Manifest}} (<a href="{{.Manifest}}">manifest</a>){{end}}{{end}}</td>
<td class="num">{{size .Bytes}}</td><td class="num">{{secs .Seconds}}</td>
<td>{{if .Report}}<a href="{{.Report}}">report</a>{{end}}</td>
</tr>
{{end}}</tbody>
</table>
</body>
</html>
`))

// WriteTable writes the index as a plain text table, one line per cell.
func WriteTable(w io.Writer, x *Index) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CELL\tTARGET\tMODEL\tPROFILE\tPRECISION\tSTATUS\tKEY\tSECONDS")
	for _, c := range x.Cells {
		// A collected key is a manifest's text, which others may have written: one line, no
		// control bytes.
		key := pathtext.Line(c.Key)
		if len(key) > 18 {
			key = key[:18]
		}
		profile := c.Profile
		if profile == "" {
			profile = "-"
		}
		status := c.Status
		if c.Error != "" && c.Status != StatusSkipped && c.Status != StatusMissing {
			status += " (see index.json)"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%.2f\n", c.Index, c.Target, c.Model, profile, c.Precision, status, key, c.Seconds)
	}
	return tw.Flush()
}

// Collect reads the index of a matrix run elsewhere (a Slurm array, Kubernetes Jobs) from what
// its cells left in the output folder: each cell's manifest says its key, its engine's size,
// how long it took and whether it came from the engine cache. A cell without an engine or a
// manifest, or whose manifest's key is not the key the cell gives now (the matrix or a model
// changed since, and the cell did not run again or failed), is StatusMissing, with why in
// Error. base are the builder options of the matrix's build_flags.
func Collect(f *File, base builder.Options) *Index {
	out := f.OutputDir()
	x := &Index{Matrix: filepath.Base(f.Path), CacheDir: f.CacheDir(), OutputDir: out, Collected: true}
	rel := func(p string) string {
		if r, err := filepath.Rel(out, p); err == nil {
			return filepath.ToSlash(r)
		}
		return p
	}
	for _, c := range f.Cells() {
		e := NewIndexCell(c)
		engine := filepath.Join(out, c.Engine())
		m, err := manifest.Read(manifest.Path(engine))
		if err == nil {
			// The engine itself must be there too, a regular file (a manifest alone is no engine).
			var fh *os.File
			if fh, _, err = regfile.OpenNoFollow(engine); err == nil {
				fh.Close()
			}
		}
		var stale string
		if err == nil {
			stale, err = f.staleKey(c, m, base)
		}
		switch {
		case err == nil && stale != "":
			e.Status, e.Error = StatusMissing, stale+"; run the cell again"
		case errors.Is(err, manifest.ErrNotFound) || errors.Is(err, fs.ErrNotExist):
			e.Status, e.Error = StatusMissing, "no engine: the cell has not run, or its build failed; see its task's log"
		case err != nil:
			e.Status, e.Error = StatusMissing, err.Error()
		default:
			e.Status = StatusBuilt
			if m.EngineCache != nil && m.EngineCache.Hit {
				e.Status = StatusCached
			}
			e.Key, e.Bytes, e.Seconds = m.Key, m.Engine.Bytes, m.BuildSeconds
			e.Engine, e.Manifest = rel(engine), rel(manifest.Path(engine))
			if st, err := os.Lstat(engine + ".report.json"); err == nil && st.Mode().IsRegular() {
				e.Report = rel(engine + ".report.json")
			}
			x.Seconds += e.Seconds
		}
		x.Cells = append(x.Cells, e)
	}
	x.Finished = time.Now().UTC().Truncate(time.Second)
	x.Count()
	return x
}
