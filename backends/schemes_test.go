package backends_test

import (
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
)

// scheme is one registered URL scheme of a locker or a resource, and the
// URL that opens it at a server's address of the test's choosing.
type scheme struct {
	name string
	// url returns a URL of the scheme whose store is at addrs (three
	// addresses, for the schemes that name several servers). Nil for
	// a store that lives in the test's process.
	url func(addrs []string) string
	// inProcess says why url is nil.
	inProcess string
}

// lockerSchemes and resourceSchemes give every scheme a URL, at any
// address: the tests below check that every registered scheme has one.
// The HTTP stores are named by their endpoint= parameter; Cloud Storage
// also reads STORAGE_EMULATOR_HOST, which TestMain points at a dead
// address so that the client never looks for Google's credentials.
var lockerSchemes = []scheme{
	{name: "mem", inProcess: "the memory locker lives in the process: it has no server to hang"},
	{name: "postgres", url: func(a []string) string { return "postgres://fence@" + a[0] + "/fence?table=fence_hung" }},
	{name: "postgresql", url: func(a []string) string { return "postgresql://fence@" + a[0] + "/fence?table=fence_hung" }},
	{name: "dynamodb", url: func(a []string) string { return "dynamodb://fence-hung?region=us-east-1&endpoint=" + httpAt(a[0]) }},
	{name: "azblob", url: func(a []string) string {
		return "azblob://fence-hung?account=" + azureAccount + "&endpoint=" + httpAt(a[0]+"/"+azureAccount)
	}},
	{name: "gs", url: func(a []string) string { return "gs://fence-hung?endpoint=" + httpAt(a[0]) }},
	{name: "etcd", url: func(a []string) string { return "etcd://" + a[0] + "/hung/" }},
	{name: "etcds", url: func(a []string) string { return "etcds://" + a[0] + "/hung/" }},
	{name: "redis", url: func(a []string) string { return "redis://" + a[0] + "/0?prefix=hung:" }},
	{name: "rediss", url: func(a []string) string { return "rediss://" + a[0] + "/0?prefix=hung:" }},
	{name: "redis+sentinel", url: func(a []string) string { return "redis+sentinel://" + a[0] + "," + a[1] + "/mymaster?prefix=hung:" }},
	// Redlock bounds each call to a master by its timeout (500 ms by
	// default), shorter than the calls' contexts here: a longer one lets
	// the context decide.
	{name: "redlock", url: func(a []string) string { return "redlock://" + strings.Join(a, ",") + "/?prefix=hung:&timeout=10s" }},
	{name: "mysql", url: func(a []string) string { return "mysql://fence:secret@" + a[0] + "/fence?table=fence_hung" }},
	{name: "zk", url: func(a []string) string { return "zk://" + a[0] + "/hung" }},
	{name: "nats", url: func(a []string) string { return "nats://" + a[0] + "?bucket=fence-hung" }},
	{name: "s3", url: func(a []string) string {
		return "s3://fence-hung?region=us-east-1&path-style=true&endpoint=" + httpAt(a[0])
	}},
	{name: "sqlite", inProcess: "SQLite is a file the process opens: it has no server to hang"},
	// The kubeconfig is empty (KUBECONFIG, in deadEnv): server= alone
	// names the API server, reached without credentials.
	{name: "kubernetes", url: func(a []string) string { return "kubernetes://hung?server=" + httpAt(a[0]) }},
}

