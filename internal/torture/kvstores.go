package torture

import (
	"context"
	"strings"
	"time"
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

// The etcd and Redis backends: the servers of the environment, each behind
// a proxy of the run, the run's keys under a prefix of its own.
var (
	// EtcdLocker is lockers/etcd on the run's etcd members (see
	// Stage.Etcd: a private cluster of three whose leader is killed, when
	// FENCE_ETCD_SERVER names the binary); etcd grants leases of whole
	// seconds, 2 s at the least.
	EtcdLocker = LockerKind{
		Name: "etcd", Env: []string{EnvEtcdEndpoints}, TTL: 2 * time.Second, Wave: 1,
		URL: etcdURL("locks"),
	}

	// RedisLocker is lockers/redis on one Redis server, without WAIT.
	RedisLocker = LockerKind{
		Name: "redis", Env: []string{EnvRedisURL}, TTL: time.Second, Wave: 1,
		URL: kvURL(EnvRedisURL, func(s *Stage, hosts string) string { return "redis://" + hosts + "/0?prefix=" + s.ID + ":locks:" }),
	}

	// RedlockLocker is lockers/redlock on three independent Redis
	// masters, each behind a proxy of its own, so that faults hit one
	// master at a time.
	RedlockLocker = LockerKind{
		Name: "redlock", Env: []string{EnvRedisMasters}, TTL: time.Second, Wave: 1,
		URL: kvURL(EnvRedisMasters, func(s *Stage, hosts string) string { return "redlock://" + hosts + "/?prefix=" + s.ID + ":locks:" }),
	}

	// EtcdResource is resources/etcd, on the run's etcd members (see
	// Stage.Etcd).
	EtcdResource = ResourceKind{
		Name: "etcd", Env: []string{EnvEtcdEndpoints},
		URL: etcdURL("values"),
	}

	// RedisResource is resources/redis.
	RedisResource = ResourceKind{
		Name: "redis", Env: []string{EnvRedisURL},
		URL: kvURL(EnvRedisURL, func(s *Stage, hosts string) string { return "redis://" + hosts + "/0?prefix=" + s.ID + ":values:" }),
	}
)
