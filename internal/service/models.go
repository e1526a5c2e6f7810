package service

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/trtbuild/trtbuild/internal/pathtext"
)

// modelRoot is the folder a service's models come from, open as an os.Root: a name is looked up
// inside it, never above it (no "..", no absolute path) and never through a link that leads out.
type modelRoot struct {
	root *os.Root
	dir  string // the folder, absolute, links resolved
}

func openModelRoot(dir string) (*modelRoot, error) {
	abs, err := filepath.Abs(dir)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return nil, fmt.Errorf("model root %s: %w", pathtext.Q(dir), err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("model root %s: %w", pathtext.Q(dir), err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("model root %s is not a folder; give the folder the models are in", pathtext.Q(dir))
	}
	r, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("model root %s: %w", pathtext.Q(dir), err)
	}
	return &modelRoot{root: r, dir: abs}, nil
}

// resolve is the path of the model a request names, relative to the root: the file, found
// inside the root, as a path below the root's folder that the builder opens (with the folder's
// external data beside it). Errors are RequestErrors that say what to give instead.
func (r *modelRoot) resolve(name string) (string, error) {
	real, _, err := r.lookup(name)
	return real, err
}

// lookup is resolve, with the file it found: a build checks again, before it starts, that
// the name still leads to that file (see Manager.modelChanged).
func (r *modelRoot) lookup(name string) (string, os.FileInfo, error) {
	shown := pathtext.Q(name)
	switch {
	case name == "":
		return "", nil, badRequest("no model given", "name an ONNX file relative to the model root, as \"model\": \"resnet/model.onnx\"")
	case strings.ContainsRune(name, 0) || strings.ContainsAny(name, "\\"):
		return "", nil, badRequest(fmt.Sprintf("model %s has a NUL or a backslash in its name", shown), "name it with forward slashes, relative to the model root")
	case filepath.IsAbs(name):
		return "", nil, badRequest(fmt.Sprintf("model %s is an absolute path", shown), "name it relative to the model root")
	case !filepath.IsLocal(name):
		return "", nil, badRequest(fmt.Sprintf("model %s leads out of the model root", shown), "name a file inside the model root, without \"..\"")
	}
	fi, err := r.root.Stat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil, &RequestError{Status: http.StatusNotFound, Problem: fmt.Sprintf("no model %s in the model root", shown), Hint: "check the name; it is relative to the model root the server was started with"}
	}
	if err != nil {
		return "", nil, badRequest(fmt.Sprintf("model %s cannot be opened inside the model root (%s)", shown, pathtext.Line(errText(err))), "a link that leads out of the model root is refused; name the file itself")
	}
	if !fi.Mode().IsRegular() {
		return "", nil, badRequest(fmt.Sprintf("model %s is not a regular file (%s)", shown, kindOf(fi.Mode())), "name the .onnx file")
	}
	// The builder opens the model by path: give it the file's own path inside the root, links
	// resolved, and check that it is the file the root found.
	real, err := filepath.EvalSymlinks(filepath.Join(r.dir, filepath.FromSlash(name)))
	if err != nil {
		return "", nil, badRequest(fmt.Sprintf("model %s: %s", shown, pathtext.Line(errText(err))), "name the file itself")
	}
	if rel, err := filepath.Rel(r.dir, real); err != nil || !filepath.IsLocal(rel) {
		return "", nil, badRequest(fmt.Sprintf("model %s is a link out of the model root", shown), "name a file inside the model root")
	}
	again, err := os.Stat(real)
	if err != nil || !os.SameFile(fi, again) {
		return "", nil, badRequest(fmt.Sprintf("model %s changed while it was looked up", shown), "submit the build again")
	}
	return real, fi, nil
}

// errText is an error's message without the path the os package puts in front of it.
func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// kindOf names a file mode that is not a regular file.
func kindOf(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a file"
}
