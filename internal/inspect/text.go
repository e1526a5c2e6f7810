package inspect

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/onnx"
	"github.com/trtbuild/trtbuild/internal/progress"
	"github.com/trtbuild/trtbuild/internal/regfile"
)

// Text writes the report on m for people; dir is the folder that holds the
// model's external data (normally the model's own folder).
func Text(w io.Writer, m *onnx.Model, dir string) error {
	return New(m, dir).WriteText(w)
}

// JSON writes the report on m as one indented JSON document (see Report);
// dir is as for Text.
func JSON(w io.Writer, m *onnx.Model, dir string) error {
	return New(m, dir).WriteJSON(w)
}

// WriteJSON writes r as an indented JSON document.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("writing the model report: %w", err)
	}
	return nil
}

// labelWidth aligns the values of the report's top-level lines.
const labelWidth = 15

// printer accumulates output and remembers the first write error.
type printer struct {
	w   io.Writer
	err error
}

func (p *printer) printf(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}

// field writes "label          value".
func (p *printer) field(label, format string, args ...any) {
	p.printf("%-*s%s\n", labelWidth, label, fmt.Sprintf(format, args...))
}

// table writes rows indented by two spaces, columns padded to the widest
// cell; the last column is not padded.
func (p *printer) table(rows [][]string) {
	p.tableWidths(rows, columnWidths(rows))
}

// columnWidths returns the widest cell of each column, in runes.
func columnWidths(rows [][]string) []int {
	var widths []int
	for _, row := range rows {
		for i, cell := range row {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(cell))
		}
	}
	return widths
}

// tableWidths writes rows like table, with the given column widths.
func (p *printer) tableWidths(rows [][]string, widths []int) {
	for _, row := range rows {
		var b strings.Builder
		b.WriteString("  ")
		for i, cell := range row {
			b.WriteString(cell)
			if i < len(row)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(cell)+2))
			}
		}
		p.printf("%s\n", b.String())
	}
}

// WriteText writes r for people.
func (r *Report) WriteText(w io.Writer) error {
	p := &printer{w: w}
	p.field("Model", "%s (%s)", r.Path, progress.FormatBytes(r.FileBytes))
	p.field("IR version", "%d", r.IRVersion)
	opsets := make([]string, len(r.Opsets))
	for i, o := range r.Opsets {
		opsets[i] = fmt.Sprintf("%s %d", o.Domain, o.Version)
	}
	p.field("Opsets", "%s", orNone(strings.Join(opsets, ", ")))
	p.field("Producer", "%s", orNone(strings.TrimSpace(r.ProducerName+" "+r.ProducerVersion)))
	p.field("Graph", "%s", orNone(r.Graph))

	p.printf("\n")
	in, out := valueRows(r.Inputs), valueRows(r.Outputs)
	widths := columnWidths(append(append([][]string{}, in...), out...))
	for _, sec := range []struct {
		title string
		rows  [][]string
	}{{"Inputs", in}, {"Outputs", out}} {
		if len(sec.rows) == 0 {
			p.field(sec.title, "none")
			continue
		}
		p.printf("%s\n", sec.title)
		p.tableWidths(sec.rows, widths)
	}

	p.printf("\n")
	nodes := strconv.Itoa(r.Nodes)
	if r.SubgraphNodes > 0 {
		nodes += fmt.Sprintf(" (+%d in subgraphs)", r.SubgraphNodes)
	}
	p.field("Nodes", "%s", nodes)
	if len(r.Functions) > 0 {
		p.field("Functions", "%s", strings.Join(r.Functions, ", "))
	}
	if len(r.Ops) > 0 {
		rows := make([][]string, len(r.Ops))
		for i, o := range r.Ops {
			rows[i] = []string{opName(o), strconv.Itoa(o.Count)}
		}
		p.table(rows)
	}
	p.field("Initializers", "%d (%s)", r.Initializers, progress.FormatBytes(r.InitializerSize))

	if len(r.ExternalData) == 0 {
		p.field("External data", "none")
	} else {
		tensors := 0
		for _, e := range r.ExternalData {
			tensors += e.Tensors
		}
		p.field("External data", "%s, %s", plural(len(r.ExternalData), "file"), plural(tensors, "tensor"))
		var rows [][]string
		for _, e := range r.ExternalData {
			state := "ok"
			switch {
			case e.Problem == "too small":
				state = fmt.Sprintf("too small: %s of %s", progress.FormatBytes(e.SizeBytes), progress.FormatBytes(e.NeededBytes))
			case e.Problem != "":
				state = e.Problem
			}
			loc := e.Location
			if loc == "" {
				loc = "(no location)"
			}
			rows = append(rows, []string{loc, progress.FormatBytes(e.NeededBytes), state})
		}
		p.table(rows)
	}

	if len(r.CustomOps) == 0 {
		p.field("Custom ops", "none")
	} else {
		p.field("Custom ops", "%d, each needs a TensorRT plugin", len(r.CustomOps))
		rows := make([][]string, len(r.CustomOps))
		for i, o := range r.CustomOps {
			rows[i] = []string{opName(o), strconv.Itoa(o.Count)}
		}
		p.table(rows)
	}

	if sf := r.ShapeFlags; sf != nil {
		p.printf("\n")
		if len(sf.Inputs) > 0 {
			p.printf("Dynamic inputs need shapes to build; for example:\n  %s\n", sf.Line)
		}
		for _, name := range sf.UnknownRank {
			p.printf("Input %s has an unknown number of dimensions; give its whole shape with --shapes.\n", strconv.Quote(name))
		}
	}
	return p.err
}

