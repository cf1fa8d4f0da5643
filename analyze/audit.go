package analyze

import (
	"encoding/json"
	"strconv"
	"strings"
)

// auditEvent is what podflow reads of an API server audit event (audit.k8s.io/v1 Event,
// one JSON object a line in the audit log): who asked, what, and how the API server
// answered.
type auditEvent struct {
	Kind       string `json:"kind"`
	APIVersion string `json:"apiVersion"`
	Stage      string `json:"stage"`
	Verb       string `json:"verb"`
	RequestURI string `json:"requestURI"`
	User       struct {
		Username string `json:"username"`
	} `json:"user"`
	ImpersonatedUser *struct {
		Username string `json:"username"`
	} `json:"impersonatedUser"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		APIGroup    string `json:"apiGroup"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Message string `json:"message"`
		Reason  string `json:"reason"`
		Code    int    `json:"code"`
	} `json:"responseStatus"`
}

// auditRequestText reads one line as an audit event. For a request the API server
// refused or failed (401, 403, 409, 422, 429 and 5xx) it returns the line the request
// stage reads, with the identity, verb, resource and answer in the API server's words:
//
//	audit: USER VERB RESOURCE "NAME" in namespace NS answered CODE REASON: MESSAGE
//
// A Forbidden answer recorded without its message (a policy that drops it) gets the
// authorizer's sentence built from the event's fields, so it reads like kubectl's.
func auditRequestText(s string) (string, bool) {
	t := strings.TrimSpace(s)
	if !strings.HasPrefix(t, "{") || !strings.Contains(t, `"audit.k8s.io/`) {
		return "", false
	}
	var e auditEvent
	if json.Unmarshal([]byte(t), &e) != nil || e.Kind != "Event" || !strings.HasPrefix(e.APIVersion, "audit.k8s.io/") {
		return "", false
	}
	rs := e.ResponseStatus
	if rs == nil || !refusedCode(rs.Code) || (e.Stage != "" && e.Stage != "ResponseComplete" && e.Stage != "Panic") {
		return "", false
	}
	user := e.User.Username
	if user == "" {
		user = "an unauthenticated client"
	}
	if e.ImpersonatedUser != nil && e.ImpersonatedUser.Username != "" {
		user = e.ImpersonatedUser.Username
	}
	what, ns, resource, group := e.RequestURI, "", "", ""
	if o := e.ObjectRef; o != nil && o.Resource != "" {
		resource, ns, group = o.Resource, o.Namespace, o.APIGroup
		if o.Subresource != "" {
			resource += "/" + o.Subresource
		}
		what = resource
		if o.Name != "" {
			what += ` "` + o.Name + `"`
		}
		if ns != "" {
			what += " in namespace " + ns
		}
	}
	msg, reason := rs.Message, rs.Reason
	if msg == "" && reason == "Forbidden" && resource != "" {
		msg = forbiddenSentence(user, e.Verb, resource, group, ns)
	}
	if reason == "" {
		reason = "Failure"
	}
	if msg == "" {
		msg = reason
	}
	return "audit: " + user + " " + e.Verb + " " + what + " answered " + strconv.Itoa(rs.Code) + " " + reason + ": " + msg, true
}

// refusedCode reports whether an HTTP status is one the request stage explains.
func refusedCode(c int) bool {
	switch c {
	case 401, 403, 409, 422, 429:
		return true
	}
	return c >= 500 && c <= 599
}

// forbiddenSentence is the RBAC authorizer's refusal as the API server words it
// (k8s.io/apiserver responsewriters forbiddenMessage).
func forbiddenSentence(user, verb, resource, group, ns string) string {
	s := `User "` + user + `" cannot ` + verb + ` resource "` + resource + `" in API group "` + group + `"`
	if ns != "" {
		return s + ` in the namespace "` + ns + `"`
	}
	return s + " at the cluster scope"
}
