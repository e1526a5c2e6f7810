package winetest

import "golang.org/x/sys/windows"

// Wine reports whether the program runs under Wine: ntdll.dll exports wine_get_version there
// and nowhere else.
func Wine() bool {
	ntdll := windows.NewLazySystemDLL("ntdll.dll")
	return ntdll.NewProc("wine_get_version").Find() == nil
}
