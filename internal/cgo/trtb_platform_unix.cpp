//go:build !windows

// trtb_platform_unix.cpp: trtb_platform.hpp with POSIX calls (Linux).

#include "trtb_platform.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace trtb {
namespace platform {

std::string error_text(int err) { return std::strerror(err); }

bool write_all(int32_t file, const void* data, uint64_t n, int* err) {
    const char* p = static_cast<const char*>(data);
    while (n > 0) {
        const size_t chunk = n > (uint64_t{1} << 30) ? (size_t{1} << 30) : static_cast<size_t>(n);
        const ssize_t w = ::write(file, p, chunk);
        if (w < 0) {
            if (errno == EINTR) {
                continue;
            }
            *err = errno;
            return false;
        }
        if (w == 0) {
            *err = EIO;
            return false;
        }
        p += w;
        n -= static_cast<uint64_t>(w);
    }
    return true;
}

FileFacts file_facts(int32_t file) {
    FileFacts f;
    const int fl = file < 0 ? -1 : ::fcntl(file, F_GETFL);
    if (fl < 0) {
        return f;
    }
    f.open = true;
    f.writable = (fl & O_ACCMODE) != O_RDONLY;
    struct stat st {};
    if (::fstat(file, &st) == 0 && S_ISREG(st.st_mode)) {
        f.regular = true;
        f.size = static_cast<uint64_t>(st.st_size);
    }
    return f;
}

bool stat_input(const std::string& path, InputFacts* out, int* err) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        *err = errno;
        return false;
    }
    struct stat st {};
    const int rc = ::fstat(fd, &st);
    const int e = errno;
    ::close(fd);
    if (rc != 0) {
        *err = e;
        return false;
    }
    out->is_dir = S_ISDIR(st.st_mode);
    out->size = static_cast<uint64_t>(st.st_size);
    return true;
}

void* open_library(const std::string& path, bool lazy, bool pin, std::string* error) {
    dlerror();
    // RTLD_NOW (the loader's libraries): a library with an unresolvable symbol fails here, with
    // dlerror naming it, not in the middle of a build. RTLD_LOCAL: TensorRT's symbols stay out of the global scope;
    // libnvonnxparser and plugin libraries still bind to this libnvinfer, because the dynamic
    // loader matches their DT_NEEDED libnvinfer.so.<major> to the loaded library's SONAME.
    void* handle = dlopen(path.c_str(), (lazy ? RTLD_LAZY : RTLD_NOW) | RTLD_LOCAL | (pin ? RTLD_NODELETE : 0));
    if (handle == nullptr) {
        const char* e = dlerror();
        *error = e != nullptr ? e : "dlopen failed";
    }
    return handle;
}

void* library_symbol(void* lib, const char* name) {
    dlerror();
    return dlsym(lib, name);
}

std::string library_file(void* lib) {
    struct link_map* map = nullptr;
    if (dlinfo(lib, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr) {
        return map->l_name;
    }
    return "";
}

void close_library(void* lib) {
    if (lib != nullptr) {
        dlclose(lib);
    }
}

bool add_library_dir(const std::string&, std::string* error) {
    *error = "adding a library folder is Windows' way; on Linux the worker starts with LD_LIBRARY_PATH";
    return false;
}

}  // namespace platform
}  // namespace trtb
