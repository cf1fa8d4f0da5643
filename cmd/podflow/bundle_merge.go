package main

import (
	"context"
	"fmt"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/spf13/cobra"

	"podflow.dev/podflow/bundle"
)

func newBundleCmd(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "bundle",
		Short:   "Work on bundles as a whole: merge several into one",
		Example: `  podflow bundle merge cluster.tar.gz node-1.tar.gz node-2.tar.gz -o all.tar.gz`,
		Args:    cobra.NoArgs,
	}
	cmd.AddCommand(newBundleMergeCmd(g))
	return cmd
}

type bundleMergeOptions struct {
	*globalOptions
	open   openFlags
	output string
	force  bool
	inputs []string
	now    func() time.Time
}

func newBundleMergeCmd(g *globalOptions) *cobra.Command {
	o := &bundleMergeOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "merge BUNDLE BUNDLE [BUNDLE...]",
		Short: "Join a cluster bundle and node bundles into one bundle",
		Long: `Join bundles, typically one from 'podflow collect' and several from 'podflow collect node',
into one bundle that analyzes as a whole. Every input is verified first. Each file is copied
once; a path two inputs hold with different contents is an error naming both. The merged
manifest keeps every source, node sources prefixed with their node (node/<node>:kubelet-journal),
takes scope and cluster facts from the cluster bundle, and sums redaction counts.`,
		Example: `  podflow bundle merge cluster.tar.gz node-worker-1.tar.gz node-worker-2.tar.gz -o shop-all.tar.gz
  podflow bundle merge ./cluster-dir/ node.tar.gz -o merged/`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.inputs = args
			return runBundleMerge(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVarP(&o.output, "output", "o", "", "bundle to write: .tar.gz, .tgz, .tar, or a directory (default podflow-merged-<UTC time>.tar.gz)")
	cmd.Flags().BoolVar(&o.force, "force", false, "replace the output if it is a bundle podflow wrote")
	o.open.add(cmd.Flags())
	return cmd
}

func runBundleMerge(ctx context.Context, o *bundleMergeOptions) error {
	now := time.Now
	if o.now != nil {
		now = o.now
	}
	target := o.output
	if target == "" {
		target = fmt.Sprintf("podflow-merged-%s.tar.gz", now().UTC().Format("20060102T150405Z"))
	}
	inputs := make([]*bundle.Bundle, 0, len(o.inputs))
	for _, p := range o.inputs {
		b, err := o.open.open(ctx, p)
		if err != nil {
			return err
		}
		inputs = append(inputs, b)
	}
	m, err := bundle.MergeContext(ctx, target, inputs, bundle.MergeOptions{Force: o.force, PodflowVersion: version})
	if err != nil {
		return err
	}
	o.log().WithFields(logrus.Fields{"bundles": len(inputs), "files": len(m.Files), "sources": len(m.Sources)}).Info("merged")
	_, err = fmt.Fprintln(o.streams.Out, target)
	return err
}
