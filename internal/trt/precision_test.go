package trt

import (
	"errors"
	"strings"
	"testing"
)

func TestPrecisionPlan(t *testing.T) {
	type req struct{ fp16, bf16, int8, fp8 bool }
	tests := []struct {
		name    string
		major   int
		req     req
		want    Plan
		notice  []string // fragments Notice must hold (none: Notice must be empty)
		wantErr error
		errHas  []string
	}{
		{name: "10 none", major: 10, want: Plan{StronglyTyped: true}},
		{
			name: "10 fp16", major: 10, req: req{fp16: true},
			want:   Plan{BuilderFlags: FP16},
			notice: []string{"--fp16", "deprecated since TensorRT 10.12", "modelopt.onnx.autocast"},
		},
		{
			name: "10 fp16 bf16", major: 10, req: req{fp16: true, bf16: true},
			want:   Plan{BuilderFlags: FP16 | BF16},
			notice: []string{"--fp16 and --bf16", "AutoCast"},
		},
		{
			name: "10 int8", major: 10, req: req{int8: true},
			want:   Plan{BuilderFlags: INT8},
			notice: []string{"--int8", "Q/DQ", "modelopt.onnx.quantization"},
		},
		{
			name: "10 all", major: 10, req: req{true, true, true, true},
			want:   Plan{BuilderFlags: FP16 | BF16 | INT8 | FP8},
			notice: []string{"--fp16, --bf16, --int8 and --fp8", "Q/DQ"},
		},
		{name: "11 none", major: 11, want: Plan{StronglyTyped: true}},
		{name: "11 fp16", major: 11, req: req{fp16: true}, want: Plan{StronglyTyped: true, ConvertONNX: TypeFP16}},
		{name: "11 bf16", major: 11, req: req{bf16: true}, want: Plan{StronglyTyped: true, ConvertONNX: TypeBF16}},
		{name: "12 fp16 follows 11", major: 12, req: req{fp16: true}, want: Plan{StronglyTyped: true, ConvertONNX: TypeFP16}},
		{
			name: "11 fp16 and bf16", major: 11, req: req{fp16: true, bf16: true},
			wantErr: ErrPrecisionUnsupported, errHas: []string{"pick one"},
		},
		{
			name: "11 int8", major: 11, req: req{int8: true},
			wantErr: ErrPrecisionUnsupported,
			errHas:  []string{"TensorRT 11 builds INT8 only from Q/DQ-quantized models", "--quantize_mode int8", "without --int8"},
		},
		{
			name: "11 fp8", major: 11, req: req{fp8: true},
			wantErr: ErrPrecisionUnsupported,
			errHas:  []string{"builds FP8 only", "--quantize_mode fp8", "without --fp8"},
		},
		{
			name: "11 fp16 int8: the quantization error wins", major: 11, req: req{fp16: true, int8: true},
			wantErr: ErrPrecisionUnsupported, errHas: []string{"INT8", "without --int8"},
		},
		{
			name: "11 int8 fp8", major: 11, req: req{int8: true, fp8: true},
			wantErr: ErrPrecisionUnsupported, errHas: []string{"INT8 and FP8", "without --int8 and --fp8"},
		},
		{name: "9", major: 9, wantErr: ErrUnsupportedVersion, errHas: []string{"TensorRT 9 is too old"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := PrecisionPlan(tt.major, tt.req.fp16, tt.req.bf16, tt.req.int8, tt.req.fp8)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("error = %v, want %v", err, tt.wantErr)
				}
				for _, frag := range tt.errHas {
					if !strings.Contains(err.Error(), frag) {
						t.Errorf("error %q lacks %q", err, frag)
					}
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("error spans several lines: %q", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("error = %v", err)
			}
			notice := got.Notice
			got.Notice = ""
			if got != tt.want {
				t.Errorf("plan = %+v, want %+v", got, tt.want)
			}
			if len(tt.notice) == 0 && notice != "" {
				t.Errorf("notice = %q, want none", notice)
			}
			for _, frag := range tt.notice {
				if !strings.Contains(notice, frag) {
					t.Errorf("notice %q lacks %q", notice, frag)
				}
			}
			if strings.Contains(notice, "\n") {
				t.Errorf("notice spans several lines: %q", notice)
			}
		})
	}
}

// TestPrecisionPlanInvariants checks every combination of requests on both majors.
func TestPrecisionPlanInvariants(t *testing.T) {
	for _, major := range []int{10, 11} {
		for bits := Precision(0); bits < 16; bits++ {
			p, err := PrecisionPlan(major, bits&FP16 != 0, bits&BF16 != 0, bits&INT8 != 0, bits&FP8 != 0)
			if err != nil {
				if major == 10 {
					t.Errorf("major 10, %v: unexpected error %v", bits, err)
				}
				continue
			}
			switch major {
			case 10:
				if p.BuilderFlags != bits || p.ConvertONNX != "" {
					t.Errorf("major 10, %v: plan %+v", bits, p)
				}
				if p.StronglyTyped != (bits == 0) {
					t.Errorf("major 10, %v: StronglyTyped = %v; precision flags need a weakly typed network", bits, p.StronglyTyped)
				}
			case 11:
				if p.BuilderFlags != 0 || !p.StronglyTyped || p.Notice != "" {
					t.Errorf("major 11, %v: plan %+v", bits, p)
				}
				if bits&(INT8|FP8) != 0 {
					t.Errorf("major 11, %v: accepted a quantized precision", bits)
				}
			}
		}
	}
}

func TestPrecisionString(t *testing.T) {
	tests := map[Precision]string{
		0:                  "none",
		FP16:               "--fp16",
		FP16 | INT8:        "--fp16 and --int8",
		BF16 | INT8 | FP8:  "--bf16, --int8 and --fp8",
		FP16 | BF16 | INT8: "--fp16, --bf16 and --int8",
	}
	for p, want := range tests {
		if got := p.String(); got != want {
			t.Errorf("Precision(%d).String() = %q, want %q", uint32(p), got, want)
		}
	}
}
