package archdoc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/rsbd/rsbd"

// listedPackage is what `go list -json` tells of a package.
type listedPackage struct {
	ImportPath string
	Imports    []string
	GoFiles    []string
}

// goList returns the module's packages with non-test Go files.
func goList(t *testing.T) []listedPackage {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", module+"/...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p listedPackage
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		if len(p.GoFiles) > 0 {
			pkgs = append(pkgs, p)
		}
	}
	return pkgs
}

// TestArchitectureTableMatchesGoList: every package of the module has a
// row in docs/ARCHITECTURE.md (or an ancestor's row stands for it), every
// row is a package, and each row's imports are the module packages its
// packages import, by row.
func TestArchitectureTableMatchesGoList(t *testing.T) {
	f, err := os.Open("../../docs/ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := ParseTable(f)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]bool{}
	for _, p := range goList(t) {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		owner := Owner(rows, rel)
		if owner == "" {
			t.Errorf("package %s has no row in docs/ARCHITECTURE.md", rel)
			continue
		}
		if want[owner] == nil {
			want[owner] = map[string]bool{}
		}
		for _, imp := range p.Imports {
			if imp, ok := strings.CutPrefix(imp, module+"/"); ok {
				if o := Owner(rows, imp); o != "" && o != owner {
					want[owner][o] = true
				}
			}
		}
	}
	var diffs []string
	for _, r := range rows {
		imps, ok := want[r.Pkg]
		if !ok {
			if _, err := os.Stat("../../" + r.Pkg); err != nil {
				diffs = append(diffs, fmt.Sprintf("row %s: no such package", r.Pkg))
			}
			continue // a package with tests only (e2e, interop) imports what its tests need
		}
		got := make([]string, 0, len(imps))
		for imp := range imps {
			got = append(got, imp)
		}
		slices.Sort(got)
		if !slices.Equal(got, r.Imports) {
			diffs = append(diffs, fmt.Sprintf("row %s: imports %v, go list says %v", r.Pkg, r.Imports, got))
		}
	}
	if len(diffs) > 0 {
		t.Fatalf("docs/ARCHITECTURE.md is out of date:\n%s", strings.Join(diffs, "\n"))
	}
}

// TestParseTable: rows are read from backticked first cells; imports from
// the last cell's backticked names.
func TestParseTable(t *testing.T) {
	doc := "| package | owns | imports |\n|---|---|---|\n" +
		"| `scope/` | syntax | none |\n" +
		"| `node/sinks/` | sinks | `notification`, `qos/`, `scope` |\n" +
		"not a row `x/`\n"
	rows, err := ParseTable(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	want := []Row{{Pkg: "scope"}, {Pkg: "node/sinks", Imports: []string{"notification", "qos", "scope"}}}
	if len(rows) != 2 || rows[0].Pkg != want[0].Pkg || len(rows[0].Imports) != 0 ||
		rows[1].Pkg != want[1].Pkg || !slices.Equal(rows[1].Imports, want[1].Imports) {
		t.Fatalf("rows %+v, want %+v", rows, want)
	}
	if o := Owner(rows, "node/sinks"); o != "node/sinks" {
		t.Fatalf("owner of node/sinks: %q", o)
	}
	if o := Owner(rows, "node/other"); o != "" {
		t.Fatalf("owner of node/other: %q", o)
	}
}
