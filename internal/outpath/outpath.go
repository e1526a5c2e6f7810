// Package outpath decides what writing a file to a path given on the command line does, and
// does it without ever losing data.
//
// The rules, the same for every output trtbuild writes (the engine, --report, --trace,
// --timing-cache, convert -o):
//
//   - A path that does not exist, or is a regular file, is replaced atomically: the new
//     content goes to a file in the target's own folder that has no name while it is written
//     (O_TMPFILE; where the file system lacks it, a private 0600 file named
//     .NAME.trtbuild-*.tmp), and is renamed over the target only when it is complete. A crash
//     or a kill at any moment leaves the old file as it was and, with O_TMPFILE, nothing else.
//     The new file gets the old file's permissions, or 0644 less the umask.
//   - A symbolic link is followed: the file it points to is replaced, in that file's folder,
//     and the link stays a link. A dangling link creates the file it names.
//   - A character device (/dev/null, a terminal) is written through, never replaced, and only
//     with complete content: -o /dev/null still answers "does it build".
//   - A FIFO, a socket, a block device or a folder is refused; the caller says so before any
//     work starts (Check, Target.Refusal). Only a progress stream (--trace) may go to a FIFO.
//   - A file trtbuild names on its own (the manifest beside an engine, a matrix index, an
//     emitted script, entries of a cache) follows no link: InspectOwn does not resolve the last
//     component, and a link, FIFO, device or folder there is refused (Own). Only the paths the
//     user named follow links.
//   - The target's folder is opened when the output is created, and the file is named and
//     renamed inside that open folder: a folder replaced by a link while a build runs does not
//     redirect the output.
//   - Two outputs, or an output and an input, that are the same file after links (symbolic
//     or hard) are resolved are refused (Conflicts).
//
// On Windows the same promises hold, by Windows's means (pending_windows.go says each):
//
//   - The temporary file is always named, .NAME.trtbuild-*.tmp in the target's folder, with
//     the hidden and temporary attributes, created CREATE_NEW relative to the held folder and
//     opened with no sharing, so no other process can open it while its writer lives; it is
//     renamed over the target through its own handle only when complete and flushed. A writer
//     that died leaves it; the next output to the same target removes it.
//   - The folder is held open without FILE_SHARE_DELETE from Create to the commit: it cannot
//     be renamed or replaced meanwhile, and it is checked to be the folder Inspect saw.
//   - Links are symbolic links and junctions (reparse points). A user's path follows them; a
//     file trtbuild names on its own, and a folder MkdirOwn makes, is opened as itself and a
//     reparse point there refused.
//   - NUL (any case, or \\.\NUL) is the character device: -o NUL builds and keeps nothing.
//     A named pipe \\.\pipe\NAME is the FIFO: only a stream may go to it, written through.
//     Other names Windows maps to devices (CON, PRN, AUX, COM1-9, LPT1-9, also with an
//     extension: con.engine, aux.onnx), names that end with a dot or a space, and names with a
//     character Windows forbids or a ':' (an alternate data stream) are refused in every
//     component of every path checked (WindowsNameProblem, the one rule for that).
//   - Permissions are the ACL the folder passes on to new files; there is no umask and no
//     sticky bit. Only the read-only attribute is kept in mind: a read-only target is refused,
//     as a rename cannot replace it.
//   - Windows does not replace a file that is open: a commit waits a few seconds for a target
//     another program holds open (another build's commit, a reader), then fails, never
//     leaving a partial file.
package outpath

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/trtbuild/trtbuild/internal/pathtext"
)

// Kind is what a path names.
type Kind int

// The kinds of file an output path can name.
const (
	Missing Kind = iota
	Regular
	CharDevice
	FIFO
	Socket
	BlockDevice
	Dir
	Symlink   // only from InspectOwn, which does not follow the last component
	Irregular // anything else
)

func (k Kind) String() string {
	switch k {
	case Missing:
		return "a new file"
	case Regular:
		return "a regular file"
	case CharDevice:
		return "a character device"
	case FIFO:
		return "a named pipe (FIFO)"
	case Socket:
		return "a socket"
	case BlockDevice:
		return "a block device"
	case Dir:
		return "a folder"
	case Symlink:
		return "a symbolic link"
	}
	return "not a regular file"
}

// KindOf classifies a file mode.
func KindOf(m fs.FileMode) Kind {
	switch {
	case m.IsRegular():
		return Regular
	case m.IsDir():
		return Dir
	case m&fs.ModeSymlink != 0:
		return Symlink
	case m&fs.ModeNamedPipe != 0:
		return FIFO
	case m&fs.ModeSocket != 0:
		return Socket
	case m&fs.ModeDevice != 0 && m&fs.ModeCharDevice != 0:
		return CharDevice
	case m&fs.ModeDevice != 0:
		return BlockDevice
	}
	return Irregular
}

// Target is an output path as trtbuild will write it.
type Target struct {
	Path  string      // as given
	Final string      // the file written: Path with every symbolic link resolved
	Kind  Kind        // what Final is now
	Info  fs.FileInfo // Final's, nil when Missing
	Link  bool        // Path is a symbolic link
	// dirInfo is the folder as it was inspected, which Create checks is still the folder it
	// opens.
	dirInfo fs.FileInfo
}

