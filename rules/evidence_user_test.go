package rules

import (
	"strings"
	"testing"
)

// The kubelet's refusal of a non-numeric user names the user; the Dockerfile pasted with
// it says where the image sets it, and the cause names that instruction.
func TestANonNumericUserNamesTheDockerfilesUser(t *testing.T) {
	rs := catalogRoots(t, map[string]string{
		"error.txt":  "Error: container has runAsNonRoot and image has non-numeric user (app), cannot verify user is non-root\n",
		"Dockerfile": "FROM python:3.12-slim\nRUN useradd app\nUSER app\nCMD [\"python\", \"main.py\"]\n",
	})
	if len(rs) == 0 {
		t.Fatal("no root")
	}
	if c := rs[0].Cause; !strings.Contains(c, "USER app") {
		t.Errorf("root cause lacks the Dockerfile's USER app: %s", c)
	}
}
