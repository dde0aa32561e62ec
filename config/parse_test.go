package config

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	src := "\xef\xbb\xbf# full-line comment\r\n" +
		"; also a comment\n" +
		"\n" +
		"[transport.spread]\n" +
		"  port = 4803   # inline comment\n" +
		"host=localhost#no space needed\n" +
		"[Transport.Socket]  # comment after header\n" +
		"Enabled = 1\r\n" +
		"empty =\n" +
		"[rsbd]\n" +
		"socket-addr = 127.0.0.1:55555\n" +
		"join = a:7946, b:7946\n" +
		"join = c:7946\n" +
		"[rsbd.qos]\n" +
		"/robot/Left-arm/ = RELIABLE, ORDERED\n" +
		"\tspaced\t=\t a value with  inner  spaces \t\n"
	got, err := Parse([]byte(src), "test.conf")
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{
		{"transport.spread.port", "4803", 5},
		{"transport.spread.host", "localhost", 6},
		{"transport.socket.enabled", "1", 8},
		{"transport.socket.empty", "", 9},
		{"rsbd.socket.addr", "127.0.0.1:55555", 11},
		{"rsbd.join", "a:7946, b:7946", 12},
		{"rsbd.join", "c:7946", 13},
		{"rsbd.qos./robot/Left-arm/", "RELIABLE, ORDERED", 15},
		{"rsbd.qos.spaced", "a value with  inner  spaces", 16},
	}
	if !slices.Equal(got, want) {
		t.Errorf("Parse:\n got %v\nwant %v", got, want)
	}
}

func TestParseQuotedValues(t *testing.T) {
	src := "[bridge.sensors]\n" +
		"in.address = \"sensors/#\"   # MQTT multi-level filter\n" +
		"bind = \"amq.topic/orders.#\"\n" +
		"padded = \"  a # b  \"\n" +
		"escaped = \"say \\\"hi\\\"\\tthere \\\\ \\u00e9\"\n" +
		"empty = \"\"\n" +
		"inner = a \"quoted\" word # comment\n" +
		"unquoted = sensors/# is a comment here\n"
	got, err := Parse([]byte(src), "q.conf")
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{
		{"bridge.sensors.in.address", "sensors/#", 2},
		{"bridge.sensors.bind", "amq.topic/orders.#", 3},
		{"bridge.sensors.padded", "  a # b  ", 4},
		{"bridge.sensors.escaped", "say \"hi\"\tthere \\ é", 5},
		{"bridge.sensors.empty", "", 6},
		{"bridge.sensors.inner", "a \"quoted\" word", 7},
		{"bridge.sensors.unquoted", "sensors/", 8},
	}
	if !slices.Equal(got, want) {
		t.Errorf("Parse:\n got %v\nwant %v", got, want)
	}
	for _, src := range []string{
		"[a]\nk = \"open\n",
		"[a]\nk = \"ends in a backslash\\\"\n",
		"[a]\nk = \"x\" y\n",
		"[a]\nk = \"\\q\"\n",
		"[a]\nk = \"\\x01\"\n",
	} {
		if _, err := Parse([]byte(src), "q.conf"); !errors.Is(err, ErrSyntax) {
			t.Errorf("Parse(%q): %v, want ErrSyntax", src, err)
		}
	}
}

