package analyze

import (
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"podflow.dev/podflow/catalog"
)

// CatalogRule is the rule ID of findings about trouble no rule or signature explains
// but whose lines a component on the Pod path is known to print (the catalog,
// generated from the components' released sources): the finding names the stage that
// component's outermost message belongs to, the innermost message as the cause, and
// where each is printed. `unexplained` is left for lines no component on the path prints.
const CatalogRule = "catalog"

// CatalogRef cites one catalog entry a finding rests on: which component prints the
// message, where, and in which releases.
type CatalogRef struct {
	ID        string `json:"id"`
	Component string `json:"component"`
	// Layer is "outer" for the layer that gives the stage, "inner" for the one that
	// gives the cause ("both" when one layer gives both); "signature" for the layer
	// whose call site tied the line to a signature (docs/signatures.md).
	Layer    string `json:"layer"`
	Stage    Stage  `json:"stage,omitempty"`
	Template string `json:"template"`
	// PrintedBy is the package, function, file and line that print it, in its last
	// release.
	PrintedBy string `json:"printedBy"`
	// Releases is the span of releases that print it, "v1.14.10 – v1.37.2".
	Releases string `json:"releases"`
	// Text is the layer of the evidence it matched.
	Text string `json:"text"`
}

// chainRead is what the catalog makes of one line: its outermost known layer, which
// says the stage, and its innermost known layer, which says the cause.
type chainRead struct {
	outer, inner *catalog.Match
	// text is the line read, layers its error-chain layers, outermost first.
	text   string
	layers []string
	// teardown is the layer that says the pod's sandbox was being stopped when the
	// error happened (sandboxPhase): "" when no layer says so.
	teardown string
	// unmounting is the layer that says a volume of a pod was being torn down
	// (volumeTeardownPhase): "" when no layer says so.
	unmounting string
	// creating is set when no layer's entry has a stage of its own but one says a
	// container was being created (createPhase): the start stage.
	creating bool
}

// reObjectHead is the head of an API error that names the object before its reason
// (`statefulsets.apps "web" is forbidden: `), as the text before a quoted layer ends.
var reObjectHead = regexp.MustCompile(`[a-z][a-z0-9.-]* \\?"[^"\\\s]+\\?" is (?:forbidden|invalid): $`)

// layerText is the message a component printed, with what it wrapped: the line from
// where the match begins, else the match's layer from there. A JSON line's rest is its
// other fields, so its layer (the message with the error it was given) is used.
func (r chainRead) layerText(m *catalog.Match) string {
	if i := strings.Index(r.text, m.Text); i >= 0 && m.Text != "" && !strings.HasPrefix(r.text, "{") {
		return r.text[i:]
	}
	if m.Layer < len(r.layers) {
		l := r.layers[m.Layer]
		if i := strings.Index(l, m.Text); i >= 0 {
			return l[i:]
		}
		return l
	}
	return m.Text
}

// withObjectHead is a quoted layer with the API error's head before it in the line when
// that head names the object refused: the admission plugin's reason does not say which
// StatefulSet it refused, the head does.
func (r chainRead) withObjectHead(t string) string {
	i := strings.Index(r.text, t)
	if i <= 0 {
		return t
	}
	before := r.text[max(0, i-160):i]
	if loc := reObjectHead.FindStringIndex(before); loc != nil {
		return strings.ReplaceAll(before[loc[0]:], `\"`, `"`) + t
	}
	return t
}

// known reports whether a component on the Pod path prints the line as trouble at a
// stage.
func (r chainRead) known() bool { return r.outer != nil }

// reTimeOut is a template that says only that a wait ran out.
var reTimeOut = regexp.MustCompile(`(?i)\btime(?:d)? ?out\b|\btimeout\b|deadline exceeded`)

// timeOut reports whether the innermost layer read says only that a wait ran out: the
// effect of a failure another line may name.
func (r chainRead) timeOut() bool {
	m := r.inner
	if m == nil {
		m = r.outer
	}
	return m != nil && reTimeOut.MatchString(m.Entry.Template)
}

