package proto_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/rsbd/rsbd/proto/rsbpb"
)

// TestEventIDFieldNumber pins the wire tag of Notification.event_id: field 108,
// length-delimited, encoded as e2 06.
func TestEventIDFieldNumber(t *testing.T) {
	n := &rsbpb.Notification{EventId: &rsbpb.EventId{SenderId: make([]byte, 16), SequenceNumber: proto.Uint32(0)}}
	b, err := proto.Marshal(n)
	if err != nil {
		t.Fatal(err)
	}
	num, typ, _ := protowire.ConsumeTag(b)
	if num != 108 || typ != protowire.BytesType || !bytes.HasPrefix(b, []byte{0xe2, 0x06}) {
		t.Fatalf("event_id tag = field %d type %d, bytes % x", num, typ, b[:2])
	}
}

// TestGeneratedCodeFresh regenerates the Go code into a temporary directory
// and compares it with the committed files. It is skipped when protoc or the
// pinned protoc-gen-go is not installed (CI installs both).
func TestGeneratedCodeFresh(t *testing.T) {
	protoc, err := exec.LookPath("protoc")
	if err != nil {
		t.Skip("protoc not installed")
	}
	gen := filepath.Join(os.Getenv("HOME"), "go", "bin", "protoc-gen-go")
	if gp := os.Getenv("GOPATH"); gp != "" {
		gen = filepath.Join(gp, "bin", "protoc-gen-go")
	}
	out, err := exec.Command(gen, "--version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "v1.36.12") {
		t.Skip("pinned protoc-gen-go v1.36.12 not installed")
	}
	var files []string
	err = filepath.WalkDir("rsb", func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".proto") {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	args := append([]string{"-I.", "--plugin=protoc-gen-go=" + gen, "--go_out=" + tmp,
		"--go_opt=module=github.com/rsbd/rsbd/proto"}, files...)
	if out, err := exec.Command(protoc, args...).CombinedOutput(); err != nil {
		t.Fatalf("protoc: %v\n%s", err, out)
	}
	err = filepath.WalkDir(tmp, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(tmp, p)
		want, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		got, err := os.ReadFile(rel)
		if err != nil {
			t.Errorf("%s: generated but not committed: %v", rel, err)
			return nil
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale: run make proto", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
