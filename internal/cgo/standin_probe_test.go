//go:build trtbench

package cgo

import (
	"strings"
	"testing"
)

// TestStandInFailsLoudlyOnWhatItLacks: a function of TensorRT's API the stand-in does not
// implement (a generated stub) records an error naming itself and answers a safe value, and
// the builder's next build fails naming it too: a shim that starts to call something new is
// caught by every test that builds.
func TestStandInFailsLoudlyOnWhatItLacks(t *testing.T) {
	for _, major := range []int{10, 11} {
		got, err := fakeProbe(major, "unimplemented")
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{
			"result: setMaxThreads 0, built 0\n",
			"error: VBuilder::setMaxThreads: Error Code 10: Internal Error (trtfake: VBuilder::setMaxThreads is not implemented)\n",
			"error: IBuilder::buildSerializedNetworkToStream: Error Code 2: Internal Error (trtfake: the builder was asked for what the stand-in does not implement (VBuilder::setMaxThreads))\n",
		} {
			if !strings.Contains(got, want) {
				t.Errorf("TensorRT %d: the stand-in did not say %q:\n%s", major, want, got)
			}
		}
	}
}

// TestStandInRefusesWeakTyping: TensorRT 10's stand-in refuses a precision flag on a strongly
// typed network, as TensorRT 10 does; TensorRT 11's, which removed weak typing, has no
// precision flag to set: the value TensorRT 10 gave kFP16 is refused as no BuilderFlag of 11.
func TestStandInRefusesWeakTyping(t *testing.T) {
	for major, want := range map[int][]string{
		10: {"result: kFP16 set 1, built 0\n", "error: IBuilder::buildSerializedNetworkToStream: Error Code 3: API Usage Error (BuilderFlag::kFP16 cannot be set for a strongly typed network"},
		11: {"result: flag 0 set 0\n", "error: IBuilderConfig::setFlag: Error Code 3: API Usage Error (BuilderFlag value 0 is not a builder flag of TensorRT 11.1.0 (TensorRT 11 builds every network strongly typed"},
	} {
		got, err := fakeProbe(major, "weak-typing")
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("TensorRT %d: the stand-in did not say %q:\n%s", major, w, got)
			}
		}
	}
}
