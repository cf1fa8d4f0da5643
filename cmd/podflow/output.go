package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"sigs.k8s.io/yaml"
)

// checkOutput validates an -o value against the formats a command supports.
func checkOutput(got string, allowed ...string) error {
	if slices.Contains(allowed, got) {
		return nil
	}
	return usageError("unknown output format %q: use one of %v", got, allowed)
}

// writeStructured writes v as indented JSON or as YAML.
func writeStructured(w io.Writer, format string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode output: %w", err)
	}
	if format == "yaml" {
		if data, err = yaml.JSONToYAML(data); err != nil {
			return fmt.Errorf("encode output: %w", err)
		}
		_, err = w.Write(data)
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", data)
	return err
}
