package storeurl

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fencekit/fence"
)

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		raw  string
		want Spec
	}{
		{"postgres://app@db:5432/app?sslmode=disable", Spec{Kind: Postgres,
			Redacted: "postgres://app@db:5432/app?sslmode=disable", ConnString: "postgres://app@db:5432/app?sslmode=disable"}},
		{"postgresql://app@db/app?table=ops.locks&sslmode=require", Spec{Kind: Postgres, Table: "ops.locks",
			Redacted: "postgresql://app@db/app?table=ops.locks&sslmode=require", ConnString: "postgresql://app@db/app?sslmode=require"}},
		{"postgres://app:pw@db/app", Spec{Kind: Postgres, Password: "pw",
			Redacted: "postgres://app:xxxxx@db/app", ConnString: "postgres://app:pw@db/app"}},
		{"postgres://app@db/app?password=pw&table=t", Spec{Kind: Postgres, Password: "pw", Table: "t",
			Redacted: "postgres://app@db/app?password=xxxxx&table=t", ConnString: "postgres://app@db/app?password=pw"}},
		{"postgres://db/app?%74able=t&x=1", Spec{Kind: Postgres, Table: "t", Redacted: "postgres://db/app?%74able=t&x=1", ConnString: "postgres://db/app?x=1"}},
		{"postgres:///app", Spec{Kind: Postgres, Redacted: "postgres:///app", ConnString: "postgres:///app"}},
		{"dynamodb://locks", Spec{Kind: DynamoDB, Table: "locks", Redacted: "dynamodb://locks"}},
		{"dynamodb://my.locks-1?region=eu-west-1&endpoint=http://127.0.0.1:8000/&trusted-clock=true&max-clock-skew=2s&key-attribute=k",
			Spec{Kind: DynamoDB, Table: "my.locks-1", Region: "eu-west-1", Endpoint: "http://127.0.0.1:8000",
				TrustedClock: true, MaxClockSkew: 2 * time.Second, KeyAttribute: "k",
				Redacted: "dynamodb://my.locks-1?region=eu-west-1&endpoint=http://127.0.0.1:8000/&trusted-clock=true&max-clock-skew=2s&key-attribute=k"}},
		{"azblob://locks", Spec{Kind: AzureBlob, Container: "locks", Redacted: "azblob://locks"}},
		{"azblob://locks?account=acct&endpoint=https://acct.blob.core.windows.net", Spec{Kind: AzureBlob, Container: "locks",
			Account: "acct", Endpoint: "https://acct.blob.core.windows.net",
			Redacted: "azblob://locks?account=acct&endpoint=https://acct.blob.core.windows.net"}},
		{"gs://ops-locks?prefix=locks/&project=p1", Spec{Kind: GCS, Bucket: "ops-locks", Prefix: "locks/", Project: "p1",
			Redacted: "gs://ops-locks?prefix=locks/&project=p1"}},
		{"gs://b?prefix=&trusted-clock=1", Spec{Kind: GCS, Bucket: "b", TrustedClock: true, Redacted: "gs://b?prefix=&trusted-clock=1"}},
		{"GS://b", Spec{Kind: GCS, Bucket: "b", Redacted: "GS://b"}},
		{"postgres://", Spec{Kind: Postgres, Redacted: "postgres://", ConnString: "postgres://"}},
		{"postgres://u:p@ss@db/app", Spec{Kind: Postgres, Password: "p@ss", Redacted: "postgres://u:xxxxx@db/app", ConnString: "postgres://u:p@ss@db/app"}},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			t.Parallel()
			got, err := Parse(tt.raw)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if *got != tt.want {
				t.Errorf("Parse:\n got %+v\nwant %+v", *got, tt.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		raw, want string
	}{
		{"", "empty"},
		{"db.internal:5432", "no scheme"},
		{"mysql://db/app", `unknown scheme "mysql"`},
		{"postgres://app@db/app?table=", "table is empty"},
		{"postgres://app@db/app?table=a&table=b", "more than once"},
		{"postgres://app:pw@db:port/app", "cannot be parsed"},
		{"dynamodb://", "no table name"},
		{"dynamodb://locks:8000", "no port"},
		{"dynamodb://locks/extra", "unexpected path"},
		{"dynamodb://user:pw@locks", "credentials come from the environment"},
		{"dynamodb://locks?regoin=x", `unknown parameter "regoin"`},
		{"dynamodb://locks?region=", "region is empty"},
		{"dynamodb://locks?region=a&region=b", "more than once"},
		{"dynamodb://locks?trusted-clock=maybe", "not true or false"},
		{"dynamodb://locks?trusted-clock=true&max-clock-skew=soon", "not a duration"},
		{"dynamodb://locks?trusted-clock=true&max-clock-skew=-1s", "not a duration"},
		{"dynamodb://locks?max-clock-skew=1s", "needs trusted-clock=true"},
		{"dynamodb://locks?endpoint=localhost:8000", "not an http:// or https:// URL"},
		{"dynamodb://locks?endpoint=http://u:pw@localhost:8000", "user information"},
		{"dynamodb://locks?endpoint=http%3A%2F%2Fu%3Apw%40localhost:8000", "user information"},
		{"azblob://?account=a", "no container name"},
		{"azblob://c?key=abc", `unknown parameter "key"`},
		{"gs://b?prefix=a&prefix=b", "more than once"},
		{"gs://b?project=", "project is empty"},
		{"gs://b?x=%zz", "bad query"},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			t.Parallel()
			_, err := Parse(tt.raw)
			if !errors.Is(err, fence.ErrInvalid) {
				t.Fatalf("Parse(%q) = %v; want an error matching fence.ErrInvalid", tt.raw, err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Parse(%q) = %v; want it to say %q", tt.raw, err, tt.want)
			}
			if strings.Contains(err.Error(), ":pw@") || strings.Contains(err.Error(), "%3Apw") {
				t.Errorf("Parse(%q) error shows the password: %v", tt.raw, err)
			}
		})
	}
}

