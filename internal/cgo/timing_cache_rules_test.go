//go:build trtbench

package cgo

import (
	"slices"
	"strings"
	"testing"
)

// TestTimingCacheLoadRules drives the TensorRT shim's decision about a given timing cache
// (timing_cache_rules.cpp) with what TensorRT can answer: the verdict, the action with and
// without --strict-cache, and the words of the warning or error.
func TestTimingCacheLoadRules(t *testing.T) {
	usable := cacheLoad{size: 4096, created: true, keys: 57, exact: true}
	with := func(c cacheLoad, f func(*cacheLoad)) cacheLoad { f(&c); return c }
	tests := []struct {
		name           string
		in             cacheLoad
		kind           int
		action, strict int      // without and with --strict-cache
		say            []string // in the message (without --strict-cache)
		sayStrict      []string
	}{
		{"usable", usable, cacheKindUsable, cacheActionAttach, cacheActionAttach, nil, nil},
		{"empty file (0 bytes) is no cache", cacheLoad{size: 0, created: true, keys: 0, exact: true},
			cacheKindNone, cacheActionNew, cacheActionNew, nil, nil},
		{"zero-key cache is a cache, just empty", with(usable, func(c *cacheLoad) { c.size, c.keys = 32, 0 }),
			cacheKindEmpty, cacheActionAttach, cacheActionAttach, nil, nil},
		{"cannot count is not foreign", with(usable, func(c *cacheLoad) { c.keys = -1 }),
			cacheKindUsable, cacheActionAttach, cacheActionAttach, nil, nil},
		{"a warning beside keys read is just a warning", with(usable, func(c *cacheLoad) { c.warnings = []string{"some advice"} }),
			cacheKindUsable, cacheActionAttach, cacheActionAttach, nil, nil},
		// A warning another thread logged meanwhile is not in warnings: the capture leaves it
		// out (TestThreadCapture), so a zero-key cache read meanwhile is still just empty.
		{"warning from another thread", with(usable, func(c *cacheLoad) { c.size, c.keys = 32, 0 }),
			cacheKindEmpty, cacheActionAttach, cacheActionAttach, nil, nil},
		{"foreign: no object", cacheLoad{size: 4096, keys: -1, exact: true},
			cacheKindForeign, cacheActionStartEmpty, cacheActionFail,
			[]string{"the timing cache was not accepted (TensorRT could not read it); building from an empty cache"},
			[]string{"cannot be used by TensorRT (TensorRT could not read it)", "--strict-cache", "delete it, or pass another --timing-cache"}},
		{"foreign: no object, with the thread's error", cacheLoad{size: 4096, keys: -1, exact: true, errors: []string{"Error Code 1: Serialization (magicTag\nmismatch)"}},
			cacheKindForeign, cacheActionStartEmpty, cacheActionFail,
			[]string{"(Error Code 1: Serialization (magicTag mismatch))"}, []string{"Error Code 1: Serialization"}},
		{"foreign: an object, and an error", with(usable, func(c *cacheLoad) { c.errors = []string{"4: The timing cache will not be used!"} }),
			cacheKindForeign, cacheActionStartEmpty, cacheActionFail, []string{"The timing cache will not be used!"}, nil},
		{"foreign: warned and read nothing", with(usable, func(c *cacheLoad) {
			c.keys, c.warnings = 0, []string{"Detected invalid timing cache, setup a local cache instead"}
		}), cacheKindForeign, cacheActionStartEmpty, cacheActionFail,
			[]string{"TensorRT read no entry from it and warned: Detected invalid timing cache"}, nil},
		{"foreign: warned and cannot count", with(usable, func(c *cacheLoad) { c.keys, c.warnings = -1, []string{"odd header"} }),
			cacheKindForeign, cacheActionStartEmpty, cacheActionFail, []string{"cannot count its entries: odd header"}, nil},
		{"mismatched: made on another GPU", with(usable, func(c *cacheLoad) {
			c.exact, c.exactRefusal = false, []string{"Error Code 3: cache device properties differ"}
		}), cacheKindMismatch, cacheActionAttachIgnoringMismatch, cacheActionFail,
			[]string{"made on another GPU or CUDA version (Error Code 3: cache device properties differ)", "used anyway, as trtexec does"},
			[]string{"was made on another GPU or CUDA version", "--strict-cache refuses it", "drop --strict-cache to use it anyway"}},
		{"mismatched zero-key cache", with(usable, func(c *cacheLoad) { c.keys, c.exact = 0, false }),
			cacheKindMismatch, cacheActionAttachIgnoringMismatch, cacheActionFail, []string{"(TensorRT refused it for this device)"}, nil},
		{"an error wins over a mismatch", with(usable, func(c *cacheLoad) { c.exact, c.errors = false, []string{"corrupt"} }),
			cacheKindForeign, cacheActionStartEmpty, cacheActionFail, []string{"(corrupt)"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, strict := range []bool{false, true} {
				in := tt.in
				in.strict = strict
				v, err := judgeCacheLoad(in)
				if err != nil {
					t.Fatal(err)
				}
				action, say := tt.action, tt.say
				if strict {
					action, say = tt.strict, tt.sayStrict
				}
				if v.kind != tt.kind || v.action != action {
					t.Errorf("strict %v: kind %d, action %d; want %d, %d (%q)", strict, v.kind, v.action, tt.kind, action, v.message)
				}
				for _, s := range say {
					if !strings.Contains(v.message, s) {
						t.Errorf("strict %v: message %q lacks %q", strict, v.message, s)
					}
				}
				needsWords := tt.kind == cacheKindMismatch || tt.kind == cacheKindForeign
				if needsWords == (v.message == "") || strings.ContainsAny(v.message, "\n\r\t") {
					t.Errorf("strict %v: message %q: want one line exactly for a mismatched or foreign cache", strict, v.message)
				}
			}
		})
	}
}

