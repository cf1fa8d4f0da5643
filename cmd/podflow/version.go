package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"podflow.dev/podflow/bundle"
)

// commit is set at build time with -ldflags "-X main.commit=..."; without it, the VCS
// revision Go records in the binary is used.
var commit = ""

// versionInfo is what `podflow version -o json` prints.
type versionInfo struct {
	Version      string `json:"version"`
	Commit       string `json:"commit"`
	GoVersion    string `json:"goVersion"`
	Platform     string `json:"platform"`
	BundleFormat string `json:"bundleFormat"`
}

func currentVersion() versionInfo {
	v := versionInfo{Version: version, Commit: commit, GoVersion: runtime.Version(),
		Platform: runtime.GOOS + "/" + runtime.GOARCH, BundleFormat: bundle.FormatVersion}
	if v.Commit == "" {
		v.Commit = "unknown"
		if info, ok := debug.ReadBuildInfo(); ok {
			dirty := false
			for _, s := range info.Settings {
				switch s.Key {
				case "vcs.revision":
					v.Commit = s.Value
				case "vcs.modified":
					dirty = s.Value == "true"
				}
			}
			if dirty && v.Commit != "unknown" {
				v.Commit += "-dirty"
			}
		}
	}
	return v
}

func newVersionCmd(g *globalOptions) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print podflow's version, commit, Go version and the bundle format it writes",
		Example: `  podflow version
  podflow version -o json | jq -r .commit`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output, "text", "json"); err != nil {
				return err
			}
			v := currentVersion()
			if output == "json" {
				return writeStructured(g.streams.Out, output, v)
			}
			_, err := fmt.Fprintf(g.streams.Out, "podflow %s (commit %s, %s, %s, bundle format %s)\n",
				v.Version, v.Commit, v.GoVersion, v.Platform, v.BundleFormat)
			return err
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	return cmd
}
