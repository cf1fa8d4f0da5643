package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

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

// minWidth is the narrowest layout --width or COLUMNS may ask for.
const minWidth = 20

// terminalWidth is the width stdout's report is fitted to: --width when given (flag >
// 0); on a terminal its width; otherwise COLUMNS when the user set it for a pipe; else
// 0, so piped output keeps a layout that depends on no width.
func terminalWidth(s streams, flag int) int {
	if flag > 0 {
		return max(flag, minWidth)
	}
	columns := 0
	if n, err := strconv.Atoi(strings.TrimSpace(s.env("COLUMNS"))); err == nil && n > 0 {
		columns = max(n, minWidth)
	}
	if !s.OutTTY {
		return columns
	}
	if f, ok := s.Out.(*os.File); ok {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
			return w
		}
	}
	if columns > 0 {
		return columns
	}
	return defaultWidth
}

// useColor says whether stdout's report may use colour: on a terminal, unless NO_COLOR
// is set (https://no-color.org) or the terminal is dumb.
func useColor(s streams) bool {
	return s.OutTTY && s.env("NO_COLOR") == "" && s.env("TERM") != "dumb"
}
