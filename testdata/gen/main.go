// Command gen writes a large, realistic podflow bundle for benchmarks: recorded scenario
// namespaces cloned many times with fresh identities (namespace, workload names, UIDs,
// container IDs, IPs), spread over many nodes, with kubelet and containerd journals
// built from the recorded lines, re-stamped along the collection window.
//
//	go run ./testdata/gen -size S -o /tmp/s.tar.gz
//	go run ./testdata/gen -pods 3000 -events 30000 -journal 100MiB -o /tmp/x.tar.gz
//
// Sizes: S is 1k pods, 10k events, 40 MB of kubelet journal; M 5k, 50k, 200 MB;
// L 20k, 200k, 800 MB; XL four times L (80k, 800k, 3.2 GB), the size of a large
// customer's cluster. The containerd journal is half the kubelet journal.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path"
	"regexp"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"time"

	"podflow.dev/podflow/bundle"
)

// size is one benchmark size.
type size struct {
	pods, events, nodes int
	journal             int64
}

var sizes = map[string]size{
	"S":  {pods: 1000, events: 10000, nodes: 10, journal: 40 << 20},
	"M":  {pods: 5000, events: 50000, nodes: 50, journal: 200 << 20},
	"L":  {pods: 20000, events: 200000, nodes: 200, journal: 800 << 20},
	"XL": {pods: 80000, events: 800000, nodes: 800, journal: 3200 << 20},
}

// healthy is the template most namespaces are cloned from; the others add failures
// in the proportions of a real cluster (a few percent).
const healthy = "healthy-web"

var failing = []string{
	"crash-exit-1", "image-pull-dns", "insufficient-cpu", "oom-killed", "liveness-restarts",
	"rollout-stuck", "secret-key-missing", "pvc-unbound", "readiness-failing", "job-backoff-limit",
}

// templateNode is the node every recorded scenario ran on.
const templateNode = "podflow-node"

type options struct {
	scenarios string
	out       string
	seed      uint64
	size      size
	failEvery int
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("gen", flag.ContinueOnError)
	o := options{}
	sz := fs.String("size", "S", "S, M, L or XL; -pods, -events, -nodes and -journal override its parts")
	pods := fs.Int("pods", 0, "pods")
	events := fs.Int("events", 0, "events")
	nodes := fs.Int("nodes", 0, "nodes")
	journal := fs.String("journal", "", "bytes of kubelet journal, e.g. 40MiB")
	fs.StringVar(&o.scenarios, "scenarios", "testdata/bundles", "recorded scenario bundles to clone")
	fs.StringVar(&o.out, "o", "", "bundle to write (.tar.gz, .tar or a directory)")
	fs.Uint64Var(&o.seed, "seed", 1, "random seed: the same seed writes the same bundle")
	fs.IntVar(&o.failEvery, "fail-every", 25, "one namespace in this many is a failing scenario")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the generation to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	s, ok := sizes[strings.ToUpper(*sz)]
	if !ok {
		return fmt.Errorf("unknown -size %q: S, M, L or XL", *sz)
	}
	if *pods > 0 {
		s.pods = *pods
	}
	if *events > 0 {
		s.events = *events
	}
	if *nodes > 0 {
		s.nodes = *nodes
	}
	if *journal != "" {
		n, err := parseBytes(*journal)
		if err != nil {
			return err
		}
		s.journal = n
	}
	if o.out == "" {
		return errors.New("missing -o OUT")
	}
	o.size = s
	return generate(o)
}

