package serve

import (
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"

	"podflow.dev/podflow/bundle"
)

// Bounds on what a request may ask of the server: the bundle is untrusted and so is
// whoever holds the token, but neither may make the server work without end.
const (
	// maxPathLen is the longest URL path served; every real one is far shorter.
	maxPathLen = 2048
	// maxSelectorLen bounds a label or field selector.
	maxSelectorLen = 4096
	// MaxHeaderBytes bounds a request's headers (http.Server.MaxHeaderBytes).
	MaxHeaderBytes = 64 << 10
)

// Options configure a Server.
type Options struct {
	// Token is the bearer token every request must carry.
	Token string
	// Now is the time ages in tables are counted from; zero means the current time, as
	// kubectl counts the ages it computes itself (describe's events) and as a live API
	// server would.
	Now time.Time
	// Address is what discovery tells clients the server is reachable at (host:port).
	Address string
}

// Server is an http.Handler answering the read-only Kubernetes API from bundles.
type Server struct {
	ix    *index
	token []byte
	addr  string
}

// New indexes the bundles and returns a server over them. Items of a list that are not
// objects with a name cannot be served and are counted in Skipped.
func New(bundles []*bundle.Bundle, opts Options) (*Server, error) {
	if opts.Token == "" {
		return nil, fmt.Errorf("serve: a token is required")
	}
	now := time.Now
	if !opts.Now.IsZero() {
		now = func() time.Time { return opts.Now }
	}
	ix, err := newIndex(bundles, now)
	if err != nil {
		return nil, err
	}
	return &Server{ix: ix, token: []byte(opts.Token), addr: opts.Address}, nil
}

// Skipped is how many list items of the bundles could not be served.
func (s *Server) Skipped() int { return s.ix.skipped }

// Resources lists the resources served, as plural.group (pods, deployments.apps).
func (s *Server) Resources() []string {
	var out []string
	for _, r := range s.ix.resources {
		name := r.list.Resource
		if r.list.Group != "" {
			name += "." + r.list.Group
		}
		out = append(out, name)
	}
	return out
}

// Objects is how many objects the bundles hold, in all the resources served.
func (s *Server) Objects() int {
	n := 0
	for _, r := range s.ix.resources {
		n += len(r.objects)
	}
	return n
}

// PodNamespaces are the namespaces of the pods served, each once, sorted.
func (s *Server) PodNamespaces() []string {
	var out []string
	if r := s.ix.lookup("", "v1", "pods"); r != nil {
		for _, o := range r.objects { // sorted by namespace
			if len(out) == 0 || out[len(out)-1] != o.namespace {
				out = append(out, o.namespace)
			}
		}
	}
	return out
}

// SetAddress sets what discovery tells clients the server is reachable at, once it
// listens.
func (s *Server) SetAddress(addr string) { s.addr = addr }