func (r chainRead) stage() Stage {
	if r.outer == nil {
		return ""
	}
	if r.teardown != "" || r.unmounting != "" {
		return StageTermination
	}
	if r.creating {
		return StageStart
	}
	return Stage(r.outer.Entry.Stage)
}

// The calls that set up a pod's sandbox and those that tear it down print the same
// inner errors (the CNI plugin's, "cni config uninitialized") from the same packages
// and functions named after the sandbox and its network, so the catalog's place rules
// put both at the sandbox stage. What the layers around them say tells them apart: the
// outermost layer that names a phase decides it.
var (
	// reTeardownLayer starts a layer printed while a pod's sandbox is stopped: the
	// kubelet's StopPodSandbox and KillPodSandbox (cri-client remote_runtime.go
	// "StopPodSandbox %q from runtime service failed"; kuberuntime_manager.go
	// killPodWithSyncResult, whose FailedKillPod event says `error killing pod: failed to
	// "KillPodSandbox" for …`; "Failed to stop sandbox"), containerd's sandbox_stop.go
	// ("failed to destroy network for sandbox %q"), CRI-O's sandbox_stop
	// ("failed to destroy network for pod sandbox %s", older "for container %s in
	// sandbox %s"), crictl's and crioctl's "stopping the pod sandbox", the CNI
	// library's DEL ("plugin type=%q failed (delete)") and dockershim's "failed to
	// teardown pod".
	reTeardownLayer = regexp.MustCompile(`^(?:"?StopPodSandbox\b|KillPodSandbox|error killing pod|failed to "KillPodSandbox"|[Ff]ailed to stop (?:pod )?sandbox|` +
		`[Ff]ailed to destroy network for |stopping the pod sandbox|plugin type="[^"]*" failed \(delete\)|plugin \S+ failed \(delete\)|` +
		`networkPlugin cni failed to teardown pod|NetworkPlugin cni failed on the status hook)`)
	// reSetupLayer starts a layer printed while a pod's sandbox is made.
	reSetupLayer = regexp.MustCompile(`^(?:"?RunPodSandbox\b|CreatePodSandbox|Failed to create pod sandbox|[Ff]ailed to setup network for sandbox|` +
		`failed to set ?up (?:sandbox container|pod)|networkPlugin cni failed to set up|plugin type="[^"]*" failed \(add\)|plugin \S+ failed \(add\)|failed to create pod network sandbox)`)
)

// reCreateLayer starts a layer printed while a container is created: containerd's CRI
// CreateContainer ("failed to create containerd container: %w", internal/cri/server
// container_create.go in 2.x, pkg/cri/server in 1.x) and the task it starts ("failed
// to create containerd task", "failed to create shim task"), CRI-O's "failed to
// generate container spec", the kubelet's CreateContainerError. containerd 2.x prints
// the first words for its sandbox's container too, so the catalog gives them no stage;
// a sandbox's creation says so in a layer around them (reSetupLayer).
var reCreateLayer = regexp.MustCompile(`^(?:Error: )?(?:failed to create containerd container|failed to create containerd task|failed to create shim task|` +
	`failed to generate container \S+ spec|CreateContainerError)\b`)

// createPhase is the outermost layer's match of a reading whose entries name no stage
// when a layer says a container was being created and none a sandbox; nil otherwise.
func createPhase(r chainRead, best []*catalog.Match) *catalog.Match {
	create := -1
	for i, l := range r.layers {
		t := strings.TrimLeft(l, " \t\"'[")
		if reSetupLayer.MatchString(t) {
			return nil
		}
		if create < 0 && reCreateLayer.MatchString(t) {
			create = i
		}
	}
	if create < 0 {
		return nil
	}
	for _, m := range best {
		if m.Layer >= create && m.Entry.Class == "failure" {
			return m
		}
	}
	return nil
}

