package config

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tree is a fake file system layout for the cascade: every path lives in a temp dir.
type tree struct {
	root, system, prefix, home, pwd string
}

func newTree(t *testing.T) tree {
	t.Helper()
	r := t.TempDir()
	tr := tree{
		root:   r,
		system: filepath.Join(r, "etc", "rsb.conf"),
		prefix: filepath.Join(r, "usr", "local"),
		home:   filepath.Join(r, "home"),
		pwd:    filepath.Join(r, "work"),
	}
	for _, d := range []string{filepath.Dir(tr.system), filepath.Join(tr.prefix, "etc"), filepath.Join(tr.home, ".config"), tr.pwd} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return tr
}

func (tr tree) userFile() string   { return filepath.Join(tr.home, ".config", "rsb.conf") }
func (tr tree) prefixFile() string { return filepath.Join(tr.prefix, "etc", "rsb.conf") }
func (tr tree) pwdFile() string    { return filepath.Join(tr.pwd, "rsb.conf") }

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// opts returns LoadOptions confined to the tree, with env as the whole environment.
func (tr tree) opts(env ...string) LoadOptions {
	return LoadOptions{
		System: tr.system, Prefix: tr.prefix, Home: tr.home, Pwd: tr.pwd,
		Env:    append([]string{}, env...),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Debug:  io.Discard,
	}
}

func mustLoad(t *testing.T, o LoadOptions) *Config {
	t.Helper()
	c, err := Load(o)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return c
}

func expectValue(t *testing.T, c *Config, key, want, origin string) {
	t.Helper()
	v, ok := c.Get(key)
	if !ok || v.String != want || v.Origin.String() != origin {
		t.Errorf("%s = %q from %q (set %v); want %q from %q", key, v.String, v.Origin, ok, want, origin)
	}
}

func TestLoadCascade(t *testing.T) {
	tr := newTree(t)
	write(t, tr.system, "[a]\nsystem = s\nprefix = s\nuser = s\npwd = s\nenv = s\nflag = s\n")
	write(t, tr.prefixFile(), "[a]\nprefix = p\nuser = p\npwd = p\nenv = p\nflag = p\n")
	write(t, tr.userFile(), "[a]\n\nuser = u\npwd = u\nenv = u\nflag = u\n")
	write(t, tr.pwdFile(), "[a]\npwd = w\nenv = w\nflag = w\n")
	o := tr.opts("RSB_A_ENV=e", "RSB_A_FLAG=e", "PATH=/bin")
	o.Defaults = map[string]string{"a.default": "d", "a.system": "d"}
	c := mustLoad(t, o)
	if err := c.Set("a.flag", "f", "flag --flag"); err != nil {
		t.Fatal(err)
	}
	expectValue(t, c, "a.default", "d", "default")
	expectValue(t, c, "a.system", "s", tr.system+":2")
	expectValue(t, c, "a.prefix", "p", tr.prefixFile()+":2")
	expectValue(t, c, "a.user", "u", tr.userFile()+":3")
	expectValue(t, c, "a.pwd", "w", tr.pwdFile()+":2")
	expectValue(t, c, "a.env", "e", "env RSB_A_ENV")
	expectValue(t, c, "a.flag", "f", "flag --flag")

	v, _ := c.Get("a.flag")
	want := []string{tr.system + ":7", tr.prefixFile() + ":6", tr.userFile() + ":6", tr.pwdFile() + ":4", "env RSB_A_FLAG"}
	if len(v.Overrides) != len(want) {
		t.Fatalf("overrides = %v, want %v", v.Overrides, want)
	}
	for i, o := range v.Overrides {
		if o.String() != want[i] {
			t.Errorf("override %d = %s, want %s", i, o, want[i])
		}
	}
	if got := strings.Join(c.Keys(), ","); got != "a.default,a.env,a.flag,a.prefix,a.pwd,a.system,a.user" {
		t.Errorf("Keys = %s", got)
	}
}

func TestLoadSkipsMissingAndUnset(t *testing.T) {
	tr := newTree(t)
	write(t, tr.userFile(), "[x]\ny = 1\n")
	o := tr.opts("HOME=" + filepath.Join(tr.root, "nowhere"))
	o.Prefix = ""
	c := mustLoad(t, o)
	expectValue(t, c, "x.y", "1", tr.userFile()+":2")
	if w := c.Warnings(); len(w) != 0 {
		t.Errorf("warnings for missing default files: %v", w)
	}

	// Without Home the %user file comes from $HOME in the environment.
	o.Home = ""
	c = mustLoad(t, o)
	if _, ok := c.Get("x.y"); ok {
		t.Errorf("x.y read although $HOME points elsewhere")
	}
	o.Env = []string{"HOME=" + tr.home}
	c = mustLoad(t, o)
	expectValue(t, c, "x.y", "1", tr.userFile()+":2")
}

