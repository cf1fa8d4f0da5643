package rules

import (
	"strings"
	"testing"

	"podflow.dev/podflow/analyze"
)

// A controller's or operator's structured log (zap and logr's JSON encoder, logrus'
// JSONFormatter, slog) holds the API server's refusal inside a string field, its quotes
// escaped. The refusal is read as the API server printed it: by the signature of that
// refusal, with the values its cause names. The records are written from the encoders'
// formats and the API server's messages (admission webhook statuserror.go, quota's
// admission.go, NewInvalid with field.Path keys).
func TestRefusalInsideAStructuredLogRecord(t *testing.T) {
	cases := []struct {
		name, line string
		stage      analyze.Stage
		want       []string
	}{
		{"logr: webhook denial in error",
			`{"level":"error","ts":"2025-01-07T08:01:02.345Z","logger":"controllers.Shop","msg":"Reconciler error","namespace":"shop","name":"web","error":"failed to update Deployment shop/web: admission webhook \"limits.policy.example.org\" denied the request: container web has no memory limit"}`,
			analyze.StageAdmission, []string{"limits.policy.example.org", "container web has no memory limit"}},
		{"logrus JSON: quota refusal in error",
			`{"error":"pods \"worker-7c9d\" is forbidden: exceeded quota: team-quota, requested: requests.memory=2Gi, used: requests.memory=7Gi, limited: requests.memory=8Gi","level":"error","msg":"could not start the worker","time":"2025-01-07T08:01:02Z"}`,
			analyze.StageAdmission, []string{"team-quota", "requests.memory=2Gi"}},
		{"slog: invalid object with a map key holding a space",
			`{"time":"2025-01-07T08:01:02.345Z","level":"ERROR","msg":"sync failed","err":"ConfigMap \"app-settings\" is invalid: data[feature flags.yaml]: Invalid value: \"feature flags.yaml\": a valid config key must consist of alphanumeric characters, '-', '_' or '.'"}`,
			analyze.StageRequest, []string{"app-settings", "data[feature flags.yaml]"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := catalogRoots(t, map[string]string{"operator.log": c.line + "\n"})
			if len(root) != 1 {
				t.Fatalf("want one root, got %v", ruleIDs(root))
			}
			if root[0].Stage != c.stage || root[0].Rule == "unexplained" || root[0].Rule == "catalog" {
				t.Errorf("root %s at %s, want a rule at %s: %s", root[0].Rule, root[0].Stage, c.stage, root[0].Cause)
			}
			for _, w := range c.want {
				if !strings.Contains(root[0].Cause, w) {
					t.Errorf("the cause does not say %q: %s", w, root[0].Cause)
				}
			}
		})
	}
}
