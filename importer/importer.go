// Package importer turns evidence written by other tools (a Troubleshoot support bundle,
// a `kubectl cluster-info dump` directory, an OpenShift must-gather, a sosreport, pasted
// command output) into a podflow bundle in memory, laid out as
// podflow writes it, so the same rules run on it. Every input file is accounted for in
// import-report.json, and every produced file records its origin so findings cite the
// original file and line.
package importer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/sirupsen/logrus"

	"podflow.dev/podflow/bundle"
)

// Format names an input layout.
type Format string

// Input formats. FormatAuto detects the format from the files.
const (
	FormatAuto            Format = ""
	FormatPodflow         Format = "podflow"
	FormatTroubleshoot    Format = "troubleshoot"
	FormatClusterInfoDump Format = "cluster-info-dump"
	// FormatMustGather is the tree `oc adm must-gather` writes.
	FormatMustGather Format = "must-gather"
	// FormatSosreport is a node's sosreport: command output under sos_commands/ and
	// copies of files at their original paths.
	FormatSosreport Format = "sosreport"
	// FormatLoose is pasted command output: kubectl describe, get and events, crictl
	// tables and inspect, kubelet journal lines, container logs, one or several per file.
	FormatLoose Format = "loose"
)

// Formats lists the formats --format accepts, in detection order.
var Formats = []Format{FormatPodflow, FormatTroubleshoot, FormatMustGather, FormatSosreport, FormatClusterInfoDump, FormatLoose}

// ParseFormat validates a --format value; "" and "auto" mean detect.
func ParseFormat(s string) (Format, error) {
	if s == "" || s == "auto" {
		return FormatAuto, nil
	}
	for _, f := range Formats {
		if string(f) == s {
			return f, nil
		}
	}
	names := make([]string, len(Formats))
	for i, f := range Formats {
		names[i] = string(f)
	}
	return "", fmt.Errorf("unknown format %q: want auto, %s", s, strings.Join(names, ", "))
}

// UnknownFormatError is returned when detection cannot tell what an input is.
type UnknownFormatError struct {
	Input string
	// Files says, per input file, what it looked like: empty or binary (text is always
	// read as loose evidence).
	Files []string
}

func (e *UnknownFormatError) Error() string {
	msg := fmt.Sprintf("cannot tell the format of %q: it is not a podflow bundle (no %s or %s/), a Troubleshoot support bundle (no %s naming troubleshoot.sh), an OpenShift must-gather (no namespaces/ or cluster-scoped-resources/), a sosreport (no sos_commands/), a kubectl cluster-info dump (no nodes.json or <namespace>/pods.json), and it holds no text to read as pasted output; name a format with --format",
		e.Input, bundle.ManifestPath, bundle.ClusterResources, bundle.VersionMarkerPath)
	if len(e.Files) > 0 {
		msg += " (" + strings.Join(e.Files, "; ") + ")"
	}
	return msg
}

// Options configure Open.
type Options struct {
	// Format forces an input format; FormatAuto detects it.
	Format Format
	// Limits cap what is read from the input.
	Limits bundle.Limits
	// Log receives per-file decisions at debug and trace level; nil discards them.
	Log logrus.FieldLogger
	// Stdin is read when the input is "-"; it holds loose evidence.
	Stdin io.Reader
	// ReadOnce is for one consumer that decodes each file once (one analysis): the
	// bundle returned is marked ReadOnce, and one read from an archive or directory is
	// opened with bundle.OpenReadOnce, which keeps its files compressed until taken.
	ReadOnce bool
}

// Open reads input (a directory, a .tar, .tar.gz or .tar.xz archive, or "-" for standard
// input, which holds loose evidence; a single text file is loose evidence too) and returns it as
// a podflow bundle. A podflow bundle is returned as read; anything else is imported and
// carries import-report.json, which is also returned (nil for a podflow bundle podflow
// collected itself).
func Open(input string, opts Options) (*bundle.Bundle, *Report, error) {
	return OpenContext(context.Background(), input, opts)
}

// OpenContext is Open that stops, with ctx's error, once ctx is done: while the input
// is read, and between the steps of an import.
func OpenContext(ctx context.Context, input string, opts Options) (*bundle.Bundle, *Report, error) {
	b, rep, err := openContext(ctx, input, opts)
	if err == nil && opts.ReadOnce {
		b.ReadOnce()
	}
	return b, rep, err
}

