package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/spf13/cobra"

	"podflow.dev/podflow/bundle"
	"podflow.dev/podflow/untrusted"
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
	warnUnmatchedNodes(o.log(), o.inputs, inputs)
	m, err := bundle.MergeContext(ctx, target, inputs, bundle.MergeOptions{Force: o.force, PodflowVersion: version})
	if err != nil {
		return err
	}
	o.log().WithFields(logrus.Fields{"bundles": len(inputs), "files": len(m.Files), "sources": len(m.Sources)}).Info("merged")
	_, err = fmt.Fprintln(o.streams.Out, target)
	return err
}

// warnUnmatchedNodes warns of node evidence named for a node no Node object of the
// inputs is called: a node bundle is named after the host it ran on, which need not be
// the node's name (a cloud's FQDN, an override), and evidence under a name no Node has is
// never tied to the pods that ran there.
func warnUnmatchedNodes(log logrus.FieldLogger, paths []string, inputs []*bundle.Bundle) {
	var known []string
	for _, b := range inputs {
		data, err := b.ReadFile(bundle.ClusterResourcePath(bundle.KindNodes))
		if err != nil {
			continue
		}
		var l struct {
			Items []struct {
				Metadata struct {
					Name string `json:"name"`
				} `json:"metadata"`
			} `json:"items"`
		}
		if json.Unmarshal(data, &l) != nil {
			continue
		}
		for _, it := range l.Items {
			if it.Metadata.Name != "" && !slices.Contains(known, it.Metadata.Name) {
				known = append(known, it.Metadata.Name)
			}
		}
	}
	if len(known) == 0 {
		return // no cluster bundle to match against
	}
	slices.Sort(known)
	for i, b := range inputs {
		var warned []string
		for _, name := range b.Names() {
			info := bundle.ParsePath(name)
			if info.Area != "node" || slices.Contains(known, info.Node) || slices.Contains(warned, info.Node) {
				continue
			}
			warned = append(warned, info.Node)
			hint := "its pods' evidence is not tied to it"
			if guess := closestNode(info.Node, known); guess != "" {
				hint += fmt.Sprintf("; if it is %s, collect it again with: podflow collect node --node-name %s", untrusted.Text(guess), untrusted.ShellArg(guess))
			} else {
				hint += "; collect it again with: podflow collect node --node-name NODE (the name kubectl get nodes shows)"
			}
			log.WithField("bundle", untrusted.Text(paths[i])).Warnf("node evidence for %q, but no Node of the cluster bundle has that name (nodes: %s); %s",
				untrusted.Text(info.Node), untrusted.Text(strings.Join(firstN(known, 5), ", ")), hint)
		}
	}
}

// closestNode is the node whose name the host name is a part of, or that is a part of
// it, when exactly one is (ip-10-0-1-5 and ip-10-0-1-5.ec2.internal).
func closestNode(host string, known []string) string {
	var out []string
	for _, k := range known {
		h, n := strings.ToLower(host), strings.ToLower(k)
		if strings.HasPrefix(n, h+".") || strings.HasPrefix(h, n+".") || h == n {
			out = append(out, k)
		}
	}
	if len(out) == 1 {
		return out[0]
	}
	return ""
}

func firstN(s []string, n int) []string {
	if len(s) > n {
		return append(slices.Clone(s[:n]), fmt.Sprintf("and %d more", len(s)-n))
	}
	return s
}
