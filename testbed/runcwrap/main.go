// Command runcwrap stands in for runc in the test bed's containerd configuration.
//
// Why it exists: the test bed may run where the kernel refuses to lower oom_score_adj (no
// CAP_SYS_RESOURCE, e.g. inside a VM sandbox). The kubelet asks for negative values (-998
// for every pod sandbox, -997 for Guaranteed pods), and runc then fails every sandbox with
// "can't get final child's PID from pipe: EOF". Before exec'ing the real runc, runcwrap
// raises a negative process.oomScoreAdj to 0 in the OCI bundle's config.json (create, run)
// or in the process file (exec). Nothing else changes; positive values, which the kernel
// always allows, are kept, so Burstable and BestEffort pods are scored as on a real node.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

func main() {
	real, err := realRunc()
	if err == nil {
		err = rewrite(os.Args[1:])
	}
	if err == nil {
		err = syscall.Exec(real, append([]string{real}, os.Args[1:]...), os.Environ())
	}
	fmt.Fprintf(os.Stderr, "runcwrap: %v\n", err)
	os.Exit(1)
}

// realRunc finds the runc to hand over to: $PODFLOW_REAL_RUNC, else the first runc on
// PATH that is not this program.
func realRunc() (string, error) {
	if p := os.Getenv("PODFLOW_REAL_RUNC"); p != "" {
		return p, nil
	}
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("locate runcwrap itself: %w", err)
	}
	if resolved, err := filepath.EvalSymlinks(self); err == nil {
		self = resolved
	}
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		p := filepath.Join(dir, "runc")
		if st, err := os.Stat(p); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			continue
		}
		if resolved, err := filepath.EvalSymlinks(p); err == nil && resolved == self {
			continue
		}
		return p, nil
	}
	return "", errors.New("no runc found: set PODFLOW_REAL_RUNC or put runc on PATH")
}

// rewrite finds the OCI file the runc invocation will read and raises its oomScoreAdj.
func rewrite(args []string) error {
	file, key := specFile(args)
	if file == "" {
		return nil
	}
	return raiseOOMScoreAdj(file, key)
}

// specFile returns the JSON file a create, run or exec call reads, and whether the
// process object is at its top ("") or under "process".
func specFile(args []string) (string, string) {
	sub := -1
	for i, a := range args {
		if a == "create" || a == "run" || a == "exec" {
			sub = i
			break
		}
	}
	if sub < 0 {
		return "", ""
	}
	if args[sub] == "exec" {
		if p := flagValue(args[sub+1:], "process", "p"); p != "" {
			return p, ""
		}
		return "", "" // exec with the command on the argv carries no oomScoreAdj
	}
	bundle := flagValue(args[sub+1:], "bundle", "b")
	if bundle == "" {
		bundle = "."
	}
	return filepath.Join(bundle, "config.json"), "process"
}

func flagValue(args []string, long, short string) string {
	for i, a := range args {
		for _, name := range []string{"--" + long, "-" + long, "-" + short} {
			if a == name && i+1 < len(args) {
				return args[i+1]
			}
			if v, ok := strings.CutPrefix(a, name+"="); ok {
				return v
			}
		}
	}
	return ""
}

// raiseOOMScoreAdj sets a negative oomScoreAdj to 0 in file, under key when key is set.
func raiseOOMScoreAdj(file, key string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("read %s: %w", file, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return fmt.Errorf("decode %s: %w", file, err)
	}
	proc := doc
	if key != "" {
		p, ok := doc[key].(map[string]any)
		if !ok {
			return nil
		}
		proc = p
	}
	n, ok := proc["oomScoreAdj"].(json.Number)
	if !ok {
		return nil
	}
	if v, err := n.Int64(); err != nil || v >= 0 {
		return nil
	}
	proc["oomScoreAdj"] = 0
	out, err := json.Marshal(doc)
	if err != nil {
		return fmt.Errorf("encode %s: %w", file, err)
	}
	st, err := os.Stat(file)
	if err != nil {
		return fmt.Errorf("stat %s: %w", file, err)
	}
	if err := os.WriteFile(file, out, st.Mode().Perm()); err != nil {
		return fmt.Errorf("write %s: %w", file, err)
	}
	return nil
}
