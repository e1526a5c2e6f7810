package architecture

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/trtbuild/trtbuild/internal/testmodels"
)

const module = "github.com/trtbuild/trtbuild"

// frontEnds are the packages that face a person or a program: the command line, the HTTP
// API and its page, MCP, the terminal's renderers. They reach builds through internal/builder
// and internal/service only (docs/architecture.md, "Who may import whom").
var frontEnds = []string{"cmd/trtbuild", "internal/httpapi", "internal/webui", "internal/mcptools", "internal/tui"}

// contracts are floor 0 of docs/architecture.md: the facts and formats every process shares.
var contracts = []string{"internal/progress", "internal/buildreq", "internal/buildkey", "internal/enginecache", "internal/timingcache",
	"internal/manifest", "internal/onnx/...", "internal/convert/...", "internal/shapes", "internal/preflight", "internal/trt/...", "internal/trtexec",
	"internal/outpath", "internal/regfile", "internal/exitcode", "internal/pathtext"}

// rule is one line of docs/architecture.md's table: the packages From (a package or a folder
// ending in "/...") may not import Forbidden (a path prefix when it ends in "/"), except the
// packages Except.
type rule struct {
	Name      string
	From      []string
	Forbidden []string
	Except    []string
	Why       string
}

var rules = []rule{
	{Name: "front ends stay off the build's machinery", From: frontEnds,
		Forbidden: []string{"internal/worker", "internal/probe", "internal/cgo"},
		Why:       "a front end starts, watches and cancels builds through builder and service, so those can change how a build runs"},
	{Name: "the build and the service draw nothing", From: []string{"internal/builder", "internal/service"},
		Forbidden: []string{"internal/tui", "charm.land/", "github.com/charmbracelet/"},
		Why:       "a server or a library that builds engines links no terminal library; JSON lines are progress.JSONLines"},
	{Name: "the build stands below its front ends", From: []string{"internal/builder/...", "internal/buildflags", "internal/matrix", "internal/report", "internal/replay", "internal/inspect"},
		Forbidden: []string{"internal/service", "internal/httpapi", "internal/webui", "internal/mcptools", "internal/tui", "cmd/", "github.com/spf13/cobra"},
		Why:       "a build as a library, its options' vocabulary included, serves every front end: the command line, the service, a server not written yet"},
	{Name: "only the builder starts the children", From: []string{"..."},
		Forbidden: []string{"internal/worker", "internal/probe"},
		Except:    []string{"internal/builder/...", "internal/worker", "internal/probe"},
		Why:       "a build's worker and the probe are started, asked and cancelled in one place, so a new front end or matrix inherits every rule of it"},
	{Name: "contracts stand on nothing above them", From: contracts,
		Forbidden: []string{"internal/builder", "internal/service", "internal/worker", "internal/probe", "internal/cgo", "internal/matrix", "internal/report", "internal/replay", "internal/inspect", "internal/tui", "internal/httpapi", "internal/webui", "internal/mcptools", "internal/buildflags", "cmd/"},
		Why:       "the event contract, the build request, keys, caches and formats are the floor every process shares; a package there that reached up would tie them all to one process"},
	{Name: "native code lives in the child processes", From: []string{"..."},
		Forbidden: []string{"internal/cgo"}, Except: []string{"internal/worker", "internal/probe"},
		Why: "TensorRT and the CUDA driver are loaded only in the worker and the probe, never in a parent that renders and controls"},
}

// imports reads the non-test Go files under root (every file, whatever its build tags and
// OS) and returns each package's imports, both relative to the module ("internal/cgo") when
// they are in it.
func imports(root string) (map[string][]string, error) {
	graph := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "third_party" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return fmt.Errorf("reading the imports of %s: %w", path, err)
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(rel)
		for _, spec := range f.Imports {
			p, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				return fmt.Errorf("%s: import %s: %w", path, spec.Path.Value, err)
			}
			p = strings.TrimPrefix(p, module+"/")
			if !slices.Contains(graph[pkg], p) {
				graph[pkg] = append(graph[pkg], p)
			}
		}
		return nil
	})
	return graph, err
}

// matches reports whether pkg is one of pats: a package, "dir/..." for a folder and what is
// under it, "..." for every package, or a prefix ending in "/".
func matches(pkg string, pats []string) bool {
	for _, p := range pats {
		switch {
		case p == "...":
			return true
		case strings.HasSuffix(p, "/..."):
			if base := strings.TrimSuffix(p, "/..."); pkg == base || strings.HasPrefix(pkg, base+"/") {
				return true
			}
		case strings.HasSuffix(p, "/"):
			if strings.HasPrefix(pkg, p) {
				return true
			}
		case pkg == p:
			return true
		}
	}
	return false
}

