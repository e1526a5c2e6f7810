package buildkey

import "testing"

func TestSplitMIG(t *testing.T) {
	cases := []struct{ name, gpu, mig string }{
		{"NVIDIA A100-SXM4-40GB MIG 1g.5gb", "NVIDIA A100-SXM4-40GB", "1g.5gb"},
		{"NVIDIA A100-SXM4-40GB MIG 3g.20gb", "NVIDIA A100-SXM4-40GB", "3g.20gb"},
		{"NVIDIA A100-SXM4-80GB MIG 1g.10gb", "NVIDIA A100-SXM4-80GB", "1g.10gb"},
		{"NVIDIA H100 80GB HBM3 MIG 1g.10gb", "NVIDIA H100 80GB HBM3", "1g.10gb"},
		{"NVIDIA H100 80GB HBM3 MIG 1g.10gb+me", "NVIDIA H100 80GB HBM3", "1g.10gb+me"},
		{"NVIDIA A100-SXM4-40GB MIG 1c.3g.20gb", "NVIDIA A100-SXM4-40GB", "1c.3g.20gb"},
		{"NVIDIA A100-PCIE-40GB MIG 3G.20GB", "NVIDIA A100-PCIE-40GB", "3g.20gb"},
		{"A100-SXM4-40GB MIG 1g.5gb", "A100-SXM4-40GB", "1g.5gb"}, // drivers before R470
		{"  NVIDIA A30 MIG 2g.12gb \n", "NVIDIA A30", "2g.12gb"},
		{"NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3", ""},
		{"A100-SXM4-40GB", "A100-SXM4-40GB", ""},
		{"Stand-in GPU", "Stand-in GPU", ""},
		{"", "", ""},
		// Not a profile after " MIG ": the whole name is the GPU's.
		{"Some GPU MIG edition", "Some GPU MIG edition", ""},
		{"NVIDIA X MIG 1g", "NVIDIA X MIG 1g", ""},
		{"NVIDIAMIG 1g.5gb", "NVIDIAMIG 1g.5gb", ""},
	}
	for _, c := range cases {
		gpu, mig := SplitMIG(c.name)
		if gpu != c.gpu || mig != c.mig {
			t.Errorf("SplitMIG(%q) = %q, %q; want %q, %q", c.name, gpu, mig, c.gpu, c.mig)
		}
	}
}
