package main

import (
	"strings"

	"github.com/spf13/cobra"
)

// pluginBinary is the name kubectl looks for on the PATH to run `kubectl podflow`.
const pluginBinary = "kubectl-podflow"

// isKubectlPlugin reports whether podflow was started under its kubectl plugin name
// (argv[0] kubectl-podflow, or kubectl-podflow.exe on Windows).
func isKubectlPlugin(argv0 string) bool {
	// Either separator: the same test runs on every platform, and a Windows argv[0]
	// uses backslashes.
	if i := strings.LastIndexAny(argv0, `/\`); i >= 0 {
		argv0 = argv0[i+1:]
	}
	return strings.TrimSuffix(argv0, ".exe") == pluginBinary
}

// presentAsPlugin makes usage, help and examples say `kubectl podflow`, as the user
// typed it.
func presentAsPlugin(root *cobra.Command) {
	if root.Annotations == nil {
		root.Annotations = map[string]string{}
	}
	root.Annotations[cobra.CommandDisplayNameAnnotation] = "kubectl podflow"
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Example = strings.ReplaceAll(c.Example, "  podflow ", "  kubectl podflow ")
		c.Example = strings.ReplaceAll(c.Example, "| podflow ", "| kubectl podflow ")
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}