// TestTimingCacheSaveRules: nothing timed is nothing to save, whatever the file holds, so a
// build cancelled before its first timed layer never writes a zero-key cache; otherwise an
// absent (or 0-byte) file gets the build's cache and a file with a cache is merged into.
func TestTimingCacheSaveRules(t *testing.T) {
	tests := []struct {
		name      string
		fileSize  uint64
		buildKeys int64
		holdsFile bool
		want      int
	}{
		{"nothing timed, no file", 0, 0, false, cacheSaveNothing},
		{"nothing timed, a cache in the file", 4096, 0, false, cacheSaveNothing},
		{"nothing timed, a zero-key cache in the file", 32, 0, false, cacheSaveNothing},
		{"nothing timed, the build's cache holds the file", 4096, 0, true, cacheSaveNothing},
		{"timed, no file", 0, 12, false, cacheSaveWriteOwn},
		{"cannot count, no file", 0, -1, false, cacheSaveWriteOwn},
		{"timed, a cache in the file", 4096, 12, false, cacheSaveMerge},
		{"timed, a zero-key cache in the file is merged into", 32, 12, false, cacheSaveMerge},
		{"cannot count, a cache in the file", 4096, -1, false, cacheSaveMerge},
		{"timed, the build's cache holds the file: written without reading it", 4096, 12, true, cacheSaveWriteOwn},
		{"cannot count, the build's cache holds the file", 4096, -1, true, cacheSaveWriteOwn},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := judgeCacheSave(tt.fileSize, tt.buildKeys, tt.holdsFile)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("judge_save(file %d bytes, %d keys) = %d, want %d", tt.fileSize, tt.buildKeys, got, tt.want)
			}
		})
	}
}

// TestThreadCapture: a capture takes only the errors and warnings of its own thread while it
// lives; what another thread logs meanwhile, info lines, and lines after it ended go live.
func TestThreadCapture(t *testing.T) {
	tests := []struct {
		name              string
		own, other, after []string
		taken             []string
		live              int
	}{
		{"another thread's warning is not taken", nil, []string{"2another thread warns"}, nil, nil, 1},
		{"own error and warning are taken, in order", []string{"1bad blob", "2odd header"}, []string{"2elsewhere", "1elsewhere too"}, nil,
			[]string{"1bad blob", "2odd header"}, 2},
		{"internal errors count as errors", []string{"0assertion"}, nil, nil, []string{"0assertion"}, 0},
		{"info and verbose lines go live", []string{"3loaded 4096 bytes", "4details", "2warned"}, nil, nil, []string{"2warned"}, 2},
		{"after the capture ended, lines go live", []string{"2during"}, nil, []string{"2after", "1after"}, []string{"2during"}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			taken, live, err := threadCapture(tt.own, tt.other, tt.after)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(taken, tt.taken) || live != tt.live {
				t.Errorf("took %q and left %d live; want %q and %d", taken, live, tt.taken, tt.live)
			}
		})
	}
}
