// trtb_platform.hpp: what the C++ side asks of the operating system, in one place, so that the
// rest of it (the simulated builder, the TensorRT shim, the loader) is the same on Linux and
// Windows. trtb_platform_unix.cpp implements it with POSIX calls (dlopen, write, fstat),
// trtb_platform_windows.cpp with Win32 (LoadLibraryExW, WriteFile, GetFileInformationByHandle);
// Go's build constraints pick one. The messages built from these facts stay with their callers.
//
// Files: a file the caller hands over in trtb.h (plan_fd, the timing cache's fd) is an int32_t:
// a file descriptor on Linux; on Windows the file's HANDLE as Go's (*os.File).Fd() gives it
// (kernel handles have 32 significant bits, so they survive the int32_t). Paths are UTF-8; the
// Windows side converts them to UTF-16, so folders with names outside the ANSI code page work.
//
// Errors: an error number is errno on Linux and GetLastError()'s code on Windows; error_text
// says it in one line (strerror; FormatMessageW as UTF-8, with the code).
#ifndef TRTB_PLATFORM_HPP
#define TRTB_PLATFORM_HPP

#include <cstdint>
#include <string>

namespace trtb {
namespace platform {

// error_text is the system's one-line text of error number err.
std::string error_text(int err);

// write_all writes n bytes at data to file, resuming after short writes (and EINTR). On
// failure it returns false with *err set to the error number.
bool write_all(int32_t file, const void* data, uint64_t n, int* err);

// FileFacts is what the options check needs to know of a file handed over for writing.
struct FileFacts {
    bool open = false;       // file is an open descriptor (a handle on Windows)
    bool writable = true;    // it was opened for writing
    bool regular = false;    // a regular file (a disk file on Windows)
    uint64_t size = 0;       // its size, for a regular file
};
FileFacts file_facts(int32_t file);

// InputFacts is what a builder checks of the model before it parses it.
struct InputFacts {
    bool is_dir = false;
    uint64_t size = 0;
};
// stat_input opens path for reading (no link is written through; nothing is read) and fills
// *out; false with *err set when it cannot be opened or examined.
bool stat_input(const std::string& path, InputFacts* out, int* err);

// Dynamic libraries. A library handle is opaque; nullptr is no library.
//
// open_library loads path: on Linux dlopen(RTLD_LOCAL, with RTLD_LAZY when lazy, else
// RTLD_NOW, and RTLD_NODELETE when pin); on Windows, where every import is bound at load, LoadLibraryExW, searching for a path with a folder the
// DLL's own folder first for its imports (LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR) and then the
// default folders (LOAD_LIBRARY_SEARCH_DEFAULT_DIRS: the application's folder, the folders
// added with add_library_dir, System32), and for a bare name only the default folders: never
// the working folder or PATH. pin keeps the library mapped for the life of the process even
// after close_library (GetModuleHandleExW's GET_MODULE_HANDLE_EX_FLAG_PIN on Windows). On
// failure it returns nullptr with the loader's one-line text in *error.
void* open_library(const std::string& path, bool lazy, bool pin, std::string* error);
// library_symbol returns the address of the exported function name, or nullptr.
void* library_symbol(void* lib, const char* name);
// library_file is the file the loader mapped for lib ("" when it cannot say), as UTF-8.
std::string library_file(void* lib);
void close_library(void* lib);

// add_library_dir makes the loader search dir (an absolute folder) for the DLLs loaded by bare
// name from now on, in this process, by TensorRT too: Windows only (AddDllDirectory, after
// SetDefaultDllDirectories(LOAD_LIBRARY_SEARCH_DEFAULT_DIRS) switched the process to the
// default folders: the application's folder, the added ones, System32; not the working folder,
// not PATH). On Linux it refuses: the parent sets LD_LIBRARY_PATH instead, which glibc reads
// only at start. false with the reason in *error.
bool add_library_dir(const std::string& dir, std::string* error);

}  // namespace platform
}  // namespace trtb

#endif  // TRTB_PLATFORM_HPP
