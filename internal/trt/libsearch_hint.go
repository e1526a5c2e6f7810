package trt

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
)

// execStackFragment is the dynamic loader's refusal of a library whose PT_GNU_STACK asks for
// an executable stack: glibc 2.41 and newer no longer make the stack executable for dlopen.
const execStackFragment = "cannot enable executable stack as shared object requires"

// unableToLoad matches TensorRT's "Unable to load library: FILE" (libLoader.cpp), which
// createInferBuilder logs when it cannot dlopen a builder resource by its file name.
var unableToLoad = regexp.MustCompile(`Unable to load library: ([^\s:()]+)`)

// execStackFile matches the file the dynamic loader names before the refusal.
var execStackFile = regexp.MustCompile(`([^\s:()]+): ` + execStackFragment)

// LoadHint explains a failure to load one of TensorRT's own libraries at createInferBuilder
// (msg is the builder's error) for the TensorRT chosen at loc, in one line that names the file
// and the folder to add; "" when msg is no such failure. It looks at the folders (nothing is
// loaded) to say where the file is.
func LoadHint(msg string, loc Location) string {
	return loc.loadHint(msg, isFile)
}

func (l Location) loadHint(msg string, exists func(string) bool) string {
	if m := execStackFile.FindStringSubmatch(msg); m != nil || strings.Contains(msg, execStackFragment) {
		file := "the library it names"
		if m != nil {
			file = l.pathOf(m[1], exists)
		}
		return file + " asks for an executable stack, which glibc 2.41 and newer refuse to load: clear the flag with `patchelf --clear-execstack " +
			file + "` (patchelf 0.18 or newer) or `execstack -c " + file + "`, or start trtbuild with GLIBC_TUNABLES=glibc.rtld.execstack=2 " +
			"(where the C library has that setting; it lowers a protection), or use a TensorRT release whose libraries do not ask for it"
	}
	m := unableToLoad.FindStringSubmatch(msg)
	if m == nil {
		return ""
	}
	name := filepath.Base(m[1])
	where := l.Dir
	if where == "" {
		where = osNames.hint.system
	}
	if l.Dir != "" && exists(filepath.Join(l.Dir, name)) {
		return "TensorRT loads " + name + " by file name; it is in " + l.Dir + ", which trtbuild " + osNames.hint.added + ", so it is there but does not load: " +
			fmt.Sprintf(osNames.hint.inspect, filepath.Join(l.Dir, name))
	}
	for _, p := range l.Others {
		dir := filepath.Dir(p.Path)
		if exists(filepath.Join(dir, name)) {
			return "TensorRT loads " + name + " by file name and it is not in " + where + " but in " + dir + " (" + p.Where + "): point --tensorrt-lib at " + dir +
				osNames.hint.orAdd
		}
	}
	return "TensorRT loads " + name + " by file name and it is in none of " + where + " and the TensorRT installs trtbuild saw: it comes with " + LibInfer.String() +
		" of exactly that version; install the whole release (" + osNames.hint.release + "), then " + fmt.Sprintf(osNames.hint.then, name)
}

// pathOf returns the path of the file named (a bare name, as TensorRT opens it) in the chosen
// folder when it is there, else the name.
func (l Location) pathOf(name string, exists func(string) bool) string {
	if strings.ContainsAny(name, osNames.hint.separators) || l.Dir == "" {
		return name
	}
	if p := filepath.Join(l.Dir, name); exists(p) {
		return p
	}
	return name
}
