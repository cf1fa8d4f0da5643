package analyze

import (
	"encoding/json"
	"strings"
)

// A program's structured log writes each record as one JSON object, and the error it
// met as a string field inside it, its quotes escaped: zap and logr ("msg", "error"),
// logrus' JSON formatter ("msg", "error"), slog ("msg", "err"), klog's JSON format
// ("msg", "err"). A controller's or operator's record of an API server refusal then
// reads `"error":"… admission webhook \"x\" denied the request: …"`: the refusal is
// the inner layer, and is read as the API server printed it.

// jsonLogMessageKeys are the fields that hold the record's message, then its error, in
// the order a reader puts them: "msg: error".
var jsonLogMessageKeys = [][]string{
	{"msg", "message"},
	{"error", "err", "errorVerbose", "reason"},
}

// jsonLogText is a JSON log record's message and error, decoded: "MSG: ERROR"; false
// for a line that is not such a record.
func jsonLogText(s string) (string, bool) {
	t := strings.TrimSpace(s)
	if len(t) < 2 || t[0] != '{' || t[len(t)-1] != '}' || !strings.Contains(t, `\"`) {
		return "", false
	}
	var rec map[string]any
	if json.Unmarshal([]byte(t), &rec) != nil {
		return "", false
	}
	var parts []string
	for _, keys := range jsonLogMessageKeys {
		for _, k := range keys {
			if v, ok := rec[k].(string); ok && strings.TrimSpace(v) != "" {
				parts = append(parts, strings.TrimSpace(v))
				break
			}
		}
	}
	if len(parts) == 0 {
		return "", false
	}
	return strings.Join(parts, ": "), true
}
