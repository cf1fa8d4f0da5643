package analyze

import (
	"regexp"
	"strings"
)

// reRefusedPodUpdate is the API server's refusal of a pod update that changes what a
// running pod's spec may not change (k8s.io/kubernetes pkg/apis/core/validation
// validation.go: ValidateContainerUpdates "pod updates may not add or remove
// containers", ValidatePodUpdate "pod updates may not change fields other than …",
// the tolerations check "existing toleration can not be modified except its
// tolerationSeconds"; the same words since 1.x). Every update is validated whole, so
// an update that only removes a finalizer is refused too when an admission plugin
// (a mutating webhook that acts on UPDATE, LimitRanger) changes the spec on the way.
var reRefusedPodUpdate = regexp.MustCompile(`Pod \\?"([^"\\]+)\\?" is invalid: ([^\n]*?(?:pod updates may not[^\n]*|existing toleration can not be modified[^\n]*))`)

// RefusedUpdate is a pod update the API server refused for changing what may not change.
type RefusedUpdate struct {
	// Text is the refusal: "spec.initContainers: Forbidden: pod updates may not add or
	// remove containers".
	Text     string
	Evidence Evidence
}

// RefusedPodUpdates are the refusals of pod updates the evidence shows, each once, by
// the name of the pod refused.
func (v *View) RefusedPodUpdates() map[string][]RefusedUpdate {
	out := map[string][]RefusedUpdate{}
	seen := map[string]bool{}
	lines := v.g.Lines()
	for i := range lines {
		l := &lines[i]
		if !strings.Contains(l.Text, " is invalid: ") {
			continue
		}
		for _, m := range reRefusedPodUpdate.FindAllStringSubmatch(l.Text, -1) {
			text := strings.TrimSpace(m[2])
			if seen[m[1]+"\x00"+text] {
				continue
			}
			seen[m[1]+"\x00"+text] = true
			out[m[1]] = append(out[m[1]], RefusedUpdate{Text: text, Evidence: l.Evidence()})
		}
	}
	return out
}
