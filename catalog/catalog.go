// Package catalog holds what the components on the Pod path print (kubelet, scheduler,
// API server and its admission plugins, controllers, kube-proxy, containerd, runc, the
// CNI plugins, CSI drivers and sidecars, CoreDNS): one entry per message template, read
// from the components' released Go sources by the generator in catalog/gen, with the
// releases that print it, where it is printed, and the stage and class of the Pod chain it
// belongs to. Read splits a message into its error-chain layers and names the entries that
// print each layer.
//
// The package imports nothing else of podflow, so every layer of podflow may use it.
package catalog

import (
	"bufio"
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// FormatVersion is the version of the catalog data format this package reads. A data file
// with another major version is refused.
const FormatVersion = 1

//go:embed data/catalog.jsonl.gz
var embedded []byte

// Entry is one message template a component prints.
type Entry struct {
	ID        string `json:"id"`        // stable: component and a hash of component and template
	Component string `json:"component"` // "kubelet", "kube-scheduler", "containerd", "calico", "csi-…"
	Module    string `json:"module"`    // Go module path of the last release that prints it
	First     string `json:"first"`     // first release (module version) that prints it
	Last      string `json:"last"`      // last release (module version) that prints it
	Package   string `json:"package"`   // import path of the package that prints it (last release)
	Function  string `json:"function"`  // function or method, "(*T).M" for methods
	File      string `json:"file"`      // path inside the module (last release)
	Line      int    `json:"line"`
	Kind      string `json:"kind"`             // "event", "error", "log", "status", "message", "reason"
	Reason    string `json:"reason,omitempty"` // event reason, scheduler status code or gRPC code
	Level     string `json:"level,omitempty"`  // "error", "warning", "info"
	Template  string `json:"template"`         // the format string as in the source
	Stage     string `json:"stage,omitempty"`  // a podflow stage ID, "" if not on one stage
	Class     string `json:"class"`            // "failure", "warning", "info"

	// Plain is set when the template is printed as is (errors.New, klog.InfoS, an event
	// message without arguments): a '%' in it is text, not a verb.
	Plain bool `json:"plain,omitempty"`
	// Keys are the structured logging keys printed with the message (klog.InfoS/ErrorS).
	Keys []string `json:"keys,omitempty"`
	// Releases counts the pinned releases that print it.
	Releases int `json:"releases,omitempty"`
	// Sites counts the call sites in the last release that print it.
	Sites int `json:"sites,omitempty"`
	// Source is "curated" for an entry copied by hand from the source file it cites (a
	// component no served Go module prints: the kernel, systemd, nfs-utils, OpenShift's
	// SCC admission); such an entry has no line and its releases read "curated".
	Source string `json:"source,omitempty"`

	m atomic.Pointer[matcher] // compiled on first use
	p atomic.Pointer[prep]    // literal pieces, computed on first use

	checks []string // words looked up before a candidate is tried (set by the index)
}

// Header is the first line of the data file: the format version and the generator's pins.
type Header struct {
	Format   int      `json:"format"`
	Entries  int      `json:"entries"`
	Pins     []Pin    `json:"pins"`
	NotServe []string `json:"notServed,omitempty"`
}

// Pin is one module and the releases of it that were read.
type Pin struct {
	Module   string   `json:"module"`
	Versions []string `json:"versions"`
}

// Catalog is a loaded catalog: its entries, an index by ID and a literal-fragment index
// built on first use of Read.
type Catalog struct {
	header  Header
	entries []*Entry
	byID    map[string]*Entry

	indexOnce sync.Once
	idx       *index
}

var (
	defaultOnce sync.Once
	defaultCat  *Catalog
	defaultErr  error
)

// Default returns the catalog embedded in podflow, loaded on first use. The embedded data
// is tested to load; should it not, Default returns an empty catalog and Err tells why.
func Default() *Catalog {
	defaultOnce.Do(func() {
		defaultCat, defaultErr = Load(bytes.NewReader(embedded))
		if defaultErr != nil {
			defaultCat = &Catalog{byID: map[string]*Entry{}}
		}
	})
	return defaultCat
}

// Err is the error loading the embedded catalog met, if any.
func Err() error {
	Default()
	return defaultErr
}

// Load reads a catalog from gzip-compressed JSON lines: a header line, then one entry a line.
func Load(r io.Reader) (*Catalog, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("read catalog: %w", err)
	}
	defer zr.Close()
	return LoadJSONL(zr)
}

// LoadJSONL reads a catalog from uncompressed JSON lines.
func LoadJSONL(r io.Reader) (*Catalog, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	c := &Catalog{byID: map[string]*Entry{}}
	line := 0
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		if line == 1 {
			if err := json.Unmarshal(b, &c.header); err != nil {
				return nil, fmt.Errorf("read catalog header: %w", err)
			}
			if c.header.Format != FormatVersion {
				return nil, fmt.Errorf("read catalog: format version %d, this podflow reads %d", c.header.Format, FormatVersion)
			}
			continue
		}
		e := &Entry{}
		if err := json.Unmarshal(b, e); err != nil {
			return nil, fmt.Errorf("read catalog line %d: %w", line, err)
		}
		if e.ID == "" || e.Template == "" || e.Component == "" {
			return nil, fmt.Errorf("read catalog line %d: entry without id, component or template", line)
		}
		if _, dup := c.byID[e.ID]; dup {
			return nil, fmt.Errorf("read catalog line %d: duplicate id %s", line, e.ID)
		}
		c.byID[e.ID] = e
		c.entries = append(c.entries, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read catalog line %d: %w", line+1, err)
	}
	if line == 0 {
		return nil, fmt.Errorf("read catalog: no header")
	}
	return c, nil
}

// Len is the number of entries.
func (c *Catalog) Len() int { return len(c.entries) }

// Entries returns the entries, sorted by ID. The slice is the catalog's own: do not modify.
func (c *Catalog) Entries() []*Entry { return c.entries }

// Lookup returns the entry with the given ID, or nil.
func (c *Catalog) Lookup(id string) *Entry { return c.byID[id] }

// Header returns the format version and the pins the catalog was generated from.
func (c *Catalog) Header() Header { return c.header }

// Search returns the entries whose template holds every word of words (case ignored),
// sorted by ID.
func (c *Catalog) Search(words string) []*Entry {
	fs := strings.Fields(strings.ToLower(words))
	if len(fs) == 0 {
		return nil
	}
	var out []*Entry
	for _, e := range c.entries {
		t := strings.ToLower(e.Template)
		ok := true
		for _, f := range fs {
			if !strings.Contains(t, f) {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
