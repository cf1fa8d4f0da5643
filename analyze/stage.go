// Package analyze turns one or more bundles into an evidence graph, replays each Pod's
// creation chain into a timeline with per-stage coverage, runs rules over a read-only
// view of the graph and builds the report: findings grouped by cause, linked from root
// cause to consequences, each citing the evidence it rests on.
package analyze

import (
	"fmt"
	"strings"
)

// Stage is a step of the Pod creation chain where something can break. Stage IDs are
// stable API: they appear in reports and in rule definitions.
type Stage string

// The stages, in chain order.
const (
	// StageRequest is the client's request to the API server: kubeconfig and context,
	// reaching the server, TLS, credential plugins, authentication (401),
	// authorization (403), validation, conflicts and persistence in etcd.
	StageRequest     Stage = "request"
	StageAdmission   Stage = "admission"
	StageController  Stage = "controller"
	StageScheduling  Stage = "scheduling"
	StageNode        Stage = "node"
	StageSandbox     Stage = "sandbox"
	StageImage       Stage = "image"
	StageVolume      Stage = "volume"
	StageConfig      Stage = "config"
	StageStart       Stage = "start"
	StageRuntime     Stage = "runtime"
	StageProbe       Stage = "probe"
	StageService     Stage = "service"
	StageTermination Stage = "termination"
)

// Stages lists every stage in chain order; an earlier stage broken is the root cause of
// symptoms at later ones.
var Stages = []Stage{
	StageRequest, StageAdmission, StageController, StageScheduling, StageNode, StageSandbox, StageImage,
	StageVolume, StageConfig, StageStart, StageRuntime, StageProbe, StageService, StageTermination,
}

// Order is the stage's position in the chain, or -1 for an unknown stage.
func (s Stage) Order() int {
	for i, st := range Stages {
		if st == s {
			return i
		}
	}
	return -1
}

// Valid reports whether s is one of Stages.
func (s Stage) Valid() bool { return s.Order() >= 0 }

// Severity ranks findings; --fail-on compares against it.
type Severity string

// Severities from least to most severe.
const (
	SeverityInfo     Severity = "info"
	SeverityWarning  Severity = "warning"
	SeverityError    Severity = "error"
	SeverityCritical Severity = "critical"
)

// Severities lists the severities from least to most severe.
var Severities = []Severity{SeverityInfo, SeverityWarning, SeverityError, SeverityCritical}

// Rank orders severities: info 0 … critical 3, unknown -1.
func (s Severity) Rank() int {
	for i, v := range Severities {
		if v == s {
			return i
		}
	}
	return -1
}

// ParseSeverity accepts a severity name in any case.
func ParseSeverity(s string) (Severity, error) {
	v := Severity(strings.ToLower(strings.TrimSpace(s)))
	if v.Rank() < 0 {
		return "", fmt.Errorf("unknown severity %q: use one of info, warning, error, critical", s)
	}
	return v, nil
}
