package convert

import (
	"testing"
	"unsafe"

	"github.com/trtbuild/trtbuild/internal/convert/modelio"
)

// TestRecordSizes pins the size of the records a model has one of per
// value, node, input or initializer (amd64 and other 64-bit platforms):
// the conversion's memory is mostly these, so a field added to one is a
// decision, not an accident. None holds a pointer, so the collector scans
// none of them.
func TestRecordSizes(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("sizes are pinned for 64-bit platforms")
	}
	for _, r := range []struct {
		name string
		got  uintptr
		want uintptr
	}{
		{"value", unsafe.Sizeof(value{}), 20},
		{"nodeInfo", unsafe.Sizeof(nodeInfo{}), 16},
		{"use", unsafe.Sizeof(use{}), 8},
		{"weight", unsafe.Sizeof(weight{}), 24},
		{"modelio.Node", unsafe.Sizeof(modelio.Node{}), 36},
		{"modelio.Str", unsafe.Sizeof(modelio.Str{}), 8},
		{"modelio.Tensor", unsafe.Sizeof(modelio.Tensor{}), 36},
	} {
		if r.got != r.want {
			t.Errorf("%s is %d bytes, want %d", r.name, r.got, r.want)
		}
	}
}