func TestLoadEnv(t *testing.T) {
	tr := newTree(t)
	c := mustLoad(t, tr.opts(
		"RSB_TRANSPORT_SOCKET_PORT=4444",
		"RSB_RSBD_SOCKET_ADDR=127.0.0.1:1",
		"RSB_QUALITYOFSERVICE_RELIABILITY=UNRELIABLE",
		"RSB_EMPTY=",
		"RSB_CONFIG_FILES=",
		"RSB_CONFIG_DEBUG=",
		"RSB_BAD KEY=1",
		"NOT_RSB_X=1",
		"RSB_DUP=1", "RSB_DUP=2",
	))
	expectValue(t, c, KeySocketPort, "4444", "env RSB_TRANSPORT_SOCKET_PORT")
	expectValue(t, c, KeySocketAddr, "127.0.0.1:1", "env RSB_RSBD_SOCKET_ADDR")
	expectValue(t, c, KeyReliability, "UNRELIABLE", "env RSB_QUALITYOFSERVICE_RELIABILITY")
	expectValue(t, c, "dup", "2", "env RSB_DUP")
	for _, k := range []string{"empty", "config.files", "config.debug", "x"} {
		if _, ok := c.Get(k); ok {
			t.Errorf("%s should not be set", k)
		}
	}
	w := strings.Join(c.Warnings(), "\n")
	if !strings.Contains(w, "RSB_EMPTY is empty") || !strings.Contains(w, "RSB_BAD KEY") {
		t.Errorf("warnings = %q", w)
	}
	if strings.Contains(w, "RSB_CONFIG_FILES") {
		t.Errorf("empty RSB_CONFIG_FILES must not warn: %q", w)
	}
}

func TestLoadConfigFilesVariable(t *testing.T) {
	tr := newTree(t)
	write(t, tr.system, "[k]\nv = system\n")
	write(t, tr.prefixFile(), "[k]\nv = prefix\n")
	write(t, tr.userFile(), "[k]\nv = user\n")
	write(t, tr.pwdFile(), "[k]\nv = pwd\n")
	extra := filepath.Join(tr.root, "extra.conf")
	write(t, extra, "[k]\nv = extra\n")
	write(t, filepath.Join(tr.pwd, "rel.conf"), "[k]\nv = relative\n")

	tests := []struct {
		files, want, origin string
	}{
		{"%pwd:%system", "system", tr.system + ":2"},
		{"%system:%pwd", "pwd", tr.pwdFile() + ":2"},
		{"%user::%prefix", "prefix", tr.prefixFile() + ":2"},
		{"%prefix:%user", "user", tr.userFile() + ":2"},
		{"%pwd:" + extra, "extra", extra + ":2"},
		{extra + ":rel.conf", "relative", filepath.Join(tr.pwd, "rel.conf") + ":2"},
	}
	for _, tt := range tests {
		c := mustLoad(t, tr.opts("RSB_CONFIG_FILES="+tt.files))
		expectValue(t, c, "k.v", tt.want, tt.origin)
	}

	c := mustLoad(t, tr.opts("RSB_CONFIG_FILES="))
	if _, ok := c.Get("k.v"); ok {
		t.Errorf("empty RSB_CONFIG_FILES should load no file")
	}

	// LoadOptions.Files wins over the variable.
	o := tr.opts("RSB_CONFIG_FILES=%system")
	o.Files = []string{"%user"}
	expectValue(t, mustLoad(t, o), "k.v", "user", tr.userFile()+":2")

	// A named file that is missing is skipped with a warning.
	c = mustLoad(t, tr.opts("RSB_CONFIG_FILES=%system:"+filepath.Join(tr.root, "missing.conf")))
	expectValue(t, c, "k.v", "system", tr.system+":2")
	if w := c.Warnings(); len(w) != 1 || !strings.Contains(w[0], "missing.conf") {
		t.Errorf("warnings = %v", w)
	}

	o = tr.opts("RSB_CONFIG_FILES=" + strings.Repeat("%pwd:", MaxFiles+1))
	if _, err := Load(o); !errors.Is(err, ErrTooManyFiles) {
		t.Errorf("err = %v, want ErrTooManyFiles", err)
	}
}

func TestLoadErrors(t *testing.T) {
	tr := newTree(t)
	write(t, tr.userFile(), "[ok]\na = 1\n\nbroken line\n")
	_, err := Load(tr.opts())
	if !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), tr.userFile()+":4:") {
		t.Errorf("err = %v, want ErrSyntax at %s:4", err, tr.userFile())
	}

	write(t, tr.userFile(), "[ok]\n"+strings.Repeat("#", MaxFileSize))
	if _, err := Load(tr.opts()); !errors.Is(err, ErrFileTooLarge) {
		t.Errorf("err = %v, want ErrFileTooLarge", err)
	}

	if err := os.Remove(tr.userFile()); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(tr.userFile(), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(tr.opts()); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("err = %v, want a not-regular-file error", err)
	}

	o := tr.opts()
	o.Defaults = map[string]string{"bad key": "1"}
	if _, err := Load(o); !errors.Is(err, ErrSyntax) {
		t.Errorf("err = %v, want ErrSyntax for a bad default key", err)
	}
}

func TestLoadDebugTrace(t *testing.T) {
	tr := newTree(t)
	write(t, tr.system, "[transport.socket]\nport = 1\n")
	var buf bytes.Buffer
	o := tr.opts("RSB_CONFIG_DEBUG=1", "RSB_TRANSPORT_SOCKET_HOST=h")
	o.Debug = &buf
	o.Defaults = map[string]string{"introspection.enabled": "1"}
	mustLoad(t, o)
	out := buf.String()
	for _, want := range []string{
		"Configuring with sources",
		"introspection.enabled = 1",
		"System wide config file \"" + tr.system + "\" exists: 1 options",
		"transport.socket.port = 1",
		"User config file \"" + tr.userFile() + "\" does not exist",
		"RSB_TRANSPORT_SOCKET_HOST -> transport.socket.host = h",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("trace lacks %q:\n%s", want, out)
		}
	}

	buf.Reset()
	o.Env = []string{"RSB_TRANSPORT_SOCKET_HOST=h"}
	mustLoad(t, o)
	if buf.Len() != 0 {
		t.Errorf("trace written without RSB_CONFIG_DEBUG: %q", buf.String())
	}
}
