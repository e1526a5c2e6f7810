package service

import "golang.org/x/sys/windows"

// diskSpace is GetDiskFreeSpaceEx of dir: the bytes free for this user (its quota counted), and
// the volume's size.
func diskSpace(dir string) (free, total uint64, err error) {
	p, err := windows.UTF16PtrFromString(dir)
	if err != nil {
		return 0, 0, err
	}
	var totalFree uint64
	if err := windows.GetDiskFreeSpaceEx(p, &free, &total, &totalFree); err != nil {
		return 0, 0, err
	}
	return free, total, nil
}
