package logline

import "testing"

func TestPlain(t *testing.T) {
	// Lines built from the components' templates (runc's "exec user process caused %q",
	// the API server's "no matches for kind %q in version %q", the kubelet's
	// "Failed to pull image %q: %v"), as an editor, a chat client or a terminal UI
	// hands them on.
	for _, tc := range []struct{ name, in, want string }{
		{"ascii stays", `Failed to pull image "app:v1": not found`, `Failed to pull image "app:v1": not found`},
		{"typographic double quotes", "exec user process caused \u201cexec format error\u201d",
			`exec user process caused "exec format error"`},
		{"low and guillemet quotes", "Failed to pull image \u201eapp:v1\u201c and \u00abapp:v2\u00bb",
			`Failed to pull image "app:v1" and "app:v2"`},
		{"typographic single quotes", "can\u2019t open \u2018/data\u2019", `can't open '/data'`},
		{"json-escaped quotes", `exec user process caused \u201cexec format error\u201d`,
			`exec user process caused "exec format error"`},
		{"no-break spaces", "Back-off\u00a0restarting failed\u202fcontainer", "Back-off restarting failed container"},
		{"escaped no-break space", `Back-off\u00a0restarting`, "Back-off restarting"},
		{"a value a UI wrapped at its border", "no matches for kind \"Ingress\" in version \"networking.k8s.io/v1be \u2502\u2502 ta1\"",
			`no matches for kind "Ingress" in version "networking.k8s.io/v1beta1"`},
		{"a table's column borders", "\u2502 web-0 \u2502 CrashLoopBackOff \u2502", "  web-0   CrashLoopBackOff  "},
		{"a pane's rule", "\u2500\u2500\u2500 Events", "    Events"},
		{"a doubled border at the margin stays a border", "\u2502\u2502 Failed", "   Failed"},
		{"other unicode stays", "Ошибка: \u2192 ok", "Ошибка: \u2192 ok"},
		{"a lone backslash-u is not an escape", `C:\users\x`, `C:\users\x`},
	} {
		if got := Plain(tc.in); got != tc.want {
			t.Errorf("%s: Plain(%q) = %q, want %q", tc.name, tc.in, got, tc.want)
		}
	}
}

func TestPlainKeepsASCII(t *testing.T) {
	s := `E0101 00:00:00.000000 1 kubelet.go:1] "Error syncing pod" err="failed"`
	if got := Plain(s); got != s {
		t.Fatalf("Plain changed ASCII text: %q", got)
	}
}
