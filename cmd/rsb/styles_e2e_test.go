package main

import (
	"regexp"
	"strings"
	"testing"
)

// TestLoggerStyles logs on one daemon what send publishes through the
// other in each of the styles beyond the basic four, and checks the shape
// of the output with its times normalised.
func TestLoggerStyles(t *testing.T) {
	forClusters(t, func(t *testing.T, c cluster) {
		for _, tc := range []struct {
			style string
			want  []string // regular expressions of lines, in order, after normalising
		}{
			{"columns", []string{
				`Time +Origin +Seq +Method +Scope +Wire schema +Size +Payload`,
				`TIME  [0-9a-f]{8} +0  M +/tools/columns/sub/ +utf-8-string +12  "hello logger"`}},
			{"meta-data", []string{`Event UUID`, `  Scope +/tools/meta-data/sub/`, `  Origin +UUID`, `  Sequence +0`,
				`  Method +M`, `  Wire schema +utf-8-string`, `  Size +12 bytes`, `  Create +STAMP`, `  Send +STAMP`,
				`  Receive +STAMP`, `  Deliver +STAMP`, `  Info k +v`, `-{80}`}},
			{"timeline", []string{` +Time  Lanes +Scope`, ` +\+0\.000000s  \*\.{15}  /tools/timeline/sub/`}},
			{"discard", nil},
		} {
			t.Run(tc.style, func(t *testing.T) {
				sc := "/tools/" + tc.style
				r := loggerThenSend(t, c.tool,
					[]string{"logger", "--style", tc.style, "--stop-after", "1", c.uris[1] + sc},
					[]string{"send", "--method", "M", "-D", "k=v", `"hello logger"`, c.uris[0] + sc + "/sub"})
				if tc.want == nil {
					if r.stdout != "" {
						t.Fatalf("discard printed %q", r.stdout)
					}
					return
				}
				matchLines(t, normalise(r.stdout), tc.want...)
			})
		}
		for _, style := range []string{"monitor", "statistics"} {
			t.Run(style, func(t *testing.T) {
				sc := "/tools/" + style
				r := loggerThenSend(t, c.tool,
					[]string{"logger", "--style", style, "--refresh", "50ms", "--stop-after", "2", c.uris[1] + sc},
					[]string{"send", `"hello logger"`, c.uris[0] + sc + "/sub"})
				out := normalise(r.stdout)
				if strings.Contains(out, clearScreen) {
					t.Errorf("%s redrew in place on a pipe", style)
				}
				var last *regexp.Regexp
				switch style {
				case "monitor":
					last = regexp.MustCompile(`(?m)^STAMP  1 scopes, 2 events\nScope +Events +Rate/s +Bytes +Bytes/s +Wire schema\n` +
						`/tools/monitor/sub/ +2 +\d+\.\d +24 +\d+\.\d  utf-8-string\n\n\z`)
				case "statistics":
					last = regexp.MustCompile(`(?m)^Time +Events +Rate/s +Bytes/s +Size +Latency\n(TIME +\d+ +\d+\.\d +\d+\.\d +(\d+\.\d|-) +\S+\n)+` +
						`total +2 +\d+\.\d +\d+\.\d +12\.0 +\S+\n\z`)
				}
				if !last.MatchString(out) {
					t.Fatalf("%s output:\n%s", style, out)
				}
			})
		}
	})
}

var (
	stampRE = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`)
	clockRE = regexp.MustCompile(`(?m)^\d\d:\d\d:\d\d\.\d{6}`)
	uuidRE  = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
)

// normalise replaces timestamps by STAMP, times of day at the start of a
// line by TIME and UUIDs by UUID.
func normalise(s string) string {
	s = stampRE.ReplaceAllString(s, "STAMP")
	s = clockRE.ReplaceAllString(s, "TIME")
	return uuidRE.ReplaceAllString(s, "UUID")
}