// violations lists every import of graph that breaks a rule, one line each, sorted.
func violations(graph map[string][]string, rules []rule) []string {
	var out []string
	for pkg, deps := range graph {
		for _, r := range rules {
			if !matches(pkg, r.From) || matches(pkg, r.Except) {
				continue
			}
			for _, d := range deps {
				if matches(d, r.Forbidden) {
					out = append(out, fmt.Sprintf("%s imports %s: %s (%s)", pkg, d, r.Name, r.Why))
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestImportRules: no package of the module breaks a rule of docs/architecture.md.
func TestImportRules(t *testing.T) {
	graph, err := imports(testmodels.RepoRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range append(slices.Clone(frontEnds), "internal/builder", "internal/service", "internal/worker", "internal/probe") {
		if _, ok := graph[pkg]; !ok {
			t.Errorf("no package %s: a rule names it (moved? then move the rule with it)", pkg)
		}
	}
	for _, v := range violations(graph, rules) {
		t.Error(v)
	}
}

// TestImportRulesCatchViolations plants one import against each rule in the module's real
// graph and checks that exactly it is reported, so that TestImportRules can fail.
func TestImportRulesCatchViolations(t *testing.T) {
	real, err := imports(testmodels.RepoRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	const machinery, draw, native = "front ends stay off the build's machinery", "the build and the service draw nothing", "native code lives in the child processes"
	const children, contract = "only the builder starts the children", "contracts stand on nothing above them"
	const below = "the build stands below its front ends"
	for _, tc := range []struct {
		from, to string
		rules    []string // that the import breaks, in the order reported
	}{
		{"internal/httpapi", "internal/worker", []string{machinery, children}},
		{"cmd/trtbuild", "internal/cgo", []string{machinery, native}},
		{"internal/service", "charm.land/lipgloss/v2", []string{draw}},
		{"internal/builder", "internal/tui", []string{draw, below}},
		{"internal/buildflags", "github.com/spf13/cobra", []string{below}},
		{"internal/report", "internal/service", []string{below}},
		{"internal/buildkey", "internal/cgo", []string{contract, native}},
		{"internal/matrix", "internal/probe", []string{children}},
		{"internal/buildkey", "internal/worker", []string{contract, children}},
		{"internal/progress", "internal/service", []string{contract}},
	} {
		graph := map[string][]string{}
		for k, v := range real {
			graph[k] = slices.Clone(v)
		}
		graph[tc.from] = append(graph[tc.from], tc.to)
		got := violations(graph, rules)
		var want []string
		for _, r := range tc.rules {
			want = append(want, tc.from+" imports "+tc.to+": "+r+" (")
		}
		ok := len(got) == len(want)
		for i := 0; ok && i < len(got); i++ {
			ok = strings.HasPrefix(got[i], want[i])
		}
		if !ok {
			t.Errorf("planted %s -> %s: reported %q, want lines starting %q", tc.from, tc.to, got, want)
		}
	}
}

// signalsOutsideTheCommand lists the non-test uses of os.Interrupt under root's internal/ in a
// package other than internal/exitcode (which maps the OS's signals to exit codes), one line
// each: a build is cancelled through its handle (builder.Handle), and only cmd/trtbuild turns
// the OS's signals into that.
func signalsOutsideTheCommand(root string) ([]string, error) {
	var out []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(filepath.Join(root, "internal"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if strings.HasPrefix(rel, "internal/exitcode/") || strings.Contains(rel, "/testdata/") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "Interrupt" {
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == "os" {
					out = append(out, fmt.Sprintf("%s:%d uses os.Interrupt", rel, fset.Position(sel.Pos()).Line))
				}
			}
			return true
		})
		return nil
	})
	return out, err
}

// TestNoFakeSignals: no package below cmd/trtbuild cancels a build by writing a signal it did
// not receive (the service once wrote os.Interrupt into a build's signal channel); the test
// fails on one planted in a copy of a real file.
func TestNoFakeSignals(t *testing.T) {
	root := testmodels.RepoRoot(t)
	found, err := signalsOutsideTheCommand(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Error(f)
	}
	planted := t.TempDir()
	if err := os.MkdirAll(filepath.Join(planted, "internal", "service"), 0o755); err != nil {
		t.Fatal(err)
	}
	src := "package service\n\nimport \"os\"\n\nfunc cancel(c chan os.Signal) { c <- os.Interrupt }\n"
	if err := os.WriteFile(filepath.Join(planted, "internal", "service", "run.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := signalsOutsideTheCommand(planted); err != nil || len(got) != 1 || got[0] != "internal/service/run.go:5 uses os.Interrupt" {
		t.Fatalf("a planted fake signal: %q, %v", got, err)
	}
}
