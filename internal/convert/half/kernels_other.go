//go:build !amd64 || purego

package half

// accelerated is nil: this build has only the portable kernels.
var accelerated *kernels
