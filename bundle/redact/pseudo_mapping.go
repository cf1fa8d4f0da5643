package redact

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"

	"podflow.dev/podflow/bundle"
	"podflow.dev/podflow/untrusted/yamlbudget"
)

// Pseudonymization replaces who and where (namespace, pod, node and workload names,
// label values, UIDs, IPs and hostnames) with stable stand-ins such as namespace-1,
// deployment-2-7d9f8b6c4 or 10.1.2.3, in every file and path of a bundle, so that a
// pod still points at its node, its owner and its events. The mapping that reverses
// it is kept in a separate file, never in the bundle, and is reused for the next bundle
// so the same cluster keeps the same pseudonyms.
//
// Text is read as tokens (runs of letters, digits, '.' and '-'); a token is replaced
// when it is a known identity, when its dot-separated labels are (web.shop.svc), or
// when a known identity is its dash-separated prefix or suffix (a ReplicaSet named
// after its Deployment, a static pod named after its node). Well-known names
// (default, kube-system) and names shorter than three characters are kept.

// MappingVersion is the format of mapping files.
const MappingVersion = 1

// Mapping is what pseudonymization replaced with what. It is secret: it reverses the
// pseudonyms.
type Mapping struct {
	Version int               `json:"version"`
	Names   map[string]string `json:"names"`
	IPs     map[string]string `json:"ips"`
	UIDs    map[string]string `json:"uids"`
}

// LoadMapping reads a plain mapping file; a file that does not exist yet is an empty
// mapping.
func LoadMapping(path string) (*Mapping, error) { return LoadMappingWith(path, nil) }

// LoadMappingWith reads a mapping file, decrypting it with passphrase when it is
// encrypted; a file that does not exist yet is an empty mapping.
func LoadMappingWith(path string, passphrase []byte) (*Mapping, error) {
	m := &Mapping{Version: MappingVersion, Names: map[string]string{}, IPs: map[string]string{}, UIDs: map[string]string{}}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read mapping: %w", err)
	}
	if data, err = openMapping(data, passphrase); err != nil {
		return nil, fmt.Errorf("read mapping %q: %w", path, err)
	}
	if err := yamlbudget.UnmarshalStrict(data, m); err != nil {
		return nil, fmt.Errorf("read mapping %q: %w", path, err)
	}
	if m.Version != MappingVersion {
		return nil, fmt.Errorf("read mapping %q: version %d, this podflow reads version %d", path, m.Version, MappingVersion)
	}
	for _, mp := range []*map[string]string{&m.Names, &m.IPs, &m.UIDs} {
		if *mp == nil {
			*mp = map[string]string{}
		}
	}
	return m, nil
}

// Save writes the mapping, readable by its owner only, replacing path atomically.
func (m *Mapping) Save(path string) error { return m.SaveWith(path, nil) }

// SaveWith writes the mapping like Save, encrypted with passphrase when one is given.
func (m *Mapping) SaveWith(path string, passphrase []byte) error {
	data, err := yaml.Marshal(m)
	if err != nil {
		return fmt.Errorf("encode mapping: %w", err)
	}
	data = append([]byte("# podflow pseudonymization mapping. Keep it private: it reverses the pseudonyms.\n"), data...)
	if len(passphrase) > 0 {
		if data, err = sealMapping(data, passphrase); err != nil {
			return fmt.Errorf("encrypt mapping: %w", err)
		}
	}
	_, _ = bundle.RemoveStalePartials(path) // leftovers of a killed run; best effort
	tmp, err := os.CreateTemp(filepath.Dir(path), bundle.PartialPattern(path))
	if err != nil {
		return fmt.Errorf("write mapping: %w", err)
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write mapping %q: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write mapping %q: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write mapping %q: %w", path, err)
	}
	return nil
}
