package torture

import (
	"context"
	"strings"
)

// Environment variables read for etcd and Redis; scripts/kvstores.sh
// exports them all.
const (
	EnvEtcdEndpoints = "FENCE_ETCD_ENDPOINTS"
	EnvRedisURL      = "FENCE_REDIS_URL"
	EnvRedisMasters  = "FENCE_REDIS_MASTERS"
)

// proxied returns the address of the run's fault-injecting proxy in front
// of the server at upstream (host:port), one per server, and the server's
// own address. The first call for a server makes cutting every connection
// through its proxy one of the run's disruptions (an outage of the path,
// as a restart of the server looks to its clients).
func (s *Stage) proxied(upstream string) (string, error) {
	s.mu.Lock()
	p := s.proxies[upstream]
	s.mu.Unlock()
	if p != nil {
		return p.Addr(), nil
	}
	p, err := NewProxy(upstream, s.net, s.Counts)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	if q := s.proxies[upstream]; q != nil { // another worker was first
		s.mu.Unlock()
		_ = p.Close()
		return q.Addr(), nil
	}
	if s.proxies == nil {
		s.proxies = make(map[string]*Proxy)
	}
	s.proxies[upstream] = p
	s.mu.Unlock()
	s.Defer(func() { _ = p.Close() })
	s.addDisruptor("cut-all "+upstream, func(context.Context) error {
		s.Counts.Add(FaultOutage)
		p.CutAll()
		return nil
	})
	return p.Addr(), nil
}

// proxiedHosts returns hosts (host:port, comma-separated) with each
// replaced by the address of its proxy.
func (s *Stage) proxiedHosts(hosts string) (string, error) {
	parts := strings.Split(hosts, ",")
	for i, h := range parts {
		a, err := s.proxied(h)
		if err != nil {
			return "", err
		}
		parts[i] = a
	}
	return strings.Join(parts, ","), nil
}

// kvURL returns the URLs of a TCP store whose servers are in the
// environment variable env (host:port, comma-separated, or a URL whose
// host is that), built by build from the hosts: the faulty one through
// the run's proxies.
func kvURL(env string, build func(s *Stage, hosts string) string) URLs {
	return func(_ context.Context, s *Stage) (string, string, error) {
		v, err := need(env)
		if err != nil {
			return "", "", err
		}
		hosts := v[0]
		if _, rest, ok := strings.Cut(hosts, "://"); ok {
			hosts, _, _ = strings.Cut(rest, "/")
		}
		faulty, err := s.proxiedHosts(hosts)
		if err != nil {
			return "", "", err
		}
		return build(s, faulty), build(s, hosts), nil
	}
}
