package bundle

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// A bundle or mapping being written lives in a hidden sibling of its target,
// .BASE.partial-PID-RANDOM, until it is renamed into place. The PID says which process
// owns it, so a later run can tell a leftover of a killed process from the work of one
// still running.

// PartialPattern is the os.CreateTemp pattern for a partial sibling of target owned by
// this process.
func PartialPattern(target string) string {
	return partialPrefix(target) + strconv.Itoa(os.Getpid()) + "-"
}

func partialPrefix(target string) string {
	return "." + filepath.Base(target) + ".partial-"
}

// RemoveStalePartials removes the partial siblings of target that podflow processes no
// longer running left behind (a SIGKILL gives no chance to clean up), and returns their
// paths. Only names of podflow's own pattern are touched, and never one whose process
// is alive.
func RemoveStalePartials(target string) ([]string, error) {
	dir := filepath.Dir(target)
	entries, err := os.ReadDir(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("look for leftovers of %q: %w", target, err)
	}
	prefix := partialPrefix(target)
	var removed []string
	var errs []error
	for _, e := range entries {
		pid, ok := partialOwner(e.Name(), prefix)
		if !ok || pid == os.Getpid() || processAlive(pid) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if err := os.RemoveAll(p); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, p)
	}
	if len(errs) > 0 {
		return removed, fmt.Errorf("remove leftovers of %q: %w", target, errs[0])
	}
	return removed, nil
}

// partialOwner parses PREFIX PID-RANDOM, the names PartialPattern produces.
func partialOwner(name, prefix string) (int, bool) {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return 0, false
	}
	pidText, random, ok := strings.Cut(rest, "-")
	if !ok || !allDigits(pidText) || !allDigits(random) {
		return 0, false
	}
	pid, err := strconv.Atoi(pidText)
	if err != nil || pid <= 0 {
		return 0, false
	}
	return pid, true
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
