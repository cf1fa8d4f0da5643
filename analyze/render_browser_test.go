package analyze_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/bundle"
	"podflow.dev/podflow/rules"
	"podflow.dev/podflow/untrusted"
)

// TestHTMLReportInBrowser opens HTML reports of recorded bundles in a real headless
// Chromium: the DOM it builds must hold every finding, and a screenshot of each is kept.
// It runs when PODFLOW_BROWSER names the browser (testbed/e2e.sh sets it and installs
// Debian's chromium); PODFLOW_ARTIFACTS is where the screenshots go.
func TestHTMLReportInBrowser(t *testing.T) {
	browser := os.Getenv("PODFLOW_BROWSER")
	if browser == "" {
		t.Skip("PODFLOW_BROWSER is not set (testbed/e2e.sh sets it to chromium)")
	}
	if _, err := exec.LookPath(browser); err != nil {
		t.Fatalf("PODFLOW_BROWSER=%s: %v", browser, err)
	}
	artifacts := os.Getenv("PODFLOW_ARTIFACTS")
	if artifacts == "" {
		artifacts = t.TempDir()
	}
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"demo", "node-not-ready", "service-target-port-mismatch"} {
		t.Run(name, func(t *testing.T) {
			b, err := bundle.Open(filepath.Join("..", "testdata", "bundles", name), bundle.DefaultLimits())
			if err != nil {
				t.Fatal(err)
			}
			rep := analyze.Run(analyze.Load([]*bundle.Bundle{b}, nil), rules.All(), analyze.Options{Timelines: true})
			if len(rep.Findings) == 0 {
				t.Fatalf("%s gives no finding; the browser would check nothing", name)
			}
			page := filepath.Join(t.TempDir(), name+".html")
			var html bytes.Buffer
			if err := analyze.Render(&html, rep, analyze.FormatHTML, analyze.RenderOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(page, html.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			dom := runBrowser(t, browser, "--dump-dom", "file://"+page)
			for _, f := range rep.Findings {
				if !strings.Contains(dom, `id="`+f.ID+`"`) {
					t.Errorf("the DOM has no element for finding %s", f.ID)
				}
				if !strings.Contains(dom, domText(untrusted.Text(f.Cause))) {
					t.Errorf("the DOM lacks the cause of %s: %q", f.ID, f.Cause)
				}
			}
			for _, p := range rep.Pods {
				if want := `data-pod="` + p.Namespace + "/" + p.Name + `"`; !strings.Contains(dom, want) {
					t.Errorf("the DOM has no chain for pod %s/%s", p.Namespace, p.Name)
				}
			}
			if n := strings.Count(dom, `class="stage st-`); n != len(rep.Pods)*len(analyze.Stages) {
				t.Errorf("the DOM has %d stage boxes, want %d (%d pods, %d stages)", n, len(rep.Pods)*len(analyze.Stages), len(rep.Pods), len(analyze.Stages))
			}
			shot := filepath.Join(artifacts, "report-"+name+".png")
			runBrowser(t, browser, "--window-size=1280,2000", "--screenshot="+shot, "file://"+page)
			if data, err := os.ReadFile(shot); err != nil || !bytes.HasPrefix(data, []byte("\x89PNG")) {
				t.Fatalf("no screenshot at %s (%v)", shot, err)
			}
			t.Logf("screenshot: %s", shot)
		})
	}
}

// runBrowser runs headless Chromium with a fresh profile and nothing that reaches out.
func runBrowser(t *testing.T, browser string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--user-data-dir=" + t.TempDir()}
	cmd := exec.CommandContext(ctx, browser, append(base, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", browser, strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

// domText is text as a browser serializes it in --dump-dom: only &, < and > escaped.
func domText(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
