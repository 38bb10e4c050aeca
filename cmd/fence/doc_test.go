package main

import (
	"flag"
	"go/parser"
	"go/token"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// definedFlags returns each subcommand's flag set as the subcommand builds
// it; help has none.
func definedFlags() map[string]*flag.FlagSet {
	inspect, _ := keyCommand("inspect")
	brk, _ := keyCommand("break")
	return map[string]*flag.FlagSet{
		"init":    initCommand().fs,
		"run":     runCommand(new(runFlags)).fs,
		"inspect": inspect.fs,
		"break":   brk.fs,
		"help":    flag.NewFlagSet("help", flag.ContinueOnError),
	}
}

// flagToken is a flag as the documentation writes it: -v, --ttl.
var flagToken = regexp.MustCompile(`(?:^|[\s\[|(,])--?([a-z][a-z-]*)`)

// flagsIn returns the names of the flags written in s, sorted, once each.
func flagsIn(s string) []string {
	var names []string
	for _, m := range flagToken.FindAllStringSubmatch(s, -1) {
		names = append(names, m[1])
	}
	slices.Sort(names)
	return slices.Compact(names)
}

func namesOf(fs *flag.FlagSet) []string {
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	slices.Sort(names)
	return names
}

// packageDoc returns the package comment of main.go, which go doc prints.
func packageDoc(t *testing.T) string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "main.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	if f.Doc == nil {
		t.Fatal("main.go has no package comment")
	}
	return f.Doc.Text()
}

// synopsis returns the lines of text that start, after indentation and an
// optional "usage:", with "fence SUB ", by SUB.
func synopsis(text string) map[string][]string {
	lines := map[string][]string{}
	for _, line := range strings.Split(text, "\n") {
		rest := strings.TrimPrefix(strings.TrimSpace(line), "usage: ")
		if f := strings.Fields(rest); len(f) >= 2 && f[0] == "fence" {
			lines[f[1]] = append(lines[f[1]], rest)
		}
	}
	return lines
}

// TestDocListsFlags: the package doc (go doc ./cmd/fence), the usage
// line, each subcommand's help and the manual's options list every flag
// that the subcommands define, and no other.
func TestDocListsFlags(t *testing.T) {
	t.Parallel()
	defined := definedFlags()
	doc := packageDoc(t)
	docSynopsis, usage := synopsis(doc), synopsis(usageLine)

	// The doc's flag table: "\t--ttl D        run: ..." names the flags
	// of a line and the subcommands that take them.
	tableLine := regexp.MustCompile(`^\t(-\S*(?:, -\S*)*(?: [A-Z]+)?)\s{2,}([a-z]+(?:, [a-z]+)*): (.*)$`)
	table := map[string][]string{}
	for _, line := range strings.Split(doc, "\n") {
		m := tableLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		for _, sub := range strings.Split(m[2], ", ") {
			if _, ok := defined[sub]; !ok {
				t.Errorf("the doc's flag table names subcommand %q, which does not exist: %q", sub, line)
			}
			table[sub] = append(table[sub], flagsIn(m[1])...)
		}
		// A default the table states is the flag's default.
		if d := regexp.MustCompile(`\(default ([^$)][^)]*)\)`).FindStringSubmatch(m[3]); d != nil {
			for _, name := range flagsIn(m[1]) {
				for sub := range strings.SplitSeq(m[2], ", ") {
					if fs := defined[sub]; fs != nil && fs.Lookup(name) != nil && fs.Lookup(name).DefValue != d[1] {
						t.Errorf("the doc says %s --%s defaults to %s, the flag to %s", sub, name, d[1], fs.Lookup(name).DefValue)
					}
				}
			}
		}
	}

	for _, sub := range slices.Sorted(maps.Keys(defined)) {
		t.Run(sub, func(t *testing.T) {
			want := namesOf(defined[sub])
			check := func(where string, got []string) {
				t.Helper()
				slices.Sort(got)
				if got = slices.Compact(got); !slices.Equal(got, want) {
					t.Errorf("%s lists the flags %q of fence %s; it defines %q", where, got, sub, want)
				}
			}
			for what, lines := range map[string][]string{"the package doc's synopsis": docSynopsis[sub], "usageLine": usage[sub]} {
				if len(lines) != 1 {
					t.Errorf("%s has %d lines for fence %s, want 1: %q", what, len(lines), sub, lines)
					continue
				}
				check(what, flagsIn(lines[0]))
			}
			check("the package doc's flag table", table[sub])
			if sub == "help" {
				return
			}
			help, ok := subHelp[sub]
			if !ok {
				t.Fatalf("subHelp has no help for fence %s", sub)
			}
			usage, body, _ := strings.Cut(help, "\n")
			check("subHelp's usage line", flagsIn(usage))
			check("subHelp's text", flagsIn(body))
		})
	}
	for sub := range docSynopsis {
		if _, ok := defined[sub]; !ok {
			t.Errorf("the package doc's synopsis names fence %s, which does not exist", sub)
		}
	}
	for sub := range subHelp {
		if _, ok := defined[sub]; !ok {
			t.Errorf("subHelp has help for fence %s, which does not exist", sub)
		}
	}

	// The manual's options section covers the flags of every subcommand.
	_, opts, ok := strings.Cut(manual, "\nOPTIONS OF RUN")
	opts, _, ok2 := strings.Cut(opts, "\nDURATIONS")
	if !ok || !ok2 {
		t.Fatal("the manual has no OPTIONS OF RUN section ending before DURATIONS")
	}
	var all []string
	for _, fs := range defined {
		all = append(all, namesOf(fs)...)
	}
	slices.Sort(all)
	if got, want := flagsIn(opts), slices.Compact(all); !slices.Equal(got, want) {
		t.Errorf("the manual's options list the flags %q; the subcommands define %q", got, want)
	}
}
