package untrusted

import "testing"

func TestText(t *testing.T) {
	for in, want := range map[string]string{
		"web-7d9f":                    "web-7d9f",
		"évènement ok":                "évènement ok",
		"evil\x1b]0;PWNED\x07\x1b[2J": `evil\x1b]0;PWNED\a\x1b[2J`,
		"line\nforged":                `line\nforged`,
		"cr\rback":                    `cr\rback`,
		"rtl\u202eevil":               `rtl\u202eevil`,
		"bad\xffbyte":                 `bad\xffbyte`,
		"c1\u009bx":                   `c1\u009bx`,
	} {
		if got := Text(in); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLines(t *testing.T) {
	if got, want := Lines("a\x1b[2J\nb\r"), "a\\x1b[2J\nb\\r"; got != want {
		t.Errorf("Lines = %q, want %q", got, want)
	}
}

func TestShellArg(t *testing.T) {
	for in, want := range map[string]string{
		"web-7d9f":    "web-7d9f",
		"app;id;":     "'app;id;'",
		"$(id>x)":     "'$(id>x)'",
		"it's":        `'it'\''s'`,
		"":            "''",
		"a b":         "'a b'",
		"ns/name":     "ns/name",
		"`whoami`":    "'`whoami`'",
		"--context=x": "--context=x",
	} {
		if got := ShellArg(in); got != want {
			t.Errorf("ShellArg(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestIsName(t *testing.T) {
	for in, want := range map[string]bool{
		"web-7d9f8b6c5d-4xk2p":     true,
		"ip-10-0-1-2.ec2.internal": true,
		"app;id;":                  false,
		"$(id>x)":                  false,
		"Web":                      false,
		"":                         false,
		"-web":                     false,
	} {
		if got := IsName(in); got != want {
			t.Errorf("IsName(%q) = %v, want %v", in, got, want)
		}
	}
}

func FuzzText(f *testing.F) {
	f.Add("evil\x1b]0;x\x07")
	f.Fuzz(func(t *testing.T, s string) {
		out := Text(s)
		for i := 0; i < len(out); i++ {
			if c := out[i]; c < 0x20 || c == 0x7f {
				t.Fatalf("Text(%q) = %q holds control byte %#x", s, out, c)
			}
		}
	})
}
