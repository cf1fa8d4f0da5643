package index

import (
	"bufio"
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"podflow.dev/podflow/internal/phrase"
)

// TestMaskNeedChangesNothing: a mask skips a text that holds none of the bytes its
// every match needs. Over every line of the incident corpus and the recorded bundles,
// and lines built to hold each mask's shape, Mask and maskKey give what applying every
// expression gives, so a wrong need (a match without any of its bytes) fails here.
func TestMaskNeedChangesNothing(t *testing.T) {
	full := func(s string, ms []mask) string {
		s = strings.Join(strings.Fields(s), " ")
		for _, m := range ms {
			s = m.re.ReplaceAllString(s, m.with)
		}
		return s
	}
	lines := []string{
		"https://registry.example.com/v2/shop/web/manifests/1.2 said 401", "mount /var/lib/kubelet/pods failed",
		"dial tcp db.shop.svc.cluster.local:5432: i/o timeout", "node ip-10-0-1-7.ec2.internal is NotReady",
		"uid 0b8f5c2e-4d1a-4c3b-9e2f-1a2b3c4d5e6f gone", "image sha256:0123456789abcdef0123 missing", "container 3f4e5d6c7b8a9f0e exited",
		"pulling quay.io/acme/app:2.1 and docker.io/library/nginx@sha256:abc", "from 10.244.1.17/24:8080 and [fe80::1%eth0]:443 and ::1",
		"at 2026-11-29T09:00:01.123Z and 2026-11-29 09:00:01+02:00", "E1129 09:00:01.123456   12345 kubelet.go:2412] failed",
		"pod web-7d9f8c6b5-x2k4q and web-x2k4q and job-1234567890-", "resourcequota compute exceeded for namespace shop",
		"run with --max-pods=110 -v 2", "limit 512Mi, used 2.5GB in 30s at 99%", "ſtrange Kelvin K and ﬁ ligature: 12",
		"", "   ", "no digits, no punctuation at all",
	}
	for _, root := range []string{filepath.Join("..", "testdata", "incidents"), filepath.Join("..", "testdata", "bundles")} {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sc := bufio.NewScanner(bytes.NewReader(data))
			sc.Buffer(nil, 1<<20)
			for n := 0; sc.Scan() && n < 100; n++ {
				if l := sc.Text(); len(l) <= 600 {
					lines = append(lines, l)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(lines) < 10000 {
		t.Fatalf("only %d lines read: the corpus is missing", len(lines))
	}
	names := []string{"web-7d9f8c6b5-x2k4q", "shop", "db"}
	for _, l := range lines {
		if got, want := Mask(l, nil), full(l, masks); got != want {
			t.Errorf("Mask(%q) = %q, every expression gives %q", l, got, want)
		}
		if got, want := maskKey(l, names), full(replaceNames(l, names), masks[:len(masks)-3]); got != want {
			t.Errorf("maskKey(%q) = %q, every expression gives %q", l, got, want)
		}
	}
}

// replaceNames masks the names as maskKey does before its expressions.
func replaceNames(s string, names []string) string {
	s = strings.Join(strings.Fields(s), " ")
	for _, n := range names {
		if len(n) >= 3 {
			s = phrase.ReplaceName(s, n, "<name>")
		}
	}
	return s
}
