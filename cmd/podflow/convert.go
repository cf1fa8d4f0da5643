package main

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/spf13/cobra"

	"podflow.dev/podflow/bundle"
	"podflow.dev/podflow/importer"
	"podflow.dev/podflow/untrusted"
)

// convertOptions are the inputs of `podflow convert`.
type convertOptions struct {
	*globalOptions
	open   openFlags
	format string
	input  string
	output string
	force  bool
	now    func() time.Time
}

func newConvertCmd(g *globalOptions) *cobra.Command {
	o := &convertOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "convert INPUT -o BUNDLE",
		Short: "Turn a support bundle, must-gather, sosreport, cluster-info dump or pasted output into a podflow bundle",
		Long: `Convert reads evidence written by another tool and writes it as a podflow bundle, with
import-report.json listing every input file, what it was taken for or why it was not used,
where every produced file came from, and what the format cannot hold, so findings on the
bundle cite the original files. The format is detected unless --format names it:
troubleshoot (Troubleshoot support bundle), must-gather (oc adm must-gather), sosreport
(a node's sosreport, .tar.xz too), cluster-info-dump (kubectl cluster-info dump
--output-directory) or loose (pasted kubectl, crictl and kubelet output; - for stdin).`,
		Example: `  podflow convert support-bundle-2026-11-29T20_07_59.tar.gz -o shop.tar.gz
  podflow convert ./cluster-dump/ --format cluster-info-dump -o shop.tar.gz
  podflow convert must-gather.local.5318008/ -o openshift.tar.gz
  podflow convert sosreport-n1-2026-11-29-qwkzbfn.tar.xz -o node-n1.tar.gz
  kubectl describe pod -n shop web-7d9f8b6c5d-4xk2p | podflow convert - -o ticket.tar.gz
  podflow convert ./cluster-dump/ -o converted/ --force`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.input = args[0]
			if err := o.validate(); err != nil {
				return err
			}
			return runConvert(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.output, "output", "o", "", "bundle to write: .tar.gz, .tgz, .tar, or a directory")
	f.BoolVar(&o.force, "force", false, "replace the output if it is a bundle podflow wrote")
	addFormatFlag(f, &o.format)
	o.open.add(f)
	return cmd
}

func (o *convertOptions) validate() error {
	if o.output == "" {
		return usageError("-o is required: the bundle to write")
	}
	if _, err := importer.ParseFormat(o.format); err != nil {
		return usageError("--format: %v", err)
	}
	return nil
}

// manifestTypeConverted marks a bundle written from another tool's output.
const manifestTypeConverted = "converted"

func runConvert(ctx context.Context, o *convertOptions) error {
	format, _ := importer.ParseFormat(o.format) // validated
	prog := newProgress(ctx, o.globalOptions)
	t := prog.spinner(fmt.Sprintf("import %s (%s)", untrusted.Text(filepath.Base(o.input)), sizeText(inputSize([]string{o.input}))))
	// Each file is written once: it stays compressed until then, and is let go of after.
	b, rep, err := importer.OpenContext(ctx, o.input, importer.Options{Format: format, Limits: o.open.limits, Log: o.log(), Stdin: o.streams.In, ReadOnce: true})
	t.done()
	if err != nil {
		prog.wait()
		return err
	}
	written := prog.counter("write", len(b.Names()))
	// The display ends before the result is logged, and on every early return.
	endProgress := sync.OnceFunc(func() {
		written.done()
		prog.wait()
	})
	defer endProgress()
	if err := warnUnverified(ctx, o.log(), o.input, b); err != nil {
		return err
	}
	now := time.Now
	if o.now != nil {
		now = o.now
	}
	w, err := bundle.Create(o.output, bundle.WriterOptions{Force: o.force, Inputs: []string{o.input}, ModTime: now().UTC()})
	if err != nil {
		return err
	}
	for _, name := range b.Names() {
		if name == bundle.ManifestPath {
			continue
		}
		if err := ctx.Err(); err != nil {
			w.Abort()
			return fmt.Errorf("convert %q: %w", o.input, err)
		}
		data, err := b.Take(name)
		if err != nil {
			w.Abort()
			return fmt.Errorf("convert %q: %w", o.input, err)
		}
		if err := w.WriteFile(name, data); err != nil {
			w.Abort()
			return err
		}
		written.inc()
	}
	m := b.Manifest
	if m == nil {
		m = &bundle.Manifest{PodflowVersion: version, Type: manifestTypeConverted}
		if rep != nil {
			produced := make([]string, 0, len(rep.Origins))
			for _, name := range b.Names() {
				if _, ok := rep.Origins[name]; ok {
					produced = append(produced, name)
				}
			}
			m.Sources = []bundle.Source{{Name: "import:" + string(rep.Format), Status: bundle.StatusOK, Files: produced}}
		}
	}
	if err := w.Close(m); err != nil {
		return err
	}
	endProgress()
	fields := logrus.Fields{"input": o.input, "files": len(b.Names())}
	if rep != nil {
		fields["format"], fields["ignored"], fields["unreadable"] = rep.Format, rep.Count(importer.StatusIgnored), rep.Count(importer.StatusUnreadable)
	}
	o.log().WithFields(fields).Info("converted")
	_, err = fmt.Fprintln(o.streams.Out, o.output)
	return err
}
