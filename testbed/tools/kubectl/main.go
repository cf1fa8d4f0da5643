// Command kubectl is kubectl, built from the pinned k8s.io/kubectl module for the test
// bed, which uses it to capture what users paste into tickets (describe, get events).
package main

import (
	"os"

	// Client auth plugins, as in the upstream kubectl main.
	_ "k8s.io/client-go/plugin/pkg/client/auth"
	"k8s.io/component-base/cli"
	"k8s.io/component-base/logs"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"
)

func main() {
	logs.GlogSetter(cmd.GetLogVerbosity(os.Args)) // nolint:errcheck
	command := cmd.NewDefaultKubectlCommand()
	if err := cli.RunNoErrOutput(command); err != nil {
		util.CheckErr(err)
	}
}
