package regfile

// Test-only API of package regfile: exported names that only this package's tests use, so
// they are not part of what the rest of trtbuild can call.

import "errors"

// IsNotRegular reports whether err is a *NotRegularError.
func IsNotRegular(err error) bool {
	var e *NotRegularError
	return errors.As(err, &e)
}
