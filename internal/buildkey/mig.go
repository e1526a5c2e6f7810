package buildkey

import (
	"regexp"
	"strings"
)

// migProfileRE is a MIG profile as CUDA and NVML write it in a slice's device name: a GPU
// instance profile ("1g.5gb", "3g.40gb"), perhaps with a compute instance of fewer slices in
// front ("1c.3g.20gb") and options after ("1g.10gb+me", media extensions). Some tools and
// drivers write it in upper case ("3G.20GB").
var migProfileRE = regexp.MustCompile(`^([0-9]+c\.)?[0-9]+g\.[0-9]+gb(\+[a-z]+)*$`)

// SplitMIG splits a CUDA device name into the GPU and, for a MIG slice, its MIG profile in
// lower case. CUDA names a slice after its GPU, " MIG " and the profile:
//
//	"NVIDIA A100-SXM4-40GB MIG 1g.5gb"   → "NVIDIA A100-SXM4-40GB", "1g.5gb"
//	"NVIDIA H100 80GB HBM3 MIG 1g.10gb"  → "NVIDIA H100 80GB HBM3", "1g.10gb"
//	"A100-SXM4-40GB MIG 3g.20gb"         → "A100-SXM4-40GB", "3g.20gb" (drivers before R470 left out "NVIDIA ")
//	"NVIDIA H100 80GB HBM3"              → "NVIDIA H100 80GB HBM3", "" (a whole GPU)
//
// A name whose part after " MIG " is not a MIG profile is a whole GPU's name, returned as it
// is (trimmed).
func SplitMIG(deviceName string) (gpu, mig string) {
	name := strings.TrimSpace(deviceName)
	i := strings.LastIndex(name, " MIG ")
	if i < 0 {
		return name, ""
	}
	profile := strings.ToLower(strings.TrimSpace(name[i+len(" MIG "):]))
	if !migProfileRE.MatchString(profile) {
		return name, ""
	}
	return strings.TrimSpace(name[:i]), profile
}