// maxLinks bounds the symbolic links followed, as the kernel's ELOOP does.
const maxLinks = 40

// Inspect resolves path's symbolic links (also a dangling last one) and says what is there.
// It fails when the folder the file would go in does not exist.
func Inspect(path string) (Target, error) {
	if t, ok, err := inspectSpecial(path); ok {
		return t, err
	}
	t := Target{Path: path}
	cur := path
	for i := 0; ; i++ {
		st, err := os.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) {
			break
		}
		if err != nil {
			return t, err
		}
		if st.Mode()&fs.ModeSymlink == 0 {
			break
		}
		if i == maxLinks {
			return t, fmt.Errorf("%s: too many levels of symbolic links", pathtext.Q(path))
		}
		dest, err := os.Readlink(cur)
		if err != nil {
			return t, err
		}
		if !filepath.IsAbs(dest) {
			dest = filepath.Join(filepath.Dir(cur), dest)
		}
		t.Link = true
		if _, err := os.Lstat(dest); err != nil {
			if st, serr := os.Stat(cur); serr == nil {
				// A link only the kernel can follow: /proc/self/fd/N names "pipe:[123]"
				// (/dev/stdout, a shell's >(...)). What it opens is the file.
				t.Final, t.Kind, t.Info = cur, KindOf(st.Mode()), st
				return t, nil
			}
		}
		cur = dest
	}
	// The folder's own links are resolved too, so that two spellings of one file compare
	// equal and the temporary file lands where the rename can reach.
	err := t.place(filepath.Dir(cur), filepath.Base(cur))
	return t, err
}

// place resolves the folder parent (its links followed) and fills in t's Final, the folder's
// info, and the Kind and Info of the name base in it, without following a link there.
func (t *Target) place(parent, base string) error {
	dir, err := filepath.EvalSymlinks(parent)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("the folder %s does not exist; create it first", pathtext.Q(parent))
		}
		return err
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	st, err := statFolder(dir)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is not a folder", pathtext.Q(parent))
	}
	t.dirInfo = st
	t.Final = filepath.Join(dir, base)
	fi, err := os.Lstat(t.Final)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		t.Kind = Missing
	case err != nil:
		return err
	default:
		t.Kind, t.Info = KindOf(fi.Mode()), fi
	}
	return nil
}

// InspectOwn is Inspect for a file trtbuild names on its own: the folder's links are resolved,
// the last component is not. A link there has Kind Symlink (and Link set), which Refusal(Own)
// refuses.
func InspectOwn(path string) (Target, error) {
	if t, ok, err := inspectSpecial(path); ok {
		return t, err
	}
	t := Target{Path: path}
	if err := t.place(filepath.Dir(path), filepath.Base(path)); err != nil {
		return t, err
	}
	t.Link = t.Kind == Symlink
	return t, nil
}

// Use says what an output may be.
type Use int

const (
	// WholeFile is an output written whole at the end (engine, report, converted model): a new or
	// regular file is replaced atomically, a character device written through.
	WholeFile Use = iota
	// LiveStream is an output written while the build runs (--trace): as WholeFile, and a FIFO is
	// written through too.
	LiveStream
	// Store is a file trtbuild reads back and rewrites (the timing cache): only a new or
	// regular file, and never through a symbolic link, which another user may have planted in
	// a shared folder.
	Store
	// Own is a file trtbuild names on its own (from InspectOwn): only a new or regular file,
	// never through a link.
	Own
)

// Refusal returns why t cannot be written as use, or "" when it can. The text completes a
// sentence that starts with the path: "... is a FIFO (named pipe); ...".
func (t Target) Refusal(use Use) string {
	if why := t.platformRefusal(); why != "" {
		return why
	}
	if use == Own {
		switch t.Kind {
		case Missing, Regular:
			return ""
		case Symlink:
			return "is a symbolic link; trtbuild does not follow links for files it names itself (another user may have planted it): remove it"
		case Dir:
			return "is a folder; trtbuild will not replace it: move it away"
		}
		return fmt.Sprintf("is %s; trtbuild writes files it names itself only as regular files: remove it", t.Kind)
	}
	if use == Store && t.Link {
		return fmt.Sprintf("is a symbolic link (to %s); trtbuild does not follow links for the timing cache, give the file itself", pathtext.Q(t.Final))
	}
	switch {
	case t.Kind == Missing || t.Kind == Regular:
		return ""
	case t.Kind == Dir:
		return "is a folder; give a file name inside it"
	case use == Store:
		return fmt.Sprintf("is %s, not a cache file; give a regular file, or use --no-timing-cache", t.Kind)
	}
	switch t.Kind {
	case CharDevice:
		return ""
	case FIFO:
		if use == LiveStream {
			return ""
		}
		return "is a FIFO (named pipe); trtbuild writes this output only to a regular file or a character device such as " + discardDevice + ", choose a file path"
	}
	return fmt.Sprintf("is %s; trtbuild writes only to regular files or a character device such as "+discardDevice+", choose a file path", t.Kind)
}
