package archdoc

import (
	"bufio"
	"io"
	"slices"
	"strings"
)

// Row is one package of the architecture table: its path relative to the
// module (no trailing slash) and the module packages it imports, as the
// table names them.
type Row struct {
	Pkg     string
	Imports []string
}

// ParseTable reads the Markdown table rows whose first cell is a package
// in backticks (for example "| `node/sinks/` | … | `notification`, `qos` |")
// and returns them in order. The last cell lists the imports in
// backticks; "none" or text without backticks means none.
func ParseTable(r io.Reader) ([]Row, error) {
	var rows []Row
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) < 3 {
			continue
		}
		names := ticked(cells[0])
		if len(names) != 1 {
			continue
		}
		row := Row{Pkg: strings.TrimSuffix(names[0], "/")}
		for _, imp := range ticked(cells[len(cells)-1]) {
			row.Imports = append(row.Imports, strings.TrimSuffix(imp, "/"))
		}
		slices.Sort(row.Imports)
		rows = append(rows, row)
	}
	return rows, sc.Err()
}

// ticked returns the strings between pairs of backticks in s.
func ticked(s string) []string {
	var out []string
	for {
		i := strings.IndexByte(s, '`')
		if i < 0 {
			return out
		}
		j := strings.IndexByte(s[i+1:], '`')
		if j < 0 {
			return out
		}
		out = append(out, s[i+1:i+1+j])
		s = s[i+2+j:]
	}
}

// Owner returns the row that stands for package pkg: the row of pkg
// itself, else of its nearest ancestor (proto/ stands for the generated
// packages below it); "" when none does.
func Owner(rows []Row, pkg string) string {
	for p := pkg; p != "." && p != ""; {
		for _, r := range rows {
			if r.Pkg == p {
				return p
			}
		}
		i := strings.LastIndexByte(p, '/')
		if i < 0 {
			break
		}
		p = p[:i]
	}
	return ""
}