func TestScrub(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text    string
		secrets []string
		want    string
	}{
		{"connect postgres://u:s3cret@h/db failed", nil, "connect postgres://u:xxxxx@h/db failed"},
		{"dsn host=h password=s3cret user=u", nil, "dsn host=h password=xxxxx user=u"},
		{"?password='a b'&x=1", nil, "?password=xxxxx&x=1"},
		{"server said s3cret", []string{"s3cret"}, "server said xxxxx"},
		{"escaped p%40ss and p@ss", []string{"p@ss"}, "escaped xxxxx and xxxxx"},
		{"nothing secret", []string{""}, "nothing secret"},
	}
	for _, tt := range tests {
		if got := Scrub(tt.text, tt.secrets...); got != tt.want {
			t.Errorf("Scrub(%q, %q) = %q, want %q", tt.text, tt.secrets, got, tt.want)
		}
	}
}

// FuzzParse: Parse never panics, never shows a password it found, and
// the redacted form of a URL it accepts parses to the same store.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"postgres://app:pw@db:5432/app?table=t&sslmode=disable",
		"postgresql://app@db/app?password=pw",
		"dynamodb://locks?region=r&endpoint=http://h:1&trusted-clock=true&max-clock-skew=1s",
		"azblob://c?account=a&endpoint=https://a.blob.core.windows.net",
		"gs://b?prefix=p/&project=x",
		"gs://b?x=%zz", "postgres://a:b@c:d/e", "://", "dynamodb://a:@b",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		s, err := Parse(raw)
		if err != nil {
			if !errors.Is(err, fence.ErrInvalid) {
				t.Fatalf("Parse(%q) = %v, not matching fence.ErrInvalid", raw, err)
			}
			return
		}
		if len(s.Password) > 3 && strings.Contains(strings.ReplaceAll(s.Redacted, Mask, ""), s.Password) {
			t.Fatalf("Parse(%q).Redacted = %q shows the password %q", raw, s.Redacted, s.Password)
		}
		again, err := Parse(s.Redacted)
		if err != nil {
			t.Fatalf("the redacted form %q of %q does not parse: %v", s.Redacted, raw, err)
		}
		if again.Kind != s.Kind || again.Table != s.Table || again.Bucket != s.Bucket || again.Container != s.Container {
			t.Fatalf("the redacted form %q of %q names another store: %+v vs %+v", s.Redacted, raw, again, s)
		}
	})
}
