package redact_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/fencekit/fence/internal/redact"
)

func TestURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"postgres://app:s3cret@db/app":             "postgres://app:xxxxx@db/app",
		"postgres://db/app?password=s3cret&x=1":    "postgres://db/app?password=xxxxx&x=1",
		"dial postgres://a:b@h failed: x://c:d@e/": "dial postgres://a:xxxxx@h failed: x://c:xxxxx@e/",
		"postgres://app@db/app":                    "postgres://app@db/app",
		"postgres://u:p@ss@db:5432/app":            "postgres://u:xxxxx@db:5432/app",
		"postgres://db/app?PASSWORD=s3cret":        "postgres://db/app?PASSWORD=xxxxx",
	} {
		if got := redact.URL(in); got != want {
			t.Errorf("URL(%q) = %q; want %q", in, got, want)
		}
	}
}

func TestScrubAndPasswords(t *testing.T) {
	t.Parallel()
	u, err := url.Parse("postgres://app:p%40ss%20w@db/app?password=two%26x&password=")
	if err != nil {
		t.Fatal(err)
	}
	pws := redact.Passwords(u)
	if strings.Join(pws, "|") != "p@ss w|two&x" {
		t.Fatalf("Passwords = %q; want the user information's and the non-empty parameter's", pws)
	}
	text := `dial "postgres://app:p%40ss%20w@db/app": p@ss w, p%40ss+w, two%26x, two&x, ://u:other@h`
	got := redact.Scrub(text, append(pws, "")...)
	for _, leak := range []string{"p@ss", "p%40ss", "two", "other"} {
		if strings.Contains(got, leak) {
			t.Errorf("Scrub(%q) = %q; %q shows", text, got, leak)
		}
	}
}