// ServeHTTP answers one request: after the token, only GET and HEAD, under /version,
// /api and /apis, from the index.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(r) {
		writeStatus(w, apierrors.NewUnauthorized("podflow serve: the bearer token is missing or wrong; use the kubeconfig podflow serve printed"))
		return
	}
	if slices.Contains(reviewPaths, r.URL.Path) {
		s.review(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		writeStatus(w, &apierrors.StatusError{ErrStatus: metav1.Status{
			Status: metav1.StatusFailure, Code: http.StatusMethodNotAllowed, Reason: metav1.StatusReasonMethodNotAllowed,
			Message: fmt.Sprintf("podflow serve is read-only: it serves a bundle of evidence, %s is refused", strings.ToLower(r.Method)),
		}})
		return
	}
	p := r.URL.Path
	if len(p) > maxPathLen {
		writeStatus(w, apierrors.NewBadRequest("request path too long"))
		return
	}
	parts := strings.Split(strings.Trim(p, "/"), "/")
	switch {
	case p == "/version" || p == "/version/":
		writeJSON(w, s.ix.version)
	case p == "/healthz" || p == "/livez" || p == "/readyz":
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "ok")
	case p == "/openapi/v2" || strings.HasPrefix(p, "/openapi/v3"):
		s.openapi(w, r, p)
	case (p == "/api" || p == "/api/" || p == "/apis" || p == "/apis/") && aggregatedVersion(r) != "":
		s.writeAggregated(w, p == "/api" || p == "/api/", aggregatedVersion(r))
	case p == "/api" || p == "/api/":
		writeJSON(w, &metav1.APIVersions{TypeMeta: metav1.TypeMeta{Kind: "APIVersions"}, Versions: []string{"v1"},
			ServerAddressByClientCIDRs: s.cidrs()})
	case p == "/apis" || p == "/apis/":
		writeJSON(w, s.groupList())
	case len(parts) == 2 && parts[0] == "api" && parts[1] == "v1":
		writeJSON(w, s.resourceList("", "v1"))
	case len(parts) == 2 && parts[0] == "apis":
		g := s.group(parts[1])
		if g == nil {
			writeStatus(w, apierrors.NewNotFound(schema.GroupResource{}, parts[1]))
			return
		}
		writeJSON(w, g)
	case len(parts) == 3 && parts[0] == "apis":
		if s.group(parts[1]) == nil || parts[2] != s.groupVersion(parts[1]) {
			writeStatus(w, apierrors.NewNotFound(schema.GroupResource{}, parts[1]+"/"+parts[2]))
			return
		}
		writeJSON(w, s.resourceList(parts[1], parts[2]))
	case len(parts) > 2 && parts[0] == "api" && parts[1] == "v1":
		s.serveResource(w, r, "", "v1", parts[2:])
	case len(parts) > 3 && parts[0] == "apis":
		s.serveResource(w, r, parts[1], parts[2], parts[3:])
	default:
		writeStatus(w, notFound(p))
	}
}

func (s *Server) authorized(r *http.Request) bool {
	auth := r.Header.Get("Authorization")
	token, ok := strings.CutPrefix(auth, "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(strings.TrimSpace(token)), s.token) == 1
}

func notFound(p string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusNotFound, Reason: metav1.StatusReasonNotFound,
		Message: "the server could not find the requested resource",
		Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: metav1.CauseTypeUnexpectedServerResponse, Message: strconv.Quote(p)}}},
	}}
}

func (s *Server) cidrs() []metav1.ServerAddressByClientCIDR {
	return []metav1.ServerAddressByClientCIDR{{ClientCIDR: "0.0.0.0/0", ServerAddress: s.addr}}
}

// groups are the API groups served: those of the bundle's resources, then those of
// the reviews.
func (s *Server) groups() []string {
	out := s.ix.groups()
	for _, g := range slices.Sorted(maps.Keys(reviewGroups)) {
		if !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	return out
}

// groupVersion is the one version a group is served at.
func (s *Server) groupVersion(group string) string {
	if _, ok := reviewGroups[group]; ok {
		return "v1"
	}
	return s.ix.groupVersion(group)
}

func (s *Server) group(name string) *metav1.APIGroup {
	for _, g := range s.groups() {
		if g == name {
			v := s.groupVersion(g)
			gv := metav1.GroupVersionForDiscovery{GroupVersion: g + "/" + v, Version: v}
			return &metav1.APIGroup{TypeMeta: metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}, Name: g,
				Versions: []metav1.GroupVersionForDiscovery{gv}, PreferredVersion: gv,
				ServerAddressByClientCIDRs: s.cidrs()}
		}
	}
	return nil
}

func (s *Server) groupList() *metav1.APIGroupList {
	l := &metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}, Groups: []metav1.APIGroup{}}
	for _, g := range s.groups() {
		grp := s.group(g)
		grp.TypeMeta = metav1.TypeMeta{}
		l.Groups = append(l.Groups, *grp)
	}
	return l
}

// verbs are what every served resource allows: reading only. A watch stays open
// without events: the bundle never changes.
var verbs = metav1.Verbs{"get", "list", "watch"}

