// Package kubetest connects tests to the Kubernetes API server that
// scripts/test.sh starts (scripts/kube.sh): a real kube-apiserver on an
// etcd of its own, with RBAC authorization and two users. Config is the
// administrator (group system:masters), UserConfig is fence-user, who may
// do nothing until a test grants it rights in a namespace with Grant.
// Namespace gives each test a namespace of its own.
//
// Without FENCE_KUBECONFIG (and FENCE_KUBECONFIG_USER for UserConfig) a
// test is skipped, or fails under FENCE_TEST_STRICT=1.
//
// The server runs no controller manager, so a deleted namespace stays
// Terminating with its objects until the server stops: nothing a test
// leaves behind is collected, but no test sees another's objects either.
package kubetest

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/fencekit/fence/internal/testing/testenv"
)

// UserName is the user of UserConfig. It belongs to no group but
// system:authenticated.
const UserName = "fence-user"

// Server is FENCE_KUBE_SERVER, which server the kubeconfigs point at as
// "name version" ("kube-apiserver v1.37.2"), or "" when it is unset.
func Server() string { return os.Getenv("FENCE_KUBE_SERVER") }

// Config returns a configuration for the administrator of the test
// server, read from the kubeconfig file FENCE_KUBECONFIG names. Each call
// returns a new copy.
//
// Its client-side rate limit is off (QPS -1): client-go's default of 5
// requests a second, burst 10, would throttle a test suite. A test of
// behaviour under that limit sets QPS and Burst itself.
func Config(t testing.TB) *rest.Config {
	t.Helper()
	return load(t, testenv.Endpoint(t, "FENCE_KUBECONFIG", "kube-apiserver"))
}

// UserConfig returns a configuration for fence-user, read from the
// kubeconfig file FENCE_KUBECONFIG_USER names, with the rate limit off as
// in Config. The user may do nothing the server's default roles do not
// let every authenticated user do (discovery, reviews of its own access)
// until a test grants it rights with Grant.
func UserConfig(t testing.TB) *rest.Config {
	t.Helper()
	return load(t, testenv.Endpoint(t, "FENCE_KUBECONFIG_USER", "kube-apiserver"))
}

func load(t testing.TB, path string) *rest.Config {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatalf("kubetest: kubeconfig %s: %v", path, err)
	}
	cfg.QPS = -1
	return cfg
}

// Clientset returns a clientset for cfg.
func Clientset(t testing.TB, cfg *rest.Config) *kubernetes.Clientset {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("kubetest: %v", err)
	}
	return cs
}

// cleanupTimeout bounds each request made while a test's cleanup runs,
// when t.Context is already done.
const cleanupTimeout = 30 * time.Second

// Namespace creates a namespace with a fresh name (fence-test-XXXXX) as the
// user of cfg, which must be allowed to (Config's administrator is), and
// deletes it when the test ends. It returns the name.
func Namespace(t testing.TB, cfg *rest.Config) string {
	t.Helper()
	cs := Clientset(t, cfg)
	ns, err := cs.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "fence-test-"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("kubetest: create a namespace: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
		defer cancel()
		if err := cs.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{}); err != nil {
			t.Errorf("kubetest: delete namespace %s: %v", ns.Name, err)
		}
	})
	return ns.Name
}

// Grant gives fence-user the rules in namespace: a Role holding them and a
// RoleBinding of it to the user, made as the user of cfg (Config's
// administrator may grant anything). It returns once the server's
// authorizer allows every verb on every resource the rules name, asked
// with a SubjectAccessReview, so that the next request of fence-user is
// judged by them. The rules stay until the namespace goes.
func Grant(t testing.TB, cfg *rest.Config, namespace string, rules []rbacv1.PolicyRule) {
	t.Helper()
	ctx := t.Context()
	cs := Clientset(t, cfg)
	role, err := cs.RbacV1().Roles(namespace).Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{GenerateName: UserName + "-"},
		Rules:      rules,
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("kubetest: create a Role in %s: %v", namespace, err)
	}
	_, err = cs.RbacV1().RoleBindings(namespace).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: UserName}},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("kubetest: bind Role %s/%s to %s: %v", namespace, role.Name, UserName, err)
	}
	for _, attrs := range ruleAttributes(namespace, rules) {
		waitAllowed(t, cs, attrs)
	}
}

// ruleAttributes lists one access check for each verb on each resource
// (and resource name, where the rule names some) of rules.
func ruleAttributes(namespace string, rules []rbacv1.PolicyRule) []authorizationv1.ResourceAttributes {
	var out []authorizationv1.ResourceAttributes
	for _, r := range rules {
		names := r.ResourceNames
		if len(names) == 0 {
			names = []string{""}
		}
		for _, group := range r.APIGroups {
			for _, res := range r.Resources {
				resource, sub, _ := strings.Cut(res, "/")
				for _, verb := range r.Verbs {
					for _, name := range names {
						out = append(out, authorizationv1.ResourceAttributes{
							Namespace: namespace, Verb: verb, Group: group,
							Resource: resource, Subresource: sub, Name: name,
						})
					}
				}
			}
		}
	}
	return out
}

// grantTimeout bounds the wait for a new RoleBinding to reach the
// authorizer, which reads RBAC objects from a watch cache.
const grantTimeout = 30 * time.Second

func waitAllowed(t testing.TB, cs *kubernetes.Clientset, attrs authorizationv1.ResourceAttributes) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), grantTimeout)
	defer cancel()
	for {
		review, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
			Spec: authorizationv1.SubjectAccessReviewSpec{
				ResourceAttributes: &attrs,
				User:               UserName,
				Groups:             []string{"system:authenticated"},
			},
		}, metav1.CreateOptions{})
		switch {
		case err == nil && review.Status.Allowed:
			return
		case err != nil && ctx.Err() == nil:
			t.Fatalf("kubetest: review the access of %s: %v", UserName, err)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("kubetest: %s is still not allowed to %s %s in %s after %v",
				UserName, attrs.Verb, attrs.Resource, attrs.Namespace, grantTimeout)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
