package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// layoutDoc is where the package layout table lives: one row per package of the module, with its
// level; tooling rows (level "—") may name a folder that covers several packages.
const layoutDoc = "docs/design.md"

// goPackage is what TestLayoutTable needs of `go list -json`.
type goPackage struct {
	ImportPath string
	Module     *struct{ Path string }
	Imports    []string
}

// TestLayoutTable checks that the layout table of docs/design.md names every package `go list`
// finds, and no other; that each level is a number; and that no import runs up a level (a package
// imports only packages on lower levels), so the table cannot drift from the code.
func TestLayoutTable(t *testing.T) {
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "list", "-json", "./...")
	cmd.Dir = repo
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var module string
	imports := map[string][]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p goPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		if p.Module != nil {
			module = p.Module.Path
		}
		imports[p.ImportPath] = p.Imports
	}
	rel := func(ip string) string { return strings.TrimPrefix(strings.TrimPrefix(ip, module), "/") }

	levels, tooling := readLayoutTable(t, filepath.Join(repo, layoutDoc))
	covered := func(pkg string) bool {
		for _, dir := range tooling {
			if pkg == dir || strings.HasPrefix(pkg, dir+"/") {
				return true
			}
		}
		return false
	}
	var pkgs []string
	for ip := range imports {
		pkgs = append(pkgs, rel(ip))
	}
	sort.Strings(pkgs)
	for _, pkg := range pkgs {
		if _, ok := levels[pkg]; !ok && !covered(pkg) {
			t.Errorf("%s: package %s is not in the layout table; add a row with its level", layoutDoc, pkg)
		}
	}
	for pkg := range levels {
		if _, ok := imports[module+"/"+pkg]; !ok {
			t.Errorf("%s: the layout table names %s, which go list does not find", layoutDoc, pkg)
		}
	}
	for _, pkg := range pkgs {
		from, ok := levels[pkg]
		if !ok {
			continue
		}
		for _, ip := range imports[module+"/"+pkg] {
			if !strings.HasPrefix(ip, module+"/") && ip != module {
				continue
			}
			to, ok := levels[rel(ip)]
			if !ok {
				t.Errorf("%s (level %d) imports %s, which has no level in %s", pkg, from, rel(ip), layoutDoc)
				continue
			}
			if to >= from {
				t.Errorf("%s (level %d) imports %s (level %d): imports must run down a level", pkg, from, rel(ip), to)
			}
		}
	}
}

// readLayoutTable reads the rows `| level | path | owns |` of the layout table: packages with a
// numeric level, and the paths of tooling rows (level "—"), which may list several paths.
func readLayoutTable(t *testing.T, file string) (levels map[string]int, tooling []string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	levels = map[string]int{}
	seen := map[string]int{} // path → the line of its row
	for i, line := range strings.Split(string(data), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || strings.TrimSpace(cells[0]) != "" {
			continue
		}
		level := strings.TrimSpace(cells[1])
		var paths []string
		for _, f := range strings.Split(cells[2], ",") {
			f = strings.Trim(strings.TrimSpace(f), "`")
			if f != "" {
				paths = append(paths, strings.TrimSuffix(f, "/"))
			}
		}
		header := level == "level" || strings.Trim(level, "-: ") == ""
		for _, p := range paths {
			if header {
				break
			}
			// A second row for a path would silently win over the first: the table must say one thing.
			if _, dup := seen[p]; dup {
				t.Errorf("%s:%d: %s has a row already (line %d): one row per package", layoutDoc, i+1, p, seen[p])
			}
			seen[p] = i + 1
		}
		switch {
		case level == "—":
			tooling = append(tooling, paths...)
		case header:
			// the header and the separator row
		default:
			n, err := strconv.Atoi(level)
			if err != nil {
				t.Errorf("%s:%d: level %q is not a number", layoutDoc, i+1, level)
				continue
			}
			for _, p := range paths {
				levels[p] = n
			}
		}
	}
	if len(levels) == 0 {
		t.Fatalf("%s has no layout table (| level | path | owns |)", layoutDoc)
	}
	return levels, tooling
}

// leanForbidden are the packages the lean hook binary must not link: their package
// initialisation (yaml.v3's tables, the Redis client, the network and TLS stacks) and, with cgo
// on, the C library that os/user and net bring in would cost every hook event more than the
// gate's own work (docs/performance.md, "The lean hook binary").
var leanForbidden = []string{"gopkg.in/yaml.v3", "github.com/redis/go-redis/v9", "net", "crypto/tls", "crypto/x509", "os/user", "runtime/cgo", "github.com/urfave/cli/v2", "github.com/modelcontextprotocol/go-sdk/mcp"}

// TestLeanHookLinks checks what cmd/mcp-circuit-breaker-hook links, with cgo on as go install
// builds it: none of leanForbidden, so it is a static binary that starts like a minimal one.
func TestLeanHookLinks(t *testing.T) {
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "list", "-deps", "./cmd/mcp-circuit-breaker-hook")
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := map[string]bool{}
	for _, d := range strings.Fields(string(out)) {
		deps[d] = true
	}
	if !deps["github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/gate"] {
		t.Fatalf("go list -deps names no gate: %s", out)
	}
	for _, f := range leanForbidden {
		if deps[f] {
			t.Errorf("the lean hook links %s", f)
		}
	}
}