func TestParseEmpty(t *testing.T) {
	for _, src := range []string{"", "\n\n", "# only comments\n; here\n", "[section]\n"} {
		got, err := Parse([]byte(src), "e.conf")
		if err != nil || len(got) != 0 {
			t.Errorf("Parse(%q) = %v, %v; want no entries", src, got, err)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, src string
		line      int
		msg       string
	}{
		{"option before section", "# c\nkey = 1\n", 2, "before the first [section]"},
		{"missing equals", "[a]\nkey 1\n", 2, "missing '='"},
		{"colon delimiter", "[a]\nkey: 1\n", 2, "missing '='"},
		{"unterminated header", "[a]\nb = 1\n[oops\n", 3, "lacks ']'"},
		{"text after header", "[a] b\n", 1, "unexpected text"},
		{"empty section", "[ ]\n", 1, "bad section name"},
		{"space in key", "[a]\nmy key = 1\n", 2, "bad key"},
		{"empty key", "[a]\n = 1\n", 2, "bad key"},
		{"bracket in key", "[a]\nx] = 1\n", 2, "bad key"},
		{"control char", "[a]\nk = a\x01b\n", 2, "control character"},
		{"bad utf8", "[a]\nk = \xff\xfe\n", 2, "invalid UTF-8"},
		{"non-ascii key", "[a]\nkü = 1\n", 2, "bad key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.src), "/etc/x.conf")
			if !errors.Is(err, ErrSyntax) {
				t.Fatalf("err = %v, want ErrSyntax", err)
			}
			se, ok := errors.AsType[*SyntaxError](err)
			if !ok || se.Line != tt.line || se.File != "/etc/x.conf" {
				t.Fatalf("err = %#v, want line %d of /etc/x.conf", err, tt.line)
			}
			if !strings.Contains(err.Error(), tt.msg) || !strings.Contains(err.Error(), "/etc/x.conf:") {
				t.Errorf("err = %q, want it to name the file and contain %q", err, tt.msg)
			}
		})
	}
}

func TestParseTooLarge(t *testing.T) {
	data := []byte("[a]\n" + strings.Repeat("k = v\n", MaxFileSize/6+1))
	if _, err := Parse(data, "big.conf"); !errors.Is(err, ErrFileTooLarge) {
		t.Fatalf("err = %v, want ErrFileTooLarge", err)
	}
	if _, err := Parse(data[:MaxFileSize], "limit.conf"); err != nil {
		t.Fatalf("file of exactly MaxFileSize bytes: %v", err)
	}
}

func TestParseLongLineQuoted(t *testing.T) {
	_, err := Parse([]byte("[a]\n"+strings.Repeat("x", 10000)+"\n"), "l.conf")
	if err == nil || len(err.Error()) > 200 {
		t.Fatalf("err = %.300q, want a short message", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("[transport.socket]\nport = 55555 # comment\nhost = localhost\n"))
	f.Add([]byte("[rsbd]\nsocket-addr = :55555\n[rsbd.qos]\n/a/b/ = RELIABLE,ORDERED\n"))
	f.Add([]byte("\xef\xbb\xbf; c\r\n[A_B]\r\nX=1\r\n"))
	f.Add([]byte("key = before section\n"))
	f.Add([]byte("[a]\nk = \x00\n[b\n"))
	f.Add([]byte("[a] # c\n\tk\t=\t#\n[]\n"))
	f.Add([]byte("[a]\nf = \"s/#\" # c\ng = \"\\\"\\t\\u00e9 \"\nh = \"x\ni = \"\\q\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := Parse(data, "fuzz.conf")
		if err != nil {
			if !errors.Is(err, ErrSyntax) && !errors.Is(err, ErrFileTooLarge) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		lines := strings.Count(string(data), "\n") + 1
		for _, e := range entries {
			if k, err := NormalizeKey(e.Key); err != nil || k != e.Key {
				t.Fatalf("key %q not canonical (%q, %v)", e.Key, k, err)
			}
			if checkValue(e.Value) != "" {
				t.Fatalf("value %q not checked", e.Value)
			}
			// What --print-config writes reads back as the same value.
			back, err := Parse([]byte("[x]\nk = "+dumpValue(e.Value)+"  # origin\n"), "dump.conf")
			if err != nil || len(back) != 1 || back[0].Value != e.Value {
				t.Fatalf("value %q written as %s reads back as %v, %v", e.Value, dumpValue(e.Value), back, err)
			}
			if e.Line < 1 || e.Line > lines {
				t.Fatalf("line %d out of range 1..%d", e.Line, lines)
			}
		}
	})
}
