package torture

import (
	"context"
	"net/url"
	"strconv"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/fencekit/fence/lockers/azblob"
	"github.com/fencekit/fence/lockers/gcs"
	locks3 "github.com/fencekit/fence/lockers/s3"
)

// The locker backends.
var (
	// MemoryLocker is lockers/memory: mem://NAME is one Locker, shared
	// by the workers.
	MemoryLocker = LockerKind{
		Name: "memory", TTL: 500 * time.Millisecond,
		URL: named("mem", "locks"),
	}

	// PostgresLocker is lockers/postgres, the workers' pools going
	// through the proxy.
	PostgresLocker = LockerKind{
		Name: "postgres", Env: []string{EnvPostgresURL}, TTL: time.Second, Wave: 1,
		URL: postgresURL(2, 1, func(s *Stage) []string { return []string{"table", s.ID + "_locks"} }),
	}

	// DynamoLocker is lockers/dynamo in clock-free mode, each worker with
	// a Locker (and observations) of its own, as separate processes.
	DynamoLocker = LockerKind{
		Name: "dynamo", Env: dynamoEnv, TTL: time.Second,
		URL: dynamoURL("locks"),
	}

	// DynamoTrustedLocker is lockers/dynamo in trusted-clock mode,
	// tolerating 200 ms of skew; the workers' clocks are off by up to
	// 400 ms.
	DynamoTrustedLocker = LockerKind{
		Name: "dynamo-trusted", Env: dynamoEnv, TTL: 2 * time.Second, MaxSkew: 200 * time.Millisecond,
		URL: dynamoURL("locks", trustedClock(200*time.Millisecond)...),
	}

	// GCSLocker is lockers/gcs in clock-free mode.
	GCSLocker = LockerKind{
		Name: "gcs", Env: gcsEnv, TTL: gcs.MinTTL,
		URL: gcsURL("locks", "backoff", "20ms"),
	}

	// GCSTrustedLocker is lockers/gcs in trusted-clock mode, tolerating
	// 300 ms of skew; the workers' clocks are off by up to 600 ms.
	GCSTrustedLocker = LockerKind{
		Name: "gcs-trusted", Env: gcsEnv, TTL: gcs.MinTTL, MaxSkew: 300 * time.Millisecond,
		URL: gcsURL("locks", append(trustedClock(300*time.Millisecond), "backoff", "20ms")...),
	}

	// S3Locker is lockers/s3 in clock-free mode on the run's MinIO, its
	// records under locks/ in the bucket S3Resource writes: lock and
	// fenced writes in one bucket. Leases of twice its MinTTL, so that
	// renewals keep up on a loaded machine.
	S3Locker = LockerKind{
		Name: "s3", Env: s3Env, TTL: 2 * locks3.MinTTL,
		URL: s3LockerURL("values", "prefix", "locks/", "backoff", "20ms"),
	}

	// SQLiteLocker is lockers/sqlite on the run's SQLite file, the one
	// SQLiteResource writes, with a lease table of the run's own.
	SQLiteLocker = LockerKind{
		Name: "sqlite", TTL: time.Second,
		URL: sqliteFile(func(s *Stage) []string { return []string{"table", s.ID + "_locks"} }),
	}

	// AzblobLocker is lockers/azblob, with Azure's shortest lease (15 s),
	// on the run's Azurite with the account and key of
	// AZURE_STORAGE_CONNECTION_STRING.
	AzblobLocker = LockerKind{
		Name: "azblob", Env: azblobEnv, TTL: azblob.MinTTL,
		URL: azblobURL("locks"),
	}

	// KubernetesLocker is lockers/kubernetes on the Leases of namespace
	// default of the API server of FENCE_KUBECONFIG (the run's keys are
	// its own), the workers' requests going through the run's proxy.
	KubernetesLocker = LockerKind{
		Name: "kubernetes", Env: []string{EnvKubeconfig}, TTL: 2 * time.Second, Wave: 1,
		URL: kubernetesURL,
	}
)

// EnvKubeconfig names the kubeconfig file of the administrator of the
// API server scripts/kube.sh starts.
const EnvKubeconfig = "FENCE_KUBECONFIG"

// kubernetesURL returns the URLs of namespace default with the
// kubeconfig of EnvKubeconfig: clean as it is, faulty with its server
// reached through the run's proxy (server=; TLS still checks the
// server's certificate, made for the same loopback address).
func kubernetesURL(_ context.Context, s *Stage) (faulty, clean string, err error) {
	env, err := need(EnvKubeconfig)
	if err != nil {
		return "", "", err
	}
	path := env[0]
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return "", "", err
	}
	u, err := url.Parse(cfg.Host)
	if err != nil {
		return "", "", err
	}
	proxied, err := s.proxied(u.Host)
	if err != nil {
		return "", "", err
	}
	clean = "kubernetes://default?kubeconfig=" + url.QueryEscape(path)
	u.Host = proxied
	return clean + "&server=" + url.QueryEscape(u.String()), clean, nil
}

// trustedClock returns the URL parameters of package clockfree's
// trusted-clock mode, tolerating skew.
func trustedClock(skew time.Duration) []string {
	return []string{"trusted-clock", "true", "max-clock-skew", skew.String()}
}

// postgresURL returns the URLs of the stage's PostgreSQL server, with
// the parameters params gives for the stage (the run's tables, as name,
// value pairs), pools of at most faultyConns and cleanConns connections,
// and a connect timeout of 3 s.
func postgresURL(faultyConns, cleanConns int, params func(s *Stage) []string) URLs {
	return func(ctx context.Context, s *Stage) (string, string, error) {
		faulty, clean, err := s.Postgres(ctx)
		if err != nil {
			return "", "", err
		}
		p := params(s)
		if faulty, err = addParams(faulty, p, "pool_max_conns", strconv.Itoa(faultyConns)); err != nil {
			return "", "", err
		}
		clean, err = addParams(clean, p, "pool_max_conns", strconv.Itoa(cleanConns))
		return faulty, clean, err
	}
}

// addParams returns raw with the parameters of params and more (name,
// value pairs) and a connect timeout of 3 s.
func addParams(raw string, params []string, more ...string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", err
	}
	q := withParams(withParams(u.Query(), params...), more...)
	q.Set("connect_timeout", "3")
	u.RawQuery = q.Encode()
	return u.String(), nil
}
