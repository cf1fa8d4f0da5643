//go:build e2e

package e2e

// The serve-vs-live comparison: while a scenario runs, the requests a Kubernetes client
// makes (discovery, a list of every kind, its table, pod logs and the kubelet's refusals,
// access reviews, OpenAPI, version) are sent to the live API server, as the collector's
// ServiceAccount, once before the bundle is collected and once after. Then `podflow
// serve` of the bundle gets the same requests, and each answer is compared with the live
// ones: what was stable on the live server (the same in both reads) must be what serve
// answers; what changed between the two reads may be either. Differences a snapshot
// cannot avoid are in serveAllowed, each with its reason; any other fails the scenario.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// answer is what a server said to one request.
type answer struct {
	Status int
	Body   []byte
	// AsAdmin marks an answer the collector was refused (403) and the cluster's admin
	// was given: what the server holds, which is what serve is compared with.
	AsAdmin bool
}

// probeSet is every answer of one server, by request ("GET /api/v1/..."), in the order
// the requests were made.
type probeSet struct {
	order   []string
	answers map[string]answer
	// restarts are the restart counts ("pod/container") of the pod list the read began
	// with: a container restarted between the reads is told by them (restartedDuring).
	restarts map[string]int32
}

type prober struct {
	ctx    context.Context
	client *http.Client
	// admin, when set, asks again what client was refused.
	admin *http.Client
	host  string
	set   *probeSet
}

const (
	acceptTable    = "application/json;as=Table;v=v1;g=meta.k8s.io"
	acceptProtobuf = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
)

func httpClientFor(kubeconfig string) (*http.Client, string, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, "", err
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, "", err
	}
	return hc, strings.TrimSuffix(cfg.Host, "/"), nil
}

// probeServer sends a client's requests to the server of kubeconfig, about namespace
// ns; a request refused with 403 is asked again with adminKubeconfig when it is set.
func probeServer(ctx context.Context, kubeconfig, adminKubeconfig, ns string) (*probeSet, error) {
	hc, host, err := httpClientFor(kubeconfig)
	if err != nil {
		return nil, err
	}
	p := &prober{ctx: ctx, client: hc, host: host, set: &probeSet{answers: map[string]answer{}}}
	if adminKubeconfig != "" {
		if p.admin, _, err = httpClientFor(adminKubeconfig); err != nil {
			return nil, err
		}
	}
	if err := p.run(ns); err != nil {
		return nil, err
	}
	return p.set, nil
}

// do sends one request; key names it in the set (the path, and how it was asked).
func (p *prober) do(method, path, accept string, body []byte, key string) (answer, error) {
	a, err := p.send(p.client, method, path, accept, body)
	if err != nil {
		return a, err
	}
	if a.Status == http.StatusForbidden && p.admin != nil {
		if a, err = p.send(p.admin, method, path, accept, body); err != nil {
			return a, err
		}
		a.AsAdmin = true
	}
	if key == "" {
		key = method + " " + path
	}
	if _, seen := p.set.answers[key]; !seen {
		p.set.order = append(p.set.order, key)
	}
	p.set.answers[key] = a
	return a, nil
}

func (p *prober) send(c *http.Client, method, path, accept string, body []byte) (answer, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(p.ctx, method, p.host+path, rd)
	if err != nil {
		return answer{}, err
	}
	if accept == "" {
		accept = "application/json"
	}
	req.Header.Set("Accept", accept)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		return answer{}, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return answer{}, fmt.Errorf("%s %s: %w", method, path, err)
	}
	return answer{Status: resp.StatusCode, Body: data}, nil
}

func (p *prober) get(path string) (answer, error) { return p.do("GET", path, "", nil, "") }

type apiResource struct {
	Name       string   `json:"name"`
	Namespaced bool     `json:"namespaced"`
	Kind       string   `json:"kind"`
	Verbs      []string `json:"verbs"`
}

type apiResourceList struct {
	GroupVersion string        `json:"groupVersion"`
	Resources    []apiResource `json:"resources"`
}

