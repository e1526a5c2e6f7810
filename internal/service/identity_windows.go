package service

import "os"

// fileID is a file's identity on its system. Windows' FileInfo has none without opening the
// file: every file is counted.
type fileID struct{}

// identity is false on Windows: a directory listing does not give a file's index.
func identity(os.FileInfo) (fileID, bool) { return fileID{}, false }
