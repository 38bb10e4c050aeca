package main

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// defaultScheme is the scheme of the default store: a file on this host
// that every fence command of the host opens (lockers/sqlite).
const defaultScheme = "sqlite"

// inProcessSchemes are the locker schemes whose stores live inside one
// process (driver.Info.InProcess): another fence command could not see
// their leases, so the command refuses them and does not list them.
var inProcessSchemes = []string{"mem"}

// defaultStoreHelp says where the default store is, for the help texts.
const defaultStoreHelp = `$XDG_STATE_HOME/fence/locks.db, else $HOME/.local/state/fence/locks.db`

// defaultStore returns the URL of the store used when neither --store nor
// $FENCE_STORE gives one: an SQLite file in the user's state directory,
// $XDG_STATE_HOME/fence/locks.db, else $HOME/.local/state/fence/locks.db,
// whose directory it creates (mode 0700) when missing. Without an
// absolute XDG_STATE_HOME or HOME it returns a usage error.
func defaultStore() (string, error) {
	base := os.Getenv("XDG_STATE_HOME")
	if !filepath.IsAbs(base) { // relative: invalid, as the XDG spec says
		home := os.Getenv("HOME")
		if !filepath.IsAbs(home) {
			return "", &usageError{
				msg:   "no store: give --store URL or set " + EnvStore + "; the default store, " + defaultStoreHelp + ", needs HOME or XDG_STATE_HOME set to an absolute path",
				forms: strings.Join(lockerForms(), ", "),
			}
		}
		base = filepath.Join(home, ".local", "state")
	}
	dir := filepath.Join(base, "fence")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("the default store's directory: %w", err)
	}
	u := url.URL{Scheme: defaultScheme, Path: filepath.ToSlash(filepath.Join(dir, "locks.db"))}
	return u.String(), nil
}

// inProcess reports whether form is the URL form of an in-process scheme.
func inProcess(form string) bool {
	return slices.ContainsFunc(inProcessSchemes, func(s string) bool { return strings.HasPrefix(form, s+"://") })
}