// valueRows returns the table rows of inputs or outputs: name, type, shape
// and "dynamic" when the shape is not fixed.
func valueRows(vs []Value) [][]string {
	rows := make([][]string, len(vs))
	for i, v := range vs {
		typ := v.Type
		switch v.Kind {
		case "", "tensor":
		case "sparse_tensor":
			typ = "sparse " + typ
		default:
			typ = strings.ReplaceAll(v.Kind, "_", " ")
		}
		if typ == "" {
			typ = "untyped"
		}
		rows[i] = []string{v.Name, typ, dims(v)}
		if v.Dynamic {
			rows[i] = append(rows[i], "dynamic")
		}
	}
	return rows
}

// dims writes a value's shape as "batch x 3 x 224 x 224".
func dims(v Value) string {
	if v.Shape == nil {
		if v.Kind != "tensor" && v.Kind != "sparse_tensor" {
			return "-"
		}
		return "unknown rank"
	}
	if len(v.Shape) == 0 {
		return "scalar"
	}
	parts := make([]string, len(v.Shape))
	for i, d := range v.Shape {
		switch d := d.(type) {
		case int64:
			parts[i] = strconv.FormatInt(d, 10)
		case string:
			parts[i] = d
		default:
			parts[i] = "?"
		}
	}
	return strings.Join(parts, " x ")
}

func opName(o OpCount) string {
	if onnx.IsStandardDomain(o.Domain) {
		return o.Op
	}
	return o.Domain + "::" + o.Op
}

func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func quote(s string) string { return strconv.Quote(s) }

// Model describes the model file at path on w, as text or as one JSON document: what
// `trtbuild inspect` shows. A path that is no readable regular file, or no ONNX model, is a
// usage error (exit status 2) that says what to do.
func Model(w io.Writer, path string, asJSON bool) error {
	if err := regfile.CheckInput("model", path); err != nil {
		return err
	}
	m, err := onnx.ReadMetadata(path)
	if err != nil {
		return exitcode.Wrap(exitcode.Usage, err)
	}
	if asJSON {
		return JSON(w, m, filepath.Dir(path))
	}
	return Text(w, m, filepath.Dir(path))
}
