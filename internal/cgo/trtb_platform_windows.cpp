// trtb_platform_windows.cpp: trtb_platform.hpp with Win32 calls.

#include "trtb_platform.hpp"

#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>
#include <winternl.h>

#include <mutex>
#include <vector>

namespace trtb {
namespace platform {
namespace {

// wide converts UTF-8 to UTF-16; bytes that are not UTF-8 become U+FFFD (the path then names
// no file, and the open fails with Windows' own error).
std::wstring wide(const std::string& s) {
    if (s.empty()) {
        return std::wstring();
    }
    const int n = MultiByteToWideChar(CP_UTF8, 0, s.data(), static_cast<int>(s.size()), nullptr, 0);
    std::wstring out(static_cast<size_t>(n > 0 ? n : 0), L'\0');
    if (n > 0) {
        MultiByteToWideChar(CP_UTF8, 0, s.data(), static_cast<int>(s.size()), &out[0], n);
    }
    return out;
}

std::string narrow(const wchar_t* s, size_t len) {
    if (len == 0) {
        return std::string();
    }
    const int n = WideCharToMultiByte(CP_UTF8, 0, s, static_cast<int>(len), nullptr, 0, nullptr, nullptr);
    std::string out(static_cast<size_t>(n > 0 ? n : 0), '\0');
    if (n > 0) {
        WideCharToMultiByte(CP_UTF8, 0, s, static_cast<int>(len), &out[0], n, nullptr, nullptr);
    }
    return out;
}

HANDLE handle_of(int32_t file) {
    // Handles are sign-extended from their 32 significant bits, as Windows documents for
    // handles shared between 32- and 64-bit code.
    return reinterpret_cast<HANDLE>(static_cast<intptr_t>(file));
}

// is_path tells a path (with a folder) from a bare file name, which the loader looks up.
bool is_path(const std::string& s) {
    return s.find_first_of("\\/:") != std::string::npos;
}

}  // namespace

std::string error_text(int err) {
    wchar_t* buf = nullptr;
    const DWORD n = FormatMessageW(FORMAT_MESSAGE_ALLOCATE_BUFFER | FORMAT_MESSAGE_FROM_SYSTEM |
                                       FORMAT_MESSAGE_IGNORE_INSERTS | FORMAT_MESSAGE_MAX_WIDTH_MASK,
                                   nullptr, static_cast<DWORD>(err), MAKELANGID(LANG_NEUTRAL, SUBLANG_DEFAULT),
                                   reinterpret_cast<LPWSTR>(&buf), 0, nullptr);
    std::string text = buf != nullptr ? narrow(buf, n) : std::string();
    if (buf != nullptr) {
        LocalFree(buf);
    }
    // One line: FORMAT_MESSAGE_MAX_WIDTH_MASK leaves no line breaks, but may leave a space at
    // the end; the code follows, as Windows users look it up by number.
    while (!text.empty() && (text.back() == ' ' || text.back() == '\r' || text.back() == '\n')) {
        text.pop_back();
    }
    if (text.empty()) {
        text = "Windows error";
    }
    return text + " (error " + std::to_string(static_cast<unsigned long>(err)) + ")";
}

bool write_all(int32_t file, const void* data, uint64_t n, int* err) {
    const char* p = static_cast<const char*>(data);
    const HANDLE h = handle_of(file);
    while (n > 0) {
        const DWORD chunk = n > (uint64_t{1} << 30) ? (DWORD{1} << 30) : static_cast<DWORD>(n);
        DWORD w = 0;
        if (!WriteFile(h, p, chunk, &w, nullptr)) {
            *err = static_cast<int>(GetLastError());
            return false;
        }
        if (w == 0) {
            *err = ERROR_WRITE_FAULT;
            return false;
        }
        p += w;
        n -= w;
    }
    return true;
}

FileFacts file_facts(int32_t file) {
    FileFacts f;
    const HANDLE h = handle_of(file);
    if (file == -1 || file == 0) {
        return f;
    }
    SetLastError(ERROR_SUCCESS);
    const DWORD type = GetFileType(h);
    if (type == FILE_TYPE_UNKNOWN && GetLastError() != ERROR_SUCCESS) {
        return f;  // ERROR_INVALID_HANDLE: not an open handle
    }
    f.open = true;
    // The access the handle was opened with (NtQueryObject's ObjectBasicInformation): a handle
    // without FILE_WRITE_DATA cannot take the plan.
    PUBLIC_OBJECT_BASIC_INFORMATION info{};
    ULONG got = 0;
    if (NtQueryObject(h, ObjectBasicInformation, &info, sizeof(info), &got) >= 0) {
        f.writable = (info.GrantedAccess & (FILE_WRITE_DATA | GENERIC_WRITE | GENERIC_ALL)) != 0;
    }
    if (type == FILE_TYPE_DISK) {
        BY_HANDLE_FILE_INFORMATION st{};
        if (GetFileInformationByHandle(h, &st) && (st.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) == 0) {
            f.regular = true;
            f.size = (static_cast<uint64_t>(st.nFileSizeHigh) << 32) | st.nFileSizeLow;
        }
    }
    return f;
}

bool stat_input(const std::string& path, InputFacts* out, int* err) {
    // FILE_FLAG_BACKUP_SEMANTICS opens a folder too, so that a folder is told apart from a
    // missing file; no access right beyond reading attributes is asked, and others may go on
    // reading, writing and deleting it.
    const HANDLE h = CreateFileW(wide(path).c_str(), FILE_READ_ATTRIBUTES | GENERIC_READ,
                                 FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr, OPEN_EXISTING,
                                 FILE_FLAG_BACKUP_SEMANTICS, nullptr);
    if (h == INVALID_HANDLE_VALUE) {
        *err = static_cast<int>(GetLastError());
        return false;
    }
    BY_HANDLE_FILE_INFORMATION st{};
    const BOOL ok = GetFileInformationByHandle(h, &st);
    const DWORD e = GetLastError();
    CloseHandle(h);
    if (!ok) {
        *err = static_cast<int>(e);
        return false;
    }
    out->is_dir = (st.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) != 0;
    out->size = (static_cast<uint64_t>(st.nFileSizeHigh) << 32) | st.nFileSizeLow;
    return true;
}

void* open_library(const std::string& path, bool, bool pin, std::string* error) {
    const DWORD flags = is_path(path) ? (LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR | LOAD_LIBRARY_SEARCH_DEFAULT_DIRS)
                                      : LOAD_LIBRARY_SEARCH_DEFAULT_DIRS;
    // No dialog box for a DLL that does not load (a missing import, a bad image): the error
    // comes back to the caller instead.
    const UINT old_mode = SetErrorMode(SEM_FAILCRITICALERRORS | SEM_NOOPENFILEERRORBOX);
    HMODULE m = LoadLibraryExW(wide(path).c_str(), nullptr, flags);
    const DWORD e = GetLastError();
    SetErrorMode(old_mode);
    if (m == nullptr) {
        *error = path + ": " + error_text(static_cast<int>(e));
        // Windows says the same "module not found" for the file and for a DLL it imports; the
        // file being there tells them apart.
        if (e == ERROR_MOD_NOT_FOUND && is_path(path) && GetFileAttributesW(wide(path).c_str()) != INVALID_FILE_ATTRIBUTES) {
            *error += "; the file is there, so a DLL it imports is missing (dumpbin /dependents lists them)";
        }
        return nullptr;
    }
    if (pin) {
        HMODULE pinned = nullptr;
        GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_PIN,
                           reinterpret_cast<LPCWSTR>(m), &pinned);
    }
    return m;
}

void* library_symbol(void* lib, const char* name) {
    return reinterpret_cast<void*>(GetProcAddress(static_cast<HMODULE>(lib), name));
}

std::string library_file(void* lib) {
    std::vector<wchar_t> buf(1024);
    for (;;) {
        const DWORD n = GetModuleFileNameW(static_cast<HMODULE>(lib), buf.data(), static_cast<DWORD>(buf.size()));
        if (n == 0) {
            return "";
        }
        if (n < buf.size()) {
            return narrow(buf.data(), n);
        }
        if (buf.size() >= 32768) {
            return "";
        }
        buf.resize(buf.size() * 2);
    }
}

void close_library(void* lib) {
    if (lib != nullptr) {
        FreeLibrary(static_cast<HMODULE>(lib));
    }
}

bool add_library_dir(const std::string& dir, std::string* error) {
    static std::once_flag once;
    static DWORD default_error = ERROR_SUCCESS;
    std::call_once(once, [] {
        if (!SetDefaultDllDirectories(LOAD_LIBRARY_SEARCH_DEFAULT_DIRS)) {
            default_error = GetLastError();
        }
    });
    if (default_error != ERROR_SUCCESS) {
        *error = "SetDefaultDllDirectories: " + error_text(static_cast<int>(default_error));
        return false;
    }
    if (AddDllDirectory(wide(dir).c_str()) == nullptr) {
        *error = "AddDllDirectory " + dir + ": " + error_text(static_cast<int>(GetLastError()));
        return false;
    }
    return true;
}

}  // namespace platform
}  // namespace trtb