// sandboxPhase is the outermost layer that says the sandbox was being torn down, or ""
// when none does or a layer outside it says it was being set up.
// reUnmountLayer starts a layer the kubelet prints while it removes a volume of a pod
// that is going away (pkg/volume/util/operationexecutor operation_generator.go:
// GenerateUnmountVolumeFunc's "UnmountVolume.TearDown failed for volume %q …", the CSI
// plugin's "Unmounter.TearDownAt failed", GenerateUnmountDeviceFunc's "UnmountDevice
// failed", a block volume's "UnmapVolume.UnmapPodDevice failed"): the same inner
// errors as a mount's (the CSI driver's "Could not unmount", mount-utils'), from the
// same packages, but the pod is being deleted, so its chain breaks at termination.
var reUnmountLayer = regexp.MustCompile(`^(?:UnmountVolume\.TearDown failed|UnmountVolume\.TearDownAt failed|(?:kubernetes\.io/csi: )?Unmounter\.TearDownAt failed|UnmountDevice failed|UnmapVolume\.\w+ failed)`)

// volumeTeardownPhase is the first layer that says a pod's volume was being torn down,
// unless a layer before it says a volume was being set up.
func volumeTeardownPhase(layers []string) string {
	for _, l := range layers {
		t := strings.TrimLeft(l, " \t\"'[")
		switch {
		case strings.HasPrefix(t, "MountVolume.") || strings.HasPrefix(t, "AttachVolume."):
			return ""
		case reUnmountLayer.MatchString(t):
			return t
		}
	}
	return ""
}

func sandboxPhase(layers []string) string {
	for _, l := range layers {
		t := strings.TrimLeft(l, " \t\"'[")
		switch {
		case reSetupLayer.MatchString(t):
			return ""
		case reTeardownLayer.MatchString(t):
			return t
		}
	}
	return ""
}

// minCatalogLiterals is the least literal text an entry must have matched for its
// reading to count: "%s failed: %v" says nothing about where.
const minCatalogLiterals = 12

// minProseLiterals is the least literal text an entry must have matched to read a
// line that is a sentence.
const minProseLiterals = 20

// shortInProse reports whether a match has too little literal text to be read in a
// sentence.
func shortInProse(m catalog.Match) bool { return m.Entry.Literals() < minProseLiterals }

// usable reports whether a match says enough, and is trouble, to read a line by: a
// template of only generic words ("unexpected error: %v") says nothing about where.
func usable(m *catalog.Match) bool {
	e := m.Entry
	return e.Class != "info" && e.Literals() >= minCatalogLiterals && !e.Generic() && !wordyTail(m) && !apiRequestAsPull(m)
}

// reKubeAPIPath is a request path of the Kubernetes API ("/api/v1/namespaces/…",
// "/apis/zalando.org/v1/routegroups"); a registry's are "/v2/…".
var reKubeAPIPath = regexp.MustCompile(`(?:^|["' /])/(?:api/v1|apis/[a-z0-9][a-z0-9.-]*/v[0-9]+[a-z0-9]*)(?:/|["'?\s]|$)`)

// apiRequestAsPull reports whether an image pull's message (a registry client's
// "unexpected status code %v: %v") reads a layer that quotes a request to the Kubernetes
// API: an operator's list refused by the API server, which no registry serves.
func apiRequestAsPull(m *catalog.Match) bool {
	return m.Entry.Stage == string(StageImage) && reKubeAPIPath.MatchString(m.Text)
}

