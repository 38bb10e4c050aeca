// Package docs holds the tests that keep the Go code in the project's
// markdown honest: every ```go block in README.md, CONTRIBUTING.md and the
// markdown under docs/ must be a complete Go file that is gofmt-clean and
// compiles against this module (fence itself, through the replace
// directive, and the ORMs the guides show).
package docs

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// buildSlots bounds the go commands that run at once: the machines this
// project runs on have two cores.
var buildSlots = make(chan struct{}, 2)

// block is one ```go fenced block of a markdown file.
type block struct {
	file string // path as reported, relative to the repository root
	line int    // line of the opening fence, from 1
	src  []byte // the block's text, indentation of the fence removed
}

func (b block) String() string { return fmt.Sprintf("%s:%d", b.file, b.line) }

// markdownFiles returns the markdown files whose Go blocks are checked:
// README.md and CONTRIBUTING.md at the root of the repository (root) and
// every .md file under root/docs, testdata directories left out.
func markdownFiles(root string) ([]string, error) {
	var files []string
	for _, name := range []string{"README.md", "CONTRIBUTING.md"} {
		if _, err := os.Stat(filepath.Join(root, name)); err == nil {
			files = append(files, name)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(d.Name(), ".md") {
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	return files, err
}

// goBlocks returns the ```go blocks of the markdown text md, read from
// the file named name. A fence may be indented (inside a list item); that
// indentation is removed from the block's lines. A block left open at the
// end of the file is an error.
func goBlocks(name string, md []byte) ([]block, error) {
	var (
		blocks []block
		cur    *block
		indent string
		fence  string // the opening fence's backticks, while in any fenced block
		buf    bytes.Buffer
	)
	sc := bufio.NewScanner(bytes.NewReader(md))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimLeft(line, " \t")
		if fence == "" {
			if !strings.HasPrefix(trimmed, "```") {
				continue
			}
			fence = trimmed[:len(trimmed)-len(strings.TrimLeft(trimmed, "`"))]
			info := strings.Fields(strings.TrimPrefix(trimmed, fence))
			if len(info) > 0 && info[0] == "go" {
				cur = &block{file: name, line: n}
				indent = line[:len(line)-len(trimmed)]
				buf.Reset()
			}
			continue
		}
		if strings.HasPrefix(trimmed, fence) && strings.TrimSpace(strings.TrimLeft(trimmed, "`")) == "" {
			if cur != nil {
				cur.src = append([]byte(nil), buf.Bytes()...)
				blocks = append(blocks, *cur)
				cur = nil
			}
			fence = ""
			continue
		}
		if cur != nil {
			buf.WriteString(strings.TrimPrefix(line, indent))
			buf.WriteByte('\n')
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	if fence != "" {
		return nil, fmt.Errorf("%s: a fenced block is not closed", name)
	}
	return blocks, nil
}

// checkBlock checks that b is a complete, gofmt-clean Go file and that
// the go command of this module vets it (which type-checks it against the
// module's dependencies). moduleDir is this module's directory, where the
// go command runs; dir is an empty directory of the block's own.
func checkBlock(ctx context.Context, b block, moduleDir, dir string) error {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "block.go", b.src, parser.PackageClauseOnly)
	if err != nil || f.Name == nil {
		return fmt.Errorf("%s: the block does not start with a package clause: every go block must be a complete file; use ```text for fragments", b)
	}
	f, err = parser.ParseFile(fset, "block.go", b.src, parser.SkipObjectResolution)
	if err != nil {
		return fmt.Errorf("%s: %v", b, err)
	}
	if f.Name.Name == "main" && !hasMain(f) {
		return fmt.Errorf("%s: package main without func main", b)
	}
	formatted, err := format.Source(b.src)
	if err != nil {
		return fmt.Errorf("%s: gofmt: %v", b, err)
	}
	if !bytes.Equal(formatted, b.src) {
		return fmt.Errorf("%s: the block is not gofmt-clean; gofmt gives:\n%s", b, formatted)
	}
	file := filepath.Join(dir, "x.go")
	if f.Name.Name == "main" {
		file = filepath.Join(dir, "main.go")
	}
	if err := os.WriteFile(file, b.src, 0o644); err != nil {
		return err
	}
	select {
	case buildSlots <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-buildSlots }()
	// A .go file named on the command line, outside the module, is
	// compiled as package command-line-arguments with the imports
	// resolved in the module of the working directory.
	cmd := exec.CommandContext(ctx, goCommand(), "vet", "-p=1", file)
	cmd.Dir = moduleDir
	out, err := cmd.CombinedOutput()
	if err != nil {
		msg := strings.ReplaceAll(string(out), file, "block")
		return fmt.Errorf("%s: go vet: %v\n%s", b, err, msg)
	}
	return nil
}

func hasMain(f *ast.File) bool {
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && fn.Name.Name == "main" {
			return true
		}
	}
	return false
}

// goCommand returns the go command: the one on PATH, or else the one of
// the toolchain that built this test.
func goCommand() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

func readBlocks(t *testing.T, root string, files []string) []block {
	t.Helper()
	var all []block
	for _, name := range files {
		md, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		bs, err := goBlocks(name, md)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, bs...)
	}
	return all
}

// projectMarkdown returns the docs module's directory, the project's
// root (its parent) and the markdown files under the root.
func projectMarkdown(t *testing.T) (moduleDir, root string, files []string) {
	t.Helper()
	moduleDir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root = filepath.Dir(moduleDir)
	files, err = markdownFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	return moduleDir, root, files
}

// TestSnippets checks every ```go block of the project's markdown.
func TestSnippets(t *testing.T) {
	moduleDir, root, files := projectMarkdown(t)
	blocks := readBlocks(t, root, files)
	for _, b := range blocks {
		t.Run(strings.ReplaceAll(b.String(), "/", "_"), func(t *testing.T) {
			t.Parallel()
			if err := checkBlock(t.Context(), b, moduleDir, t.TempDir()); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestWalkFindsREADME keeps a broken walk or parser from passing
// TestSnippets on no blocks at all: README.md has Go blocks, and so do
// the guides of this module.
func TestWalkFindsREADME(t *testing.T) {
	_, root, files := projectMarkdown(t)
	perFile := map[string]int{}
	for _, b := range readBlocks(t, root, files) {
		perFile[b.file]++
	}
	for _, name := range []string{"README.md", "docs/orms.md", "docs/kubernetes.md"} {
		if perFile[name] == 0 {
			t.Errorf("found no ```go block in %s (files walked: %v)", name, files)
		}
	}
	md, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if want := bytes.Count(md, []byte("```go\n")); perFile["README.md"] != want {
		t.Errorf("README.md: found %d go blocks, want %d", perFile["README.md"], want)
	}
	for _, name := range files {
		if strings.Contains(name, "testdata") {
			t.Errorf("the walk entered a testdata directory: %s", name)
		}
	}
}

// TestCheckerFails feeds the checker the blocks of testdata/broken.md,
// each wrong in one way, and expects each to fail with the file and the
// line of its fence.
func TestCheckerFails(t *testing.T) {
	moduleDir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	blocks := readBlocks(t, moduleDir, []string{"testdata/broken.md"})
	want := []struct {
		line int
		msg  string
	}{
		{5, "does not start with a package clause"},
		{11, "not gofmt-clean"},
		{18, "undefined: fence.NoSuchThing"},
		{28, "package main without func main"},
		{34, "Printf format %d has arg"}, // a vet finding, not a compile error
	}
	if len(blocks) != len(want) {
		t.Fatalf("testdata/broken.md: %d go blocks, want %d", len(blocks), len(want))
	}
	for i, w := range want {
		b := blocks[i]
		err := checkBlock(t.Context(), b, moduleDir, t.TempDir())
		if err == nil {
			t.Errorf("block %d (%s): the checker passed it", i, b)
			continue
		}
		prefix := fmt.Sprintf("testdata/broken.md:%d: ", w.line)
		if !strings.HasPrefix(err.Error(), prefix) || !strings.Contains(err.Error(), w.msg) {
			t.Errorf("block %d: error %q, want it to start with %q and contain %q", i, err, prefix, w.msg)
		}
	}
}

// TestCheckerPasses keeps TestCheckerFails honest: a good block, of
// package main and of another package, passes, so the failures above come
// from the faults put in the blocks.
func TestCheckerPasses(t *testing.T) {
	moduleDir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	blocks := readBlocks(t, moduleDir, []string{"testdata/good.md"})
	if len(blocks) != 2 {
		t.Fatalf("testdata/good.md: %d go blocks, want 2", len(blocks))
	}
	for _, b := range blocks {
		if err := checkBlock(t.Context(), b, moduleDir, t.TempDir()); err != nil {
			t.Errorf("%v", err)
		}
	}
}
