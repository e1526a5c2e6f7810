package service

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/trtbuild/trtbuild/internal/onnx"
	"github.com/trtbuild/trtbuild/internal/outpath"
	"github.com/trtbuild/trtbuild/internal/pathtext"
	"github.com/trtbuild/trtbuild/internal/regfile"
)

// modelRoot is the folder a service's models come from, open as an os.Root: a name is looked up
// inside it, never above it (no "..", no absolute path), never through a link that leads out,
// and never through a link at the model's own name.
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

// checkName refuses a model name that is not a plain relative path: it is looked up inside
// the root, never above it.
func checkName(name string) error {
	shown := pathtext.Q(name)
	switch {
	case name == "":
		return badRequest("no model given", "name an ONNX file relative to the model root, as \"model\": \"resnet/model.onnx\"")
	case strings.ContainsRune(name, 0) || strings.ContainsAny(name, "\\"):
		return badRequest(fmt.Sprintf("model %s has a NUL or a backslash in its name", shown), "name it with forward slashes, relative to the model root")
	case filepath.IsAbs(name) || strings.HasPrefix(name, "/"):
		return badRequest(fmt.Sprintf("model %s is an absolute path", shown), "name it relative to the model root")
	case !filepath.IsLocal(name):
		return badRequest(fmt.Sprintf("model %s leads out of the model root", shown), "name a file inside the model root, without \"..\"")
	}
	return nil
}

// open opens the model a request names, once, inside the root (onnx.OpenSourceIn): no part of
// the name leads out of the root and its last part is no link. Everything the service reads
// of the model is read from what open holds. Errors are RequestErrors that say what to give
// instead.
func (r *modelRoot) open(name string) (*onnx.Source, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	shown := pathtext.Q(name)
	src, err := onnx.OpenSourceIn(r.root, "", name)
	var nr *regfile.NotRegularError
	switch {
	case err == nil:
		return src, nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, &RequestError{Kind: KindNotFound, Problem: fmt.Sprintf("no model %s in the model root", shown), Hint: "check the name; it is relative to the model root the server was started with"}
	case errors.Is(err, onnx.ErrLinkedModel):
		return nil, badRequest(fmt.Sprintf("model %s is a symbolic link", shown), "name the file itself; links in the model root are not followed at the model's name")
	case errors.As(err, &nr):
		return nil, badRequest(fmt.Sprintf("model %s is %s, not a regular file", shown, nr.Kind), "name the .onnx file")
	}
	return nil, badRequest(fmt.Sprintf("model %s cannot be opened inside the model root (%s)", shown, pathtext.Line(errText(err))), "a link that leads out of the model root is refused; name the file itself")
}

// copyModel copies the model src holds, with its external data, into dir, a private folder
// of the state dir that no one else can write, at the model's name (dir/NAME), and returns
// the copy's path. The builder, its worker and TensorRT read the copy by its path: nothing
// done in the model root after open (a link planted at the name, a file renamed over it, the
// folder swapped) reaches what is built, and the key is hashed from the bytes built.
func copyModel(src *onnx.Source, name, dir string) (string, error) {
	if sub := filepath.Dir(filepath.FromSlash(name)); sub != "." {
		if err := outpath.MkdirOwn(dir, sub); err != nil {
			return "", err
		}
		dir = filepath.Join(dir, sub)
	}
	return src.CopyTo(dir)
}

// errText is an error's message without the path the os package puts in front of it.
func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
