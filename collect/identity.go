package collect

import (
	"context"
	"slices"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"podflow.dev/podflow/bundle"
)

// maxRulesReviews bounds the SelfSubjectRulesReviews of one collection: one request per
// namespace, and a cluster may have thousands.
const maxRulesReviews = 200

// identity asks the API server who the collector is (SelfSubjectReview, served since
// Kubernetes 1.27 as beta and 1.28 as GA) and what that identity may do in each
// namespace (SelfSubjectRulesReview). Both are allowed to every authenticated user by
// the default system:basic-user role, and neither answer holds a credential. Where the
// review is not served, the kubeconfig's user entry names the identity.
func (c *collector) identity(ctx context.Context, namespaces []string) *bundle.Identity {
	id := &bundle.Identity{}
	rctx, cancel := context.WithTimeout(ctx, c.opts.SourceTimeout)
	ssr, err := c.client.Kube.AuthenticationV1().SelfSubjectReviews().Create(rctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	cancel()
	if err == nil && ssr.Status.UserInfo.Username != "" {
		id.Username, id.Source = ssr.Status.UserInfo.Username, "SelfSubjectReview"
		id.Groups = slices.Clone(ssr.Status.UserInfo.Groups)
	} else {
		if err != nil {
			c.log.WithError(err).Debug("SelfSubjectReview not answered; the kubeconfig names the identity")
		}
		id.Username, id.Source = c.client.User, "kubeconfig"
	}
	namespaces = slices.Compact(slices.Sorted(slices.Values(namespaces)))
	if len(namespaces) > maxRulesReviews {
		namespaces = namespaces[:maxRulesReviews]
	}
	for _, ns := range namespaces {
		if ctx.Err() != nil {
			break
		}
		id.Permissions = append(id.Permissions, c.rulesIn(ctx, ns))
	}
	return id
}

// rulesIn is the identity's SelfSubjectRulesReview in one namespace.
func (c *collector) rulesIn(ctx context.Context, ns string) bundle.NamespacePermissions {
	p := bundle.NamespacePermissions{Namespace: ns}
	rctx, cancel := context.WithTimeout(ctx, c.opts.SourceTimeout)
	defer cancel()
	began := time.Now()
	r, err := c.client.Kube.AuthorizationV1().SelfSubjectRulesReviews().Create(rctx,
		&authorizationv1.SelfSubjectRulesReview{Spec: authorizationv1.SelfSubjectRulesReviewSpec{Namespace: ns}}, metav1.CreateOptions{})
	if err != nil {
		p.Error = err.Error()
		c.log.WithError(err).WithField("namespace", ns).Debug("SelfSubjectRulesReview failed")
		return p
	}
	c.log.WithField("namespace", ns).WithField("took", time.Since(began)).Debug("SelfSubjectRulesReview")
	p.Incomplete = r.Status.Incomplete
	if r.Status.EvaluationError != "" && !p.Incomplete {
		p.Error = r.Status.EvaluationError
	}
	for _, rule := range r.Status.ResourceRules {
		p.Rules = append(p.Rules, bundle.PermissionRule{Verbs: rule.Verbs, APIGroups: rule.APIGroups,
			Resources: rule.Resources, ResourceNames: rule.ResourceNames})
	}
	return p
}
