package rules

import "strconv"

// integerCompare is the Gt/Lt test Kubernetes applies to node-selector requirements and
// tolerations: both sides must parse as integers, else it does not match.
func integerCompare(got, want string, greater bool) bool {
	g, err1 := strconv.ParseInt(got, 10, 64)
	w, err2 := strconv.ParseInt(want, 10, 64)
	if err1 != nil || err2 != nil {
		return false
	}
	if greater {
		return g > w
	}
	return g < w
}
