package urlparam_test

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/urlparam"
)

func TestURLParams(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]string{
		"x://t?a=1&b=true&d=2s&e=http://h:1/": "",
		"x://t?a=1&a=2":                       "a given more than once",
		"x://t?a=":                            "a is empty",
		"x://t?b=yes":                         `b="yes" is not true or false`,
		"x://t?d=-1s":                         "not a duration",
		"x://t?e=ftp://h":                     "not an http:// or https:// URL",
		"x://t?e=http://u:pw@h":               "user information",
		"x://t?zz=1":                          `unknown parameter "zz"`,
		"x://u:pw@t":                          "no user or password",
		"x://t:80":                            "has no port",
		"x://t/p":                             "unexpected path",
		"x://":                                "no table name",
		"x://t?a=billing%zz:":                 "query cannot be parsed",
		"x://t?a=1;b=true":                    "query cannot be parsed",
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		p := urlparam.New(u)
		p.Name("table")
		p.String("a")
		p.Bool("b")
		p.Duration("d")
		if e := p.String("e"); e != "" {
			// Endpoint reads "endpoint"; check it through a renamed URL.
			q := u.Query()
			q.Set("endpoint", e)
			q.Del("e")
			u.RawQuery = q.Encode()
			p = urlparam.New(u)
			p.Name("table")
			p.String("a")
			p.Bool("b")
			p.Duration("d")
			p.Endpoint()
		}
		err = p.Done()
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", raw, err)
		case want != "" && (!errors.Is(err, fence.ErrInvalid) || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: Done() = %v; want ErrInvalid saying %q", raw, err, want)
		case err != nil && strings.Contains(err.Error(), "pw"):
			t.Errorf("%s: error shows the password: %v", raw, err)
		}
	}
}
