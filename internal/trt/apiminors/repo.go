package apiminors

import (
	"bytes"
	"fmt"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// HeaderFiles are the headers read at each tag, from include/ of the TensorRT repository: the
// ones that declare what the shim uses, their bases and their implementation classes.
var HeaderFiles = []string{
	"NvInferRuntimeBase.h", "NvInferRuntimeCommon.h", "NvInferRuntimePlugin.h", "NvInferLegacyDims.h",
	"NvInferRuntime.h", "NvInfer.h", "NvInferImpl.h", ParserHeader,
}

// ParserHeader is the ONNX parser's header. Before 10.14 the TensorRT repository's include/
// lacks it: it lived in onnx/onnx-tensorrt, at the commit of the parsers/onnx submodule.
const ParserHeader = "NvOnnxParser.h"

// Repo reads a git repository (bare or not) with the git command.
type Repo struct {
	Dir string
}

func (r Repo) git(args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-C", r.Dir}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s in %s: %v: %s", strings.Join(args, " "), r.Dir, err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// hasCommit reports whether the repository has rev.
func (r Repo) hasCommit(rev string) bool {
	_, err := r.git("cat-file", "-e", rev+"^{commit}")
	return err == nil
}

// file returns path at rev; ok is false when rev has no such file.
func (r Repo) file(rev, path string) (string, bool, error) {
	list, err := r.git("ls-tree", "--name-only", rev, "--", path)
	if err != nil {
		return "", false, err
	}
	if strings.TrimSpace(list) == "" {
		return "", false, nil
	}
	s, err := r.git("show", rev+":"+path)
	return s, err == nil, err
}

// submodule returns the commit a gitlink at path points to at rev; ok is false without one.
func (r Repo) submodule(rev, path string) (string, bool, error) {
	list, err := r.git("ls-tree", rev, "--", path)
	if err != nil {
		return "", false, err
	}
	f := strings.Fields(list)
	if len(f) < 3 || f[1] != "commit" {
		return "", false, nil
	}
	return f[2], true, nil
}

var tagVersion = regexp.MustCompile(`^v(\d+)\.(\d+)(?:\.(\d+))?$`)

// ReleaseTags lists the release tags of one major (v10.0.0, v10.16, ...) in the TensorRT
// repository, oldest first, with their versions; the headers are not read.
func ReleaseTags(trt Repo, major int) ([]Tag, error) {
	out, err := trt.git("tag", "--list", fmt.Sprintf("v%d.*", major))
	if err != nil {
		return nil, err
	}
	var tags []Tag
	for _, name := range strings.Fields(out) {
		m := tagVersion.FindStringSubmatch(name)
		if m == nil {
			continue
		}
		maj, _ := strconv.Atoi(m[1])
		minor, _ := strconv.Atoi(m[2])
		patch, _ := strconv.Atoi(m[3]) // "" for v10.16: patch 0
		if maj == major {
			tags = append(tags, Tag{Name: name, Major: maj, Minor: minor, Patch: patch})
		}
	}
	if len(tags) == 0 {
		return nil, fmt.Errorf("%s has no tag v%d.N; give a clone of github.com/NVIDIA/TensorRT with its tags", trt.Dir, major)
	}
	sort.Slice(tags, func(i, j int) bool {
		if tags[i].Minor != tags[j].Minor {
			return tags[i].Minor < tags[j].Minor
		}
		return tags[i].Patch < tags[j].Patch
	})
	return tags, nil
}

// ReadTag reads the headers of tag from the TensorRT repository, the ONNX parser's from
// onnx-tensorrt (a Repo with an empty Dir for none) where the tag's include/ lacks it. A file
// that cannot be found is listed in the tag's Missing.
func ReadTag(trt, onnx Repo, tag Tag) (Tag, error) {
	tag.Header = NewHeader()
	tag.Missing = nil
	for _, f := range HeaderFiles {
		src, ok, err := trt.file(tag.Name, "include/"+f)
		if err != nil {
			return tag, err
		}
		if !ok && f == ParserHeader && onnx.Dir != "" {
			commit, has, err := trt.submodule(tag.Name, "parsers/onnx")
			if err != nil {
				return tag, err
			}
			if has && onnx.hasCommit(commit) {
				if src, ok, err = onnx.file(commit, f); err != nil {
					return tag, err
				}
			}
		}
		if !ok {
			tag.Missing = append(tag.Missing, f)
			continue
		}
		if err := tag.Header.Add(f, src); err != nil {
			return tag, fmt.Errorf("%s: %w", tag.Name, err)
		}
	}
	return tag, nil
}
