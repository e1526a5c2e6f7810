//go:build windows

package filestamp

import (
	"os"
	"unsafe"

	"golang.org/x/sys/windows"
)

func of(f *os.File) (Stamp, error) {
	h := windows.Handle(f.Fd())
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &info); err != nil {
		return Stamp{}, err
	}
	var basic fileBasicInfo
	if err := windows.GetFileInformationByHandleEx(h, windows.FileBasicInfo, (*byte)(unsafe.Pointer(&basic)), uint32(unsafe.Sizeof(basic))); err != nil {
		return Stamp{}, err
	}
	return Stamp{Dev: uint64(info.VolumeSerialNumber), Ino: uint64(info.FileIndexHigh)<<32 | uint64(info.FileIndexLow),
		Size: int64(info.FileSizeHigh)<<32 | int64(info.FileSizeLow), ModTime: basic.LastWriteTime, ChangeTime: basic.ChangeTime}, nil
}

// fileBasicInfo is FILE_BASIC_INFO: times in 100 ns since 1601.
type fileBasicInfo struct {
	CreationTime, LastAccessTime, LastWriteTime, ChangeTime int64
	FileAttributes                                          uint32
	_                                                       uint32
}