// wordyTail reports whether a template's path value runs into the next layer of an
// error chain, or a short template's value, a name where it prints one
// ("failed to read %s": a path), took a run of words instead: another program's sentence
// that only begins with the same few words ("failed to read data from plugin storage
// file path=…", "failed to decode configuration from flags: …"). A wrapped error ("…:
// %w", "probe failed: %s") is words by nature, and a quoted value may hold any; neither
// is held to it.
func wordyTail(m *catalog.Match) bool {
	for _, name := range m.Entry.NameCaptures() {
		v := m.Captures[name]
		if name != "err" && strings.Contains(v, ": ") && (strings.HasPrefix(v, "/") || !strings.ContainsAny(v[:1], "\"'`") && len(strings.Fields(v)) >= 4) {
			// A path or a name the template prints that runs on past an error chain's
			// ": " into the next layer (Perl's "Unable to create /x/y: No such file or
			// directory at …", an operator's "Unable to create ClientSets, error: open
			// /var/run/…: no such file or directory", both read as the kubelet's "Unable
			// to create %s directory %v" through the last word of the errno's text).
			return true
		}
	}
	if m.Entry.Literals() >= minProseLiterals {
		return false
	}
	for _, name := range m.Entry.NameCaptures() {
		v := m.Captures[name]
		if name == "err" {
			continue
		}
		if v == "" {
			// The value the template prints there is missing: "Could not find
			// rspec-3.10.0 … in any of the sources" is no "could not find %v %q".
			return true
		}
		if v == "" || v[0] == '"' || v[0] == '\'' || v[0] == '`' {
			continue
		}
		if len(strings.Fields(v)) >= 4 {
			return true
		}
	}
	for _, v := range m.Captures {
		// A quoted value with no letter or digit in it (YAML's "could not find
		// expected ':'") names nothing.
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && !strings.ContainsFunc(v, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) {
			return true
		}
	}
	return false
}

// eventHead reports whether a match is an event message at a line's outermost layer
// ("Readiness probe failed: …"): what the kubelet recorded around the output it quotes.
func eventHead(m *catalog.Match) bool {
	return m.Layer == 0 && m.Entry.Kind == "event" && m.Entry.Literals() >= minCatalogLiterals
}

// containerOutput is the hint of a line a container printed (its log, `kubectl logs`):
// the program in it wrote the line, wrapping what the API server, runc or a library
// told it, never what the node's agents print into their own logs.
const containerOutput = "a container's output"

// neverInContainerOutput are the components whose messages never reach a container's
// output: the kubelet and containerd write their own logs and the pod's events and
// status (runc, which starts the process, does write into it). A line of a container's
// log that reads like one of theirs is the program's own: an application also says
// "unable to create directory".
var neverInContainerOutput = map[string]bool{"kubelet": true, "containerd": true}

// readChain reads one line of evidence through the catalog: the message split into its
// error-chain layers, each matched against what the components print. hint is the
// component the evidence comes from when known ("kubelet" for a kubelet journal or an
// event it reported): among equally specific entries of one layer, its own comes first.
func readChain(text, hint string) chainRead { return readChainFrom(text, hint, "") }

// readLine is readChain of a line of evidence: its component hint, and for a klog line
// the source file its header names ("kubelet.go:2451"), which tells the entry that
// printed it from another component's more specific look-alike.
func readLine(l *Line) chainRead { return readChainFrom(l.Text, componentHint(l), klogFile(l)) }

// readChainFrom is readChain of text its own header says was printed in file.
func readChainFrom(text, hint, file string) chainRead {
	text = strings.TrimSpace(text)
	if text == "" || len(text) > 8<<10 {
		return chainRead{}
	}
	return readMatches(text, hint, file, catalog.Default().Read(text))
}

// klogFile is the source file a journal line's klog header names, or "".
func klogFile(l *Line) string {
	e := l.entry()
	if e == nil || e.Source == "" {
		return ""
	}
	f, _, _ := strings.Cut(e.Source, ":")
	return f
}

// codeSpan reports whether text is one Markdown code span: output a reporter quoted, not
// a sentence of theirs.
func codeSpan(text string) bool {
	return len(text) > 2 && text[0] == '`' && text[len(text)-1] == '`' && !strings.Contains(text[1:len(text)-1], "`")
}

