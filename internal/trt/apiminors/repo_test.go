package apiminors

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// gitRepo makes a git repository in dir and returns a function that runs git in it.
func gitRepo(t *testing.T, dir string) func(args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git here")
	}
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false"}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	run("init", "-q")
	return run
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestReadTags reads a repository laid out as NVIDIA/TensorRT's: release tags of two majors
// (and one that is no release), the ONNX parser's header in include/ only in the newer
// release, and before it a parsers/onnx submodule pointing into onnx-tensorrt.
func TestReadTags(t *testing.T) {
	root := t.TempDir()
	onnxDir, trtDir := filepath.Join(root, "onnx-tensorrt"), filepath.Join(root, "TensorRT")

	onnxGit := gitRepo(t, onnxDir)
	write(t, filepath.Join(onnxDir, ParserHeader), "namespace nvonnxparser { class IParser { public: virtual bool parse(char const* path) noexcept = 0; }; }\n")
	onnxGit("add", ".")
	onnxGit("commit", "-q", "-m", "parser")
	parserCommit := onnxGit("rev-parse", "HEAD")

	trtGit := gitRepo(t, trtDir)
	write(t, filepath.Join(trtDir, "include", "NvInfer.h"), "namespace nvinfer1 { class IWidget { public: virtual ~IWidget() noexcept = default; }; }\n")
	trtGit("add", ".")
	trtGit("update-index", "--add", "--cacheinfo", "160000,"+parserCommit+",parsers/onnx")
	trtGit("commit", "-q", "-m", "1.0")
	trtGit("tag", "v1.0.0")
	write(t, filepath.Join(trtDir, "include", ParserHeader), "namespace nvonnxparser { class IParser { public: virtual bool parse(char const* path) noexcept = 0; virtual int getNbErrors() const noexcept = 0; }; }\n")
	trtGit("add", ".")
	trtGit("commit", "-q", "-m", "1.1")
	for _, tag := range []string{"v1.1", "v1.2-rc1", "v2.0.0", "20.01"} {
		trtGit("tag", tag)
	}

	trt, onnx := Repo{Dir: trtDir}, Repo{Dir: onnxDir}
	tags, err := ReleaseTags(trt, 1)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tag := range tags {
		names = append(names, tag.Name)
	}
	if !reflect.DeepEqual(names, []string{"v1.0.0", "v1.1"}) || tags[1].Minor != 1 || tags[1].Patch != 0 {
		t.Fatalf("ReleaseTags = %+v, want v1.0.0 and v1.1 (1.1.0)", tags)
	}
	if _, err := ReleaseTags(trt, 3); err == nil || !strings.Contains(err.Error(), "no tag v3.N") {
		t.Errorf("ReleaseTags of a major without tags = %v, want an error saying so", err)
	}

	old, err := ReadTag(trt, onnx, tags[0])
	if err != nil {
		t.Fatal(err)
	}
	if old.Header.Classes["nvonnxparser::IParser"] == nil {
		t.Error("v1.0.0's IParser was not read from onnx-tensorrt at the submodule's commit")
	}
	if old.Header.Classes["nvinfer1::IWidget"] == nil {
		t.Error("v1.0.0's NvInfer.h was not read")
	}
	for _, f := range old.Missing {
		if f == ParserHeader || f == "NvInfer.h" {
			t.Errorf("v1.0.0 lists %s as missing: %v", f, old.Missing)
		}
	}
	if len(old.Missing) != len(HeaderFiles)-2 {
		t.Errorf("v1.0.0 misses %v, want every header but NvInfer.h and the parser's", old.Missing)
	}

	alone, err := ReadTag(trt, Repo{}, tags[0])
	if err != nil {
		t.Fatal(err)
	}
	if alone.Header.Classes["nvonnxparser::IParser"] != nil || !strings.Contains(strings.Join(alone.Missing, " "), ParserHeader) {
		t.Errorf("without onnx-tensorrt, v1.0.0's parser header should be missing: %v", alone.Missing)
	}

	newer, err := ReadTag(trt, onnx, tags[1])
	if err != nil {
		t.Fatal(err)
	}
	if c := newer.Header.Classes["nvonnxparser::IParser"]; c == nil || len(c.Members) != 2 {
		t.Errorf("v1.1's IParser is %+v, want the two methods of include/%s", c, ParserHeader)
	}
}
