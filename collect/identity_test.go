package collect

import (
	"errors"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"
)

func TestCollectRecordsIdentityAndPermissions(t *testing.T) {
	client, cs := newFakeClient(shopFixture()...)
	cs.PrependReactor("create", "selfsubjectreviews", func(k8stesting.Action) (bool, runtime.Object, error) {
		r := &authenticationv1.SelfSubjectReview{}
		r.Status.UserInfo.Username = "system:serviceaccount:podflow:podflow-collector"
		r.Status.UserInfo.Groups = []string{"system:serviceaccounts", "system:authenticated"}
		return true, r, nil
	})
	var asked []string
	cs.PrependReactor("create", "selfsubjectrulesreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		in := a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SelfSubjectRulesReview)
		asked = append(asked, in.Spec.Namespace)
		out := in.DeepCopy()
		out.Status.ResourceRules = []authorizationv1.ResourceRule{{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"pods"}}}
		return true, out, nil
	})
	_, b := collectBundle(t, client, testOptions(t))
	id := b.Manifest.Identity
	if id == nil || id.Username != "system:serviceaccount:podflow:podflow-collector" || id.Source != "SelfSubjectReview" || len(id.Groups) != 2 {
		t.Fatalf("identity = %+v", id)
	}
	if strings.Join(asked, ",") != "shop" {
		t.Errorf("rules asked for %v, want the scope's namespace shop", asked)
	}
	p := id.PermissionsIn("shop")
	if p == nil || p.Denies("list", "", "pods") || !p.Denies("list", "", "events") {
		t.Errorf("shop permissions = %+v: want pods allowed, events refused", p)
	}
}

func TestCollectIdentityFallsBackToTheKubeconfig(t *testing.T) {
	client, cs := newFakeClient(shopFixture()...)
	client.User = "jane@shop"
	cs.PrependReactor("create", "selfsubjectreviews", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewNotFound(schema.GroupResource{Group: "authentication.k8s.io", Resource: "selfsubjectreviews"}, "")
	})
	cs.PrependReactor("create", "selfsubjectrulesreviews", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("the server is currently unable to handle the request")
	})
	res, b := collectBundle(t, client, testOptions(t))
	id := b.Manifest.Identity
	if id == nil || id.Username != "jane@shop" || id.Source != "kubeconfig" {
		t.Fatalf("identity = %+v", id)
	}
	p := id.PermissionsIn("shop")
	if p == nil || !strings.Contains(p.Error, "unable to handle") || p.Denies("list", "", "events") {
		t.Errorf("shop permissions = %+v: an unanswered review proves no refusal", p)
	}
	if len(res.Incomplete()) != 0 {
		t.Errorf("the identity review is not a source that can fail the collection: %+v", res.Incomplete())
	}
}
