// Package webuitest drives the web page in headless Chromium for tests: it finds the browser
// (skipping the test where there is none), starts one for the test, watches the page's console
// for errors, and reports a failed step with what the page showed at the time.
package webuitest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// ChromiumPath is the browser to run: Debian's /usr/bin/chromium, or one on PATH. Without one it
// skips the test.
func ChromiumPath(t testing.TB) string {
	t.Helper()
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium"
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no Chromium: neither /usr/bin/chromium nor chromium, chromium-browser or google-chrome on PATH; " +
		"install Debian's chromium package to run the web page's browser tests")
	return ""
}

// Browser is a headless Chromium tab whose console the test watches.
type Browser struct {
	// Ctx is the tab, ending with the test's timeout; chromedp actions run in it.
	Ctx context.Context

	tab      context.Context // the tab, without the timeout: for describing the page after a failure
	mu       sync.Mutex
	problems []string // uncaught exceptions and console errors of the page's own making
}

// New starts a headless Chromium for the test, stopped when it ends, and returns its tab; the
// steps run in the tab fail once timeout has passed.
func New(t testing.TB, timeout time.Duration) *Browser {
	t.Helper()
	path := ChromiumPath(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox, // the tests may run as root in a container
		chromedp.DisableGPU,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(800, 1000),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	tab, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(cancelTab)
	if err := chromedp.Do(tab); err != nil { // starts the browser; no timeout on this first call
		t.Fatalf("starting %s: %v", path, err)
	}
	br := &Browser{tab: tab}
	messages := chromedp.Console(tab)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			// The refusals (4xx answers) a test provokes are logged by the network; anything
			// else at error level (a CSP violation, a script error) is the page's fault.
			if m.IsException() || (m.Type == chromedp.ConsoleError && m.Source != "network") {
				br.mu.Lock()
				br.problems = append(br.problems, m.String())
				br.mu.Unlock()
			}
		}
	}()
	ctx, cancel := context.WithTimeout(tab, timeout)
	t.Cleanup(cancel)
	br.Ctx = ctx
	return br
}

// Problems returns the uncaught exceptions and console errors the page has made so far.
func (br *Browser) Problems() []string {
	br.mu.Lock()
	defer br.mu.Unlock()
	return append([]string(nil), br.problems...)
}

// CheckConsole fails the test (without stopping it) for each of the page's Problems.
func (br *Browser) CheckConsole(t testing.TB) {
	t.Helper()
	for _, m := range br.Problems() {
		t.Errorf("the page's console: %s", m)
	}
}

// Do runs the steps in the tab, and stops the test if one fails, saying what it was doing.
func (br *Browser) Do(t testing.TB, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(br.Ctx, steps...); err != nil {
		t.Fatalf("%s: %v%s", what, err, br.Page())
	}
}

// Eval evaluates a JavaScript expression in the tab into T (a promise's value, if it is one).
func Eval[T any](t testing.TB, br *Browser, expr string) T {
	t.Helper()
	v, err := chromedp.Run(br.Ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("evaluating %s: %v%s", expr, err, br.Page())
	}
	return v
}

// WaitFor polls a JavaScript condition until it holds, and stops the test if the timeout ends
// first.
func (br *Browser) WaitFor(t testing.TB, what, cond string) {
	t.Helper()
	_, err := chromedp.Run(br.Ctx, chromedp.Poll[chromedp.Void](cond,
		chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(0)))
	if err != nil {
		t.Fatalf("waiting for %s (%s): %v%s", what, cond, err, br.Page())
	}
}

// Text is the textContent of the element with the id.
func (br *Browser) Text(t testing.TB, id string) string {
	t.Helper()
	return Eval[string](t, br, fmt.Sprintf(`document.getElementById(%s).textContent`, JS(id)))
}

// JS quotes a string for a JavaScript expression.
func JS(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Page describes what the page shows and the console errors so far, for a failure message.
func (br *Browser) Page() string {
	ctx, cancel := context.WithTimeout(br.tab, 5*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`JSON.stringify({
		url: location.href,
		state: (document.getElementById('state') || {}).textContent,
		note: (document.getElementById('note') || {}).textContent,
		error: (document.getElementById('error') || {}).textContent,
		buildError: (document.getElementById('build-error') || {}).textContent,
		phases: document.querySelectorAll('#tree [data-phase-id]').length,
		body: document.body ? document.body.innerText.slice(0, 300) : '',
	})`))
	if err != nil {
		return ""
	}
	return fmt.Sprintf("\nthe page: %s\nconsole errors: %q", s, br.Problems())
}
