package importer

import (
	"regexp"
	"strings"
)

// A reporter often names the pod only in their own words, above an excerpt cut below
// its Name line: "my pod web-1 in namespace shop keeps restarting". When the file's
// prose names exactly one pod, the excerpt is that pod's. A word is taken for a pod's
// name only when it reads like one (a DNS subdomain with a dash or a digit: "the pod is
// pending" names none), and the namespace only when the same phrase gives it.
var reProsePod = regexp.MustCompile("(?i)\\bpods?\\s+(?:named\\s+|called\\s+)?[`'\"]?([a-z0-9](?:[a-z0-9.-]*[a-z0-9])?)[`'\"]?" +
	"(?:\\s+(?:in|from)\\s+(?:the\\s+)?(?:namespace\\s+)?[`'\"]?([a-z0-9](?:[a-z0-9-]*[a-z0-9])?)[`'\"]?)?")

// prosePod is the one pod a file's text names, and its namespace when the same phrase
// gives it; "" when it names none or more than one.
func prosePod(lines []textLine) (name, ns string) {
	names := map[string]string{}
	for _, l := range lines {
		if len(l.s) > 400 || !strings.Contains(strings.ToLower(l.s), "pod") {
			continue
		}
		for _, m := range reProsePod.FindAllStringSubmatch(l.s, -1) {
			n := strings.ToLower(m[1])
			if len(n) < 3 || !strings.ContainsAny(n, "-0123456789") {
				continue
			}
			space := strings.ToLower(m[2])
			if space == "namespace" || space == "the" || space == "default" && m[2] != "default" {
				space = ""
			}
			if old, ok := names[n]; !ok || old == "" {
				names[n] = space
			}
		}
	}
	if len(names) != 1 {
		return "", ""
	}
	for n, s := range names {
		return n, s
	}
	return "", ""
}