func (s *Server) resourceList(group, ver string) *metav1.APIResourceList {
	gv := ver
	if group != "" {
		gv = group + "/" + ver
	}
	l := &metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: gv,
		APIResources: []metav1.APIResource{}}
	l.APIResources = append(l.APIResources, reviewGroups[group]...)
	for _, r := range s.ix.resources {
		if r.list.Group != group || r.list.Version != ver {
			continue
		}
		l.APIResources = append(l.APIResources, metav1.APIResource{
			Name: r.list.Resource, SingularName: r.singular, Namespaced: r.list.Namespaced, Kind: r.list.Kind,
			Verbs: verbs, ShortNames: r.shortNames, Categories: r.categories,
		})
		if r.list.Resource == "pods" && group == "" {
			l.APIResources = append(l.APIResources, metav1.APIResource{Name: "pods/log", Namespaced: true, Kind: "Pod", Verbs: metav1.Verbs{"get"}})
		}
	}
	return l
}

// serveResource answers a path under a group version: rest is what follows
// /api/v1 or /apis/GROUP/VERSION.
func (s *Server) serveResource(w http.ResponseWriter, r *http.Request, group, ver string, rest []string) {
	namespace := ""
	if len(rest) >= 3 && rest[0] == "namespaces" {
		namespace, rest = rest[1], rest[2:]
	}
	res := s.ix.lookup(group, ver, rest[0])
	if res == nil {
		writeStatus(w, notFound(r.URL.Path))
		return
	}
	gr := schema.GroupResource{Group: group, Resource: res.list.Resource}
	if namespace != "" && !res.list.Namespaced {
		writeStatus(w, notFound(r.URL.Path))
		return
	}
	switch len(rest) {
	case 1:
		s.list(w, r, res, namespace)
	case 2:
		if res.list.Namespaced && namespace == "" {
			writeStatus(w, notFound(r.URL.Path))
			return
		}
		o := res.byKey[namespace+"/"+rest[1]]
		if o == nil {
			writeStatus(w, apierrors.NewNotFound(gr, rest[1]))
			return
		}
		s.get(w, r, res, o)
	case 3:
		if res.list.Resource == "pods" && group == "" && rest[2] == "log" && namespace != "" {
			s.logs(w, r, res, namespace, rest[1])
			return
		}
		writeStatus(w, notFound(r.URL.Path))
	default:
		writeStatus(w, notFound(r.URL.Path))
	}
}

func (s *Server) get(w http.ResponseWriter, r *http.Request, res *resource, o *object) {
	switch wantAs(r) {
	case asTable:
		writeJSON(w, s.table(res, []*object{o}, r.URL.Query().Get("includeObject"), ""))
	case asPartial:
		writeJSON(w, partial(o))
	default:
		writeJSON(w, o.item)
	}
}

func (s *Server) list(w http.ResponseWriter, r *http.Request, res *resource, namespace string) {
	q := r.URL.Query()
	if q.Get("watch") == "true" || q.Get("watch") == "1" {
		s.watch(w, r)
		return
	}
	match, err := selectors(res, q.Get("labelSelector"), q.Get("fieldSelector"))
	if err != nil {
		writeStatus(w, err)
		return
	}
	var items []*object
	for _, o := range res.objects {
		if (namespace == "" || o.namespace == namespace) && match(o) {
			items = append(items, o)
		}
	}
	// Chunked lists (kubectl asks for 500 at a time): the continue token is the offset
	// of the next item in this same selection.
	start, err := continueOffset(q.Get("continue"), len(items))
	if err != nil {
		writeStatus(w, err)
		return
	}
	total := len(items)
	items = items[start:]
	meta := metav1.ListMeta{ResourceVersion: "1"}
	if limit, err := strconv.Atoi(q.Get("limit")); err == nil && limit > 0 && limit < len(items) {
		items = items[:limit]
		meta.Continue = base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(start + limit)))
		rem := int64(total - start - limit)
		meta.RemainingItemCount = &rem
	}
	switch wantAs(r) {
	case asTable:
		writeJSON(w, s.table(res, items, q.Get("includeObject"), meta.Continue))
	case asPartial:
		out := map[string]any{"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadataList", "metadata": meta}
		parts := make([]any, len(items))
		for i, o := range items {
			parts[i] = partial(o)
		}
		out["items"] = parts
		writeJSON(w, out)
	default:
		out := map[string]any{"apiVersion": res.list.APIVersion(), "kind": res.list.Kind + "List", "metadata": meta}
		objs := make([]any, len(items))
		for i, o := range items {
			objs[i] = o.item
		}
		out["items"] = objs
		writeJSON(w, out)
	}
}

