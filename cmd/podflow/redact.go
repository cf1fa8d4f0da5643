package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"podflow.dev/podflow/bundle"
	"podflow.dev/podflow/bundle/redact"
)

type redactOptions struct {
	*globalOptions
	open   openFlags
	redact redact.Flags
	pseudo pseudoFlags
	output string
	force  bool
	path   string
}

func newRedactCmd(g *globalOptions) *cobra.Command {
	o := &redactOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "redact BUNDLE -o OUT",
		Short: "Apply the redaction policy to an existing bundle and write a redacted copy",
		Long: `Redact rewrites a bundle through podflow's redaction policy: Secret values, credential
env vars and fields, tokens, JWTs, private keys, cloud keys and passwords in URLs and
connection strings become masks such as <redacted:credential-env:3f9a1c>. Any bundle
works, including one without podflow.json; the copy gets fresh checksums and its
manifest records what was masked, per rule and per file, never a value.

Masks carry a short keyed digest, so one secret masks the same way in every file. The
key is random for each run, so digests mean nothing outside the bundle and cannot be
tested against guesses; --redact-key fixes it for reproducible output and digests that
compare across bundles (keep that key private: it allows testing guesses).

--redact-config adds rules from YAML; user rules come before built-in ones:

  name: acme                          # recorded as policy "podflow+acme"
  rules:
  - name: acme-db-password            # an exact value, wherever it appears
    literal: "correct horse battery"
  - name: acme-ticket                 # capture group 1 of a regular expression
    regex: 'ticket_token=([A-Za-z0-9]+)'
  - name: acme-api-key                # a field of every object of a kind
    kind: ConfigMap
    path: data.api-key                # '.' separates; ["a.b"] quotes; * matches any

With --pseudonymize, names of namespaces, pods, nodes and workloads, label values, UIDs,
IPs and hostnames are replaced consistently in every file and path. The mapping goes to
the --mapping file, never into the bundle; pass the same file again to map the next
bundle the same way.`,
		Example: `  # Redact a bundle collected with --no-redact, or with an older policy
  podflow redact raw.tar.gz -o shareable.tar.gz

  # Add your own rules and get the same masks on every run
  podflow redact raw.tar.gz -o shareable.tar.gz --redact-config rules.yaml --redact-key "$KEY"

  # Also hide identities; keep mapping.yaml private, reuse it for the next bundle
  podflow redact raw.tar.gz -o shareable.tar.gz --pseudonymize --mapping mapping.yaml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.path = args[0]
			if err := o.validate(); err != nil {
				return err
			}
			return runRedact(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.output, "output", "o", "", "bundle to write: .tar.gz, .tgz or .tar for an archive, anything else for a directory")
	f.BoolVar(&o.force, "force", false, "replace the output if it is a bundle podflow wrote")
	addRedactPolicyFlags(f, &o.redact)
	o.pseudo.add(f)
	o.open.add(f)
	return cmd
}

func (o *redactOptions) validate() error {
	if o.output == "" {
		return usageError("missing -o OUT: the bundle to write")
	}
	return o.pseudo.validate(o.output)
}

// pseudoFlags are the pseudonymization flags of podflow redact.
type pseudoFlags struct {
	enabled        bool
	mapping        string
	passphraseFile string
	passphrase     []byte
}

func (p *pseudoFlags) add(fs *pflag.FlagSet) {
	fs.BoolVar(&p.enabled, "pseudonymize", false, "also replace namespace, pod, node and workload names, label values, UIDs, IPs and hostnames (needs --mapping)")
	fs.StringVar(&p.mapping, "mapping", "", "pseudonymization mapping file: read if it exists, extended and written back; keep it private")
	fs.StringVar(&p.passphraseFile, "mapping-passphrase-file", "", "file holding a passphrase: the mapping is kept encrypted with it (AES-256-GCM)")
}

func (p *pseudoFlags) validate(output string) error {
	switch {
	case p.enabled && p.mapping == "":
		return usageError("--pseudonymize needs --mapping FILE: the mapping is kept outside the bundle")
	case !p.enabled && p.mapping != "":
		return usageError("--mapping only goes with --pseudonymize")
	case !p.enabled && p.passphraseFile != "":
		return usageError("--mapping-passphrase-file only goes with --pseudonymize")
	case !p.enabled:
		return nil
	}
	if p.passphraseFile != "" {
		data, err := os.ReadFile(p.passphraseFile)
		if err != nil {
			return fmt.Errorf("read mapping passphrase: %w", err)
		}
		// Editors end files with a newline; it is not part of the passphrase.
		if p.passphrase = bytes.TrimRight(data, "\r\n"); len(p.passphrase) == 0 {
			return usageError("--mapping-passphrase-file %s is empty", p.passphraseFile)
		}
	}
	out, err1 := filepath.Abs(output)
	mapping, err2 := filepath.Abs(p.mapping)
	if err := errors.Join(err1, err2); err != nil {
		return fmt.Errorf("resolve paths: %w", err)
	}
	if rel, err := filepath.Rel(out, mapping); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return usageError("--mapping %s is inside the output bundle; the mapping must stay outside it", p.mapping)
	}
	return nil
}

// redactionPolicy builds the policy the redaction flags describe; misuse of the flags
// is a usage error.
func redactionPolicy(f *redact.Flags, log logrus.FieldLogger) (*redact.Policy, error) {
	p, err := f.Policy(log)
	var ue *redact.UsageError
	if errors.As(err, &ue) {
		return nil, usageError("%v", ue)
	}
	return p, err
}

func runRedact(ctx context.Context, o *redactOptions) error {
	start := time.Now()
	if !o.pseudo.enabled {
		err := streamRedact(ctx, o, start)
		if !errors.Is(err, bundle.ErrMixedRoot) {
			return err
		}
		// Entries without one top directory: read the whole bundle first, as Open does.
	}
	b, err := o.open.open(ctx, o.path)
	if err != nil {
		return err
	}
	if b.Manifest != nil {
		problems, err := bundle.VerifyContext(ctx, b)
		if err != nil {
			return err
		}
		if len(problems) > 0 {
			o.log().WithField("problems", len(problems)).Warnf("%s does not match its manifest (see podflow verify); the copy gets fresh checksums", o.path)
		}
	}
	policy, err := redactionPolicy(&o.redact, o.log())
	if err != nil {
		return err
	}
	var pseudo *redact.Pseudonymizer
	filter := bundle.Filter(policy)
	files := b.Files()
	rename := func(name string) string { return name }
	if o.pseudo.enabled {
		if pseudo, files, err = learnPseudonyms(ctx, o, b, policy); err != nil {
			return err
		}
		// Files are redacted already; writing only pseudonymizes them.
		filter, rename = pseudo, pseudo.Path
	}
	w, err := bundle.Create(o.output, bundle.WriterOptions{Force: o.force, Inputs: []string{o.path}, Filter: filter})
	if err != nil {
		return err
	}
	prog := newProgress(ctx, o.globalOptions)
	redacted := prog.counter("redact", len(b.Names()))
	endProgress := sync.OnceFunc(func() {
		redacted.done()
		prog.wait()
	})
	defer endProgress()
	for _, name := range b.Names() {
		if name == bundle.ManifestPath {
			continue
		}
		if err := ctx.Err(); err != nil {
			w.Abort()
			return fmt.Errorf("redact %q: %w", o.path, err)
		}
		o.log().WithField("file", name).Trace("redacting")
		if err := w.WriteFile(rename(name), files[name]); err != nil {
			w.Abort()
			return fmt.Errorf("redact %q: %w", o.path, err)
		}
		redacted.inc()
	}
	m := redactedManifest(b, policy, time.Since(start))
	if pseudo != nil {
		pseudo.Manifest(m)
		// Saved first: a bundle whose mapping was lost could never be read back.
		if err := pseudo.Mapping().SaveWith(o.pseudo.mapping, o.pseudo.passphrase); err != nil {
			w.Abort()
			return err
		}
	}
	if err := w.Close(m); err != nil {
		return err
	}
	endProgress()
	return writeRedactSummary(o, m.Redaction, len(m.Files))
}

// streamRedact redacts each file as it streams out of the source and into the copy,
// so memory is the largest file, not the bundle. Pseudonymization cannot stream: it
// learns every identity before it writes the first file.
func streamRedact(ctx context.Context, o *redactOptions, start time.Time) error {
	policy, err := redactionPolicy(&o.redact, o.log())
	if err != nil {
		return err
	}
	w, err := bundle.Create(o.output, bundle.WriterOptions{Force: o.force, Inputs: []string{o.path}, Filter: bundle.Filter(policy)})
	if err != nil {
		return err
	}
	prog := newProgress(ctx, o.globalOptions)
	redacted := prog.tally("redact", "files")
	endProgress := sync.OnceFunc(func() {
		redacted.done()
		prog.wait()
	})
	defer endProgress()
	b, err := o.open.scan(ctx, o.path, bundle.ScanOptions{Each: func(name string, data []byte) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		o.log().WithField("file", name).Trace("redacting")
		if err := w.WriteFile(name, data); err != nil {
			return err
		}
		redacted.inc()
		return nil
	}})
	endProgress()
	if err != nil {
		w.Abort()
		if errors.Is(err, bundle.ErrMixedRoot) {
			return err
		}
		return fmt.Errorf("redact %q: %w", o.path, err)
	}
	if b.Manifest != nil {
		if problems := bundle.Verify(b); len(problems) > 0 {
			o.log().WithField("problems", len(problems)).Warnf("%s does not match its manifest (see podflow verify); the copy gets fresh checksums", o.path)
		}
	}
	m := redactedManifest(b, policy, time.Since(start))
	if err := w.Close(m); err != nil {
		return err
	}
	return writeRedactSummary(o, m.Redaction, len(m.Files))
}

// redactedManifest carries the source's manifest over (or starts one for a bundle that
// had none), adds what this run masked to what earlier runs did, and records the run
// as a source.
func redactedManifest(b *bundle.Bundle, policy *redact.Policy, took time.Duration) *bundle.Manifest {
	m := &bundle.Manifest{PodflowVersion: version, Type: "converted"}
	if b.Manifest != nil {
		// A copy deep enough that rewriting it leaves the source bundle as it was.
		cp := *b.Manifest
		cp.Scope.Namespaces = append([]string(nil), cp.Scope.Namespaces...)
		cp.Sources = append([]bundle.Source(nil), cp.Sources...)
		for i := range cp.Sources {
			cp.Sources[i].Files = append([]string(nil), cp.Sources[i].Files...)
		}
		m = &cp
	}
	for i := range m.Sources {
		m.Sources[i].Error = policy.RedactString(bundle.ManifestPath, m.Sources[i].Error)
	}
	r := policy.Redaction()
	if prev := m.Redaction; prev.Enabled {
		for file, rules := range prev.ByFile {
			for rule, n := range rules {
				r.Add(file, rule, n)
			}
		}
	}
	m.Redaction = r
	m.Sources = append(m.Sources, bundle.Source{Name: "redact", Status: bundle.StatusOK, DurationMS: took.Milliseconds()})
	return m
}

// learnPseudonyms redacts every file in memory first, so the identities are learned
// from redacted data and no secret can reach the mapping file.
func learnPseudonyms(ctx context.Context, o *redactOptions, b *bundle.Bundle, policy *redact.Policy) (*redact.Pseudonymizer, map[string][]byte, error) {
	m, err := redact.LoadMappingWith(o.pseudo.mapping, o.pseudo.passphrase)
	if err != nil {
		return nil, nil, err
	}
	files := make(map[string][]byte, len(b.Names()))
	for _, name := range b.Names() {
		if name == bundle.ManifestPath {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		data, err := b.ReadFile(name)
		if err != nil {
			return nil, nil, err
		}
		if files[name], err = policy.Apply(name, data); err != nil {
			return nil, nil, fmt.Errorf("redact %s: %w", name, err)
		}
	}
	p := redact.NewPseudonymizer(m)
	p.Learn(files, b.Manifest)
	return p, files, nil
}

func writeRedactSummary(o *redactOptions, r bundle.Redaction, files int) error {
	out := o.streams.Out
	fmt.Fprintf(out, "%s: %d files, %d values masked (policy %s %s)\n", o.output, files, r.Total, r.Policy, r.Version)
	rules := make([]string, 0, len(r.ByRule))
	for rule := range r.ByRule {
		rules = append(rules, rule)
	}
	sort.Strings(rules)
	for _, rule := range rules {
		fmt.Fprintf(out, "  %-28s %d\n", rule, r.ByRule[rule])
	}
	if o.pseudo.enabled {
		fmt.Fprintf(out, "identities pseudonymized; mapping in %s (keep it private)\n", o.pseudo.mapping)
	}
	return nil
}