// readMatches is readChain of text whose catalog matches are ms; file is the source
// file the line's own header says printed it, when it says.
func readMatches(text, hint, file string, ms []catalog.Match) chainRead {
	if hint == "" && slices.ContainsFunc(ms, shortInProse) && isProse(text) && !codeSpan(text) {
		// A reporter's sentence (a line no component is known to have printed) holds
		// a component's message only where enough of it is there: "could not find %v
		// %q" reads any sentence that says it could not find something.
		// An event's message the line begins with ("Readiness probe failed: …") is
		// the kubelet's, around what it quotes.
		ms = slices.DeleteFunc(slices.Clone(ms), func(m catalog.Match) bool {
			return shortInProse(m) && !(eventHead(&m) && strings.HasPrefix(text, m.Text))
		})
	}
	best := bestLayers(ms, hint, file)
	r := chainRead{text: text, layers: catalog.Layers(text)}
	for _, m := range best {
		if m.Entry.Stage != "" && Stage(m.Entry.Stage).Valid() {
			r.outer = m
			break
		}
	}
	if r.outer == nil {
		r.outer = createPhase(r, best)
		r.creating = r.outer != nil
	}
	if r.outer == nil {
		return chainRead{}
	}
	// Each layer is read from its start, and from where the entry that prints it
	// begins in it (a ticket's sentence around a runtime's message).
	var phases []string
	for i, l := range r.layers {
		phases = append(phases, l)
		for _, m := range best {
			if m.Layer == i {
				phases = append(phases, r.layerText(m))
			}
		}
	}
	r.teardown = sandboxPhase(phases)
	r.unmounting = volumeTeardownPhase(phases)
	r.inner = r.outer
	for _, m := range best {
		if m.Layer > r.inner.Layer && m.Entry.Class == "failure" {
			r.inner = m
		}
	}
	return r
}

// bestLayers picks, per layer of a reading, the usable entry that prints it: the most
// specific; among equally specific ones the component the evidence comes from (hint),
// else the one still printed in a later release. An entry printed in the source file the
// line's klog header names (file) comes before all: the line says where it was printed.
// The result is in layer order.
func bestLayers(ms []catalog.Match, hint, file string) []*catalog.Match {
	var best []*catalog.Match // per layer, in layer order
	for i := 0; i < len(ms); {
		j := i
		for j < len(ms) && ms[j].Layer == ms[i].Layer {
			j++
		}
		var pick *catalog.Match
		for k := i; k < j; k++ {
			m := &ms[k]
			if !usable(m) || hint == containerOutput && neverInContainerOutput[m.Entry.Component] {
				continue
			}
			if pick == nil {
				pick = m
				continue
			}
			if m.Entry.Literals() < pick.Entry.Literals() {
				break
			}
			// Equally specific: the component the evidence comes from, else the one
			// that still prints it in a later release.
			switch {
			case hint != "" && (m.Entry.Component == hint) != (pick.Entry.Component == hint):
				if m.Entry.Component == hint {
					pick = m
				}
			case laterRelease(m.Entry, pick.Entry):
				pick = m
			}
		}
		if file != "" && file != "main.go" {
			for k := i; k < j; k++ {
				if m := &ms[k]; usable(m) && path.Base(m.Entry.File) == file {
					pick = m
					break
				}
			}
		}
		if pick != nil {
			best = append(best, pick)
		}
		i = j
	}
	return best
}

// refs cites the entries of a reading.
func (r chainRead) refs() []CatalogRef {
	if r.outer == nil {
		return nil
	}
	ref := func(m *catalog.Match, layer string) CatalogRef {
		e := m.Entry
		rel := e.First
		if e.Last != "" && e.Last != e.First {
			rel += " – " + e.Last
		}
		at := e.File + ":" + strconv.Itoa(e.Line)
		if e.Source == "curated" { // copied from the cited file, not read from a release
			rel, at = "curated from "+e.Module, e.File
		}
		return CatalogRef{ID: e.ID, Component: e.Component, Layer: layer, Stage: Stage(e.Stage), Template: e.Template,
			PrintedBy: e.Package + " " + e.Function + " (" + at + ")",
			Releases:  rel, Text: oneLine(r.layerText(m))}
	}
	if r.inner == r.outer {
		return []CatalogRef{ref(r.outer, "both")}
	}
	return []CatalogRef{ref(r.outer, "outer"), ref(r.inner, "inner")}
}