type apiGroupList struct {
	Groups []struct {
		Name     string `json:"name"`
		Versions []struct {
			GroupVersion string `json:"groupVersion"`
		} `json:"versions"`
		PreferredVersion struct {
			GroupVersion string `json:"groupVersion"`
		} `json:"preferredVersion"`
	} `json:"groups"`
}

// acceptAggregated is the Accept header client-go's discovery sends since Kubernetes
// 1.30: the aggregated form first, then the one-document-per-group-version form.
const acceptAggregated = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"

func gvPath(gv string) string {
	if gv == "v1" {
		return "/api/v1"
	}
	return "/apis/" + gv
}

func (p *prober) run(ns string) error {
	if _, err := p.get("/version"); err != nil {
		return err
	}
	if _, err := p.get("/api"); err != nil {
		return err
	}
	groups, err := p.get("/apis")
	if err != nil {
		return err
	}
	for _, path := range []string{"/api", "/apis"} {
		if _, err := p.do("GET", path, acceptAggregated, nil, "GET "+path+" (aggregated)"); err != nil {
			return err
		}
	}
	var gl apiGroupList
	if groups.Status == http.StatusOK {
		if err := json.Unmarshal(groups.Body, &gl); err != nil {
			return fmt.Errorf("/apis: %w", err)
		}
	}
	// Discovery of every group version; lists at each group's preferred version, as
	// kubectl resolves a kind.
	preferred := []string{"v1"}
	gvs := []string{"v1"}
	for _, g := range gl.Groups {
		for _, v := range g.Versions {
			gvs = append(gvs, v.GroupVersion)
		}
		preferred = append(preferred, g.PreferredVersion.GroupVersion)
	}
	docs := map[string]apiResourceList{}
	for _, gv := range gvs {
		a, err := p.get(gvPath(gv))
		if err != nil {
			return err
		}
		var l apiResourceList
		if a.Status == http.StatusOK {
			if err := json.Unmarshal(a.Body, &l); err != nil {
				return fmt.Errorf("%s: %w", gvPath(gv), err)
			}
		}
		docs[gv] = l
	}
	var pods answer
	for _, gv := range preferred {
		for _, r := range docs[gv].Resources {
			if strings.Contains(r.Name, "/") || !containsString(r.Verbs, "list") {
				continue
			}
			path := gvPath(gv) + "/" + r.Name
			if r.Namespaced {
				path = gvPath(gv) + "/namespaces/" + ns + "/" + r.Name
			}
			a, err := p.get(path)
			if err != nil {
				return err
			}
			if gv == "v1" && r.Name == "pods" {
				pods = a
			}
			if _, err := p.do("GET", path, acceptTable, nil, "GET "+path+" (table)"); err != nil {
				return err
			}
		}
	}
	// Logs of every container of every pod, current and previous: the kubelet's answer,
	// or the API server's for a pod with no node.
	if pods.Status == http.StatusOK {
		var pl corev1.PodList
		if err := json.Unmarshal(pods.Body, &pl); err != nil {
			return fmt.Errorf("pods: %w", err)
		}
		p.set.restarts = restartCounts(pl.Items)
		for _, pod := range pl.Items {
			for _, c := range append(pod.Spec.InitContainers, pod.Spec.Containers...) {
				base := "/api/v1/namespaces/" + ns + "/pods/" + pod.Name + "/log?container=" + url.QueryEscape(c.Name)
				for _, q := range []string{"", "&previous=true"} {
					if _, err := p.get(base + q); err != nil {
						return err
					}
				}
			}
		}
	}
	// Access reviews kubectl auth can-i makes, and whoami's.
	for _, attr := range []map[string]string{
		{"verb": "list", "resource": "pods", "namespace": ns},
		{"verb": "get", "resource": "pods", "subresource": "log", "namespace": ns},
		{"verb": "watch", "resource": "events", "namespace": ns},
		{"verb": "delete", "resource": "pods", "namespace": ns},
		{"verb": "create", "group": "apps", "resource": "deployments", "namespace": ns},
	} {
		body, _ := json.Marshal(map[string]any{
			"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
			"spec": map[string]any{"resourceAttributes": attr},
		})
		key := fmt.Sprintf("POST selfsubjectaccessreviews (%s %s%s)", attr["verb"], attr["resource"], map[bool]string{true: "/" + attr["subresource"]}[attr["subresource"] != ""])
		if _, err := p.do("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", "", body, key); err != nil {
			return err
		}
	}
	for _, k := range []string{"SelfSubjectRulesReview", "SelfSubjectReview"} {
		gv, res := "authorization.k8s.io/v1", "selfsubjectrulesreviews"
		spec := map[string]any{"namespace": ns}
		if k == "SelfSubjectReview" {
			gv, res, spec = "authentication.k8s.io/v1", "selfsubjectreviews", nil
		}
		body, _ := json.Marshal(map[string]any{"apiVersion": gv, "kind": k, "spec": spec})
		if _, err := p.do("POST", "/apis/"+gv+"/"+res, "", body, ""); err != nil {
			return err
		}
	}
	if _, err := p.do("GET", "/openapi/v2", acceptProtobuf, nil, "GET /openapi/v2 (protobuf)"); err != nil {
		return err
	}
	if _, err := p.get("/openapi/v2"); err != nil {
		return err
	}
	v3, err := p.get("/openapi/v3")
	if err != nil {
		return err
	}
	if v3.Status == http.StatusOK {
		// The documents kubectl explain reads for the core group and apps.
		for _, gv := range []string{"api/v1", "apis/apps/v1"} {
			if _, err := p.get("/openapi/v3/" + gv); err != nil {
				return err
			}
		}
	}
	return nil
}

