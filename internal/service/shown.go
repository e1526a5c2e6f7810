package service

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// shownPaths turns the server's own paths, in everything a client is shown, into the names
// clients know: a model as it was named (relative to the model root), a build's files
// relative to the state dir (builds/ID/model.engine), the engine cache as "the server's
// engine cache". A builder's message may hold a path anywhere (an event's fields, a log line,
// an error), so the paths are rewritten where the lines leave for clients (the build's event
// log, its report, the MCP tools' results), after everything that wrote them. nil (with
// Config.ExposePaths, or for a local Manager whose paths are its caller's) shows them as
// they are.
type shownPaths struct{ r *strings.Replacer }

// shownFor is what a client of a build whose private folder for its model's copy is
// modelCopy ("" for none) is shown in place of the server's paths.
func (m *Manager) shownFor(modelCopy string) *shownPaths {
	if m.models == nil || m.cfg.ExposePaths {
		return nil
	}
	sep := string(filepath.Separator)
	var pairs []string
	add := func(from, to string) {
		if from == "" {
			return
		}
		// As written in text, and inside a JSON string.
		pairs = append(pairs, from, to)
		if q, err := json.Marshal(from); err == nil {
			if esc := string(q[1 : len(q)-1]); esc != from {
				pairs = append(pairs, esc, to)
			}
		}
	}
	// The most particular first: strings.Replacer tries its pairs in order at each place.
	if modelCopy != "" {
		add(modelCopy+sep, "")
	}
	if c := m.cfg.EngineCache.Dir; c != "" && c != "auto" {
		if abs, err := filepath.Abs(c); err == nil {
			add(abs+sep, "the server's engine cache"+sep)
			add(abs, "the server's engine cache")
		}
	}
	add(m.cfg.StateDir+sep, "")
	add(m.cfg.StateDir, "the server's state dir")
	add(m.models.dir+sep, "")
	add(m.models.dir, "the model root")
	return &shownPaths{r: strings.NewReplacer(pairs...)}
}

// line is b with the server's paths as the client is shown them.
func (s *shownPaths) line(b []byte) []byte {
	if s == nil {
		return b
	}
	return []byte(s.r.Replace(string(b)))
}

// text is line for a string.
func (s *shownPaths) text(t string) string {
	if s == nil {
		return t
	}
	return s.r.Replace(t)
}

// rewriteFile rewrites the server's paths in the file path (a build's report), which only
// this server writes.
func (s *shownPaths) rewriteFile(path string, write func(path string, data []byte) error) error {
	if s == nil {
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	shown := s.line(data)
	if string(shown) == string(data) {
		return nil
	}
	return write(path, shown)
}

// shownError is err, a refusal of a request whose model's copy is in the folder modelCopy ("":
// none yet), as the client is shown it: a *RequestError's problem and hint with the server's
// paths rewritten (shownText), whichever layer wrote them (the os package names the model
// root's path in its errors, the model's reader its copy's). Other errors are left as they are.
func (m *Manager) shownError(err error, modelCopy string) error {
	var re *RequestError
	if !errors.As(err, &re) {
		return err
	}
	return &RequestError{Kind: re.Kind, Problem: m.shownText(re.Problem, modelCopy), Hint: m.shownText(re.Hint, modelCopy)}
}

// toolCopy is a tool's copy of a model as shown once the state dir is left out: OpenModel's
// folder, which clients are shown as nothing, so the model has the name they gave it.
var toolCopy = regexp.MustCompile(regexp.QuoteMeta(toolModels) + `[/\\]+model-[0-9]+[/\\]+`)

// Shown is text (a tool's result or error) with the server's paths as clients are shown them
// (see shownPaths): the model a tool read by the name the client gave, the state dir's files
// relative to it. A local Manager, or one with Config.ExposePaths, shows text as it is.
func (m *Manager) Shown(text string) string { return m.shownText(text, "") }

// shownText is Shown for a request whose model's copy is in the folder modelCopy ("": none).
func (m *Manager) shownText(text, modelCopy string) string {
	s := m.shownFor(modelCopy)
	if s == nil {
		return text
	}
	return toolCopy.ReplaceAllLiteralString(s.text(text), "")
}
