package analyze

import "testing"

// A stage word inside a dashed name is the name ("system-probe", "image-builder"); on
// its own, or in camel case, it still says the stage.
func TestTextStageReadsNamesAsNames(t *testing.T) {
	cases := []struct {
		text string
		want Stage
	}{
		{`error reading /etc/system-probe/config.yaml: permission denied`, StageRuntime},
		{`container image-builder exited with code 2`, StageRuntime},
		{`Liveness probe failed: connection refused`, StageProbe},
		{`Back-off pulling image "example/app:1.0"`, StageImage},
		{`ErrImagePull`, StageImage},
	}
	for _, c := range cases {
		if got := textStage(c.text, StageRuntime); got != c.want {
			t.Errorf("textStage(%q) = %s, want %s", c.text, got, c.want)
		}
	}
}