// serveRow is one line of the comparison table.
type serveRow struct {
	Request string
	Live    string // the live statuses, before and after collection ("200", or "200→404")
	Serve   string
	Diff    string // "" when serve answered as the live server did
	Allowed string // the allow-list's reason, when Diff is one it accepts
	Cells   int    // the table cells compared, for a table request
}

// serveAllowed are the differences a served snapshot cannot avoid. Each matches by the
// kind of difference (the text before the first colon of a row's Diff), and says why.
var serveAllowed = []struct {
	kind, reason string
}{
	{"not served", "the live server has kinds and group versions the bundle format does not hold (podflow collects what a diagnosis reads); serve has none of them to answer from"},
	{"identity", "serve answers as its one fixed user (podflow:serve), not as the identity the bundle was collected with, which the bundle does not record"},
	{"not collected", "the collector reads only the scenario's namespace and the cluster-scoped kinds a diagnosis needs: objects of other namespaces (namespaces, cluster roles and bindings that no subject of it uses) are not in the bundle"},
	{"rules", "SelfSubjectRulesReview: serve's fixed policy is get/list/watch on everything, while the live answer lists the collector's RBAC rules one by one"},
	{"openapi", "serve's OpenAPI holds the group versions it serves only; the live index has every group version of the cluster"},
	{"kubelet unreachable", "under a node fault the API server cannot reach the kubelet and answers a log request with 500; the bundle holds what was collected, and serve answers from it"},
	{"restarted", "the container started a new instance between the live reads and the collection (a crash loop, a liveness kill; its restart count grew): a new instance's log begins again, so the log serve holds is a prefix of a live read or begins one, and an instance the kubelet removed once a later one ended is answered as 200 \"unable to retrieve container logs for ID\""},
	{"unreadable", "both live reads of a container's log got the kubelet's 200 \"unable to retrieve container logs for ID\" (the runtime no longer had that instance), so the live server gave nothing to compare with; the collector, between the reads, read an instance the runtime still had"},
	{"pull retried", pullRetriedReason},
	{"redacted", "collection redacts secrets a container printed (passwords, tokens) before they reach the bundle: each mark stands for a secret (a private key block of several lines becomes one mark); the rest of the log is the live one"},
}

