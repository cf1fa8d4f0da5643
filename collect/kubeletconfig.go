package collect

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"podflow.dev/podflow/bundle"
)

// NodeProxy reads kubelet endpoints through the API server's node proxy.
type NodeProxy interface {
	// Configz returns the body of the kubelet's /configz endpoint on node.
	Configz(ctx context.Context, node string) ([]byte, error)
}

// NodeProxyFunc adapts a function to NodeProxy.
type NodeProxyFunc func(ctx context.Context, node string) ([]byte, error)

// Configz calls f.
func (f NodeProxyFunc) Configz(ctx context.Context, node string) ([]byte, error) { return f(ctx, node) }

type restNodeProxy struct{ rc rest.Interface }

func (p restNodeProxy) Configz(ctx context.Context, node string) ([]byte, error) {
	return p.rc.Get().Resource("nodes").Name(node).SubResource("proxy").Suffix("configz").Do(ctx).Raw()
}

// errNoNodeProxy is the skip reason when the client cannot reach kubelets at all.
var errNoNodeProxy = errors.New("no node proxy: this client cannot reach kubelets through the API server")

// configzGate lets the first node's answer decide for the others: when nodes/proxy is
// forbidden it is forbidden everywhere, and asking every node again is only noise in
// the audit log.
type configzGate struct {
	mu      sync.Mutex
	decided bool
	denied  error
}

// kubeletConfigSteps plans one source per node that runs a collected pod.
func (c *collector) kubeletConfigSteps(podNodes []string) []func(context.Context) {
	nodes := slices.Compact(slices.Sorted(slices.Values(podNodes)))
	gate := &configzGate{}
	steps := make([]func(context.Context), 0, len(nodes))
	for _, node := range nodes {
		slot := c.reserve("kubelet-config/" + node)
		steps = append(steps, func(ctx context.Context) {
			c.timed(ctx, slot, func(ctx context.Context) outcome { return c.kubeletConfig(ctx, node, gate) })
		})
	}
	return steps
}

func (c *collector) kubeletConfig(ctx context.Context, node string, gate *configzGate) outcome {
	if c.client.NodeProxy == nil {
		return outcome{status: bundle.StatusSkipped, err: errNoNodeProxy}
	}
	gate.mu.Lock()
	if gate.decided {
		gate.mu.Unlock()
		if gate.denied != nil {
			return outcome{status: bundle.StatusSkipped, err: gate.denied}
		}
		return c.fetchKubeletConfig(ctx, node)
	}
	defer gate.mu.Unlock()
	out := c.fetchKubeletConfig(ctx, node)
	gate.decided = true
	if out.status == bundle.StatusSkipped {
		gate.denied = out.err
	}
	return out
}

func (c *collector) fetchKubeletConfig(ctx context.Context, node string) outcome {
	raw, err := c.client.NodeProxy.Configz(ctx, node)
	switch {
	case apierrors.IsForbidden(err):
		return outcome{status: bundle.StatusSkipped, err: fmt.Errorf(
			"nodes/proxy is not permitted; it is optional and left out of the least-privilege role because it grants more than reading: %w", err)}
	case err != nil:
		return outcome{status: bundle.StatusFailed, err: fmt.Errorf("get kubelet configz of node %q: %w", node, err)}
	}
	data, err := kubeletConfigYAML(raw)
	if err != nil {
		return outcome{status: bundle.StatusFailed, err: fmt.Errorf("kubelet configz of node %q: %w", node, err)}
	}
	p := bundle.NodePath(node, bundle.NodeKubeletConfig)
	if err := c.w.WriteFile(p, data); err != nil {
		return outcome{status: bundle.StatusFailed, err: err}
	}
	return outcome{status: bundle.StatusOK, files: []string{p}}
}

// kubeletConfigYAML turns a /configz answer into the KubeletConfiguration document a
// kubelet reads from its config file, so both sources of kubelet config look alike.
func kubeletConfigYAML(raw []byte) ([]byte, error) {
	var body struct {
		KubeletConfig map[string]any `json:"kubeletconfig"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		return nil, fmt.Errorf("decode configz answer: %w", err)
	}
	if body.KubeletConfig == nil {
		return nil, errors.New("configz answer has no kubeletconfig object")
	}
	if _, ok := body.KubeletConfig["kind"]; !ok {
		body.KubeletConfig["kind"] = "KubeletConfiguration"
	}
	if _, ok := body.KubeletConfig["apiVersion"]; !ok {
		body.KubeletConfig["apiVersion"] = "kubelet.config.k8s.io/v1beta1"
	}
	out, err := yaml.Marshal(body.KubeletConfig)
	if err != nil {
		return nil, fmt.Errorf("encode kubelet config: %w", err)
	}
	return out, nil
}
