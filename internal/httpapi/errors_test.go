package httpapi

import (
	"net/http"
	"testing"

	"github.com/trtbuild/trtbuild/internal/service"
)

// TestHTTPStatusOfEveryKind: each kind of the service's refusals has its HTTP status, and no two
// kinds share one.
func TestHTTPStatusOfEveryKind(t *testing.T) {
	seen := map[int]service.Kind{}
	for kind, want := range map[service.Kind]int{
		service.KindInvalid:     http.StatusBadRequest,
		service.KindUnusable:    http.StatusUnprocessableEntity,
		service.KindNotFound:    http.StatusNotFound,
		service.KindConflict:    http.StatusConflict,
		service.KindUnavailable: http.StatusServiceUnavailable,
		service.KindNoRoom:      http.StatusInsufficientStorage,
		service.KindInternal:    http.StatusInternalServerError,
	} {
		got := httpStatus(kind)
		if got != want {
			t.Errorf("kind %d: status %d, want %d", kind, got, want)
		}
		if other, ok := seen[got]; ok {
			t.Errorf("kinds %d and %d both answer %d", kind, other, got)
		}
		seen[got] = kind
	}
}
