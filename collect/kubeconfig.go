package collect

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Kubeconfig is what the user's kubeconfig says about the cluster to collect from.
type Kubeconfig struct {
	Config *rest.Config
	// Cluster is the context's cluster name, or "in-cluster" inside a pod.
	Cluster string
	// Namespace is the context's default namespace ("default" when it sets none).
	Namespace string
	// User is the context's user entry in the kubeconfig ("" inside a pod).
	User string
}

// LoadKubeconfig follows kubectl's conventions: an explicit path, else $KUBECONFIG,
// else ~/.kube/config, else the in-cluster service account; context selects a context
// other than the current one.
func LoadKubeconfig(path, context string) (*Kubeconfig, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = path
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: context})
	cfg, err := cc.ClientConfig()
	if clientcmd.IsEmptyConfig(err) {
		return nil, fmt.Errorf("no kubeconfig found: pass --kubeconfig, set KUBECONFIG, create ~/.kube/config, or run inside a cluster")
	}
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig: %w", err)
	}
	ns, _, err := cc.Namespace()
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig: read namespace: %w", err)
	}
	k := &Kubeconfig{Config: cfg, Namespace: ns, Cluster: "in-cluster"}
	if raw, err := cc.RawConfig(); err == nil {
		name := raw.CurrentContext
		if context != "" {
			name = context
		}
		if ctx, ok := raw.Contexts[name]; ok && ctx.Cluster != "" {
			k.Cluster = ctx.Cluster
		}
		if ctx, ok := raw.Contexts[name]; ok {
			k.User = ctx.AuthInfo
		}
	}
	return k, nil
}

var unsafeNameChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// DefaultTarget is the default bundle path: podflow-<cluster>-<UTC yyyymmddThhmmssZ>.tar.gz,
// with the cluster name reduced to characters safe in a file name.
func DefaultTarget(cluster string, at time.Time) string {
	name := strings.Trim(unsafeNameChars.ReplaceAllString(cluster, "-"), "-.")
	if name == "" {
		name = "cluster"
	}
	return fmt.Sprintf("podflow-%s-%s.tar.gz", name, at.UTC().Format("20060102T150405Z"))
}