func openContext(ctx context.Context, input string, opts Options) (*bundle.Bundle, *Report, error) {
	log := opts.Log
	if log == nil {
		discard := logrus.New()
		discard.SetLevel(logrus.PanicLevel)
		log = discard
	}
	src, err := openInput(ctx, input, opts)
	if err != nil {
		return nil, nil, err
	}
	format := opts.Format
	if format == FormatAuto {
		if format = Detect(src); format == FormatAuto {
			return nil, nil, &UnknownFormatError{Input: input, Files: unusable(src)}
		}
		log.WithFields(logrus.Fields{"input": input, "format": format}).Debug("format detected")
	}
	if format == FormatPodflow {
		// podflow never writes a link, and verify refuses one: a link in a podflow
		// bundle was put there by someone else, and is refused here just the same.
		for _, sk := range src.Skipped {
			if !sk.Unreadable {
				return nil, nil, fmt.Errorf("open bundle %q: %w (podflow bundles hold no links)",
					input, &bundle.UnsafeEntryError{Entry: sk.Name, Reason: sk.Reason})
			}
		}
		rep, err := ReadReport(src)
		return src, rep, err
	}
	rep := newReport(format, input)
	for _, sk := range src.Skipped {
		if sk.Unreadable {
			rep.unreadable(sk.Name, "", errors.New(sk.Reason))
			continue
		}
		rep.ignored(sk.Name, "link", sk.Reason+": links are not followed")
	}
	var files map[string][]byte
	switch format {
	case FormatTroubleshoot:
		files = importTroubleshoot(src, rep)
	case FormatClusterInfoDump:
		files = importClusterInfoDump(src, rep)
	case FormatMustGather:
		files = importMustGather(src, rep)
	case FormatSosreport:
		files = importSosreport(src, rep)
	case FormatLoose:
		files = importLoose(src, rep)
	default:
		return nil, nil, fmt.Errorf("import %q: unsupported format %q", input, format)
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	rep.sort()
	for _, f := range rep.Files {
		log.WithFields(logrus.Fields{"file": f.Path, "status": f.Status, "detected": f.Detected}).Trace(f.Reason)
	}
	if !holdsEvidence(files) {
		return nil, rep, fmt.Errorf("import %q as %s: no file holds evidence podflow reads (%d files looked at)%s",
			input, format, len(rep.Files), rep.whyNothing())
	}
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return nil, nil, fmt.Errorf("encode %s: %w", bundle.ImportReportPath, err)
	}
	files[bundle.ImportReportPath] = append(data, '\n')
	b, err := bundle.New(input, files)
	if err != nil {
		return nil, nil, fmt.Errorf("import %q: %w", input, err)
	}
	if rep.CollectedAt != nil {
		b.Manifest = &bundle.Manifest{Type: "import", CollectedAt: *rep.CollectedAt}
	}
	return b, rep, nil
}

// Detect tells the format of files already read; FormatAuto when none fits.
func Detect(src *bundle.Bundle) Format {
	switch {
	case isPodflow(src):
		return FormatPodflow
	case isTroubleshoot(src):
		return FormatTroubleshoot
	case isMustGather(src):
		return FormatMustGather
	case isSosreport(src):
		return FormatSosreport
	case isClusterInfoDump(src):
		return FormatClusterInfoDump
	case isLoose(src):
		return FormatLoose
	}
	return FormatAuto
}

// podflowMarker is in the version.yaml podflow writes; Troubleshoot writes its own version.
const podflowMarker = "podflow-bundle"

// isPodflow accepts podflow's own bundles, including trimmed ones without a manifest:
// podflow's layout is Troubleshoot's, and only Troubleshoot writes a version.yaml of its own.
func isPodflow(src *bundle.Bundle) bool {
	if src.Has(bundle.ManifestPath) || src.Has(bundle.ImportReportPath) {
		return true
	}
	if data, err := src.ReadFile(bundle.VersionMarkerPath); err == nil {
		return strings.Contains(string(data), podflowMarker)
	}
	for _, n := range src.Names() {
		if strings.HasPrefix(n, bundle.ClusterResources+"/") || strings.HasPrefix(n, bundle.NodesDir+"/") {
			return true
		}
	}
	return false
}

func isTroubleshoot(src *bundle.Bundle) bool {
	data, err := src.ReadFile(bundle.VersionMarkerPath)
	return err == nil && strings.Contains(string(data), "troubleshoot.sh")
}

func isClusterInfoDump(src *bundle.Bundle) bool {
	hasNodes := src.Has("nodes.json") || src.Has("nodes.yaml")
	for _, n := range src.Names() {
		parts := strings.Split(n, "/")
		if len(parts) == 2 && (parts[1] == "pods.json" || parts[1] == "pods.yaml") {
			return true
		}
	}
	return hasNodes
}

// knownKinds are the list names podflow reads, cluster-scoped and namespaced.
var knownKinds = func() map[string]bool {
	m := map[string]bool{}
	for _, k := range append(append([]string{}, bundle.ClusterScopedKinds...), bundle.NamespacedKinds...) {
		m[k] = true
	}
	return m
}()

// holdsEvidence reports whether an import produced anything beyond its format marker.
func holdsEvidence(files map[string][]byte) bool {
	for name := range files {
		if path.Base(name) != bundle.VersionMarkerPath {
			return true
		}
	}
	return false
}
