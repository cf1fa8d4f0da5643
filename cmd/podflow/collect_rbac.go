package main

import (
	"github.com/spf13/cobra"

	"podflow.dev/podflow/collect"
)

// collectRBACOptions are the inputs of `podflow collect rbac`.
type collectRBACOptions struct {
	*globalOptions
	namespace string
}

func newCollectRBACCmd(g *globalOptions) *cobra.Command {
	o := &collectRBACOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "rbac",
		Short: "Print the least-privilege ServiceAccount, ClusterRole and binding that collect needs",
		Long: `Print, as YAML to apply with kubectl, a ServiceAccount, a ClusterRole and a
ClusterRoleBinding that allow exactly what 'podflow collect' reads: get, list and watch
on the resources it lists, and pods/log. Secrets and nodes/proxy are left out; the
comments in the output say when to grant them.`,
		Example: `  # Grant podflow exactly what it reads, in namespace ops
  podflow collect rbac -n ops | kubectl apply -f -`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			return collect.PrintRBAC(o.streams.Out, o.namespace)
		},
	}
	cmd.Flags().StringVarP(&o.namespace, "namespace", "n", collect.DefaultRBACNamespace, "namespace of the ServiceAccount (it must exist)")
	return cmd
}

func (o *collectRBACOptions) validate() error {
	if _, err := collect.RBAC(o.namespace); err != nil {
		return usageError("--namespace: %w", err)
	}
	return nil
}