// cause is the reading in words: who says what, and the innermost reason.
func (r chainRead) cause() string {
	o := r.outer.Entry
	quoted := oneLine(r.withObjectHead(r.layerText(r.outer)))
	s := componentName(o.Component) + " reports" + wrapperClause(WrapperValues(r.text), quoted) + " " + quoteText(quoted)
	if r.unmounting != "" && r.unmounting != r.layerText(r.outer) {
		// The kubelet's layer names the volume and the pod being removed.
		s = "removing a volume of the pod as it is deleted failed: " + quoteText(oneLine(r.unmounting)) + "; " + s
	}
	if r.teardown != "" && r.teardown != r.layerText(r.outer) {
		// The layer that says the sandbox was being stopped names the sandbox and
		// often the pod: it comes first.
		s = "stopping the pod's sandbox failed: " + quoteText(oneLine(r.teardown)) + "; " + s
	}
	if r.inner != r.outer {
		s += "; the innermost reason, from " + componentName(r.inner.Entry.Component) + ": " + quoteText(oneLine(r.innerText()))
	}
	if v := r.deepest(); v != "" && !strings.Contains(strings.ReplaceAll(s, `\"`, `"`), v) {
		// The quoted layers were cut before their end, or a layer below the innermost
		// known one says more: the value that failed (a device name, an interface, a
		// path) is at the end of the chain, so it is quoted whole.
		s += "; the error it wraps ends in " + quoteText(v)
	}
	return s
}

// wrapperClause names what the line's wrappers print about whose chain broke (the
// volume, the CNI plugin, the pod a controller could not create) when the quoted layer
// does not hold it: ", for volume docker-sock," when the reading starts below the
// kubelet's "MountVolume.SetUp failed for volume ..." wrapper.
func wrapperClause(vals map[string]string, quoted string) string {
	var b strings.Builder
	if v := vals[WrapperPod]; v != "" && !strings.Contains(quoted, v) {
		b.WriteString(" for pod " + v)
		if w := vals[WrapperWorkload]; w != "" {
			b.WriteString(" of " + w)
		}
	}
	if v := vals[WrapperVolume]; v != "" && !strings.Contains(quoted, `"`+v+`"`) {
		b.WriteString(" for volume " + v)
	}
	if v := vals[WrapperPlugin]; v != "" && !strings.Contains(quoted, `"`+v+`"`) {
		b.WriteString(" from CNI plugin " + v)
	}
	if b.Len() == 0 {
		return ""
	}
	return "," + b.String() + ","
}

// deepest is the innermost layer of the line, one line long, when it lies below the
// innermost known layer or is the end of a layer the cause would quote cut: "" when
// the quoted text already ends with it.
func (r chainRead) deepest() string {
	if len(r.layers) == 0 {
		return ""
	}
	last := oneLine(strings.TrimRight(r.layers[len(r.layers)-1], "\"\\ "))
	if last == "" || strings.HasSuffix(last, "…") {
		return ""
	}
	if len(r.layers)-1 <= r.inner.Layer && !strings.HasSuffix(oneLine(r.innerText()), "…") {
		return ""
	}
	return last
}

// maxLabel is the longest wrapper quoted with the innermost reason.
const maxLabel = 40

// innerText is the innermost reason with the short label that wraps it directly in the
// line: "mount error(115): Operation now in progress", where the errno text alone loses
// which call failed and its code. The label runs back to the previous wrapping, sentence
// or line break.
func (r chainRead) innerText() string {
	t := r.layerText(r.inner)
	i := strings.Index(r.text, t)
	if i < 2 || r.text[i-2:i] != ": " || r.inner == r.outer {
		return t
	}
	before := r.text[:i-2]
	start := 0
	for _, sep := range []string{": ", ". ", "\n", "\t", "\""} {
		if j := strings.LastIndex(before, sep); j >= 0 && j+len(sep) > start {
			start = j + len(sep)
		}
	}
	label := strings.TrimSpace(before[start:])
	if label == "" || len(label) > maxLabel {
		return t
	}
	return r.text[i-2-len(before[start:]):]
}

// componentName names a component in a sentence.
func componentName(c string) string {
	switch c {
	case "kubelet", "kube-proxy", "kube-scheduler", "kube-apiserver", "kube-controller-manager":
		return "the " + c
	case "cni-plugins":
		return "a CNI reference plugin"
	case "aws-vpc-cni":
		return "the AWS VPC CNI"
	case "linux":
		return "the Linux kernel"
	}
	return c
}

