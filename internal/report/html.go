package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"math"
	"strings"

	"github.com/trtbuild/trtbuild/internal/progress"
)

// WriteHTML writes the report as one self-contained HTML page: inline style, an inline SVG
// timeline, no script, nothing fetched over the network.
func WriteHTML(w io.Writer, r *Report) error {
	tl := layout(r)
	var notes []string
	if tl.tooShort > 0 {
		notes = append(notes, fmt.Sprintf("%d phases shorter than %s (half a pixel at this scale) are not drawn; they are in the JSON report (--report FILE.json).",
			tl.tooShort, seconds(Seconds(minBarPx/chartWidth*float64(r.Span)))))
	}
	if tl.overLimit > 0 {
		notes = append(notes, fmt.Sprintf("The chart draws at most %d phases, shallowest first; %d deeper phases are not drawn (see the tables below and the JSON report).",
			maxBars, tl.overLimit))
	}
	data := page{R: r, Chart: template.HTML(tl.svg()), ChartNotes: notes, Drawn: tl.drawn}
	var buf bytes.Buffer
	if err := pageTemplate.Execute(&buf, data); err != nil {
		return fmt.Errorf("rendering the HTML report: %w", err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

type page struct {
	R          *Report
	Chart      template.HTML
	ChartNotes []string
	Drawn      int
}

var funcs = template.FuncMap{
	"seconds": seconds,
	"bytes":   progress.FormatBytes,
	"percent": func(f float64) string { return fmt.Sprintf("%.1f%%", f*100) },
	"along":   func(f *float64) string { return fmt.Sprintf("%.0f%%", *f*100) },
	"path":    func(p []string) string { return strings.Join(p, " › ") },
	"short":   shortPath,
	"levels": func(r *Report) string {
		if r.Count == 0 {
			return "0 levels"
		}
		if r.Depth == 0 {
			return "1 level"
		}
		return fmt.Sprintf("%d levels", r.Depth+1)
	},
	"title": statusTitle,
	"add":   func(a, b uint64) uint64 { return a + b },
	"count": func(n int, word string) string {
		if n == 1 {
			return "1 " + word
		}
		return fmt.Sprintf("%d %ss", n, word)
	},
	"command": func(args []string) string {
		quoted := make([]string, len(args))
		for i, a := range args {
			quoted[i] = shellQuote(a)
		}
		return strings.Join(quoted, " ")
	},
	"settings": func(raw []byte) string {
		var out bytes.Buffer
		if json.Indent(&out, raw, "", "  ") != nil {
			return string(raw)
		}
		return out.String()
	},
	"color": func(d int) string { return barColors[d%len(barColors)] },
}

// seconds shows a time the way the page does: "850 µs", "12.3 ms", "4.56 s", "2m05s".
func seconds(s Seconds) string {
	v := float64(s)
	switch {
	case v < 0.001:
		return fmt.Sprintf("%.0f µs", v*1e6)
	case v < 1:
		return fmt.Sprintf("%.1f ms", v*1e3)
	case v < 60:
		return fmt.Sprintf("%.2f s", v)
	case v < 3600:
		return fmt.Sprintf("%dm%02ds", int(v)/60, int(math.Round(v))%60)
	default:
		return fmt.Sprintf("%dh%02dm", int(v)/3600, int(v)%3600/60)
	}
}

// shortPath shows the last two names of a phase's path, which say what it was; the page
// shows the whole path on hover.
func shortPath(p []string) string {
	if len(p) <= 2 {
		return strings.Join(p, " › ")
	}
	return "… › " + strings.Join(p[len(p)-2:], " › ")
}

func statusTitle(r *Report) string {
	switch r.Result.Status {
	case "built":
		return "Built"
	case "failed":
		return "Failed"
	case "cancelled":
		return "Cancelled"
	case "timed_out":
		return "Timed out"
	}
	return "Unknown outcome"
}

var pageTemplate = template.Must(template.New("report").Funcs(funcs).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>trtbuild report: {{.R.Build.Model}}</title>
<style>
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px;color:#1d2330;background:#fff}
h1{font-size:20px;margin:0 0 4px}
h2{font-size:16px;margin:28px 0 8px}
.sub{color:#5b6475;margin:0 0 16px;word-break:break-all}
.status{display:inline-block;padding:2px 10px;border-radius:10px;font-weight:600;color:#fff;background:#6b7280}
.status.built{background:#2f855a}.status.failed{background:#c53030}.status.cancelled,.status.timed_out{background:#b7791f}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(170px,1fr));gap:10px;max-width:1120px}
.card{border:1px solid #dde2ea;border-radius:6px;padding:8px 12px}
.card b{display:block;font-size:18px}
.card span{color:#5b6475;font-size:12px}
.chart{overflow-x:auto;border:1px solid #dde2ea;border-radius:6px;padding:8px 0;max-width:1140px}
svg.timeline text{font:11px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;fill:#fff;pointer-events:none}
svg.timeline text.tick{fill:#5b6475}
svg.timeline line.grid{stroke:#e5e8ee;stroke-width:1}
svg.timeline g.bar rect{stroke:#fff;stroke-width:.5}
svg.timeline g.bar:hover rect{stroke:#1d2330;stroke-width:1.5}
svg.timeline g.aborted rect{stroke:#c53030;stroke-width:1.5;stroke-dasharray:3 2}
.legend{color:#5b6475;font-size:12px;margin:6px 0}
.legend i{display:inline-block;width:10px;height:10px;margin:0 4px 0 10px;vertical-align:middle}
table{border-collapse:collapse;max-width:1120px}
th,td{text-align:left;padding:3px 10px;border-bottom:1px solid #eef0f4;vertical-align:top}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.note{color:#8a5a00}
.error{color:#c53030}
footer{margin-top:32px;color:#8b93a3;font-size:12px}
</style>
</head>
<body>
<h1>{{.R.Build.Model}} <span class="status {{.R.Result.Status}}">{{title .R}}</span></h1>
<p class="sub">→ {{with .R.Build.Engine}}{{.}}{{else}}(no engine){{end}} · backend {{.R.Build.Backend}}{{with .R.Build.Precision}} · {{.}}{{end}}{{with .R.Build.TensorRT}} · TensorRT {{.}}{{end}}</p>
{{with .R.Result.Error}}<p class="error">{{.}}</p>{{end}}
{{with .R.Result.Where}}{{if .Path}}<p class="error">{{if eq $.R.Result.Status "failed"}}Failed{{else}}Stopped{{end}} in: {{path .Path}} (step {{.Done}}/{{.Steps}}){{if $.R.Result.Along}}, {{along $.R.Result.Along}} of the way{{end}}</p>{{end}}
{{with .Node}}<p class="error">Failed on node: {{.}} (named in the error)</p>{{end}}{{end}}
{{with .R.Result.Hint}}<p>Hint: {{.}}</p>{{end}}
<div class="grid">
<div class="card"><b>{{seconds .R.Result.Duration}}</b><span>build time</span></div>
<div class="card"><b>{{.R.Count}}</b><span>{{if eq .R.Count 1}}phase{{else}}phases{{end}}, nested {{levels .R}} deep</span></div>
{{if or .R.Cache.Used .R.Cache.Hits .R.Cache.Misses}}<div class="card">{{if .R.Cache.Hits}}<b>{{percent .R.Cache.HitRate}}</b><span>timing cache: {{.R.Cache.Hits}}/{{add .R.Cache.Hits .R.Cache.Misses}} hits</span>{{else if .R.Cache.Misses}}<b>{{.R.Cache.Misses}}</b><span>timings added to the timing cache</span>{{else}}<b>cached</b><span>every timing from the timing cache</span>{{end}}</div>
{{else}}<div class="card"><b>off</b><span>timing cache: off</span></div>
{{end}}
<div class="card"><b>{{if .R.Result.PeakRSS}}{{bytes .R.Result.PeakRSS}}{{else}}unknown{{end}}</b><span>build worker peak memory</span></div>
<div class="card"><b>{{if .R.Result.EngineBytes}}{{bytes .R.Result.EngineBytes}}{{else}}none{{end}}</b><span>engine</span></div>
{{if .R.Result.DroppedSteps}}<div class="card"><b>{{.R.Result.DroppedSteps}}</b><span>step events dropped</span></div>{{end}}
</div>

<h2>Timeline</h2>
<div class="chart">
{{.Chart}}
</div>
<p class="legend">Time runs left to right over {{seconds .R.Span}}; each band is one level of nesting, one row per builder thread. Hover over a bar for its details. {{.Drawn}} of {{count .R.Count "phase"}} drawn.</p>
{{range .ChartNotes}}<p class="note">{{.}}</p>
{{end}}
<h2>Where the time went</h2>
<table>
<thead><tr><th>phase</th><th class="n">steps</th><th class="n">self</th><th class="n">total</th></tr></thead>
<tbody>
{{range .R.Slowest}}<tr><td title="{{path .Path}}">{{short .Path}}{{with .Generation}} (generation {{.}}){{end}}</td><td class="n">{{.Steps}}</td><td class="n">{{seconds .Self}}</td><td class="n">{{seconds .Duration}}</td></tr>
{{else}}<tr><td colspan="4">No phases were reported.</td></tr>
{{end}}</tbody>
</table>
<p class="legend">The longest phases, whatever their names, leaving out each phase whose time its sub-phases explain (one took two thirds of it, or its stages took nine tenths): those sub-phases stand for it. Self time is a phase's time not covered by any of its sub-phases.</p>

<h2>Phases by name</h2>
<table>
<thead><tr><th>name</th><th class="n">count</th><th class="n">self</th><th class="n">total</th><th class="n">longest</th><th class="n">steps</th></tr></thead>
<tbody>
{{range .R.ByName}}<tr><td>{{.Name}}</td><td class="n">{{.Count}}</td><td class="n">{{seconds .Self}}</td><td class="n">{{seconds .Total}}</td><td class="n">{{seconds .Max}}</td><td class="n">{{.Steps}}</td></tr>
{{end}}</tbody>
</table>
{{if .R.Logs}}
<h2>Warnings and errors</h2>
<table>
<tbody>
{{range .R.Logs}}<tr><td class="n">{{seconds .Time}}</td><td>{{.Severity}}</td><td>{{.Message}}</td></tr>
{{end}}</tbody>
</table>
{{end}}
{{range .R.Notes}}<p class="note">{{.}}</p>
{{end}}
{{if or .R.Build.Command .R.Build.Settings}}
<h2>How to build it again</h2>
{{with .R.Build.Command}}<p>Command line:</p>
<pre>{{command .}}</pre>{{end}}
{{with .R.Build.Settings}}<p>Settings{{with $.R.Build.TensorRT}} (TensorRT {{.}}){{end}}{{with $.R.Build.GPU}} on {{.}}{{end}}:</p>
<pre>{{settings .}}</pre>{{end}}
{{end}}
<footer>trtbuild {{with .R.Build.Version}}{{.}}{{end}} · report format {{.R.Version}}</footer>
</body>
</html>
`))

// shellQuote quotes an argument for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
