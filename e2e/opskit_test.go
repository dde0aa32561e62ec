package e2e

import (
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rsbd/rsbd/bridge/bridgetest"
	"github.com/rsbd/rsbd/internal/testutil"
)

const (
	rulesFile     = "../dist/prometheus/rsbd-rules.yml"
	dashboardFile = "../dist/grafana/rsbd-dashboard.json"
)

// serverLabels are added by Prometheus, not by the daemon.
var serverLabels = map[string]bool{"instance": true, "job": true}

// TestRulesPassPromtool runs promtool check rules on the alerting rules.
func TestRulesPassPromtool(t *testing.T) {
	promtool := testutil.Program(t, "prometheus", "promtool")
	out, err := exec.Command(promtool, "check", "rules", rulesFile).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "SUCCESS") {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
}

// TestOpsKitMetricsExist scrapes a running two-daemon cluster (one with
// the gateway and a NATS bridge in both directions) and checks that every
// rsbd_ metric the alerting rules and the Grafana dashboard name exists
// with the labels they use.
func TestOpsKitMetricsExist(t *testing.T) {
	t.Parallel()
	exprs := append(ruleExprs(t), dashboardExprs(t)...)
	uses := usedMetrics(exprs)
	if len(uses) < 20 {
		t.Fatalf("only %d metrics found in the rules and dashboard: %v", len(uses), slices.Sorted(maps.Keys(uses)))
	}
	ns := bridgetest.StartServer(t, "nats-server", "nats-server", func(port, _ string) []string {
		return []string{"-a", "127.0.0.1", "-p", port}
	})
	c := newCluster(t)
	a := c.start("A", opts{args: []string{"--gateway-http", "127.0.0.1:0"}, env: []string{
		"RSB_BRIDGE_OPS_KIND=nats", "RSB_BRIDGE_OPS_URL=nats://" + ns.Addr(),
		"RSB_BRIDGE_OPS_IN_ADDRESS=ops.in", "RSB_BRIDGE_OPS_IN_SCOPE=/ops/in/",
		"RSB_BRIDGE_OPS_OUT_SCOPE=/ops/out/", "RSB_BRIDGE_OPS_OUT_ADDRESS=ops.out",
	}})
	c.start("B", opts{})
	c.waitPeers(30 * time.Second)
	var scraped map[string]map[string]bool
	testutil.WaitFor(t, 30*time.Second, "the bridge's families", func() bool {
		scraped = exportedFamilies(a.Metrics())
		_, ok := scraped["rsbd_bridge_up"]
		return ok
	})
	for name, labels := range uses {
		got, ok := scraped[name]
		if !ok {
			t.Errorf("%s is used but not exported", name)
			continue
		}
		checkLabels(t, name, labels, got, "the scrape")
	}
}

// checkLabels reports the labels a rule or panel uses that the metric does
// not have.
func checkLabels(t *testing.T, name string, used map[string]bool, have any, where string) {
	t.Helper()
	var set map[string]bool
	switch h := have.(type) {
	case map[string]bool:
		set = h
	case []string:
		set = map[string]bool{}
		for _, l := range h {
			set[l] = true
		}
	}
	for l := range used {
		if !set[l] && !serverLabels[l] {
			t.Errorf("%s: label %q is used, not in %s (%v)", name, l, where, slices.Sorted(maps.Keys(set)))
		}
	}
}

// ruleExprs returns the expr lines of the rules file.
func ruleExprs(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	var exprs []string
	for line := range strings.Lines(string(b)) {
		if e, ok := strings.CutPrefix(strings.TrimSpace(line), "expr:"); ok {
			exprs = append(exprs, strings.TrimSpace(e))
		}
	}
	if len(exprs) == 0 {
		t.Fatal("no expr in the rules")
	}
	return exprs
}

// dashboardExprs returns the queries of the dashboard's panels and
// variables.
func dashboardExprs(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Targets []struct{ Expr string }
		}
		Templating struct {
			List []struct{ Definition string }
		}
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	var exprs []string
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
		}
	}
	for _, v := range d.Templating.List {
		exprs = append(exprs, v.Definition)
	}
	return exprs
}

var (
	selectorRE = regexp.MustCompile(`\b(rsbd_[a-z0-9_]+)(\{[^}]*\})?`)
	matcherRE  = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)`)
	groupingRE = regexp.MustCompile(`\b(?:by|without)\s*\(([^)]*)\)`)
	seriesRE   = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="(?:[^"\\]|\\.)*"`)
	labelFnRE  = regexp.MustCompile(`label_values\((rsbd_[a-z0-9_]+),\s*([a-z_]+)\)`)
)

// usedMetrics maps each rsbd_ metric the expressions name to the labels
// they use with it: its matchers, and the grouping labels of its
// expression (which must exist on the metric unless another metric of the
// expression has them).
func usedMetrics(exprs []string) map[string]map[string]bool {
	uses := map[string]map[string]bool{}
	for _, e := range exprs {
		var names []string
		for _, m := range selectorRE.FindAllStringSubmatch(e, -1) {
			name := m[1]
			names = append(names, name)
			if uses[name] == nil {
				uses[name] = map[string]bool{}
			}
			for _, lm := range matcherRE.FindAllStringSubmatch(m[2], -1) {
				uses[name][lm[1]] = true
			}
		}
		if m := labelFnRE.FindStringSubmatch(e); m != nil {
			uses[m[1]][m[2]] = true
		}
		for _, g := range groupingRE.FindAllStringSubmatch(e, -1) {
			for l := range strings.SplitSeq(g[1], ",") {
				if l = strings.TrimSpace(l); l != "" && l != "le" {
					// Every metric of a grouped expression carries the label.
					for _, n := range names {
						uses[n][l] = true
					}
				}
			}
		}
	}
	return uses
}

// exportedFamilies maps each exported family to its label names; histogram series
// count as their _bucket, _sum and _count names.
func exportedFamilies(series map[string]float64) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for s := range series {
		name, labels, _ := strings.Cut(s, "{")
		if out[name] == nil {
			out[name] = map[string]bool{}
		}
		for _, m := range seriesRE.FindAllStringSubmatch(labels, -1) {
			out[name][m[1]] = true
		}
	}
	return out
}
