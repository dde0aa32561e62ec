package config

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func getterConfig(t *testing.T) *Config {
	t.Helper()
	tr := newTree(t)
	write(t, tr.system, "[v]\nint = 42\nneg = -7\nbadint = 4x2\nbig = 99999999999999999999\n"+
		"dur = 1.5s\nzero = 0\nbaddur = 10\nnegdur = -1s\n"+
		"list = a, b ,,c\nemptylist =\nstr = hello world\n")
	c := mustLoad(t, tr.opts("RSB_V_YES=Yes"))
	return c
}

func TestInt(t *testing.T) {
	c := getterConfig(t)
	for key, want := range map[string]int{"v.int": 42, "v.neg": -7, "v.missing": 5} {
		if got, err := c.Int(key, 5); err != nil || got != want {
			t.Errorf("Int(%s) = %d, %v; want %d", key, got, err, want)
		}
	}
	got, err := c.Int("v.badint", 5)
	if got != 5 || !errors.Is(err, ErrBadValue) || !errors.Is(err, strconv.ErrSyntax) {
		t.Fatalf("Int(v.badint) = %d, %v", got, err)
	}
	for _, part := range []string{"v.badint", `"4x2"`, "rsb.conf:4", "integer"} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("error %q lacks %q", err, part)
		}
	}
	if _, err = c.Int("v.big", 0); !errors.Is(err, strconv.ErrRange) {
		t.Errorf("Int(v.big) err = %v, want ErrRange", err)
	}
	ve, ok := errors.AsType[*ValueError](err)
	if !ok || ve.Key != "v.big" || ve.Origin.Source != SourceFile {
		t.Errorf("ValueError = %+v", ve)
	}
}

func TestBool(t *testing.T) {
	for _, s := range []string{"1", "true", "TRUE", "yes", "Yes", "on", " On "} {
		if b, err := ParseBool(s); err != nil || !b {
			t.Errorf("ParseBool(%q) = %v, %v", s, b, err)
		}
	}
	for _, s := range []string{"0", "false", "False", "no", "NO", "off"} {
		if b, err := ParseBool(s); err != nil || b {
			t.Errorf("ParseBool(%q) = %v, %v", s, b, err)
		}
	}
	for _, s := range []string{"", "2", "y", "enabled", "truee"} {
		if _, err := ParseBool(s); err == nil {
			t.Errorf("ParseBool(%q) accepted", s)
		}
	}
	c := getterConfig(t)
	if b, err := c.Bool("v.yes", false); err != nil || !b {
		t.Errorf("Bool(v.yes) = %v, %v", b, err)
	}
	if b, err := c.Bool("v.missing", true); err != nil || !b {
		t.Errorf("Bool(v.missing) = %v, %v", b, err)
	}
	b, err := c.Bool("v.str", true)
	if !b || !errors.Is(err, ErrBadValue) || !strings.Contains(err.Error(), "env") && !strings.Contains(err.Error(), "rsb.conf") {
		t.Errorf("Bool(v.str) = %v, %v", b, err)
	}
}

func TestDuration(t *testing.T) {
	c := getterConfig(t)
	for key, want := range map[string]time.Duration{"v.dur": 1500 * time.Millisecond, "v.zero": 0, "v.missing": time.Second} {
		if got, err := c.Duration(key, time.Second); err != nil || got != want {
			t.Errorf("Duration(%s) = %v, %v; want %v", key, got, err, want)
		}
	}
	for _, key := range []string{"v.baddur", "v.negdur"} {
		if got, err := c.Duration(key, time.Second); got != time.Second || !errors.Is(err, ErrBadValue) {
			t.Errorf("Duration(%s) = %v, %v", key, got, err)
		}
	}
}

func TestStringAndList(t *testing.T) {
	c := getterConfig(t)
	if got := c.String("v.str", "x"); got != "hello world" {
		t.Errorf("String = %q", got)
	}
	if got := c.String("v.emptylist", "x"); got != "" {
		t.Errorf("String of empty value = %q", got)
	}
	if got := c.String("v.missing", "x"); got != "x" {
		t.Errorf("String default = %q", got)
	}
	if got := c.StringList("v.list", nil); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("StringList = %q", got)
	}
	if got := c.StringList("v.emptylist", []string{"d"}); got == nil || len(got) != 0 {
		t.Errorf("StringList of empty value = %#v", got)
	}
	if got := c.StringList("v.missing", []string{"d"}); !slices.Equal(got, []string{"d"}) {
		t.Errorf("StringList default = %q", got)
	}
}