var resourceSchemes = []scheme{
	{name: "mem", inProcess: "the memory resource lives in the process: it has no server to hang"},
	{name: "sqlite", inProcess: "SQLite is a file the process opens: it has no server to hang"},
	{name: "postgres", url: func(a []string) string { return "postgres://fence@" + a[0] + "/fence?fence-table=fence_hung" }},
	{name: "postgresql", url: func(a []string) string { return "postgresql://fence@" + a[0] + "/fence?fence-table=fence_hung" }},
	{name: "mysql", url: func(a []string) string { return "mysql://fence:secret@" + a[0] + "/fence" }},
	{name: "dynamodb", url: func(a []string) string { return "dynamodb://fence-hung?region=us-east-1&endpoint=" + httpAt(a[0]) }},
	{name: "s3", url: func(a []string) string {
		return "s3://fence-hung?region=us-east-1&path-style=true&endpoint=" + httpAt(a[0])
	}},
	{name: "azblob", url: func(a []string) string {
		return "azblob://fence-hung?account=" + azureAccount + "&endpoint=" + httpAt(a[0]+"/"+azureAccount)
	}},
	{name: "gs", url: func(a []string) string { return "gs://fence-hung?endpoint=" + httpAt(a[0]) }},
	{name: "etcd", url: func(a []string) string { return "etcd://" + a[0] + "/hung/" }},
	{name: "etcds", url: func(a []string) string { return "etcds://" + a[0] + "/hung/" }},
	{name: "redis", url: func(a []string) string { return "redis://" + a[0] + "/0?prefix=hung:" }},
	{name: "rediss", url: func(a []string) string { return "rediss://" + a[0] + "/0?prefix=hung:" }},
}

func httpAt(hostPath string) string { return url.QueryEscape("http://" + hostPath) }

// Azurite's well-known account; the key is its published one.
const (
	azureAccount = "devstoreaccount1"
	azureKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// TestEverySchemeHasAURL: a backend that registers a scheme joins the
// tables of this package, which open every scheme by URL.
func TestEverySchemeHasAURL(t *testing.T) {
	t.Parallel()
	names := func(ss []scheme) []string {
		var n []string
		for _, s := range ss {
			n = append(n, s.name)
		}
		slices.Sort(n)
		return n
	}
	if got, want := names(lockerSchemes), registeredLockers(); !slices.Equal(got, want) {
		t.Errorf("lockerSchemes has %v; the registered locker schemes are %v", got, want)
	}
	if got, want := names(resourceSchemes), registeredResources(); !slices.Equal(got, want) {
		t.Errorf("resourceSchemes has %v; the registered resource schemes are %v", got, want)
	}
}

// deadEnv is the environment the SDKs read in these tests: credentials of
// their own (so that no SDK looks for others), and every metadata service
// the SDKs may ask for credentials at dead, an address on this machine.
func deadEnv(dead string) map[string]string {
	return map[string]string{
		"AWS_ACCESS_KEY_ID":                  "fence",
		"AWS_SECRET_ACCESS_KEY":              "fence-secret",
		"AWS_REGION":                         "us-east-1",
		"AWS_CONFIG_FILE":                    os.DevNull,
		"AWS_SHARED_CREDENTIALS_FILE":        os.DevNull,
		"AWS_EC2_METADATA_SERVICE_ENDPOINT":  "http://" + dead,
		"AZURE_STORAGE_ACCOUNT":              azureAccount,
		"AZURE_STORAGE_KEY":                  azureKey,
		"AZURE_STORAGE_CONNECTION_STRING":    "",
		"STORAGE_EMULATOR_HOST":              dead,
		"GCE_METADATA_HOST":                  dead,
		"GOOGLE_APPLICATION_CREDENTIALS":     "",
		"AWS_ENDPOINT_URL":                   "",
		"AWS_ENDPOINT_URL_DYNAMODB":          "",
		"AWS_ENDPOINT_URL_S3":                "",
		"AWS_CONTAINER_CREDENTIALS_FULL_URI": "",
		"KUBECONFIG":                         os.DevNull,
	}
}

// lockerURL and resourceURL return the URL of scheme name at addrs.
func lockerURL(t *testing.T, name string, addrs []string) string {
	return schemeURL(t, lockerSchemes, name, addrs)
}

func resourceURL(t *testing.T, name string, addrs []string) string {
	return schemeURL(t, resourceSchemes, name, addrs)
}

func schemeURL(t *testing.T, ss []scheme, name string, addrs []string) string {
	t.Helper()
	for _, s := range ss {
		if s.name == name && s.url != nil {
			return s.url(addrs)
		}
	}
	t.Fatalf("no scheme %q with a server", name)
	return ""
}
