package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromeBinary finds a Chrome or Chromium: $BORG_CHROME, else chromium,
// chromium-browser, google-chrome or google-chrome-stable on PATH.
func chromeBinary() (string, bool) {
	if p := os.Getenv("BORG_CHROME"); p != "" {
		if abs, err := exec.LookPath(p); err == nil {
			return abs, true
		}
		return p, false
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, true
		}
	}
	return "", false
}

// TestServeBrowser drives borg serve in headless Chromium: load /, type a
// query, submit it, open the first hit, and find the belief chart's SVG.
// It keeps a screenshot in $BORG_ARTIFACTS (else the test's temporary
// directory) and logs its path. Without Chromium it skips.
//
// It is long on purpose: one scenario whose steps each build on the state
// the last left, read top to bottom.
func TestServeBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("the browser test of borg serve starts Chromium: skipped with -short")
	}
	chrome, ok := chromeBinary()
	if !ok {
		if chrome != "" {
			t.Skipf("BORG_CHROME=%s is not an executable: point it at a Chrome or Chromium binary to run the browser test of borg serve", chrome)
		}
		t.Skip("no Chromium found (chromium, chromium-browser, google-chrome on PATH, or $BORG_CHROME): " +
			"install Debian's chromium package (apt-get install chromium) to run the browser test of borg serve")
	}
	vars, migrations, hostile := serveStore(t)
	url, stop := startServe(t, vars)

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chrome),
		chromedp.NoSandbox, // root in a container has no user namespace sandbox
		chromedp.DisableGPU,
		chromedp.WindowSize(1100, 1000),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	defer cancel()
	// A bound on the whole drive, without a timeout on the browser's own
	// context (chromedp: that would stop the browser).
	watchdog := time.AfterFunc(3*time.Minute, cancel)
	defer watchdog.Stop()

	if err := chromedp.Do(ctx,
		chromedp.Navigate(url),
		chromedp.WaitVisible(chromedp.CSS("#q")),
		chromedp.SendKeys(chromedp.CSS("#q"), "migrations integration tests"),
		chromedp.Submit(chromedp.CSS("#q")),
		chromedp.WaitVisible(chromedp.CSS("a.hit-link")),
	); err != nil {
		t.Fatalf("load / and search: %v", err)
	}
	first, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("a.hit-link")))
	if err != nil || first != migrations {
		t.Fatalf("the first hit is %q (%v), want %s", first, err, migrations)
	}
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS("a.hit-link")),
		chromedp.WaitVisible(chromedp.CSS("#belief-chart")),
	); err != nil {
		t.Fatalf("open the lesson: %v", err)
	}
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil || !strings.HasSuffix(loc, "/lesson/"+migrations) {
		t.Fatalf("after the click the page is %q (%v), want /lesson/%s", loc, err, migrations)
	}
	dots, err := chromedp.Run(ctx, chromedp.Nodes(chromedp.CSSAll("#belief-chart circle.dot")))
	if err != nil || len(dots) != 5 { // the prior and four results
		t.Fatalf("the chart has %d dots (%v), want 5", len(dots), err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Nodes(chromedp.CSS("#belief-chart polyline.line"))); err != nil {
		t.Fatalf("the chart has no line: %v", err)
	}
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // quality 100: PNG
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	dir := os.Getenv("BORG_ARTIFACTS")
	if dir == "" {
		dir = t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "borg-serve-lesson.png")
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot of %s: %s (%d bytes)", loc, path, len(shot))

	// The hostile lesson renders as text and runs nothing: no script
	// element made it into the page, and its body reads as written.
	if err := chromedp.Do(ctx,
		chromedp.Navigate(url+"lesson/"+hostile),
		chromedp.WaitVisible(chromedp.CSS("#body")),
	); err != nil {
		t.Fatalf("open the hostile lesson: %v", err)
	}
	scripts, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("script, iframe, [onerror], [onload]").length`))
	if err != nil || scripts != 0 {
		t.Errorf("the hostile lesson's page holds %d script, frame or handler element(s) (%v)", scripts, err)
	}
	body, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#body")))
	if err != nil || !strings.Contains(body, "<script>alert(1)</script>") {
		t.Errorf("the hostile body does not read as text: %q (%v)", body, err)
	}
	// Half a year on, tonight's sleep would decay every lesson: the sleep
	// page shows each phase's diff.
	night := time.Now().Add(180 * 24 * time.Hour).UTC().Format(time.DateOnly)
	if err := chromedp.Do(ctx,
		chromedp.Navigate(url+"sleep?date="+night),
		chromedp.WaitVisible(chromedp.CSS("#phase-1 .diff .add")),
	); err != nil {
		t.Fatalf("open the sleep plan for %s: %v", night, err)
	}
	if shot, err = chromedp.Run(ctx, chromedp.FullScreenshot(100)); err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	path = filepath.Join(dir, "borg-serve-sleep.png")
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot of the sleep plan for %s: %s", night, path)
	cancel()
	if code := stop(); code != 0 {
		t.Errorf("borg serve exit %d, want 0", code)
	}
}