func allowedReason(diff string) string {
	kind, _, _ := strings.Cut(diff, ":")
	if kind == "cells" {
		// Table cells: each kind of cell difference has its reason (cellAllowed).
		return cellsReason(diff)
	}
	for _, a := range serveAllowed {
		if a.kind == kind {
			return a.reason
		}
	}
	return ""
}

// compareServe compares serve's answers with the live server's two reads; restarts are
// the containers' restart counts read after serve's answers (restartedDuring).
func compareServe(ns string, before, after, served *probeSet, restarts map[string]int32) []serveRow {
	var rows []serveRow
	seen := map[string]bool{}
	w := restartWindow{first: before.restarts, last: restarts}
	for _, key := range served.order {
		seen[key] = true
		s := served.answers[key]
		l1, ok1 := before.answers[key]
		l2, ok2 := after.answers[key]
		row := serveRow{Request: key, Serve: fmt.Sprint(s.Status)}
		switch {
		case !ok1 && !ok2:
			row.Live = "-"
			row.Diff = "serve only: the live server's discovery does not lead to this request"
		case !ok1 || !ok2:
			if !ok1 {
				l1 = l2
			}
			row.Live = fmt.Sprint(l1.Status)
			l2 = l1
			row.Diff = compareAnswer(key, ns, l1, l2, s, w)
		default:
			row.Live = fmt.Sprint(l1.Status)
			if l2.Status != l1.Status {
				row.Live += "→" + fmt.Sprint(l2.Status)
			}
			row.Diff = compareAnswer(key, ns, l1, l2, s, w)
		}
		if strings.HasSuffix(key, " (table)") && s.Status == http.StatusOK && l1.Status == http.StatusOK && l2.Status == http.StatusOK {
			_, row.Cells = compareTable(l1.Body, l2.Body, s.Body, w.rowRestarted(key))
		}
		if l1.AsAdmin || l2.AsAdmin {
			// The collector's role does not read it (serve derives it): the admin's answer.
			row.Live += " (admin)"
		}
		row.Allowed = allowedReason(row.Diff)
		rows = append(rows, row)
	}
	// What only the live server was asked: kinds serve does not list in its discovery.
	var liveOnly []string
	for _, key := range before.order {
		if !seen[key] {
			liveOnly = append(liveOnly, key)
		}
	}
	if len(liveOnly) > 0 {
		row := serveRow{Request: fmt.Sprintf("%d requests only the live server's discovery leads to", len(liveOnly)),
			Live: "200", Serve: "-", Diff: "not served: " + summarizeLiveOnly(liveOnly)}
		row.Allowed = allowedReason(row.Diff)
		rows = append(rows, row)
	}
	return rows
}