func parseBytes(s string) (int64, error) {
	mult := int64(1)
	for suffix, m := range map[string]int64{"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "KB": 1e3, "MB": 1e6, "GB": 1e9} {
		if strings.HasSuffix(s, suffix) {
			s, mult = strings.TrimSuffix(s, suffix), m
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("bad byte count %q: %w", s, err)
	}
	return n * mult, nil
}

// template is one recorded scenario: its namespace's files and the node evidence that
// names its pods.
type template struct {
	name       string
	nsFiles    map[string][]byte // kind -> list
	logs       map[string][]byte // pod/container.log -> text
	sandboxes  []json.RawMessage
	containers []json.RawMessage
	inspect    map[string][]byte // file name -> document, crictl inspect
	inspectp   map[string][]byte // crictl inspectp
	kubelet    []string
	runtime    []string
	pods       int
	workloads  []string // names renamed per clone so clones can share a namespace

	// pattern finds every identity a clone replaces; compiled caches each template
	// string cut at those identities, so the regular expressions run once per
	// template string, not once per clone.
	pattern  *regexp.Regexp
	compiled map[string][]piece
}

// piece is a part of a template string: literal text, or an identity a clone replaces.
type piece struct {
	text string
	kind byte // 0 literal, 'n' namespace, 'o' node, 'w' workload, 'u' UID, 'h' runtime ID, 'i' IP
}

func (t *template) compile(s string) []piece {
	if p, ok := t.compiled[s]; ok {
		return p
	}
	if t.pattern == nil {
		alts := []string{regexp.QuoteMeta(t.name), regexp.QuoteMeta(templateNode), uuidRE.String(), hexRE.String(), ipRE.String()}
		if len(t.workloads) > 0 {
			quoted := make([]string, len(t.workloads))
			for i, w := range t.workloads {
				quoted[i] = regexp.QuoteMeta(w)
			}
			alts = append(alts, `\b(?:`+strings.Join(quoted, "|")+`)\b`)
		}
		t.pattern = regexp.MustCompile(strings.Join(alts, "|"))
		t.compiled = map[string][]piece{}
	}
	var out []piece
	last := 0
	for _, m := range t.pattern.FindAllStringIndex(s, -1) {
		tok := s[m[0]:m[1]]
		var kind byte
		switch {
		case tok == t.name:
			kind = 'n'
		case tok == templateNode:
			kind = 'o'
		case strings.HasPrefix(tok, "sha256:"):
			continue // image digests stay: the images are shared
		case len(tok) == 36 && uuidRE.MatchString(tok):
			kind = 'u'
		case len(tok) == 64 && hexRE.MatchString(tok):
			kind = 'h'
		case ipRE.MatchString(tok):
			kind = 'i'
		default:
			kind = 'w'
		}
		out = append(out, piece{text: s[last:m[0]]}, piece{text: tok, kind: kind})
		last = m[1]
	}
	out = append(out, piece{text: s[last:]})
	t.compiled[s] = out
	return out
}

func loadTemplate(dir, name string) (*template, *bundle.Bundle, error) {
	b, err := bundle.Open(path.Join(dir, name), bundle.DefaultLimits())
	if err != nil {
		return nil, nil, err
	}
	t := &template{name: name, nsFiles: map[string][]byte{}, logs: map[string][]byte{},
		inspect: map[string][]byte{}, inspectp: map[string][]byte{}}
	var tokens []string // UIDs and runtime IDs that tie node evidence to the namespace
	for _, n := range b.Names() {
		info := bundle.ParsePath(n)
		data, _ := b.ReadFile(n) // listed by Names, so present
		switch {
		case info.Area == "namespaced" && info.Namespace == name:
			t.nsFiles[info.Kind] = data
			tokens = append(tokens, uuidRE.FindAllString(string(data), -1)...)
		case info.Area == "log" && info.Namespace == name:
			t.logs[path.Join(info.Pod, path.Base(n))] = data
		}
	}
	var pods struct {
		Items []struct {
			Metadata struct {
				Name            string `json:"name"`
				OwnerReferences []any  `json:"ownerReferences"`
			} `json:"metadata"`
		} `json:"items"`
	}
	if err := json.Unmarshal(t.nsFiles[bundle.KindPods], &pods); err != nil {
		return nil, nil, fmt.Errorf("%s: pods: %w", name, err)
	}
	t.pods = len(pods.Items)
	for _, p := range pods.Items {
		if len(p.Metadata.OwnerReferences) == 0 {
			t.workloads = append(t.workloads, p.Metadata.Name)
		}
	}
	for _, kind := range []string{bundle.KindDeployments, bundle.KindStatefulSets, bundle.KindDaemonSets, bundle.KindJobs,
		bundle.KindCronJobs, bundle.KindServices} {
		var list struct {
			Items []struct {
				Metadata struct{ Name string } `json:"metadata"`
			} `json:"items"`
		}
		if data, ok := t.nsFiles[kind]; ok && json.Unmarshal(data, &list) == nil {
			for _, it := range list.Items {
				t.workloads = append(t.workloads, it.Metadata.Name)
			}
		}
	}
	sort.Strings(t.workloads)
	t.workloads = compact(t.workloads)
	node := func(f string) []byte {
		data, _ := b.ReadFile(bundle.NodePath(templateNode, f))
		return data
	}
	mine := func(s string) bool {
		if strings.Contains(s, name) {
			return true
		}
		for _, tok := range tokens {
			if strings.Contains(s, tok) {
				return true
			}
		}
		return false
	}
	var sb struct {
		Items []json.RawMessage `json:"items"`
	}
	_ = json.Unmarshal(node(bundle.NodeCRIPods), &sb) // absent evidence is no template lines
	for _, it := range sb.Items {
		if mine(string(it)) {
			t.sandboxes = append(t.sandboxes, it)
			tokens = append(tokens, hexRE.FindAllString(string(it), -1)...)
		}
	}
	var ps struct {
		Containers []json.RawMessage `json:"containers"`
	}
	_ = json.Unmarshal(node(bundle.NodeCRIContainers), &ps)
	for _, it := range ps.Containers {
		if mine(string(it)) {
			t.containers = append(t.containers, it)
			tokens = append(tokens, hexRE.FindAllString(string(it), -1)...)
		}
	}
	for _, n := range b.Names() {
		info := bundle.ParsePath(n)
		if info.Area != "node" || info.Node != templateNode {
			continue
		}
		data, _ := b.ReadFile(n)
		switch {
		case strings.HasPrefix(info.NodeFile, "crictl/inspect/") && mine(string(data)):
			t.inspect[path.Base(n)] = data
		case strings.HasPrefix(info.NodeFile, "crictl/inspectp/") && mine(string(data)):
			t.inspectp[path.Base(n)] = data
		}
	}
	t.kubelet = journalLines(node(bundle.NodeKubeletLog), mine)
	t.runtime = journalLines(node(bundle.NodeRuntimeLog), mine)
	return t, b, nil
}

func compact(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// journalLines keeps the entries (with their continuation lines) that mention the
// template's namespace, pods or containers.
func journalLines(data []byte, mine func(string) bool) []string {
	var out []string
	keep := false
	for _, line := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		if !isContinuation(line) {
			keep = mine(line)
		}
		if keep && line != "" {
			out = append(out, line)
		}
	}
	return out
}

// isContinuation is true for the lines journalctl prints for a multi-line message after
// its first (they carry no klog header).
func isContinuation(line string) bool {
	i := strings.Index(line, "]: ")
	if i < 0 || len(line) < 25 || line[4] != '-' {
		return true
	}
	rest := line[i+3:]
	return len(rest) < 2 || !(strings.IndexByte("IWEF", rest[0]) >= 0 && rest[1] >= '0' && rest[1] <= '9') && !strings.HasPrefix(rest, "time=")
}

var (
	uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	hexRE  = regexp.MustCompile(`(?:sha256:)?[0-9a-f]{64}`)
	ipRE   = regexp.MustCompile(`\b10\.(?:244|96)\.\d{1,3}\.\d{1,3}\b`)
)

// ids hands out fresh identities.
type ids struct {
	r   *rand.Rand
	ip  uint32
	svc uint32
}

func (g *ids) uuid() string {
	var b [16]byte
	for i := range b {
		b[i] = byte(g.r.UintN(256))
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func (g *ids) hex64() string {
	const digits = "0123456789abcdef"
	var b [64]byte
	for i := range b {
		b[i] = digits[g.r.UintN(16)]
	}
	return string(b[:])
}

func (g *ids) podIP() string {
	g.ip++
	return fmt.Sprintf("10.%d.%d.%d", 64+g.ip>>16&0x3f, g.ip>>8&0xff, g.ip&0xff)
}

func (g *ids) serviceIP() string {
	g.svc++
	return fmt.Sprintf("10.96.%d.%d", g.svc>>8&0xff, g.svc&0xff)
}

// rewriter maps one clone's template identities to fresh ones, the same way in every file.
type rewriter struct {
	g       *ids
	t       *template // nil: rewrite with names and the identity patterns directly
	ns      string
	node    string
	names   *strings.Replacer
	words   *regexp.Regexp
	renames map[string]string
	seen    map[string]string
}

func newRewriter(g *ids, t *template, ns, node, suffix string) *rewriter {
	pairs := []string{t.name, ns, templateNode, node}
	rw := &rewriter{g: g, t: t, ns: ns, node: node, names: strings.NewReplacer(pairs...), seen: map[string]string{}, renames: map[string]string{}}
	if len(t.workloads) > 0 {
		quoted := make([]string, len(t.workloads))
		for i, w := range t.workloads {
			quoted[i] = regexp.QuoteMeta(w)
			rw.renames[w] = w + "-" + suffix
		}
		rw.words = regexp.MustCompile(`\b(?:` + strings.Join(quoted, "|") + `)\b`)
	}
	return rw
}

func (rw *rewriter) fresh(old string, mk func() string) string {
	if v, ok := rw.seen[old]; ok {
		return v
	}
	v := mk()
	rw.seen[old] = v
	return v
}

func (rw *rewriter) apply(s string) string {
	if rw.t != nil {
		return rw.applyCompiled(s)
	}
	s = rw.names.Replace(s)
	if rw.words != nil {
		s = rw.words.ReplaceAllStringFunc(s, func(w string) string { return rw.renames[w] })
	}
	s = uuidRE.ReplaceAllStringFunc(s, func(u string) string { return rw.fresh(u, rw.g.uuid) })
	s = hexRE.ReplaceAllStringFunc(s, func(h string) string {
		if strings.HasPrefix(h, "sha256:") {
			return h // image digests stay: the images are shared
		}
		return rw.fresh(h, rw.g.hex64)
	})
	return ipRE.ReplaceAllStringFunc(s, func(ip string) string {
		if strings.HasPrefix(ip, "10.96.") {
			return rw.fresh(ip, rw.g.serviceIP)
		}
		return rw.fresh(ip, rw.g.podIP)
	})
}

func (rw *rewriter) applyCompiled(s string) string {
	pieces := rw.t.compile(s)
	var b strings.Builder
	b.Grow(len(s) + len(s)/8)
	for _, p := range pieces {
		switch p.kind {
		case 0:
			b.WriteString(p.text)
		case 'n':
			b.WriteString(rw.ns)
		case 'o':
			b.WriteString(rw.node)
		case 'w':
			b.WriteString(rw.renames[p.text])
		case 'u':
			b.WriteString(rw.fresh(p.text, rw.g.uuid))
		case 'h':
			b.WriteString(rw.fresh(p.text, rw.g.hex64))
		case 'i':
			if strings.HasPrefix(p.text, "10.96.") {
				b.WriteString(rw.fresh(p.text, rw.g.serviceIP))
			} else {
				b.WriteString(rw.fresh(p.text, rw.g.podIP))
			}
		}
	}
	return b.String()
}

// lists accumulates the items of every generated list file.
type lists map[string][]json.RawMessage

func (l lists) add(file string, data []byte, seen map[string]bool) error {
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(data, &list); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	if l[file] == nil {
		l[file] = []json.RawMessage{} // an empty list says the kind was collected
	}
	for _, it := range list.Items {
		if seen != nil {
			var m struct {
				Kind     string                `json:"kind"`
				Metadata struct{ Name string } `json:"metadata"`
			}
			_ = json.Unmarshal(it, &m) // an item without metadata is kept as is
			key := file + "/" + m.Metadata.Name
			if seen[key] {
				continue
			}
			seen[key] = true
		}
		l[file] = append(l[file], it)
	}
	return nil
}

func encodeList(kind string, items []json.RawMessage) ([]byte, error) {
	if items == nil {
		items = []json.RawMessage{}
	}
	data, err := json.MarshalIndent(map[string]any{"apiVersion": "v1", "kind": kind, "metadata": map[string]any{}, "items": items}, "", "  ")
	return append(data, '\n'), err
}

func generate(o options) error {
	g := &ids{r: rand.New(rand.NewPCG(o.seed, o.seed^0x9e3779b97f4a7c15))}
	base, baseBundle, err := loadTemplate(o.scenarios, healthy)
	if err != nil {
		return err
	}
	var fails []*template
	for _, name := range failing {
		t, _, err := loadTemplate(o.scenarios, name)
		if err != nil {
			return err
		}
		fails = append(fails, t)
	}
	collected := baseBundle.Manifest.CollectedAt
	nsCount := max(10, o.size.pods/100)
	nodes := make([]string, o.size.nodes)
	for i := range nodes {
		nodes[i] = fmt.Sprintf("node-%03d", i)
	}
	w, err := bundle.Create(o.out, bundle.WriterOptions{Force: true, ModTime: collected})
	if err != nil {
		return err
	}
	defer w.Abort() // a no-op once Close succeeded

	out := lists{}
	seen := map[string]bool{}
	type nodeEvidence struct {
		sandboxes, containers []json.RawMessage
		kubelet, runtime      [][]string // one block of lines per clone
	}
	perNode := make([]nodeEvidence, len(nodes))
	pods, unit := 0, 0
	var podEvents []json.RawMessage // one clone's events, the pattern padding copies
	for pods < o.size.pods {
		t := base
		if unit%o.failEvery == o.failEvery-1 {
			t = fails[(unit/o.failEvery)%len(fails)]
		}
		ns := fmt.Sprintf("team-%03d", unit%nsCount)
		slot := fmt.Sprintf("s%03d", unit/nsCount)
		node := nodes[g.r.IntN(len(nodes))]
		rw := newRewriter(g, t, ns, node, slot)
		kinds := make([]string, 0, len(t.nsFiles))
		for kind := range t.nsFiles {
			kinds = append(kinds, kind)
		}
		sort.Strings(kinds)
		for _, kind := range kinds {
			file := bundle.NamespacedResourcePath(kind, ns)
			if err := out.add(file, []byte(rw.apply(string(t.nsFiles[kind]))), seen); err != nil {
				return err
			}
		}
		names := make([]string, 0, len(t.logs))
		for n := range t.logs {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			pod, file := path.Split(n)
			p := path.Join(bundle.ClusterResources, "pods", "logs", ns, rw.apply(strings.TrimSuffix(pod, "/")), file)
			if err := w.WriteFile(p, []byte(rw.apply(string(t.logs[n])))); err != nil {
				return err
			}
		}
		ne := &perNode[indexOf(nodes, node)]
		for _, it := range t.sandboxes {
			ne.sandboxes = append(ne.sandboxes, json.RawMessage(rw.apply(string(it))))
		}
		for _, it := range t.containers {
			ne.containers = append(ne.containers, json.RawMessage(rw.apply(string(it))))
		}
		for name, data := range t.inspect {
			if err := w.WriteFile(bundle.NodeCRIInspectPath(node, strings.TrimSuffix(rw.apply(name), ".json")), []byte(rw.apply(string(data)))); err != nil {
				return err
			}
		}
		for name, data := range t.inspectp {
			if err := w.WriteFile(bundle.NodeCRIInspectPodPath(node, strings.TrimSuffix(rw.apply(name), ".json")), []byte(rw.apply(string(data)))); err != nil {
				return err
			}
		}
		ne.kubelet = append(ne.kubelet, applyAll(rw, t.kubelet))
		ne.runtime = append(ne.runtime, applyAll(rw, t.runtime))
		pods += t.pods
		if file := bundle.NamespacedResourcePath(bundle.KindEvents, ns); t == base && podEvents == nil {
			podEvents = out[file][len(out[file])-countEvents(t):]
		}
		unit++
	}
	// Pad events to the target with copies of recorded pod events under fresh names.
	eventFiles := make([]string, nsCount)
	for i := range eventFiles {
		eventFiles[i] = bundle.NamespacedResourcePath(bundle.KindEvents, fmt.Sprintf("team-%03d", i))
	}
	total := 0
	for _, f := range eventFiles {
		total += len(out[f])
	}
	for i := 0; total < o.size.events && len(podEvents) > 0; i++ {
		var ev map[string]any
		if err := json.Unmarshal(podEvents[i%len(podEvents)], &ev); err != nil {
			return err
		}
		md, _ := ev["metadata"].(map[string]any)
		if md == nil {
			continue
		}
		md["name"] = fmt.Sprintf("%v.%x", md["name"], i)
		md["uid"] = g.uuid()
		ev["count"] = 1 + g.r.IntN(40)
		data, err := json.Marshal(ev)
		if err != nil {
			return err
		}
		f := eventFiles[i%len(eventFiles)]
		out[f] = append(out[f], data)
		total++
	}
	files := make([]string, 0, len(out))
	for f := range out {
		files = append(files, f)
	}
	sort.Strings(files)
	for _, f := range files {
		data, err := encodeList(kindOfList(f), out[f])
		if err != nil {
			return err
		}
		if err := w.WriteFile(f, data); err != nil {
			return err
		}
	}
	if err := writeCluster(w, g, baseBundle, nodes, nsCount); err != nil {
		return err
	}
	start := collected.Add(-6 * time.Hour)
	for i, node := range nodes {
		ne := &perNode[i]
		sbs, _ := json.MarshalIndent(map[string]any{"items": orEmpty(ne.sandboxes)}, "", "  ")
		cs, _ := json.MarshalIndent(map[string]any{"containers": orEmpty(ne.containers)}, "", "  ")
		if err := errors.Join(w.WriteFile(bundle.NodePath(node, bundle.NodeCRIPods), sbs),
			w.WriteFile(bundle.NodePath(node, bundle.NodeCRIContainers), cs)); err != nil {
			return err
		}
		for _, f := range []string{bundle.NodeKubeletConfig, bundle.NodeDmesg, bundle.NodeCollection, bundle.NodeCRIImages} {
			if data, err := baseBundle.ReadFile(bundle.NodePath(templateNode, f)); err == nil {
				if err := w.WriteFile(bundle.NodePath(node, f), bytes.ReplaceAll(data, []byte(templateNode), []byte(node))); err != nil {
					return err
				}
			}
		}
		per := o.size.journal / int64(len(nodes))
		if err := errors.Join(
			w.WriteFile(bundle.NodePath(node, bundle.NodeKubeletLog), journal(g, ne.kubelet, per, start, collected)),
			w.WriteFile(bundle.NodePath(node, bundle.NodeRuntimeLog), journal(g, ne.runtime, per/2, start, collected))); err != nil {
			return err
		}
	}
	m := *baseBundle.Manifest
	m.Type = "cluster"
	m.Scope = bundle.Scope{AllNamespaces: true}
	m.Sources = nil
	m.Redaction = bundle.Redaction{}
	if err := w.Close(&m); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "gen: %s: %d pods, %d events, %d namespaces, %d nodes\n", o.out, pods, total, nsCount, len(nodes))
	return nil
}

func orEmpty(items []json.RawMessage) []json.RawMessage {
	if items == nil {
		return []json.RawMessage{}
	}
	return items
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

func applyAll(rw *rewriter, lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = rw.apply(l)
	}
	return out
}

func countEvents(t *template) int {
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	_ = json.Unmarshal(t.nsFiles[bundle.KindEvents], &list)
	return len(list.Items)
}

var listKinds = map[string]string{
	"pods": "PodList", "events": "EventList", "services": "ServiceList", "deployments": "DeploymentList",
	"replicasets": "ReplicaSetList", "endpointslices": "EndpointSliceList", "configmaps": "ConfigMapList",
}

func kindOfList(file string) string {
	kind := path.Base(path.Dir(file))
	if k, ok := listKinds[kind]; ok {
		return k
	}
	return "List"
}

// writeCluster writes the cluster-scoped lists: the template's, with nodes, leases and
// namespaces generated.
func writeCluster(w *bundle.Writer, g *ids, b *bundle.Bundle, nodes []string, nsCount int) error {
	for _, n := range b.Names() {
		info := bundle.ParsePath(n)
		if info.Area != "cluster" && !strings.HasPrefix(n, "cluster-info/") {
			continue
		}
		data, _ := b.ReadFile(n)
		var err error
		switch info.Kind {
		case bundle.KindNodes, bundle.KindNodeLeases:
			data, err = perItem(data, func(item string) []string {
				out := make([]string, len(nodes))
				for i, node := range nodes {
					rw := &rewriter{g: g, names: strings.NewReplacer(templateNode, node), seen: map[string]string{}}
					out[i] = rw.apply(item)
				}
				return out
			})
		case bundle.KindNamespaces:
			data, err = perItem(data, func(item string) []string {
				if !strings.Contains(item, `"`+healthy+`"`) {
					return []string{item}
				}
				out := make([]string, nsCount)
				for i := range out {
					rw := &rewriter{g: g, names: strings.NewReplacer(healthy, fmt.Sprintf("team-%03d", i)), seen: map[string]string{}}
					out[i] = rw.apply(item)
				}
				return out
			})
		}
		if err != nil {
			return fmt.Errorf("%s: %w", n, err)
		}
		if err := w.WriteFile(n, data); err != nil {
			return err
		}
	}
	return nil
}

func perItem(data []byte, expand func(string) []string) ([]byte, error) {
	var list map[string]json.RawMessage
	if err := json.Unmarshal(data, &list); err != nil {
		return nil, err
	}
	var items []json.RawMessage
	if err := json.Unmarshal(list["items"], &items); err != nil {
		return nil, err
	}
	var out []json.RawMessage
	for _, it := range items {
		for _, s := range expand(string(it)) {
			out = append(out, json.RawMessage(s))
		}
	}
	enc, err := json.Marshal(orEmpty(out))
	if err != nil {
		return nil, err
	}
	list["items"] = enc
	res, err := json.MarshalIndent(list, "", "  ")
	return append(res, '\n'), err
}

// journal writes target bytes of journal for one node: the clones' blocks in turn,
// repeated, every entry re-stamped so time runs forward over [start, end).
func journal(g *ids, blocks [][]string, target int64, start, end time.Time) []byte {
	var lines []string
	for _, b := range blocks {
		lines = append(lines, b...)
	}
	if len(lines) == 0 || target <= 0 {
		return nil
	}
	avg := 0
	for _, l := range lines {
		avg += len(l) + 1
	}
	avg /= len(lines)
	n := int(target) / avg
	step := end.Sub(start) / time.Duration(n+1)
	var buf bytes.Buffer
	buf.Grow(int(target) + 4096)
	t := start
	for i := 0; int64(buf.Len()) < target; i++ {
		line := lines[i%len(lines)]
		if !isContinuation(line) {
			t = t.Add(step + time.Duration(g.r.IntN(1000))*time.Microsecond)
			line = restamp(line, t)
		}
		buf.WriteString(line)
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}

// restamp sets the journal timestamp and the klog header time of one line.
func restamp(line string, t time.Time) string {
	const stamp = "2006-01-02T15:04:05-0700"
	if len(line) < len(stamp) {
		return line
	}
	out := t.UTC().Format(stamp) + line[len(stamp):]
	i := strings.Index(out, "]: ")
	if i < 0 {
		return out
	}
	head := out[i+3:]
	if len(head) > 21 && strings.IndexByte("IWEF", head[0]) >= 0 && head[5] == ' ' {
		return out[:i+4] + t.UTC().Format("0102 15:04:05.000000") + head[21:]
	}
	return out
}
