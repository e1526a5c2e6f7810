package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/trtbuild/trtbuild/internal/outpath"
)

// Format is a report's file format.
type Format string

// Formats, chosen by the file's extension.
const (
	FormatJSON Format = "json"
	FormatHTML Format = "html"
)

// FormatOf returns the format for a file name: .json is JSON, .html and .htm are HTML.
func FormatOf(path string) (Format, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".json":
		return FormatJSON, nil
	case ".html", ".htm":
		return FormatHTML, nil
	}
	return "", fmt.Errorf("cannot tell the report format of %q: name the file .json or .html", path)
}

// WriteJSON writes the report as indented JSON.
func WriteJSON(w io.Writer, r *Report) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("encoding the JSON report: %w", err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// Write writes the report in format f.
func Write(w io.Writer, f Format, r *Report) error {
	if f == FormatHTML {
		return WriteHTML(w, r)
	}
	return WriteJSON(w, r)
}

// WriteFile writes the report to path in the format its extension names, atomically: the file
// appears whole or not at all.
func WriteFile(path string, r *Report) error {
	f, err := FormatOf(path)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := Write(&buf, f, r); err != nil {
		return err
	}
	if err := outpath.WriteFile(path, buf.Bytes()); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	return nil
}