// summarizeLiveOnly names the resources of requests only the live server got.
func summarizeLiveOnly(keys []string) string {
	names := map[string]bool{}
	for _, k := range keys {
		k = strings.TrimSuffix(strings.TrimPrefix(k, "GET "), " (table)")
		parts := strings.Split(strings.Trim(k, "/"), "/")
		names[parts[len(parts)-1]] = true
	}
	var out []string
	for n := range names {
		out = append(out, n)
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// compareAnswer says how serve's answer s differs from the live ones l1 (before the
// collection) and l2 (after), or "". w tells the containers that started again between
// the reads.
func compareAnswer(key, ns string, l1, l2, s answer, w restartWindow) string {
	if s.Status != l1.Status && s.Status != l2.Status && l1.Status == http.StatusInternalServerError &&
		strings.Contains(key, "/log?") && strings.Contains(statusMessage(l1.Body), "/containerLogs/") {
		return fmt.Sprintf("kubelet unreachable: live %d %q, serve %d", l1.Status, briefStatus(l1.Body), s.Status)
	}
	if s.Status != l1.Status && s.Status != l2.Status {
		return fmt.Sprintf("status: live %d %q, serve %d %q", l1.Status, briefStatus(l1.Body), s.Status, briefStatus(s.Body))
	}
	if s.Status >= 300 {
		// A refusal: the message must be the live server's.
		m := statusMessage(s.Body)
		if m != statusMessage(l1.Body) && m != statusMessage(l2.Body) {
			if pullRetried(statusMessage(l1.Body), m) && pullRetried(statusMessage(l2.Body), m) {
				return fmt.Sprintf("pull retried: live %q, serve %q", statusMessage(l1.Body), m)
			}
			return fmt.Sprintf("message: live %q, serve %q", statusMessage(l1.Body), m)
		}
		return ""
	}
	switch {
	case key == "GET /version":
		return compareFields(l1.Body, s.Body, "gitVersion", "major", "minor", "platform")
	case strings.HasSuffix(key, " (aggregated)"):
		return compareAggregated(l1.Body, s.Body)
	case key == "GET /api":
		return compareSubset("versions", l1.Body, s.Body, func(b []byte) []string {
			var v struct{ Versions []string }
			_ = json.Unmarshal(b, &v)
			return v.Versions
		})
	case key == "GET /apis":
		return compareSubset("group versions", l1.Body, s.Body, func(b []byte) []string {
			var gl apiGroupList
			_ = json.Unmarshal(b, &gl)
			var out []string
			for _, g := range gl.Groups {
				for _, v := range g.Versions {
					out = append(out, v.GroupVersion)
				}
			}
			return out
		})
	case strings.HasPrefix(key, "GET /openapi/v3/"):
		return ""
	case key == "GET /openapi/v3":
		d := compareSubset("paths", l1.Body, s.Body, func(b []byte) []string {
			var idx struct {
				Paths map[string]any `json:"paths"`
			}
			_ = json.Unmarshal(b, &idx)
			var out []string
			for p := range idx.Paths {
				out = append(out, p)
			}
			return out
		})
		return d
	case strings.HasPrefix(key, "GET /openapi/v2"):
		if len(s.Body) == 0 {
			return "body: serve's document is empty"
		}
		return ""
	case strings.Contains(key, "/log?"):
		return compareLog(l1.Body, l2.Body, s.Body, restartedDuring(key, w.first, w.last))
	case strings.HasPrefix(key, "POST selfsubjectaccessreviews"):
		allowed := func(b []byte) string {
			var r struct {
				Status struct {
					Allowed bool `json:"allowed"`
				} `json:"status"`
			}
			_ = json.Unmarshal(b, &r)
			return fmt.Sprint(r.Status.Allowed)
		}
		if a := allowed(s.Body); a != allowed(l1.Body) && a != allowed(l2.Body) {
			return fmt.Sprintf("allowed: live %s, serve %s", allowed(l1.Body), a)
		}
		return ""
	case strings.HasSuffix(key, "/selfsubjectreviews"):
		user := func(b []byte) string {
			var r struct {
				Status struct {
					UserInfo struct {
						Username string `json:"username"`
					} `json:"userInfo"`
				} `json:"status"`
			}
			_ = json.Unmarshal(b, &r)
			return r.Status.UserInfo.Username
		}
		if u := user(s.Body); u != user(l1.Body) {
			return fmt.Sprintf("identity: live %q, serve %q", user(l1.Body), u)
		}
		return ""
	case strings.HasSuffix(key, "/selfsubjectrulesreviews"):
		return "rules: serve grants get, list, watch on *; the live answer lists the collector's role"
	case strings.HasSuffix(key, " (table)"):
		d, _ := compareTable(l1.Body, l2.Body, s.Body, w.rowRestarted(key))
		return d
	}
	var rl apiResourceList
	if json.Unmarshal(s.Body, &rl) == nil && rl.GroupVersion != "" {
		return compareDiscovery(l1.Body, s.Body)
	}
	d := compareItems(l1.Body, l2.Body, s.Body)
	if key == "GET /api/v1/namespaces" && d != "" && onlyOtherNamespaces(l1.Body, s.Body, ns) {
		return fmt.Sprintf("not collected: the %d other namespaces", len(itemNames(l1.Body))-1)
	}
	return d
}

// onlyOtherNamespaces reports whether serve's namespaces are the live ones but those of
// other scenarios and the cluster's own: its namespace is served.
func onlyOtherNamespaces(live, served []byte, ns string) bool {
	l, s := itemNames(live), itemNames(served)
	if !s[ns] || !l[ns] {
		return false
	}
	for n := range s {
		if !l[n] {
			return false
		}
	}
	return true
}

// compareFields compares top-level string fields of two JSON objects.
func compareFields(live, served []byte, fields ...string) string {
	var l, s map[string]any
	_ = json.Unmarshal(live, &l)
	_ = json.Unmarshal(served, &s)
	var diffs []string
	for _, f := range fields {
		if fmt.Sprint(l[f]) != fmt.Sprint(s[f]) {
			diffs = append(diffs, fmt.Sprintf("%s live %v, serve %v", f, l[f], s[f]))
		}
	}
	if len(diffs) > 0 {
		return "fields: " + strings.Join(diffs, "; ")
	}
	return ""
}

// compareSubset reports what serve lists that the live server does not; what only the
// live server lists is the allowed "not served".
func compareSubset(what string, live, served []byte, list func([]byte) []string) string {
	l := map[string]bool{}
	for _, v := range list(live) {
		l[v] = true
	}
	var extra, missing []string
	s := map[string]bool{}
	for _, v := range list(served) {
		s[v] = true
		if !l[v] {
			extra = append(extra, v)
		}
	}
	for v := range l {
		if !s[v] {
			missing = append(missing, v)
		}
	}
	sort.Strings(extra)
	sort.Strings(missing)
	switch {
	case len(extra) > 0:
		return fmt.Sprintf("%s: serve lists %s, which the live server does not", what, strings.Join(extra, ", "))
	case len(missing) > 0 && what == "paths":
		return fmt.Sprintf("openapi: %d group versions only live", len(missing))
	case len(missing) > 0:
		return fmt.Sprintf("not served: %d %s only live", len(missing), what)
	}
	return ""
}

// compareDiscovery compares serve's resources of a group version with the live ones:
// same kind and scope, and verbs serve names are ones the live server has.
func compareDiscovery(live, served []byte) string {
	var l, s apiResourceList
	_ = json.Unmarshal(live, &l)
	_ = json.Unmarshal(served, &s)
	byName := map[string]apiResource{}
	for _, r := range l.Resources {
		byName[r.Name] = r
	}
	var diffs []string
	for _, r := range s.Resources {
		lr, ok := byName[r.Name]
		if !ok {
			diffs = append(diffs, r.Name+" not live")
			continue
		}
		if lr.Kind != r.Kind || lr.Namespaced != r.Namespaced {
			diffs = append(diffs, fmt.Sprintf("%s: live %s namespaced=%t, serve %s namespaced=%t", r.Name, lr.Kind, lr.Namespaced, r.Kind, r.Namespaced))
		}
		for _, v := range r.Verbs {
			if !containsString(lr.Verbs, v) {
				diffs = append(diffs, fmt.Sprintf("%s: verb %s not live", r.Name, v))
			}
		}
	}
	if len(diffs) > 0 {
		return "resources: " + strings.Join(diffs, "; ")
	}
	if len(s.Resources) < len(l.Resources) {
		return fmt.Sprintf("not served: %d resources only live", len(l.Resources)-len(s.Resources))
	}
	return ""
}

func itemNames(b []byte) map[string]bool {
	var l struct {
		Items []struct {
			Metadata struct{ Namespace, Name string }
		}
	}
	_ = json.Unmarshal(b, &l)
	out := map[string]bool{}
	for _, it := range l.Items {
		out[strings.TrimPrefix(it.Metadata.Namespace+"/"+it.Metadata.Name, "/")] = true
	}
	return out
}

// compareItems compares the names a list holds: what both live reads hold must be
// served; what serve holds must be in one of them.
func compareItems(l1, l2, s []byte) string {
	a, b, v := itemNames(l1), itemNames(l2), itemNames(s)
	var missing, extra []string
	for n := range a {
		if b[n] && !v[n] {
			missing = append(missing, n)
		}
	}
	for n := range v {
		if !a[n] && !b[n] {
			extra = append(extra, n)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	var diffs []string
	if len(missing) > 0 {
		diffs = append(diffs, fmt.Sprintf("%d live item(s) not served (%s)", len(missing), abbreviateList(missing)))
	}
	if len(extra) > 0 {
		diffs = append(diffs, fmt.Sprintf("%d served item(s) never live (%s)", len(extra), abbreviateList(extra)))
	}
	if len(diffs) == 0 {
		return ""
	}
	return "items: " + strings.Join(diffs, "; ")
}

func statusMessage(b []byte) string {
	var st struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(b, &st) == nil && st.Message != "" {
		return st.Message
	}
	return strings.TrimSpace(string(b))
}

func briefStatus(b []byte) string {
	return clip([]byte(statusMessage(b)))
}

// startServe runs podflow serve on a bundle and returns its kubeconfig once the server
// says it is serving (its own log line, read from its stderr: no polling).
func startServe(t *testing.T, ctx context.Context, podflow, input string) string {
	t.Helper()
	kubeconfig := filepath.Join(t.TempDir(), "serve.kubeconfig")
	cmd := exec.CommandContext(ctx, podflow, "serve", input, "--kubeconfig-out", kubeconfig)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var log strings.Builder
	ready := make(chan struct{})
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		once := sync.Once{}
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			mu.Lock()
			log.WriteString(sc.Text() + "\n")
			mu.Unlock()
			if strings.Contains(sc.Text(), "read-only on https://") {
				once.Do(func() { close(ready) })
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		<-scanned
		if err := cmd.Wait(); err != nil {
			t.Logf("podflow serve: %v", err)
		}
	})
	select {
	case <-ready:
	case <-scanned:
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("podflow serve %s stopped before serving:\n%s", input, log.String())
	case <-ctx.Done():
		t.Fatalf("podflow serve %s: %v", input, ctx.Err())
	}
	return kubeconfig
}

// compareServeWithLive serves the scenario's bundle and compares its answers with the
// live reads (unexplainedDiffs lists what serveAllowed does not accept).
func compareServeWithLive(t *testing.T, ctx context.Context, podflow, ns, bundlePath string, before, after *probeSet) []serveRow {
	kubeconfig := startServe(t, ctx, podflow, bundlePath)
	served, err := probeServer(ctx, kubeconfig, "", ns)
	if err != nil {
		t.Fatalf("requests to podflow serve: %v", err)
	}
	// The restart counts that close the window the reads and the collection took place
	// in, read once serve has answered (restartedDuring says why this late).
	pods, err := tb.client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("pods of %s after serve's answers: %v", ns, err)
	}
	return compareServe(ns, before, after, served, restartCounts(pods.Items))
}

// unexplainedDiffs are the rows whose difference serveAllowed does not accept.
func unexplainedDiffs(rows []serveRow) []string {
	var out []string
	for _, r := range rows {
		if r.Diff != "" && r.Allowed == "" {
			out = append(out, fmt.Sprintf("%s: live %s, serve %s: %s", r.Request, r.Live, r.Serve, r.Diff))
		}
	}
	return out
}

// writeServeComparison writes the comparison of every scenario: one table per scenario,
// and one summary whose requests have the scenario's names taken out.
func writeServeComparison(t *testing.T, byScenario map[string][]serveRow) {
	if len(byScenario) == 0 {
		return
	}
	dir := os.Getenv("PODFLOW_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(tb.repo, "bin", "artifacts")
	}
	dir = filepath.Join(dir, "serve-vs-live")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Errorf("artifacts: %v", err)
		return
	}
	names := make([]string, 0, len(byScenario))
	for n := range byScenario {
		names = append(names, n)
	}
	sort.Strings(names)
	type agg struct {
		count        int
		live, served map[string]bool
		diffs        map[string]bool
		allowed      bool
	}
	summary := map[string]*agg{}
	var order []string
	for _, n := range names {
		var b strings.Builder
		fmt.Fprintf(&b, "# podflow serve vs the live API server: %s\n\n| request | live | serve | cells | difference | allowed because |\n|---|---|---|---|---|---|\n", n)
		for _, r := range byScenario[n] {
			fmt.Fprintf(&b, "| %s | %s | %s | %d | %s | %s |\n", mdCell(r.Request), r.Live, r.Serve, r.Cells, mdCell(r.Diff), mdCell(r.Allowed))
			key := generalize(r.Request, n)
			a := summary[key]
			if a == nil {
				a = &agg{live: map[string]bool{}, served: map[string]bool{}, diffs: map[string]bool{}, allowed: true}
				summary[key] = a
				order = append(order, key)
			}
			a.count++
			a.live[r.Live] = true
			a.served[r.Serve] = true
			if r.Diff != "" {
				a.diffs[generalize(r.Diff, n)] = true
				a.allowed = a.allowed && r.Allowed != ""
			}
		}
		if err := os.WriteFile(filepath.Join(dir, n+".md"), []byte(b.String()), 0o644); err != nil {
			t.Errorf("artifacts: %v", err)
		}
	}
	requests, cells, tables := 0, 0, 0
	for _, n := range names {
		for _, r := range byScenario[n] {
			requests++
			if r.Cells > 0 {
				cells += r.Cells
				tables++
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# podflow serve vs the live API server, %d scenarios\n\n%d requests compared; %d cells of %d tables with rows.\n\n| request | times | live | serve | differences |\n|---|---|---|---|---|\n", len(names), requests, cells, tables)
	sort.SliceStable(order, func(i, j int) bool { return order[i] < order[j] })
	for _, key := range order {
		a := summary[key]
		var diffs []string
		for d := range a.diffs {
			diffs = append(diffs, d)
		}
		sort.Strings(diffs)
		d := strings.Join(diffs, "; ")
		if len(diffs) > 0 && a.allowed {
			d += " (allowed)"
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s |\n", mdCell(key), a.count, setText(a.live), setText(a.served), mdCell(d))
	}
	b.WriteString("\nAllowed differences:\n\n")
	for _, a := range serveAllowed {
		fmt.Fprintf(&b, "- **%s**: %s\n", a.kind, a.reason)
	}
	b.WriteString("\nAllowed differences of a table's cells (\"cells: KIND in COLUMNS\"):\n\n")
	for _, a := range cellAllowed {
		fmt.Fprintf(&b, "- **%s**: %s\n", a.kind, a.reason)
	}
	path := filepath.Join(dir, "summary.md")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Errorf("artifacts: %v", err)
	}
	t.Logf("serve vs live (%s):\n%s", path, b.String())
}

// generalize takes a scenario's namespace and its objects' names out of a request, so
// the same request of every scenario is one summary row.
func generalize(s, ns string) string {
	s = strings.ReplaceAll(s, "/namespaces/"+ns+"/", "/namespaces/NS/")
	if i := strings.Index(s, "/pods/"); i >= 0 && strings.Contains(s, "/log?") {
		rest := s[i+len("/pods/"):]
		if j := strings.Index(rest, "/"); j >= 0 {
			s = s[:i] + "/pods/POD" + rest[j:]
		}
		if k := strings.Index(s, "container="); k >= 0 {
			end := strings.IndexAny(s[k:], "& ")
			if end < 0 {
				s = s[:k] + "container=C"
			} else {
				s = s[:k] + "container=C" + s[k+end:]
			}
		}
	}
	return s
}

func setText(m map[string]bool) string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

func mdCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

// liveProbe reads the live server as the collector: it must succeed, or the scenario
// has nothing to compare with.
func liveProbe(t *testing.T, ctx context.Context, kubeconfig, ns string) *probeSet {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	p, err := probeServer(ctx, kubeconfig, tb.adminKubeconfig, ns)
	if err != nil {
		t.Fatalf("requests to the live API server: %v", err)
	}
	return p
}
