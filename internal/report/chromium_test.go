package report

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/trtbuild/trtbuild/internal/progress"
)

// chromium returns Debian's headless browser, or skips the test.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	t.Skip("chromium is not installed (apt-get install chromium)")
	return ""
}

// screenshot opens the page in headless Chromium and returns the screenshot.
func screenshot(t *testing.T, browser, page string) image.Image {
	t.Helper()
	dir := t.TempDir()
	htmlPath := filepath.Join(dir, "report.html")
	if err := os.WriteFile(htmlPath, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	pngPath := filepath.Join(dir, "shot.png")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--screenshot="+pngPath, "--window-size=1200,800",
		"file://"+htmlPath)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	f, err := os.Open(pngPath)
	if err != nil {
		t.Fatalf("no screenshot: %v\n%s", err, out)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// colorCounts counts the pixels within a small distance of each bar colour.
func colorCounts(img image.Image) []int {
	type rgb struct{ r, g, b int }
	want := make([]rgb, len(barColors))
	for i, c := range barColors {
		v, _ := strconv.ParseUint(c[1:], 16, 32)
		want[i] = rgb{int(v >> 16), int(v >> 8 & 0xff), int(v & 0xff)}
	}
	counts := make([]int, len(barColors))
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			p := rgb{int(r >> 8), int(g >> 8), int(bl >> 8)}
			for i, w := range want {
				if abs(p.r-w.r) <= 6 && abs(p.g-w.g) <= 6 && abs(p.b-w.b) <= 6 {
					counts[i]++
				}
			}
		}
	}
	return counts
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// TestHTMLInChromium opens the HTML report of a recorded build in headless Chromium and checks
// that the screenshot shows the timeline: solid areas in the colours of the six nesting levels
// of that build. A page without phases, screenshotted the same way, must show none of them,
// so the check cannot pass on an empty chart.
func TestHTMLInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	browser := chromium(t)
	var buf bytes.Buffer
	if err := WriteHTML(&buf, FromTrace(readTrace(t, "sim.trace.jsonl"))); err != nil {
		t.Fatal(err)
	}
	counts := colorCounts(screenshot(t, browser, buf.String()))
	// The trace nests six levels deep; each level's bars span most of the chart's 1100 pixels
	// and are 20 pixels high.
	for depth := 0; depth < 6; depth++ {
		t.Logf("depth %d colour %s: %d pixels", depth, barColors[depth], counts[depth])
		if counts[depth] < 5000 {
			t.Errorf("depth %d colour %s: %d pixels in the screenshot, want a chart bar's worth (>= 5000); all counts %v",
				depth, barColors[depth], counts[depth], counts)
		}
	}

	buf.Reset()
	empty := FromTree(progress.NewTree(), progress.BuildInfo{Model: "m.onnx"}, progress.Result{Status: progress.StatusBuilt}, nil)
	if err := WriteHTML(&buf, empty); err != nil {
		t.Fatal(err)
	}
	for depth, n := range colorCounts(screenshot(t, browser, buf.String()))[:6] {
		if n > 200 {
			t.Errorf("a page without phases shows %d pixels of depth %d's colour", n, depth)
		}
	}
}