func quoteText(s string) string { return "\u201c" + s + "\u201d" }

// componentHint is the component a line of evidence comes from, when its kind says.
func componentHint(l *Line) string {
	switch l.Kind() {
	case TextLog:
		// A known pod's log: a collected one, or `kubectl logs POD` pasted. Text the
		// import only guessed to be a log may be anything quoted in a ticket.
		if l.Pod != nil || l.Object().Kind == "Pod" {
			return containerOutput
		}
	case TextJournal, TextStatus:
		return "kubelet"
	case TextEvent:
		switch l.Reason() {
		case "FailedScheduling", "Unschedulable":
			return "kube-scheduler"
		case "FailedCreate", "SuccessfulCreate", "FailedDelete":
			return "kube-controller-manager"
		}
		return "kubelet"
	}
	return ""
}

// laterRelease reports whether a is still printed in a later release than b, comparing
// the releases of one module line (Kubernetes components print by the same versions).
func laterRelease(a, b *catalog.Entry) bool {
	if a.Module != b.Module && !(strings.HasPrefix(a.Module, "k8s.io/") && strings.HasPrefix(b.Module, "k8s.io/")) {
		return false
	}
	return semverLess(b.Last, a.Last)
}

// semverLess compares two vMAJOR.MINOR.PATCH versions; anything else compares as text.
func semverLess(a, b string) bool {
	pa, pb := versionParts(a), versionParts(b)
	if pa == nil || pb == nil {
		return a < b
	}
	for i := range 3 {
		if pa[i] != pb[i] {
			return pa[i] < pb[i]
		}
	}
	return false
}

func versionParts(v string) []int {
	v = strings.TrimPrefix(v, "v")
	if i := strings.IndexAny(v, "-+"); i >= 0 {
		v = v[:i]
	}
	f := strings.Split(v, ".")
	if len(f) != 3 {
		return nil
	}
	out := make([]int, 3)
	for i, s := range f {
		n, err := strconv.Atoi(s)
		if err != nil {
			return nil
		}
		out[i] = n
	}
	return out
}

// outerLayerFirst reports whether a message that a runtime-stage signature matched at
// byte at of text is, by its error chain, another step's trouble: the outermost layer
// a component on the Pod path prints is of an earlier stage and begins before the
// match, so the match is only a layer it wraps. A runtime signature reads what the
// application itself prints (a TLS or connection error of its own); wrapped in "Failed
// to pull image "x": … x509: certificate signed by unknown authority" the same words
// are the kubelet's image pull failing, not the application's. The outermost known
// layer gives the stage, the innermost the cause. Signatures of the other stages name
// the component's own inner errors (a cloud API's refusal under "failed to provision
// volume") and keep their stage. A request-stage signature reads a client's request
// refused by the API server; wrapped in a node's step ("Failed to create pod sandbox:
// … plugin type="multus" failed (add): … error getting pod: Unauthorized") the refusal
// is that node component's own call failing, and its step is the stage.
func outerLayerFirst(text string, at int, st Stage, hint string) bool {
	if at <= 0 || st != StageRuntime && st != StageRequest {
		return false
	}
	r := readChain(text, hint)
	if !r.known() {
		return false
	}
	if st == StageRuntime && r.stage().Order() >= st.Order() && r.stage() != StageProbe {
		// A probe's failure wraps what its command printed ("Readiness probe
		// failed: panic: …"): the probe's program, not the container's.
		return false
	}
	if st == StageRequest {
		// The node's step must be said in words that place it for sure ("Failed to
		// create pod sandbox"): a client library's message that many programs print
		// (kubectl's "resource mapping not found", vendored by CNI agents too) is no
		// node step around a client's refusal.
		if ps, ok := phraseStage(text); !ok || ps.Order() < StageNode.Order() || r.stage().Order() < StageNode.Order() {
			return false
		}
	}
	start := strings.Index(text, r.outer.Text)
	return start >= 0 && start < at
}