func continueOffset(token string, n int) (int, error) {
	if token == "" {
		return 0, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err == nil && len(raw) <= 12 {
		if off, err := strconv.Atoi(string(raw)); err == nil && off >= 0 && off <= n {
			return off, nil
		}
	}
	return 0, apierrors.NewBadRequest("invalid continue token")
}

// watch holds the connection open without events until the client or the server
// ends it: the bundle is a snapshot and nothing in it changes. A timeoutSeconds ends it
// sooner, as the API server would.
func (s *Server) watch(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	timeout := 30 * time.Minute
	if secs, err := strconv.Atoi(r.URL.Query().Get("timeoutSeconds")); err == nil && secs > 0 && time.Duration(secs)*time.Second < timeout {
		timeout = time.Duration(secs) * time.Second
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-r.Context().Done():
	case <-t.C:
	}
}

// selectors parses a label and a field selector into one test, refusing a field label
// the API server would not support for the resource.
func selectors(res *resource, labelSel, fieldSel string) (func(*object) bool, error) {
	if len(labelSel) > maxSelectorLen || len(fieldSel) > maxSelectorLen {
		return nil, apierrors.NewBadRequest("selector too long")
	}
	ls, err := labels.Parse(labelSel)
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("unable to parse requirement: %v", err))
	}
	fs, err := fields.ParseSelector(fieldSel)
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid field selector: %v", err))
	}
	reqs := fs.Requirements()
	for _, req := range reqs {
		if !slices.Contains(res.fieldLabels, req.Field) {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("field label not supported: %s", req.Field))
		}
	}
	return func(o *object) bool {
		if !ls.Matches(o.labels) {
			return false
		}
		for _, req := range reqs {
			v := o.fields[req.Field]
			// Events an import rebuilt from text often lack their object's UID; they are
			// still about the object they name (kubectl describe selects by UID too).
			if req.Field == "involvedObject.uid" && v == "" {
				continue
			}
			equal := v == req.Value
			if (req.Operator == selection.NotEquals) == equal {
				return false
			}
		}
		return true
	}, nil
}

// partial is an object's metadata alone, as a PartialObjectMetadata.
func partial(o *object) map[string]any {
	return map[string]any{"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata", "metadata": o.item["metadata"]}
}

type as int

const (
	asObject as = iota
	asTable
	asPartial
)

// wantAs reads the Accept header: kubectl get asks for a meta.k8s.io Table first, then
// plain JSON; metadata clients ask for PartialObjectMetadata.
func wantAs(r *http.Request) as {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		params := map[string]string{}
		fieldsOf := strings.Split(part, ";")
		mediaType := strings.TrimSpace(fieldsOf[0])
		for _, p := range fieldsOf[1:] {
			k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
			params[k] = v
		}
		if params["as"] == "" {
			if mediaType == "application/json" || mediaType == "*/*" || mediaType == "application/*" {
				return asObject
			}
			continue
		}
		if params["g"] != "meta.k8s.io" || (params["v"] != "v1" && params["v"] != "v1beta1") {
			continue
		}
		switch params["as"] {
		case "Table":
			return asTable
		case "PartialObjectMetadata", "PartialObjectMetadataList":
			return asPartial
		}
	}
	return asObject
}

func writeJSON(w http.ResponseWriter, v any) {
	writeJSONAs(w, "application/json", v)
}

// writeJSONAs writes v as JSON under a content type that names its kind.
func writeJSONAs(w http.ResponseWriter, contentType string, v any) {
	w.Header().Set("Content-Type", contentType)
	enc := json.NewEncoder(w)
	// A write error is the client going away; there is no one to tell.
	_ = enc.Encode(v)
}

func writeStatus(w http.ResponseWriter, err error) {
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		st = apierrors.NewInternalError(err)
	}
	status := st.Status()
	status.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(int(status.Code))
	_ = json.NewEncoder(w).Encode(status)
}
