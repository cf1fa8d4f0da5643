package node

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"podflow.dev/podflow/untrusted/yamlbudget"

	"podflow.dev/podflow/bundle"
)

// maxKubeletConfig bounds the kubelet config read; real ones are a few KiB.
const maxKubeletConfig = 4 << 20

// collectKubeletConfig copies the kubelet's config file as is.
func (c *collector) collectKubeletConfig(_ context.Context) bundle.Source {
	src := bundle.Source{Name: SourceKubeletConfig}
	p := c.hostPath(c.opts.KubeletConfig)
	st := Step{Source: SourceKubeletConfig, Read: p}
	t0 := time.Now()
	data, dropped, err := readTail(p, maxKubeletConfig)
	st.DurationMS = time.Since(t0).Milliseconds()
	switch {
	case errors.Is(err, fs.ErrNotExist):
		c.step(st)
		src.Status = bundle.StatusSkipped
		src.Error = fmt.Sprintf("no kubelet config file at %s (the kubelet may be configured by flags only; set --kubelet-config)", p)
		return src
	case err != nil:
		st.Error = err.Error()
		c.step(st)
		src.Status, src.Error = bundle.StatusFailed, err.Error()
		return src
	case dropped > 0:
		st.Error = fmt.Sprintf("file is larger than %d bytes", maxKubeletConfig)
		c.step(st)
		src.Status, src.Error = bundle.StatusFailed, fmt.Sprintf("kubelet config %s: %s", p, st.Error)
		return src
	}
	st.Bytes = int64(len(data))
	// The bytes are kept whatever they hold: a config that does not parse is itself a
	// reason the kubelet would not start, and the analyzer says so.
	var probe map[string]any
	if err := yamlbudget.Unmarshal(data, &probe); err != nil {
		st.Note = fmt.Sprintf("not valid YAML: %v", err)
	}
	out, err := c.write(bundle.NodeKubeletConfig, data)
	if err != nil {
		st.Error = err.Error()
		c.step(st)
		src.Status, src.Error = bundle.StatusFailed, err.Error()
		return src
	}
	st.Used = true
	c.step(st)
	src.Files, src.Status = []string{out}, bundle.StatusOK
	return src
}
