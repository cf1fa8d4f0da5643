package catalog

// Precedence between entries that match the same text. The first rule is specificity: the
// entry whose template has more literal characters wins (a kubelet "failed to pull image
// %q: %w" over a generic "failed to %s: %w"). When two entries of different stages tie,
// this table, read top to bottom, says which stage's entry comes first, and why. The test
// TestPrecedence fails when a tie between two stages is not covered here.
var stagePrecedence = []struct {
	Stage string
	Why   string
}{
	{"scheduling", "a Pod the scheduler cannot place (including a claim that is unbound or whose volume's node affinity or zone excludes every node) is held at scheduling: the scheduler is what holds it"},
	{"admission", "the API server's refusal is what the client sees first"},
	{"request", "a refused request never becomes an object"},
	{"controller", "an owner that does not create Pods comes before any Pod stage"},
	{"node", "a node that is not ready or refuses the Pod comes before anything the node runs for it"},
	{"sandbox", "sandbox and network set-up come before image pulls and mounts on the node"},
	{"volume", "volumes are mounted before containers are created"},
	{"image", "the image is pulled before the container is created"},
	{"config", "the container's configuration is built before it starts"},
	{"start", "the process starts before it runs"},
	{"runtime", "a process that dies comes before its probes"},
	{"probe", "probes come before the Service's endpoints"},
	{"service", "endpoints are read once Pods run"},
	{"termination", "deletion is the last stage"},
}

// stageRank is the position of a stage in stagePrecedence; "" and unknown stages come last.
func stageRank(stage string) int {
	for i, p := range stagePrecedence {
		if p.Stage == stage {
			return i
		}
	}
	return len(stagePrecedence)
}

// StageRank is the position of a stage in the precedence table, for readers that order
// other knowledge by it; "" and unknown stages come last.
func StageRank(stage string) int { return stageRank(stage) }

// Stages are the stage IDs an entry may carry, in chain order (the same strings as
// analyze.Stage).
var Stages = []string{"request", "admission", "controller", "scheduling", "node", "sandbox",
	"image", "volume", "config", "start", "runtime", "probe", "service", "termination"}

// Classes are the classes an entry may carry.
var Classes = []string{"failure", "warning", "info"}
