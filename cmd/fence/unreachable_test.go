package main

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fencekit/fence/internal/testing/netfault"
)

// TestStoreUnreachable: every subcommand on every store with a server
// ends within its bound with exit 69 and names the address it could not reach, both when
// nothing listens there (a closed port) and when a server accepts
// connections and never answers.
func TestStoreUnreachable(t *testing.T) {
	t.Parallel()
	const timeout = time.Second
	// Each subcommand makes at most a few store calls in a row, each
	// bounded by --timeout (run's by less): opening the store, the call
	// itself (run: an attempt and the re-read of its outcome), and
	// closing; plus the start of the binary on a loaded machine.
	const limit = 4*timeout + 5*time.Second
	servers := []struct {
		name   string
		listen func(t *testing.T) string
	}{
		{"down", func(t *testing.T) string { return netfault.Closed(t) }},
		{"hung", func(t *testing.T) string { return netfault.Hung(t).Addr }},
	}
	for _, b := range backends() {
		if b.file {
			continue // a file on this host: no server to reach
		}
		for _, srv := range servers {
			t.Run(b.name+"/"+srv.name, func(t *testing.T) {
				t.Parallel()
				var addrs []string
				redirect := func(s string) string {
					return storeAddr.ReplaceAllStringFunc(s, func(m string) string {
						a := srv.listen(t)
						addrs = append(addrs, a)
						if strings.Contains(m, "%3A") || strings.Contains(m, "%3a") {
							return strings.Replace(a, ":", "%3A", 1)
						}
						return a
					})
				}
				store := redirect(b.missingStore(t))
				var env []string
				for _, kv := range testEnv() {
					k, v, _ := strings.Cut(kv, "=")
					switch k {
					case "STORAGE_EMULATOR_HOST", "AZURE_STORAGE_CONNECTION_STRING", "AWS_ENDPOINT_URL_DYNAMODB":
						kv = k + "=" + redirect(v)
					}
					env = append(env, kv)
				}
				for _, args := range [][]string{
					{"init"}, {"inspect"}, {"break"}, {"run", "--ttl", b.ttl},
				} {
					args = append(args, "--timeout", timeout.String(), "--store", store)
					if args[0] != "init" {
						args = append(args, "k")
					}
					if args[0] == "run" {
						args = append(args, "--", "true")
					}
					start := time.Now()
					r := fenceRun(t, env, args...)
					took := time.Since(start)
					if r.code != exitStore {
						t.Errorf("fence %s: want exit %d, got %v", args[0], exitStore, r)
					}
					if took > limit {
						t.Errorf("fence %s took %v with --timeout %v, more than %v", args[0], took.Round(time.Millisecond), timeout, limit)
					}
					named := false
					for _, a := range addrs {
						_, port, _ := strings.Cut(a, ":")
						named = named || strings.Contains(r.stderr, "127.0.0.1:"+port) || strings.Contains(r.stderr, "127.0.0.1%3A"+port)
					}
					if !named {
						t.Errorf("fence %s does not name the store's address (one of %q): %v", args[0], addrs, r)
					}
				}
			})
		}
	}
}

// storeAddr matches the loopback addresses of the test servers in store
// URLs and the SDKs' environment, the colon escaped or not.
var storeAddr = regexp.MustCompile(`127\.0\.0\.1(:|%3[aA])\d+`)
