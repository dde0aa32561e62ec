package main

import (
	"bytes"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/transport/datagram"
)

func hexKey(b byte) string { return hex.EncodeToString(bytes.Repeat([]byte{b}, datagram.KeySize)) }

// writeKeyFile writes a key file of the given mode.
func writeKeyFile(t *testing.T, path string, mode os.FileMode, lines ...string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// The key file and the cluster label come from a flag, the environment or
// a configuration file, and --print-config names the file, not its keys.
func TestKeySettings(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys")
	writeKeyFile(t, path, 0o600, "# rotated in March", "7 "+hexKey(7), "3 "+hexKey(3))
	for name, c := range map[string]struct {
		file string
		env  []string
		args []string
	}{
		"flag": {args: []string{"--key-file", path, "--cluster-label", "lab"}},
		"env":  {env: []string{"RSB_RSBD_KEY_FILE=" + path, "RSB_RSBD_CLUSTER_LABEL=lab"}},
		"file": {file: "[rsbd]\nkey.file = " + path + "\ncluster.label = lab\n"},
	} {
		t.Run(name, func(t *testing.T) {
			s, cfg := mustSettings(t, c.file, c.env, c.args...)
			keys := s.node.Keys
			if len(keys) != 2 || keys[0].ID != 7 || keys[1].ID != 3 || keys[0].Secret[0] != 7 {
				t.Fatalf("keys %v", keys)
			}
			if s.node.ClusterLabel != "lab" || s.keyFile != path {
				t.Fatalf("label %q, key file %q", s.node.ClusterLabel, s.keyFile)
			}
			var out bytes.Buffer
			if code := printConfig(&out, cfg, nil); code != exitOK {
				t.Fatalf("print-config exit %d", code)
			}
			if !strings.Contains(out.String(), keyKeyFile+" = "+path) || strings.Contains(out.String(), hexKey(7)) {
				t.Fatalf("print-config:\n%s", out.String())
			}
		})
	}
	s, _ := mustSettings(t, "", nil)
	if s.node.Keys != nil || s.keyFile != "" {
		t.Fatal("keys without a key file")
	}
}

// A key file others may read, or one that does not parse, is a
// configuration error naming the key, never showing a key.
func TestKeyFileRefused(t *testing.T) {
	dir := t.TempDir()
	for name, c := range map[string]struct {
		mode  os.FileMode
		lines []string
		want  error
	}{
		"group readable":  {0o640, []string{"1 " + hexKey(1)}, errKeyFileMode},
		"world readable":  {0o604, []string{"1 " + hexKey(1)}, errKeyFileMode},
		"short key":       {0o600, []string{"1 " + hexKey(1)[2:]}, datagram.ErrKeyFile},
		"no key":          {0o600, []string{"# empty"}, datagram.ErrKeyFile},
		"repeated key id": {0o400, []string{"1 " + hexKey(1), "1 " + hexKey(2)}, datagram.ErrKeyFile},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
			writeKeyFile(t, path, c.mode, c.lines...)
			if _, err := readKeyFile(path); !errors.Is(err, c.want) {
				t.Fatalf("readKeyFile: %v, want %v", err, c.want)
			}
			cfg, err := load(t, "", nil, "--key-file", path)
			if err != nil {
				t.Fatal(err)
			}
			_, err = parseSettings(cfg)
			if err == nil || !strings.Contains(err.Error(), keyKeyFile) || strings.Contains(err.Error(), hexKey(1)[:16]) {
				t.Fatalf("parseSettings: %v", err)
			}
		})
	}
	if _, err := readKeyFile(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
	long := string(make([]byte, datagram.MaxLabelSize+1))
	cfg, _ := load(t, "", nil, "--cluster-label", strings.ReplaceAll(long, "\x00", "x"))
	if _, err := parseSettings(cfg); err == nil || !strings.Contains(err.Error(), keyClusterLabel) {
		t.Fatalf("long label: %v", err)
	}
}

// A daemon without a key file warns once that its data plane is open; one
// with a key file reloads it on SIGHUP, and keeps its keys when the file
// has become unusable.
func TestKeyReloadOnSIGHUP(t *testing.T) {
	dir := t.TempDir()
	open := startServing(t, filepath.Join(dir, "open.json"))
	if n := strings.Count(open.stderr.String(), "the data plane is open"); n != 1 {
		t.Fatalf("%d warnings of an open data plane:\n%s", n, open.stderr.String())
	}
	open.signals <- syscall.SIGTERM
	<-open.done

	path := filepath.Join(dir, "keys")
	writeKeyFile(t, path, 0o600, "1 "+hexKey(1))
	d := startServing(t, filepath.Join(dir, "ready.json"), "--key-file", path, "--cluster-label", "lab")
	defer func() {
		d.signals <- syscall.SIGTERM
		<-d.done
	}()
	if strings.Contains(d.stderr.String(), "the data plane is open") {
		t.Fatal("a daemon with keys warns of an open data plane")
	}
	writeKeyFile(t, path, 0o600, "2 "+hexKey(2), "1 "+hexKey(1))
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, "the keys reloaded", func() bool {
		return strings.Contains(d.stderr.String(), `"msg":"keys reloaded","file":"`+path+`","primary":2`)
	})
	writeKeyFile(t, path, 0o644, "3 "+hexKey(3))
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, "the failed reload logged", func() bool {
		return strings.Contains(d.stderr.String(), "keys not reloaded, the previous ones stay")
	})
}
