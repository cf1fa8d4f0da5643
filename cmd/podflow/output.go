package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"

	"golang.org/x/term"
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

// defaultWidth is assumed for a terminal whose size cannot be read (a stream marked as
// a terminal in a test, a console that does not answer).
const defaultWidth = 80

// terminalWidth is the width stdout's table is fitted to: 0 when stdout is not a
// terminal, so piped output keeps a layout that depends on no width.
func terminalWidth(s streams) int {
	if !s.OutTTY {
		return 0
	}
	f, ok := s.Out.(*os.File)
	if !ok {
		return defaultWidth
	}
	w, _, err := term.GetSize(int(f.Fd()))
	if err != nil || w <= 0 {
		return defaultWidth
	}
	return w
}
