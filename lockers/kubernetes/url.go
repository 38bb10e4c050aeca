package kubernetes

import (
	"context"
	"errors"
	"net/url"

	k8s "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/urlparam"
)

func init() { driver.RegisterLocker("kubernetes", urlOpener{}) }

// urlOpener opens Kubernetes lockers from URLs of the form URLForm
// returns (see the package doc).
type urlOpener struct{}

// URLForm implements driver.LockerOpener.
func (urlOpener) URLForm() string {
	return "kubernetes://NAMESPACE[?kubeconfig=PATH&context=NAME&server=URL]"
}

// urlConfig is what a kubernetes:// URL says.
type urlConfig struct {
	namespace  string
	kubeconfig string // "" for in-cluster, else the default loading rules
	context    string // "" for the kubeconfig's current context
	server     string // "" for the configuration's API server
}

// parseURL reads a kubernetes:// URL. Every error matches
// fence.ErrInvalid.
func parseURL(u *url.URL) (urlConfig, error) {
	p := urlparam.New(u)
	c := urlConfig{
		namespace:  p.Name("namespace"),
		kubeconfig: p.String("kubeconfig"),
		context:    p.String("context"),
		server:     p.String("server"),
	}
	if c.server != "" {
		s, err := url.Parse(c.server)
		switch {
		case err != nil || (s.Scheme != "https" && s.Scheme != "http") || s.Host == "":
			p.Fail("server %q is not an https:// or http:// URL", c.server)
		case s.User != nil:
			p.Fail("the server URL carries user information; credentials come from the configuration")
		}
	}
	if err := p.Done(); err != nil {
		return urlConfig{}, err
	}
	if err := checkNamespace(c.namespace); err != nil {
		return urlConfig{}, err
	}
	return c, nil
}

// restConfig returns the client configuration c names: the kubeconfig
// file and context it names; without a kubeconfig, the in-cluster
// configuration (the pod's service account) when there is one and no
// context is named, else the default loading rules (KUBECONFIG, then
// ~/.kube/config). A server replaces the configuration's.
func (c urlConfig) restConfig() (*rest.Config, error) {
	cfg, err := c.loadConfig()
	if err != nil {
		return nil, err
	}
	if c.server != "" {
		cfg.Host = c.server
	}
	return cfg, nil
}

func (c urlConfig) loadConfig() (*rest.Config, error) {
	if c.kubeconfig == "" && c.context == "" {
		cfg, err := rest.InClusterConfig()
		if err == nil {
			return cfg, nil
		}
		if !errors.Is(err, rest.ErrNotInCluster) {
			return nil, err
		}
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if c.kubeconfig != "" {
		rules = &clientcmd.ClientConfigLoadingRules{ExplicitPath: c.kubeconfig}
	}
	overrides := &clientcmd.ConfigOverrides{CurrentContext: c.context}
	overrides.ClusterInfo.Server = c.server
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides).ClientConfig()
}

// Client-side rate limits of the clientset the URL opener makes, where
// the configuration sets none: client-go's defaults (5 requests a
// second, bursts of 10) would hold back a Locker making two requests per
// call.
const (
	urlQPS   = 50
	urlBurst = 100
)

// OpenLockerURL implements driver.LockerOpener. It loads the client
// configuration but does not contact the API server. fence.OpenOptions'
// HTTPClient is not used: the configuration's TLS settings and
// credentials make the client's transport.
func (urlOpener) OpenLockerURL(_ context.Context, u *url.URL, opts *fence.OpenOptions) (*fence.Locker, error) {
	c, err := parseURL(u)
	if err != nil {
		return nil, err
	}
	cfg, err := c.restConfig()
	if err != nil {
		return nil, &fence.OpError{Backend: "kubernetes", Op: "open", Err: err}
	}
	if cfg.QPS == 0 && cfg.RateLimiter == nil {
		cfg.QPS, cfg.Burst = urlQPS, urlBurst
	}
	client, err := k8s.NewForConfig(cfg)
	if err != nil {
		return nil, &fence.OpError{Backend: "kubernetes", Op: "open", Err: err}
	}
	return New(client, c.namespace, &Options{Clock: urlparam.Clock(opts)})
}
