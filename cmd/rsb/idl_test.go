package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/scope"
)

// poseWire is test.Pose{x: 1, y: 2} as protobuf encodes it: field 1 and 2
// as fixed 64-bit doubles, little-endian.
const poseWire = "09000000000000f03f" + "110000000000000040"

// TestSendProtoSpec sends 'pb:.test.Pose:{x: 1 y: 2}' with -l pose.proto
// through one daemon: a Go listener at the other receives the message
// under the wire schema .test.Pose, and the logger prints it as text and
// as JSON, with the file loaded or found on demand.
func TestSendProtoSpec(t *testing.T) {
	forClusters(t, func(t *testing.T, c cluster) {
		send := []string{"send", "-l", "testdata/pose.proto", "pb:.test.Pose:{x: 1 y: 2}", c.uris[0] + "/pb/pose"}
		t.Run("go-listener", func(t *testing.T) {
			l, err := dialClient(t, c.uris[1]).NewListener(scope.MustParse("/pb/pose"))
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var got *client.Event
			l.AddHandler(func(ev *client.Event) error {
				mu.Lock()
				defer mu.Unlock()
				if got == nil {
					cp := *ev
					cp.Data = append([]byte(nil), ev.Data...)
					got = &cp
				}
				return nil
			})
			var sent time.Time
			testutil.WaitFor(t, 30*time.Second, "the pose at the Go listener", func() bool {
				mu.Lock()
				defer mu.Unlock()
				if got == nil && time.Since(sent) > 200*time.Millisecond {
					sent = time.Now()
					if r := c.tool(bg(), "", send...); r.code != exitOK {
						t.Fatalf("send: %d %s", r.code, r.stderr)
					}
				}
				return got != nil
			})
			if got.WireSchema != ".test.Pose" || hex.EncodeToString(got.Data) != poseWire {
				t.Fatalf("received %s %x, want .test.Pose %s", got.WireSchema, got.Data, poseWire)
			}
		})
		for _, idl := range [][]string{{"-l", "testdata/pose.proto"}, {"-I", "testdata/idl", "--on-demand-idl-loading"}} {
			t.Run(strings.Join(idl, " "), func(t *testing.T) {
				sc := "/pb/" + strings.Trim(idl[0], "-")
				out := loggerThenSend(t, c.tool, append([]string{"logger", "--stop-after", "1", c.uris[1] + sc}, idl...),
					append([]string{"send", "pb:.test.Pose:{x: 1 y: 2 frame: \"map\"}", c.uris[0] + sc}, idl...)).stdout
				for _, want := range []string{"Wire schema   .test.Pose\n", "Payload: .test.Pose, 23 bytes\n", "x:", "y:", `frame:`, `"map"`} {
					if !strings.Contains(out, want) {
						t.Errorf("logger output lacks %q:\n%s", want, out)
					}
				}
				out = loggerThenSend(t, c.tool, append([]string{"logger", "-s", "json", "--stop-after", "1", c.uris[1] + sc}, idl...),
					append([]string{"send", "pb:.test.Pose:{x: 1 y: 2 frame: \"map\"}", c.uris[0] + sc}, idl...)).stdout
				var m struct {
					WireSchema string `json:"wire_schema"`
					Payload    struct {
						X, Y  float64
						Frame string
					} `json:"payload"`
				}
				if err := json.Unmarshal([]byte(out), &m); err != nil || m.WireSchema != ".test.Pose" ||
					m.Payload.X != 1 || m.Payload.Y != 2 || m.Payload.Frame != "map" {
					t.Errorf("json: %v %+v from %s", err, m, out)
				}
			})
		}
	})
}

// TestCallProtoArgument calls a Go server with a pb: argument; the server,
// which knows the type from the same .proto file, replies with the message
// it got, and call prints it as text.
func TestCallProtoArgument(t *testing.T) {
	forClusters(t, func(t *testing.T, c cluster) {
		idl, err := (&idlFlags{files: []string{"testdata/pose.proto"}}).load(bg())
		if err != nil {
			t.Fatal(err)
		}
		md, err := idl.message(bg(), ".test.Pose")
		if err != nil {
			t.Fatal(err)
		}
		reg, err := registryFor(nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := reg.Register(dynamicConverter{md: md}); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(bg(), 10*time.Second)
		defer cancel()
		b, err := client.DialConfig(ctx, strings.TrimPrefix(c.uris[1], "socket://"), client.Config{Registry: reg})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		ls, err := b.NewLocalServer(scope.MustParse("/pb/svc"))
		if err != nil {
			t.Fatal(err)
		}
		ls.AddMethod("mirror", func(_ context.Context, req *client.Event) (any, error) {
			if req.WireSchema != ".test.Pose" || hex.EncodeToString(req.Data) != poseWire {
				t.Errorf("request %s %x", req.WireSchema, req.Data)
			}
			return req.Payload, req.PayloadErr
		})
		r := c.tool(bg(), "", "call", "-l", "testdata/pose.proto", c.uris[1]+"/pb/svc/mirror(pb:.test.Pose:{x: 1 y: 2})")
		if r.code != exitOK || !strings.Contains(r.stdout, "x:") || !strings.Contains(r.stdout, "y:") {
			t.Fatalf("call: %d out %q err %q", r.code, r.stdout, r.stderr)
		}
	})
}

func TestProtoSpecErrors(t *testing.T) {
	idl, err := (&idlFlags{files: []string{"testdata/pose.proto"}}).load(bg())
	if err != nil {
		t.Fatal(err)
	}
	for _, spec := range []string{"pb:.test.Pose", "pb:.test.Missing:{}", "pb:.test.Pose:{z: 1}", "pb:test:{}", "pb:.:{}"} {
		if _, err := parseProtoSpec(bg(), spec, idl); err == nil {
			t.Errorf("%q accepted", spec)
		}
	}
	if _, err := (&idlFlags{files: []string{"testdata/missing.proto"}}).load(bg()); err == nil {
		t.Error("a missing file loaded")
	}
	if got := onDemandFiles("a.b.Msg.Inner"); strings.Join(got, " ") != "a/b/Msg/Inner.proto a/b/Msg.proto a/b.proto" {
		t.Errorf("onDemandFiles: %v", got)
	}
}
