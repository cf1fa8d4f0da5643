package serve

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
)

// User is who every request to the server is: the token is the only credential, and
// whoever holds it may read the bundle and nothing else.
const User = "podflow:serve"

// maxReviewBytes bounds the body of a review request; a real one is a few hundred bytes.
const maxReviewBytes = 64 << 10

// The reviews a client makes to learn what it may do (kubectl auth can-i and auth
// whoami, dashboards deciding which buttons to show): POSTs the server answers,
// though it writes nothing.
const (
	accessReviewPath = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
	rulesReviewPath  = "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews"
	subjectPath      = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
)

var reviewPaths = []string{accessReviewPath, rulesReviewPath, subjectPath}

// reviewGroups are the groups the reviews are served in, for discovery.
var reviewGroups = map[string][]metav1.APIResource{
	"authorization.k8s.io": {
		{Name: "selfsubjectaccessreviews", SingularName: "selfsubjectaccessreview", Kind: "SelfSubjectAccessReview", Verbs: metav1.Verbs{"create"}},
		{Name: "selfsubjectrulesreviews", SingularName: "selfsubjectrulesreview", Kind: "SelfSubjectRulesReview", Verbs: metav1.Verbs{"create"}},
	},
	"authentication.k8s.io": {
		{Name: "selfsubjectreviews", SingularName: "selfsubjectreview", Kind: "SelfSubjectReview", Verbs: metav1.Verbs{"create"}},
	},
}

// allowedVerb says what the server allows: reading.
func allowedVerb(verb string) bool { return slices.Contains(verbs, verb) }

// review answers one review request.
func (s *Server) review(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		writeStatus(w, &apierrors.StatusError{ErrStatus: metav1.Status{
			Status: metav1.StatusFailure, Code: http.StatusMethodNotAllowed, Reason: metav1.StatusReasonMethodNotAllowed,
			Message: fmt.Sprintf("the server does not allow this method on the requested resource (%s)", r.URL.Path),
		}})
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxReviewBytes+1))
	if err != nil || len(body) > maxReviewBytes {
		writeStatus(w, apierrors.NewRequestEntityTooLargeError("the review request is larger than 64 KiB"))
		return
	}
	var out any
	switch r.URL.Path {
	case accessReviewPath:
		var rev authorizationv1.SelfSubjectAccessReview
		if err := decodeReview(body, &rev); err != nil {
			writeStatus(w, apierrors.NewBadRequest(fmt.Sprintf("decode SelfSubjectAccessReview: %v", err)))
			return
		}
		verb := ""
		switch {
		case rev.Spec.ResourceAttributes != nil:
			verb = rev.Spec.ResourceAttributes.Verb
		case rev.Spec.NonResourceAttributes != nil:
			verb = rev.Spec.NonResourceAttributes.Verb
		default:
			writeStatus(w, apierrors.NewBadRequest("SelfSubjectAccessReview: exactly one of resourceAttributes and nonResourceAttributes must be set"))
			return
		}
		rev.TypeMeta = metav1.TypeMeta{Kind: "SelfSubjectAccessReview", APIVersion: "authorization.k8s.io/v1"}
		if allowedVerb(verb) {
			rev.Status = authorizationv1.SubjectAccessReviewStatus{Allowed: true, Reason: "podflow serve allows reading the bundle"}
		} else {
			rev.Status = authorizationv1.SubjectAccessReviewStatus{Allowed: false,
				Reason: fmt.Sprintf("podflow serve is read-only: it serves a bundle of evidence, %s is refused", verb)}
		}
		out = &rev
	case rulesReviewPath:
		var rev authorizationv1.SelfSubjectRulesReview
		if err := decodeReview(body, &rev); err != nil {
			writeStatus(w, apierrors.NewBadRequest(fmt.Sprintf("decode SelfSubjectRulesReview: %v", err)))
			return
		}
		rev.TypeMeta = metav1.TypeMeta{Kind: "SelfSubjectRulesReview", APIVersion: "authorization.k8s.io/v1"}
		rev.Status = authorizationv1.SubjectRulesReviewStatus{
			ResourceRules:    []authorizationv1.ResourceRule{{Verbs: slices.Clone(verbs), APIGroups: []string{"*"}, Resources: []string{"*"}}},
			NonResourceRules: []authorizationv1.NonResourceRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"*"}}},
		}
		out = &rev
	case subjectPath:
		out = &authenticationv1.SelfSubjectReview{
			TypeMeta: metav1.TypeMeta{Kind: "SelfSubjectReview", APIVersion: "authentication.k8s.io/v1"},
			Status: authenticationv1.SelfSubjectReviewStatus{UserInfo: authenticationv1.UserInfo{
				Username: User, Groups: []string{"system:authenticated"}}},
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(out)
}

// decodeReview reads a review in JSON or in the protobuf encoding client-go sends
// built-in types in.
func decodeReview(body []byte, into runtime.Object) error {
	_, _, err := scheme.Codecs.UniversalDeserializer().Decode(body, nil, into)
	return err
}
