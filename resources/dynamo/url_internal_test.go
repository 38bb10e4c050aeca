package dynamo

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/fencekit/fence"
)

func TestParseURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		raw  string
		want urlConfig
	}{
		{"dynamodb://values", urlConfig{table: "values"}},
		{"dynamodb://My_Table.v-2/", urlConfig{table: "My_Table.v-2"}},
		{"dynamodb://values?region=eu-west-1&endpoint=http://127.0.0.1:8000/&key-attribute=id",
			urlConfig{table: "values", region: "eu-west-1", endpoint: "http://127.0.0.1:8000", keyAttribute: "id"}},
		{"dynamodb://values?endpoint=https://dynamodb.eu-west-1.amazonaws.com", urlConfig{table: "values", endpoint: "https://dynamodb.eu-west-1.amazonaws.com"}},
	} {
		u, err := url.Parse(tc.raw)
		if err != nil {
			t.Fatal(err)
		}
		got, err := parseURL(u)
		if err != nil || got != tc.want {
			t.Errorf("parseURL(%q) = %+v, %v; want %+v", tc.raw, got, err, tc.want)
		}
	}
}

func TestParseURLRefuses(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{
		"dynamodb://",
		"dynamodb:///values",
		"dynamodb://ab",                 // too short for a table name
		"dynamodb://user:s3cret@values", // credentials in the URL
		"dynamodb://values:8000",        // a port
		"dynamodb://values/extra",       // a path
		"dynamodb://values?table=other", // unknown parameter
		"dynamodb://values?region=",     // empty
		"dynamodb://values?region=a&region=b",
		"dynamodb://values?endpoint=ftp://host",
		"dynamodb://values?endpoint=http://u:s3cret@host",
		"dynamodb://values?endpoint=nohost",
		"dynamodb://values?key-attribute=",
		"dynamodb://values?key-attribute=" + strings.Repeat("k", maxAttributeNameLen+1),
		"dynamodb://values?key-attribute=%00",
		"dynamodb://values?key-attribute=%ff",
		"dynamodb://values?password=s3cret",
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatalf("url.Parse(%q): %v", raw, err)
		}
		_, err = parseURL(u)
		if !errors.Is(err, fence.ErrInvalid) {
			t.Errorf("parseURL(%q) = %v; want an error matching fence.ErrInvalid", raw, err)
			continue
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("parseURL(%q) = %v shows the password", raw, err)
		}
	}
}

func FuzzParseURL(f *testing.F) {
	for _, s := range []string{
		"dynamodb://values", "dynamodb://values?region=us-east-1&endpoint=http://127.0.0.1:8000&key-attribute=id",
		"dynamodb://u:p@values", "dynamodb://values?endpoint=http://u:p@h", "dynamodb://values?x=1", "dynamodb://a%20b",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := url.Parse(raw)
		if err != nil {
			return
		}
		c, err := parseURL(u)
		if err != nil {
			if !errors.Is(err, fence.ErrInvalid) {
				t.Fatalf("parseURL(%q) = %v; want an error matching fence.ErrInvalid", raw, err)
			}
			if p, ok := u.User.Password(); ok && len(p) > 3 && strings.Contains(err.Error(), p) {
				t.Fatalf("parseURL(%q) = %v shows the password", raw, err)
			}
			return
		}
		if !tableName.MatchString(c.table) {
			t.Fatalf("parseURL(%q) accepted table %q", raw, c.table)
		}
		if _, err := New(fakeAPI{}, c.table, &Options{KeyAttribute: c.keyAttribute}); err != nil {
			t.Fatalf("parseURL(%q) = %+v, which New refuses: %v", raw, c, err)
		}
	})
}

// fakeAPI is never called: New does not contact DynamoDB.
type fakeAPI struct{ API }
